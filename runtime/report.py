"""Reports of a run: report.json (the --json object), report.md, schedule.dot/.svg, the
pictures (timeline, utilisation, candidates, routes) and a self-contained index.html.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from phalanx.compiler.schedule import ComputeStep
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError
from phalanx.runtime import html
from phalanx.runtime.dot import DotLimits, schedule_to_dot, summary_note
from phalanx.runtime.gantt import gantt_svg, link_gantt_svg
from phalanx.runtime.html import Picture, escape, ms
from phalanx.runtime.plots import candidates_svg
from phalanx.runtime.simulate import CollectiveResult, RunResult
from phalanx.runtime.utilisation import busiest_phase, routes_svg, utilisation_svg


def render_svg(dot_text: str) -> str:
    """Render Graphviz text with Debian's `dot`; a clear error when it is missing."""
    dot = shutil.which("dot")
    if dot is None:
        raise PhalanxError(Diagnostic("Graphviz `dot` is not installed; cannot draw the schedule",
                                      hint="install it: apt-get install graphviz"))
    done = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise PhalanxError(Diagnostic(f"dot failed: {done.stderr.strip()}"))
    return done.stdout


def candidate_rows(c: CollectiveResult) -> list[dict[str, Any]]:
    """Per candidate: predicted, simulated (the algorithm that ran), bound, efficiency."""
    rows = []
    for cand in c.candidates:
        chosen = cand["algorithm"] == c.algorithm
        simulated = c.time_s if chosen else None
        basis = simulated if simulated is not None else cand["predicted_time_s"]
        rows.append({"algorithm": cand["algorithm"], "predicted_time_s": cand["predicted_time_s"],
                     "simulated_time_s": simulated, "lower_bound_s": c.lower_bound_s,
                     "efficiency": c.lower_bound_s / basis if basis > 0 else 1.0, "chosen": chosen})
    return rows


def why_chosen(c: CollectiveResult, cost_model: str = "target") -> str:
    """Why this algorithm ran: the cost model's least time, or a request that overrode it."""
    model = "" if cost_model == "target" else f" by the `{cost_model}` cost model"
    ranked = sorted(c.candidates, key=lambda a: a["predicted_time_s"])
    if not ranked:
        return f"`{c.algorithm}` ran; the target listed no candidates."
    best = ranked[0]
    if best["algorithm"] != c.algorithm:
        return (f"`{c.algorithm}` was requested (--algorithm); `auto` would take `{best['algorithm']}`, "
                f"predicted {ms(best['predicted_time_s'])} ms.")
    if len(ranked) == 1:
        return f"`{c.algorithm}` is the only algorithm this target has for a {c.kind}."
    runner_up = ranked[1]
    ratio = runner_up["predicted_time_s"] / best["predicted_time_s"] if best["predicted_time_s"] else 1.0
    return (f"`auto` takes the least time predicted{model}: `{c.algorithm}` at "
            f"{ms(best['predicted_time_s'])} ms; "
            f"next best `{runner_up['algorithm']}` is predicted {ratio:.2f}× as long.")


