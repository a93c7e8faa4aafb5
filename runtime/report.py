"""Reports of a run: report.json (the --json object), report.md, schedule.dot/.svg, the
pictures (timeline, utilisation, candidates, routes) and a self-contained index.html.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phalanx.compiler.choice import BY_PROGRAM, ProgramChoice
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import ComputeStep
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime import html
from phalanx.runtime.dot import DotLimits, drawn_schedules, schedule_to_dot, summary_note
from phalanx.runtime.html import Picture, escape, ms
from phalanx.runtime.simulate import CollectiveResult, RunResult, efficiency_note, efficiency_text


@dataclass
class StatementRuns:
    """The runs of one statement by one algorithm: its pipeline stages and repeat iterations."""

    line: int
    kind: Kind
    algorithm: str
    runs: list[CollectiveResult]

    @property
    def total_s(self) -> float:
        return sum(c.time_s for c in self.runs)

    @property
    def mean_s(self) -> float:
        return self.total_s / len(self.runs)

    @property
    def min_s(self) -> float:
        return min(c.time_s for c in self.runs)

    @property
    def max_s(self) -> float:
        return max(c.time_s for c in self.runs)

    @property
    def starts(self) -> tuple[float | None, float | None]:
        """When the first and the last run started in the program (None: never started)."""
        known = [c.start_s for c in self.runs if c.start_s is not None]
        return (known[0], known[-1]) if known else (None, None)

    @property
    def efficiency(self) -> float | None:
        """Summed lower bounds over summed own durations of the runs that move data (1.0 when
        they took no time); None when no run moves anything between nodes."""
        moving = [c for c in self.runs if c.efficiency is not None]
        if not moving:
            return None
        total_s = sum(c.time_s for c in moving)
        return sum(c.lower_bound_s for c in moving) / total_s if total_s > 0 else 1.0

    @property
    def phases(self) -> str:
        low, high = min(c.phases for c in self.runs), max(c.phases for c in self.runs)
        return f"{low} phases" if low == high else f"{low}-{high} phases"

    @property
    def which(self) -> str:
        """`stages 0-3, iterations 0-49`: what the runs are."""
        parts = []
        for name, values in (("stages", [c.stage for c in self.runs]),
                             ("iterations", [c.iteration for c in self.runs])):
            known = sorted({v for v in values if v is not None})
            if known:
                parts.append(f"{name} {known[0]}-{known[-1]}" if len(known) > 1 else
                             f"{name[:-1]} {known[0]}")
        return ", ".join(parts)


def statement_runs(collectives: list[CollectiveResult]) -> list[StatementRuns]:
    """Collectives grouped by statement (line, kind and algorithm), in order of first run."""
    groups: dict[tuple[int, str, str], StatementRuns] = {}
    for c in collectives:
        key = (c.line, c.kind, c.algorithm)
        if key not in groups:
            groups[key] = StatementRuns(c.line, c.label, c.algorithm, [])
        groups[key].runs.append(c)
    return list(groups.values())


def run_identity(c: CollectiveResult) -> str:
    """`line 8 stage 2 iteration 5`: which execution of which statement."""
    return f"line {c.line}" + (f" stage {c.stage}" if c.stage is not None else "") + \
        (f" iteration {c.iteration}" if c.iteration is not None else "")


def summary_lines(collectives: list[CollectiveResult], verbose: bool = False) -> list[str]:
    """The terminal summary of a run: one line per statement (count, mean, total), or with
    `verbose` one line per collective run with its start and end in the program."""
    out = []
    if verbose:
        for c in collectives:
            where = ("" if c.start_s is None or c.end_s is None else
                     f", from {c.start_s * 1e3:.6f} to {c.end_s * 1e3:.6f} ms")
            out.append(f"  {run_identity(c)}: {c.label} by {c.algorithm}, {c.phases} phases, "
                       f"{c.time_s * 1e3:.6f} ms, "
                       f"{efficiency_note(c.efficiency, c.lower_bound_binds)}{where}")
            out += [f"    problem: {problem}" for problem in c.problems]
        return out
    for g in statement_runs(collectives):
        head = f"  line {g.line}: {g.kind} by {g.algorithm}, {g.phases}, "
        if len(g.runs) == 1:
            out.append(head + f"{g.total_s * 1e3:.6f} ms, "
                       + efficiency_note(g.efficiency, g.runs[0].lower_bound_binds))
        else:
            which = f" ({g.which})" if g.which else ""
            out.append(head + f"{len(g.runs)} runs{which}: mean {g.mean_s * 1e3:.6f} ms, total "
                       f"{g.total_s * 1e3:.6f} ms, "
                       + efficiency_note(g.efficiency, g.runs[0].lower_bound_binds))
        out += [f"    problem ({run_identity(c)}): {problem}" if len(g.runs) > 1 else
                f"    problem: {problem}" for c in g.runs for problem in c.problems]
    return out


MAX_RUN_ROWS = 40  # runs of one statement listed on the page (those with problems first)


def listed_runs(runs: list[CollectiveResult], each_run: bool = True
                ) -> tuple[list[CollectiveResult], int]:
    """The runs a page lists (at most MAX_RUN_ROWS, every run with problems before the
    others, in program order) and how many it leaves out. Without `each_run` the runs of a
    repeated statement are summarised instead and only those with problems are listed."""
    failed = [c for c in runs if c.problems]
    others = [c for c in runs if not c.problems] if each_run or len(runs) == 1 else []
    kept = {id(c) for c in (failed + others)[:MAX_RUN_ROWS]}
    return [c for c in runs if id(c) in kept], len(runs) - len(kept)


MAX_DOT_NODES = 16  # larger machines: the schedule as phase matrices (runtime/phase_matrix.py)
DOT_TIMEOUT_S = 20.0  # Graphviz's budget; past it the report draws phase matrices instead


def render_svg(dot_text: str, timeout_s: float = DOT_TIMEOUT_S) -> str | None:
    """Render Graphviz text with Debian's `dot`; a clear error when it is missing, None when
    it takes longer than `timeout_s`."""
    dot = shutil.which("dot")
    if dot is None:
        raise PhalanxError(Diagnostic("Graphviz `dot` is not installed; cannot draw the schedule",
                                      hint="install it: apt-get install graphviz"))
    try:
        done = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise PhalanxError(Diagnostic(f"dot failed: {done.stderr.strip()}"))
    return done.stdout


def candidate_rows(c: CollectiveResult) -> list[dict[str, Any]]:
    """Per candidate: the figure `auto` ranked it by and whether that was predicted or
    simulated, its own time in this run (the algorithm that ran), bound, efficiency."""
    rows = []
    for cand in c.candidates:
        chosen = cand["algorithm"] == c.algorithm
        ran = c.time_s if chosen else None
        basis = ran if ran is not None else cand["time_s"]
        rows.append({"algorithm": cand["algorithm"], "time_s": cand["time_s"], "figure": cand["figure"],
                     "ran_s": ran, "lower_bound_s": c.lower_bound_s,
                     "efficiency": None if c.efficiency is None else
                     c.lower_bound_s / basis if basis > 0 else 1.0, "chosen": chosen})
    return rows


def why_chosen(c: CollectiveResult, cost_model: str = "target", choice: ProgramChoice | None = None) -> str:
    """Why this algorithm ran: the cost model's least time, the program's simulated total
    (runtime/progchoice.py), or a request that overrode them."""
    model = "" if cost_model == "target" else f" by the `{cost_model}` cost model"
    ranked = sorted(c.candidates, key=lambda a: a["time_s"])
    if not ranked:
        return f"`{c.algorithm}` ran; the target listed no candidates."
    best = ranked[0]
    if choice is not None and choice.method == BY_PROGRAM and c.line in choice.algorithms:
        return (f"`{c.algorithm}` was chosen for the program: {choice.note()}. Alone, `{best['algorithm']}` "
                f"has the least {best['figure']} time, {ms(best['time_s'])} ms." + simulated_note(c))
    if best["algorithm"] != c.algorithm:
        return (f"`{c.algorithm}` was requested (--algorithm); `auto` would take `{best['algorithm']}`, "
                f"{best['figure']} {ms(best['time_s'])} ms.")
    if len(ranked) == 1:
        return f"`{c.algorithm}` is the only algorithm this target has for a {c.kind}."
    runner_up = ranked[1]
    ratio = runner_up["time_s"] / best["time_s"] if best["time_s"] else 1.0
    return (f"`auto` takes the least {best['figure']} time{model}: `{c.algorithm}` at "
            f"{ms(best['time_s'])} ms; next best `{runner_up['algorithm']}` is {runner_up['figure']} "
            f"{ratio:.2f}× as long." + simulated_note(c))


def simulated_note(c: CollectiveResult) -> str:
    """Which candidates' times came from the simulator (`--cost simulate`) and which from a
    formula; nothing when every one was predicted."""
    simulated = [a["algorithm"] for a in c.candidates if a["figure"] == "simulated"]
    if not simulated:
        return ""
    predicted = [f"`{a['algorithm']}` {a['source']}" for a in c.candidates if a["figure"] != "simulated"]
    return (" Simulated: " + ", ".join(f"`{a}`" for a in simulated) + "."
            + (" Not simulated: " + "; ".join(predicted) + "." if predicted else ""))


def markdown(result: RunResult, each_run: bool = False) -> str:
    data = result.to_json(each_run)
    target = data["target"]
    out = [f"# Phalanx run: {data['program']}", "",
           f"- target: `{target['spec']}` ({', '.join(f'{k}={v}' for k, v in target['params'].items())})",
           f"- backend: {data['backend']}, seed {data['seed']}",
           f"- total time: {data['total_time_s'] * 1e3:.6f} ms",
           f"- verified: {'yes' if data['verified'] else 'NO'}",
           f"- {result.compiled.choice.note()}",
           *(f"- {p.note()} (predicted by the cost model)" for p in result.compiled.pipelines), "",
           "| line | kind | algorithm | phases | block bytes | own time (ms) | lower bound (ms) "
           "| efficiency | bandwidth (MB/s) | verified | stage | iteration | start (ms) | end (ms) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    shown = {id(c) for g in statement_runs(result.collectives)
             for c in listed_runs(g.runs, each_run)[0]}
    omitted = len(result.collectives) - len(shown)
    for full in result.collectives:
        if id(full) not in shown:
            continue
        c = full.to_json()
        out.append(f"| {c['line']} | {full.label} | {c['algorithm']} | {c['phases']} | "
                   f"{c['block_bytes']} | {c['time_s'] * 1e3:.6f} | {c['lower_bound_s'] * 1e3:.6f} | "
                   f"{efficiency_text(c['efficiency'])} | {c['aggregate_bandwidth_Bps'] / 1e6:.1f} | "
                   f"{'yes' if c['verified'] else 'NO'} | {_or_dash(c['stage'])} | "
                   f"{_or_dash(c['iteration'])} | {ms(c['start_s'])} | {ms(c['end_s'])} |")
    if omitted:
        out += ["", f"{omitted} more runs of these statements are not listed here "
                + (f"(at most {MAX_RUN_ROWS} per statement, runs with problems first); report.json "
                   "has every run." if each_run else "(summarised below; --each-run lists them)")]
    out += ["", "Own time: the collective's schedule alone on an idle machine (docs/reports.md); "
            "start and end: first node in and last node out in the program.", "",
            "| line | kind | algorithm | runs | which | min (ms) | mean (ms) | max (ms) | total (ms) "
            "| first start (ms) | last start (ms) | efficiency |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {g.line} | {g.kind} | {g.algorithm} | {len(g.runs)} | {g.which or '-'} | "
            f"{g.min_s * 1e3:.6f} | {g.mean_s * 1e3:.6f} | {g.max_s * 1e3:.6f} | "
            f"{g.total_s * 1e3:.6f} | {ms(g.starts[0])} | {ms(g.starts[1])} | "
            f"{efficiency_text(g.efficiency)} |"
            for g in statement_runs(result.collectives)]
    for g in statement_runs(result.collectives):
        c = g.runs[0]
        out += ["", f"## Candidates for line {c.line} ({c.label})", "",
                "| algorithm | time auto ranked (ms) | predicted or simulated | how |", "|---|---|---|---|"]
        out += [f"| {a['algorithm']} | {a['time_s'] * 1e3:.6f} | {a['figure']} | {a['source']} |"
                for a in c.candidates]
        out += ["", why_chosen(c, result.compiled.cost_model, result.compiled.choice)]
        for run in listed_runs(g.runs, each_run)[0]:
            out += [f"- problem ({run_identity(run)}): {problem}" for problem in run.problems]
    out += ["", "![schedule](schedule.svg)", "", "![timeline](gantt.svg)", "",
            "![utilisation](utilisation.svg)", "", "The full report with every picture: index.html", ""]
    return "\n".join(out)


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def schedule_picture(result: RunResult, dot_text: str) -> Picture:
    """Graphviz on small machines; phase matrices on big ones or when Graphviz runs out of time."""
    from phalanx.runtime.phase_matrix import phase_matrix_svg  # matplotlib: loaded only to draw

    schedules = result.compiled.plan.run_schedules()
    title = f"schedule of {result.compiled.program.file}: messages per phase"
    if all(s.nprocs <= MAX_DOT_NODES for s in schedules):
        svg = render_svg(dot_text)
        if svg is not None:
            return Picture("schedule-picture", "schedule.svg", svg, "Schedule: per statement, one "
                           "cluster per phase; senders left, receivers right", wide=False)
        title += f" (Graphviz took over {DOT_TIMEOUT_S:g} s; schedule.dot has the graph)"
    return Picture("schedule-picture", "schedule.svg", phase_matrix_svg(schedules, title),
                   "Schedule: per statement and drawn phase, which node sends to which "
                   "(one cell per message, coloured by its size)")


def has_candidates(c: CollectiveResult) -> bool:
    """Whether a candidates chart would show anything (some candidate with a time)."""
    return any(r["time_s"] > 0 or (r["ran_s"] or 0) > 0 for r in candidate_rows(c))


def first_runs(collectives: list[CollectiveResult]) -> list[int]:
    """Index of each statement's first run (later runs share its candidates)."""
    firsts = {id(g.runs[0]) for g in statement_runs(collectives)}
    return [i for i, c in enumerate(collectives) if id(c) in firsts]


