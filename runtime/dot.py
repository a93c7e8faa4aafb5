"""Graphviz dumps of schedules: one cluster per phase, one edge per message.

Big machines make unreadable pictures, so above a size a dump is summarised: it keeps
the first and last phases and an even sample in between, caps the messages drawn per
phase, and says so in the graph's label and in a comment at the top.
"""

from __future__ import annotations

from dataclasses import dataclass

from phalanx.compiler.schedule import Phase, Schedule, Transfer

MAX_PHASES = 8  # more phases than this per collective: summarise
MAX_EDGES_PER_PHASE = 96  # more messages than this in one phase: draw a sample
MAX_ALIGNED_NODES = 64  # up to this many nodes, every node keeps its row in every phase
MAX_COLLECTIVES = 6  # more statements than this: draw the first ones and say so
MAX_EDGES = 1200  # the whole graph's budget of message edges: dot's time grows fast with edges


@dataclass(frozen=True)
class DotLimits:
    max_phases: int = MAX_PHASES
    max_edges_per_phase: int = MAX_EDGES_PER_PHASE
    max_collectives: int = MAX_COLLECTIVES
    max_edges: int = MAX_EDGES


def statement_schedules(schedules: list[Schedule]) -> list[tuple[Schedule, int]]:
    """(first schedule, number of runs) per statement: the runs of one statement (repeat
    iterations, pipeline stages) have one schedule, so a picture draws it once."""
    first: dict[tuple[int, str, str], Schedule] = {}
    runs: dict[tuple[int, str, str], int] = {}
    for s in schedules:
        key = (s.line, s.kind, s.algorithm)
        first.setdefault(key, s)
        runs[key] = runs.get(key, 0) + 1
    return [(first[k], runs[k]) for k in first]


def drawn_schedules(schedules: list[Schedule], limits: DotLimits) -> tuple[list[tuple[Schedule, int]], str]:
    """The statements a picture draws within the budget, and a note on what it leaves out."""
    statements = statement_schedules(schedules)
    out: list[tuple[Schedule, int]] = []
    edges = 0
    for s, runs in statements[:limits.max_collectives]:
        kept = sampled_phases(len(s.phases), limits.max_phases)
        cost = sum(min(len(s.phases[k].sends), limits.max_edges_per_phase) for k in kept)
        if out and edges + cost > limits.max_edges:
            break
        out.append((s, runs))
        edges += cost
    notes = []
    if len(statements) < len(schedules):
        notes.append(f"{len(schedules)} collective runs of {len(statements)} statements: each "
                     "statement's schedule is drawn once (its runs share it)")
    if len(out) < len(statements):
        left = ", ".join(f"line {s.line}" for s, _ in statements[len(out):])
        notes.append(f"{len(out)} of {len(statements)} statements drawn (picture budget); "
                     f"not drawn: {left}")
    return out, "; ".join(notes)