def markdown(result: RunResult) -> str:
    data = result.to_json()
    target = data["target"]
    out = [f"# Phalanx run: {data['program']}", "",
           f"- target: `{target['spec']}` ({', '.join(f'{k}={v}' for k, v in target['params'].items())})",
           f"- backend: {data['backend']}, seed {data['seed']}",
           f"- total time: {data['total_time_s'] * 1e3:.6f} ms",
           f"- verified: {'yes' if data['verified'] else 'NO'}", "",
           "| line | kind | algorithm | phases | block bytes | time (ms) | lower bound (ms) "
           "| efficiency | bandwidth (MB/s) | verified |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["collectives"]:
        out.append(f"| {c['line']} | {c['kind']} | {c['algorithm']} | {c['phases']} | "
                   f"{c['block_bytes']} | {c['time_s'] * 1e3:.6f} | {c['lower_bound_s'] * 1e3:.6f} | "
                   f"{c['efficiency']:.3f} | {c['aggregate_bandwidth_Bps'] / 1e6:.1f} | "
                   f"{'yes' if c['verified'] else 'NO'} |")
    for c in result.collectives:
        out += ["", f"## Candidates for line {c.line} ({c.kind})", "",
                "| algorithm | predicted time (ms) |", "|---|---|"]
        out += [f"| {a['algorithm']} | {a['predicted_time_s'] * 1e3:.6f} |" for a in c.candidates]
        out += ["", why_chosen(c, result.compiled.cost_model)]
        for problem in c.problems:
            out.append(f"- problem: {problem}")
    out += ["", "![schedule](schedule.svg)", "", "![timeline](gantt.svg)", "",
            "![utilisation](utilisation.svg)", "", "The full report with every picture: index.html", ""]
    return "\n".join(out)


def run_pictures(result: RunResult, schedule_svg: str) -> list[Picture]:
    """Every picture of a run's page, in page order."""
    pics = [Picture("schedule-picture", "schedule.svg", schedule_svg,
                    "Schedule: per collective, one cluster per phase; senders left, receivers right",
                    wide=False)]
    schedules, network = result.compiled.schedules, result.network
    if network is not None and schedules and schedules[0].phases:
        k = busiest_phase(schedules[0].phases)
        title = f"collective 0 ({schedules[0].kind}), phase {k}: messages along their routes"
        routes = routes_svg(network, schedules[0].phases[k], title)
        if routes is not None:
            pics.append(Picture("routes-picture", "routes.svg", routes,
                                f"Routes of phase {k} on the topology, one colour per message"))
    spec = result.compiled.target_spec
    pics.append(Picture("timeline-picture", "gantt.svg",
                        gantt_svg(result.execution.spans, result.compiled.plan.nprocs,
                                  f"timeline of every node on {spec}"),
                        "Timeline: compute, sends (upper half), receives (lower half) and waits"))
    link_spans = network.link_spans() if network is not None else []
    if link_spans:
        pics.append(Picture("link-timeline-picture", "links-gantt.svg",
                            link_gantt_svg(link_spans, f"timeline of every link on {spec}"),
                            "Link timeline: when each link carried data"))
    pics.append(Picture("utilisation-picture", "utilisation.svg",
                        utilisation_svg(network, result.total_time_s),
                        "Utilisation: busy time of each network resource over the run time"))
    for i, c in enumerate(result.collectives):
        pics.append(Picture(f"candidates-picture-{i}", f"candidates-{i}.svg",
                            candidates_svg(c.line, c.kind, candidate_rows(c)),
                            f"Candidates of line {c.line}: predicted and simulated time"))
    return pics


def _summary(result: RunResult) -> str:
    data = result.to_json()
    rows = [["program", escape(data["program"])], ["target", escape(data["target"]["spec"])],
            ["backend", escape(data["backend"])], ["seed", str(data["seed"])],
            ["total time (ms)", ms(data["total_time_s"])], ["result", html.verdict(data["verified"])]]
    return html.table([], rows) + "<h3>Target parameters</h3>" + html.params_table(data["target"])


def _collective(i: int, c: CollectiveResult, pics: dict[str, Picture], cost_model: str) -> str:
    stats = [[str(c.nprocs), str(c.block_bytes), str(c.total_bytes), str(c.phases), ms(c.time_s),
              ms(c.lower_bound_s), f"{c.efficiency:.3f}", f"{c.aggregate_bandwidth_Bps / 1e6:.1f}",
              html.verdict(c.verified)]]
    rows = candidate_rows(c)
    cand = [[escape(r["algorithm"]) + (" (ran)" if r["chosen"] else ""), ms(r["predicted_time_s"]),
             ms(r["simulated_time_s"]), ms(r["lower_bound_s"]), f"{r['efficiency']:.3f}"] for r in rows]
    problems = "".join(f"<li>{escape(p)}</li>" for p in c.problems)
    return (f'<article id="collective-{i}"><h3>Line {c.line}: {escape(c.kind)} by '
            f"{escape(c.algorithm)}</h3>"
            + html.table(["nodes", "block bytes", "total bytes", "phases", "time (ms)",
                          "lower bound (ms)", "efficiency", "bandwidth (MB/s)", "data"], stats)
            + html.table(["algorithm", "predicted (ms)", "simulated (ms)", "lower bound (ms)",
                          "efficiency"], cand, ["chosen" if r["chosen"] else "" for r in rows])
            + f"<p>{escape(why_chosen(c, cost_model))} Efficiency is lower bound / time (simulated "
              "where run, else predicted).</p>"
            + (f'<ul class="bad">{problems}</ul>' if problems else "")
            + html.figure(pics[f"candidates-picture-{i}"]) + "</article>")


def run_html(result: RunResult, pictures: list[Picture]) -> str:
    pics = {p.key: p for p in pictures}
    links = {c.line: (f"collective-{i}", f"{c.kind} by {c.algorithm}")
             for i, c in enumerate(result.collectives)}
    links |= {s.line: ("timeline", f"compute {s.label}") for s in result.compiled.plan.steps
              if isinstance(s, ComputeStep) and s.line}
    notes = [n for s in result.compiled.schedules if (n := summary_note(s, DotLimits()))]
    schedule = "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    schedule += "".join(html.figure(pics[k]) for k in ("schedule-picture", "routes-picture") if k in pics)
    sections = [
        ("summary", "Summary", _summary(result)),
        ("program", "Program", "<p>Each communication statement links to its collective.</p>"
         + html.listing(result.compiled.program.source, links)),
        ("collectives", "Collectives", "".join(_collective(i, c, pics, result.compiled.cost_model)
                                               for i, c in enumerate(result.collectives))
         or "<p>The program has no communication.</p>"),
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
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PhalanxError(Diagnostic(f"cannot create report directory '{directory}': {exc}",
                                      hint="choose a writable path for --report")) from None
    return directory


def write_report(result: RunResult, directory: str | Path) -> Path:
    """Write every file of a run's report; returns the path of index.html."""
    directory = prepare(directory)
    (directory / "report.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    (directory / "report.md").write_text(markdown(result))
    dot_text = schedule_to_dot(result.compiled.schedules, result.compiled.program.file)
    (directory / "schedule.dot").write_text(dot_text)
    pictures = run_pictures(result, render_svg(dot_text))
    for p in pictures:
        (directory / p.file).write_text(p.svg)
    index = directory / "index.html"
    index.write_text(run_html(result, pictures))
    return index