def run_pictures(result: RunResult, schedule_pic: Picture) -> list[Picture]:
    """Every picture of a run's page, in page order. The drawing modules load matplotlib (about
    a second): they are imported here, so that `phalanx run` without --report never loads it."""
    from phalanx.runtime.gantt import gantt_svg, link_gantt_svg
    from phalanx.runtime.plots import candidates_svg
    from phalanx.runtime.routes import drawable, link_load_svg, routes_svg
    from phalanx.runtime.utilisation import utilisation_svg

    pics = [schedule_pic]
    schedules, network = result.compiled.plan.run_schedules(), result.network
    layout = drawable(network, schedules)
    if layout is not None:
        spec = result.compiled.target_spec
        pics.append(Picture("routes-picture", "routes.svg",
                            routes_svg(network, layout, schedules, f"messages along their routes on {spec}"),
                            "Routes: a few phases on the topology, each link coloured by how many "
                            "messages of the phase hold it"))
        pics.append(Picture("link-load-picture", "link-load.svg",
                            link_load_svg(network, layout, schedules, f"data per link on {spec}"),
                            "Link load: per statement, the data each link carries over all its "
                            "phases and runs (every phase, drawn or not)"))
    spec = result.compiled.target_spec
    pics.append(Picture("timeline-picture", "gantt.svg",
                        gantt_svg(result.execution.spans, result.compiled.plan.nprocs,
                                  f"timeline of every node on {spec}",
                                  result.execution.spans_left_out),
                        "Timeline: compute, sends (upper half), receives (lower half) and waits"))
    link_spans = network.link_spans() if network is not None else []
    if link_spans:
        pics.append(Picture("link-timeline-picture", "links-gantt.svg",
                            link_gantt_svg(link_spans, f"timeline of every link on {spec}"),
                            "Link timeline: when each link carried data"))
    pics.append(Picture("utilisation-picture", "utilisation.svg",
                        utilisation_svg(network, result.total_time_s),
                        "Utilisation: busy time of each network resource over the run time"))
    for i in first_runs(result.collectives):
        c = result.collectives[i]
        if not has_candidates(c):
            continue
        pics.append(Picture(f"candidates-picture-{i}", f"candidates-{i}.svg",
                            candidates_svg(c.line, c.kind, candidate_rows(c)),
                            f"Candidates of line {c.line}: predicted and simulated time"))
    return pics


