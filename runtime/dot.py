"""Graphviz dumps of schedules: one cluster per phase, one edge per message."""

from __future__ import annotations

from phalanx.compiler.schedule import Schedule


def _size(nbytes: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= scale and nbytes % (scale // 4 or 1) == 0:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def schedule_to_dot(schedules: list[Schedule], title: str = "schedule") -> str:
    lines = [f'digraph "{title}" {{', "  rankdir=LR;", '  node [shape=circle, fontsize=10];',
             '  edge [fontsize=8];']
    for s in schedules:
        lines.append(f'  subgraph "cluster_c{s.collective}" {{')
        lines.append(f'    label="collective {s.collective}: {s.kind} by {s.algorithm} '
                     f'(line {s.line}, {len(s.phases)} phases)";')
        for k, phase in enumerate(s.phases):
            lines.append(f'    subgraph "cluster_c{s.collective}_p{k}" {{')
            lines.append(f'      label="phase {k} ({phase.sync} sync)"; style=rounded;')
            nodes = sorted({t.src for t in phase.sends} | {t.dst for t in phase.sends})
            for n in nodes:
                lines.append(f'      "c{s.collective}p{k}n{n}" [label="{n}"];')
            for t in phase.sends:
                style = ', style=dashed' if t.src == t.dst else ""
                lines.append(f'      "c{s.collective}p{k}n{t.src}" -> "c{s.collective}p{k}n{t.dst}"'
                             f' [label="{_size(t.nbytes)}"{style}];')
            lines.append("    }")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