def _size(nbytes: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= scale and nbytes % (scale // 4 or 1) == 0:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def _phases(count: int) -> str:
    return f"{count} phase" + ("" if count == 1 else "s")


def sampled_phases(nphases: int, max_phases: int) -> list[int]:
    """All phase indices, or (above max_phases) first, last and an even sample between."""
    if nphases <= max_phases:
        return list(range(nphases))
    keep = max(max_phases, 3)
    step = (nphases - 1) / (keep - 1)
    return sorted({round(i * step) for i in range(keep)})


def _messages(phase: Phase) -> list[list[Transfer]]:
    """The phase's sends grouped into network messages (Transfer.message > 0 combines)."""
    groups: dict[tuple[int, int, int], list[Transfer]] = {}
    out: list[list[Transfer]] = []
    for t in phase.sends:
        key = (t.src, t.dst, t.message) if t.message else (t.src, t.dst, -len(out) - 1)
        if key not in groups:
            groups[key] = []
            out.append(groups[key])
        groups[key].append(t)
    return out


def _phase_lines(s: Schedule, k: int, phase: Phase, limits: DotLimits, aligned: bool) -> list[str]:
    """One cluster: senders on the left, receivers on the right, one edge per message."""
    messages = _messages(phase)
    shown = messages[:limits.max_edges_per_phase]
    sizes = sorted({sum(t.nbytes for t in m) for m in messages})
    ncopies = sum(m[0].src == m[0].dst for m in messages)
    what = f"{len(messages) - ncopies} messages" + (f" of {_size(sizes[0])}" if len(sizes) == 1 else "")
    what += f" + {ncopies} local copies" if ncopies else ""
    sync = f"{phase.sync} sync" + (f" in {len(phase.barrier_groups)} groups" if phase.barrier_groups else "")
    more = f", {len(shown)} drawn" if len(shown) < len(messages) else ""
    name = f"c{s.collective}p{k}"
    lines = [f'    subgraph "cluster_c{s.collective}_p{k}" {{',
             f'      label="phase {k}: {what} ({sync}{more})"; style=rounded;']
    nodes = range(s.nprocs) if aligned else sorted({m[0].src for m in shown} | {m[0].dst for m in shown})
    lines += [f'      "{name}s{n}" [label="{n}"]; "{name}r{n}" [label="{n}"];' for n in nodes]
    copies = {m[0].src for m in shown if m[0].src == m[0].dst}
    lines += [f'      "{name}s{n}" -> "{name}r{n}" [style=invis, weight=100];'
              for n in nodes if n not in copies]
    for m in shown:
        t = m[0]
        attrs = ["style=dashed, weight=100" if t.src == t.dst else "constraint=false"]
        if len(sizes) != 1 or len(m) > 1:
            blocks = f"{len(m)} blocks, " if len(m) > 1 else ""
            attrs.append(f'label="{blocks}{_size(sum(x.nbytes for x in m))}"')
        lines.append(f'      "{name}s{t.src}" -> "{name}r{t.dst}" [{", ".join(attrs)}];')
    lines.append("    }")
    return lines


def summary_note(s: Schedule, limits: DotLimits) -> str:
    """What a summarised dump leaves out ('' when it draws everything)."""
    kept = sampled_phases(len(s.phases), limits.max_phases)
    notes = []
    if len(kept) < len(s.phases):
        notes.append(f"summarised: {len(kept)} of {len(s.phases)} phases drawn "
                     f"({', '.join(map(str, kept))})")
    if any(len(s.phases[k].sends) > limits.max_edges_per_phase for k in kept):
        notes.append(f"at most {limits.max_edges_per_phase} messages drawn per phase")
    return "; ".join(notes)


def _collective_lines(s: Schedule, limits: DotLimits, runs: int = 1) -> list[str]:
    """A cluster per collective holding its drawn phases left to right, rows kept per node."""
    note = summary_note(s, limits)
    ran = f", {runs} runs" if runs > 1 else ""
    label = (f"collective {s.collective}: {s.kind} by {s.algorithm} "
             f"(line {s.line}, {len(s.phases)} phases{ran})" + (f"\\n{note}" if note else ""))
    aligned = s.nprocs <= MAX_ALIGNED_NODES
    c = f"c{s.collective}"
    lines = [f'  subgraph "cluster_{c}" {{', f'    label="{label}";']
    kept = sampled_phases(len(s.phases), limits.max_phases)
    if aligned and kept:  # an invisible root fixes the order of the rows (ordering=out)
        lines.append(f'    "{c}root" [style=invis, width=0, label=""];')
        lines += [f'    "{c}root" -> "{c}p{kept[0]}s{n}" [style=invis];' for n in range(s.nprocs)]
    previous = None
    for k in kept:
        lines += _phase_lines(s, k, s.phases[k], limits, aligned)
        if previous is not None and aligned:
            left, right = f"{c}p{previous}r", f"{c}p{k}s"
            if k > previous + 1:
                gap = f"{c}gap{k}"
                skipped = _phases(k - previous - 1)
                lines.append(f'    "{gap}" [shape=plaintext, fixedsize=false, '
                             f'label="... {skipped}\\nnot drawn ..."];')
                lines.append(f'    "{left}0" -> "{gap}" -> "{right}0" [style=invis, weight=100];')
            span = "" if k == previous + 1 else ", minlen=2"  # as long as the way through the gap
            lines += [f'    "{left}{n}" -> "{right}{n}" [style=invis, weight=100{span}];'
                      for n in range(s.nprocs) if k == previous + 1 or n > 0]
        previous = k
    lines.append("  }")
    return lines


def schedule_to_dot(schedules: list[Schedule], title: str = "schedule",
                    limits: DotLimits | None = None) -> str:
    """Graphviz text: per collective, its phases left to right (senders, then receivers)."""
    limits = limits or DotLimits()
    drawn, left_out = drawn_schedules(schedules, limits)
    notes = [f"  // collective {s.collective}: {note}" for s, _ in drawn
             if (note := summary_note(s, limits))]
    notes += [f"  // {left_out}"] if left_out else []
    graph_label = [f'  label="{left_out}"; labelloc=t;'] if left_out else []
    lines = [f'digraph "{title}" {{', *notes, *graph_label, "  rankdir=LR; newrank=true; ordering=out;",
             "  node [shape=circle, fontsize=9, width=0.3, fixedsize=true];",
             "  edge [fontsize=8, arrowsize=0.5];"]
    for s, runs in drawn:
        lines += _collective_lines(s, limits, runs)
    lines.append("}")
    return "\n".join(lines) + "\n"