def _summary(result: RunResult) -> str:
    data = result.to_json()
    rows = [["program", escape(data["program"])], ["target", escape(data["target"]["spec"])],
            ["backend", escape(data["backend"])], ["seed", str(data["seed"])],
            ["total time (ms)", ms(data["total_time_s"])], ["result", html.verdict(data["verified"])]]
    pipelines = "".join(f'<p class="note">{escape(p.note())} (predicted by the cost model; '
                        "docs/language.md, `pipeline`)</p>" for p in result.compiled.pipelines)
    choice = f'<p class="note">{escape(result.compiled.choice.note())}</p>'
    return (html.table([], rows) + choice + pipelines + "<h3>Target parameters</h3>"
            + html.params_table(data["target"]))


def _statements(result: RunResult) -> str:
    """One row per statement: how often it ran, mean and total own time, efficiency."""
    first = {id(c): i for i, c in reversed(list(enumerate(result.collectives)))}
    rows = [[f'<a href="#collective-{first[id(g.runs[0])]}">{g.line}</a>',
             escape(g.kind), escape(g.algorithm), str(len(g.runs)), escape(g.which or "-"),
             ms(g.min_s), ms(g.mean_s), ms(g.max_s), ms(g.total_s), ms(g.starts[0]),
             ms(g.starts[1]), efficiency_text(g.efficiency)]
            for g in statement_runs(result.collectives)]
    return (html.table(["line", "kind", "algorithm", "runs", "which", "min own time (ms)",
                        "mean own time (ms)", "max own time (ms)", "total own time (ms)",
                        "first start (ms)", "last start (ms)", "efficiency"], rows)
            + "<p>Own time: the collective's schedule alone on an idle machine, every node "
              "starting together, so waiting for earlier statements is not counted; start and "
              "end: first node in and last node out in the program (docs/reports.md). A "
              "statement's efficiency is its summed lower bounds over its summed own time.</p>")


def _runs_table(runs: list[CollectiveResult], each_run: bool) -> str:
    """One row per listed run of a statement: which, own time, start, end, data."""
    listed, omitted = listed_runs(runs, each_run)
    rows = [[escape(run_identity(c)), ms(c.time_s), ms(c.start_s), ms(c.end_s), ms(c.elapsed_s),
             html.verdict(c.verified) + "".join(f"<br>{escape(p)}" for p in c.problems)]
            for c in listed]
    note = (f'<p class="note">{omitted} more runs not listed ' + (
        f"(at most {MAX_RUN_ROWS}, runs with problems first); report.json has every run.</p>"
        if each_run else "(summarised in the table of statements above; --each-run lists "
                         "them)</p>") if omitted else "")
    return (f"<h4>Its {len(runs)} runs</h4>"
            + html.table(["run", "own time (ms)", "start (ms)", "end (ms)", "first in to last "
                          "out (ms)", "data"], rows) + note)


def _collective(i: int, c: CollectiveResult, pics: dict[str, Picture], cost_model: str,
                runs: list[CollectiveResult], each_run: bool,
                choice: ProgramChoice | None = None) -> str:
    """The article of a statement: its first run `c` in full, then a table of its `runs`."""
    stats = [[str(c.nprocs), str(c.block_bytes), str(c.total_bytes), str(c.phases), ms(c.time_s),
              ms(c.lower_bound_s), efficiency_text(c.efficiency), f"{c.aggregate_bandwidth_Bps / 1e6:.1f}",
              ms(c.start_s), ms(c.end_s), html.verdict(c.verified)]]
    rows = candidate_rows(c)
    chart = pics.get(f"candidates-picture-{i}")
    if chart is not None:
        chart_html = html.figure(chart)
    else:
        chart_html = '<p class="note">No candidates chart: no candidate has a time.</p>'
    cand = [[escape(r["algorithm"]) + (" (ran)" if r["chosen"] else ""), ms(r["time_s"]), r["figure"],
             ms(r["ran_s"]), ms(r["lower_bound_s"]), efficiency_text(r["efficiency"])] for r in rows]
    problems = "".join(f"<li>{escape(p)}</li>" for p in c.problems)
    left_out = [[escape(x["algorithm"]), escape(x["reason"])] for x in c.left_out]
    return (f'<article id="collective-{i}"><h3>{escape(run_identity(c)).capitalize()}: '
            f"{escape(c.label)} by {escape(c.algorithm)}</h3>"
            + html.table(["nodes", "block bytes", "total bytes", "phases", "own time (ms)",
                          "lower bound (ms)", "efficiency", "bandwidth (MB/s)", "start (ms)",
                          "end (ms)", "data"], stats)
            + (html.table(["algorithm", "time auto ranked (ms)", "predicted or simulated",
                           "ran in this program, own time (ms)", "lower bound (ms)", "efficiency"],
                          cand, ["chosen" if r["chosen"] else "" for r in rows])
               if rows else '<p class="note">The target listed no candidates.</p>')
            + (html.table(["left out by auto", "precondition that failed"], left_out) if left_out else "")
            + groups_note(c)
            + f"<p>{escape(why_chosen(c, cost_model, choice))} Efficiency is lower bound / time (simulated "
              "where run, else predicted).</p>"
            + (f'<ul class="bad">{problems}</ul>' if problems else "")
            + chart_html + (_runs_table(runs, each_run) if len(runs) > 1 else "") + "</article>")


def groups_note(c: CollectiveResult) -> str:
    """Who is in which group of a collective in groups (every group runs the algorithm at once)."""
    if not c.groups:
        return ""
    members = "; ".join(", ".join(str(m) for m in g) for g in c.groups["members"])
    roots = f" Roots: {', '.join(str(r) for r in c.groups['roots'])}." if "roots" in c.groups else ""
    return (f"<p>{escape(c.label)}: every group runs {escape(c.algorithm)} at the same time on "
            f"the same network. Members: {escape(members)}.{escape(roots)}</p>")


def run_html(result: RunResult, pictures: list[Picture], each_run: bool = False) -> str:
    pics = {p.key: p for p in pictures}
    links = {c.line: (f"collective-{i}", f"{c.label} by {c.algorithm}")  # a statement's first run
             for i, c in reversed(list(enumerate(result.collectives)))}
    links |= {s.line: ("timeline", f"compute {s.label}") for s in result.compiled.plan.steps
              if isinstance(s, ComputeStep) and s.line}
    index = {id(c): i for i, c in enumerate(result.collectives)}
    drawn, left_out = drawn_schedules(result.compiled.plan.run_schedules(), DotLimits())
    notes = [left_out] if left_out else []
    if "Generated by graphviz" in pics["schedule-picture"].svg:  # phase matrices title their own
        notes = [f"line {s.line}: {n}" for s, _ in drawn if (n := summary_note(s, DotLimits()))] + notes
    schedule = "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    schedule += "".join(html.figure(pics[k]) for k in ("schedule-picture", "routes-picture",
                                                       "link-load-picture") if k in pics)
    sections = [
        ("summary", "Summary", _summary(result)),
        ("program", "Program", "<p>Each communication statement links to its collective.</p>"
         + html.listing(result.compiled.program.source, links)),
        ("collectives", "Collectives", (_statements(result) + "".join(
            _collective(index[id(g.runs[0])], g.runs[0], pics, result.compiled.cost_model, g.runs,
                        each_run, result.compiled.choice)
            for g in statement_runs(result.collectives))) if result.collectives
         else "<p>The program has no communication.</p>"),
        ("schedule", "Schedule", schedule),
        ("timeline", "Timeline", "".join(html.figure(pics[k]) for k in (
            "timeline-picture", "link-timeline-picture") if k in pics)),
        ("utilisation", "Utilisation", html.figure(pics["utilisation-picture"])),
        ("files", "Files", "<ul>" + "".join(f'<li><a href="{f}">{f}</a></li>' for f in (
            "report.json", "report.md", "schedule.dot", *(p.file for p in pictures))) + "</ul>"),
    ]
    spec = result.compiled.target_spec
    return html.page(f"Phalanx report: {result.compiled.program.file} on {spec}", sections)


def prepare(directory: str | Path) -> Path:
    """The report directory, created (with its parents) where missing; a usage error (exit 2)
    where it cannot be: the path is the user's choice. `phalanx run` and `phalanx sweep` call
    this before they simulate, so that a bad --report costs no run."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise usage_error(f"cannot create report directory '{directory}': "
                          f"{exc.strerror or exc}", "choose a writable path for --report") from None
    return directory


def write_report(result: RunResult, directory: str | Path, each_run: bool = False) -> Path:
    """Write every file of a run's report; returns the path of index.html. The runs of a
    repeated statement are summarised, and listed one by one only with `each_run`."""
    directory = prepare(directory)
    (directory / "report.json").write_text(json.dumps(result.to_json(each_run), indent=2) + "\n")
    (directory / "report.md").write_text(markdown(result, each_run))
    dot_text = schedule_to_dot(result.compiled.plan.run_schedules(), result.compiled.program.file)
    (directory / "schedule.dot").write_text(dot_text)
    pictures = run_pictures(result, schedule_picture(result, dot_text))
    for p in pictures:
        (directory / p.file).write_text(p.svg)
    index = directory / "index.html"
    index.write_text(run_html(result, pictures, each_run))
    return index
