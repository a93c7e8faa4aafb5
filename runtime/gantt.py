"""The timeline (Gantt chart) of a run: every node's compute, sends, receives and waits.

Built from `Execution.spans` only (node, kind, start_s, end_s, label), so every target
gets it. A send span runs from the moment the node starts the message until it has
arrived (port waits included); the receiving node shows the same interval as a
receive. A wait is time inside a phase in which the node neither sends nor receives.

A long run has hundreds of thousands of bars, far more than the chart has pixels: bars of a
node and lane less than MERGE_FRACTION of the time axis apart are drawn as one (a gap that
small is narrower than a pixel), so that the picture costs memory and time in proportion to
its pixels, not to the run.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

from phalanx.runtime.interpreter import Span, SpanKind
from phalanx.runtime.plots import RASTER_ABOVE, empty_svg, new_figure, svg_of

# kind -> (colour, y from, y to) within a node's row of height 1; the node axis points down
# (node 0 at the top), so the upper half of a row is the one with the smaller y
LANES = {
    "wait": ("#d9d9d9", -0.42, 0.42),
    "compute": ("#31a354", -0.42, 0.42),
    "send": ("#3182bd", -0.42, 0.0),
    "copy": ("#9e9ac8", -0.42, 0.0),
    "receive": ("#fd8d3c", 0.0, 0.42),
}
LEGEND = {"compute": "compute", "send": "send (upper half)", "copy": "local copy",
          "receive": "receive (lower half)", "wait": "wait (in a phase, idle)"}
_PEER = re.compile(r"to (\d+), \d+ B$")
MERGE_FRACTION = 1 / 4000  # of the time axis: a quarter of a pixel of a 9 in chart at 100 dpi


@dataclass(frozen=True)
class Bar:
    node: int
    kind: str
    start_s: float
    end_s: float


def _peer(span: Span) -> int | None:
    """The destination of a send: recorded by the built-in simulator, else read from the label."""
    if span.peer is not None:
        return int(span.peer)
    match = _PEER.search(span.label)
    return int(match.group(1)) if match else None


def _merge(busy: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted, overlapping intervals merged: disjoint, sorted by start and by end."""
    out: list[tuple[float, float]] = []
    for b0, b1 in sorted(busy):
        if out and b0 <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b1))
        else:
            out.append((b0, b1))
    return out


def _subtract(interval: tuple[float, float], busy: list[tuple[float, float]],
              ends: list[float]) -> list[tuple[float, float]]:
    """Parts of `interval` not covered by the merged `busy` intervals (`ends`: their ends)."""
    start, end = interval
    out = []
    for b0, b1 in busy[bisect_right(ends, start):]:
        if b0 >= end:
            break
        if b0 > start:
            out.append((start, b0))
        start = max(start, b1)
    if start < end:
        out.append((start, end))
    return out


def timeline_bars(spans: Sequence[Span]) -> list[Bar]:
    """Spans -> bars per lane: sends and copies, derived receives, waits, compute."""
    bars: list[Bar] = []
    active: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for s in spans:
        if s.kind in (SpanKind.SEND, SpanKind.COPY):
            bars.append(Bar(s.node, s.kind, s.start_s, s.end_s))
            active[s.node].append((s.start_s, s.end_s))
            peer = _peer(s)
            if s.kind is SpanKind.SEND and peer is not None:
                bars.append(Bar(peer, "receive", s.start_s, s.end_s))
                active[peer].append((s.start_s, s.end_s))
        elif s.kind is SpanKind.COMPUTE:
            bars.append(Bar(s.node, SpanKind.COMPUTE, s.start_s, s.end_s))
    merged = {node: _merge(busy) for node, busy in active.items()}
    ends = {node: [b1 for _, b1 in busy] for node, busy in merged.items()}
    for s in spans:
        if s.kind in (SpanKind.PHASE, SpanKind.BARRIER):
            for a, b in _subtract((s.start_s, s.end_s), merged.get(s.node, []), ends.get(s.node, [])):
                bars.append(Bar(s.node, "wait", a, b))
    return [b for b in bars if b.end_s > b.start_s]


def merged_lane(bars: list[Bar], gap_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, start, end) arrays of one lane's bars, overlapping bars and bars less than
    `gap_s` apart on the same node merged."""
    node = np.fromiter((b.node for b in bars), np.int64, len(bars))
    start = np.fromiter((b.start_s for b in bars), np.float64, len(bars))
    end = np.fromiter((b.end_s for b in bars), np.float64, len(bars))
    order = np.lexsort((start, node))
    node, start, end = node[order], start[order], end[order]
    # The running latest end within each node: nodes are offset far apart on one axis.
    offset = (node * 2.0 + 2.0) * (float(end.max()) + 1.0)
    reach = np.maximum.accumulate(end + offset) - offset
    first = np.ones(len(bars), bool)
    first[1:] = (node[1:] != node[:-1]) | (start[1:] > reach[:-1] + gap_s)
    heads = np.flatnonzero(first)
    return node[heads], start[heads], np.maximum.reduceat(end, heads)


def gantt_svg(spans: Sequence[Span], nnodes: int, title: str = "timeline", left_out: int = 0) -> str:
    """The timeline of every node; time in ms on x, one row per node. `left_out`: spans the
    run did not keep (runtime/interpreter.py MAX_SPANS), said in the title."""
    bars = timeline_bars(spans)
    if not bars:
        return empty_svg(title, "nothing ran: the program has no compute and no communication")
    end_ms = max(b.end_s for b in bars) * 1e3
    if left_out:
        title += (f"\nthe first {len(spans)} spans, to {end_ms:.3f} ms; {left_out} later spans "
                  "not kept (span budget)")
    fig = new_figure(9, _height_in(nnodes))
    ax = fig.add_subplot()
    by_kind: dict[str, list[Bar]] = defaultdict(list)
    for b in bars:
        by_kind[b.kind].append(b)
    drawn = {}
    for kind, (colour, low, high) in LANES.items():
        if not by_kind[kind]:
            continue
        node, start, end = merged_lane(by_kind[kind], end_ms * 1e-3 * MERGE_FRACTION)
        x0, x1, y0, y1 = start * 1e3, end * 1e3, node + low, node + high
        boxes = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1), np.stack([x1, y1], 1),
                          np.stack([x0, y1], 1)], 1)
        ax.add_collection(PolyCollection(boxes, facecolors=colour, edgecolors="none",
                                         rasterized=len(boxes) > RASTER_ABOVE))
        drawn[kind] = len(boxes)
    ax.set_xlim(0, end_ms * 1.01)
    ax.set_ylim(nnodes - 0.5, -0.5)
    step = max(1, nnodes // 16)
    ax.set_yticks(range(0, nnodes, step))
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("node")
    ax.set_title(title)
    handles = [Patch(color=LANES[k][0], label=LEGEND[k]) for k in LANES if k in drawn]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
    return svg_of(fig)


def link_label(name: object) -> str:
    """A link's name for people: `('switch', 1, (0, 0))` (a tuple, or its repr) becomes
    `switch 1 (0,0)`."""
    if isinstance(name, str) and name.startswith("("):
        try:
            name = ast.literal_eval(name)
        except (ValueError, SyntaxError):
            return name
    if not isinstance(name, tuple):
        return str(name)
    if all(isinstance(x, int) for x in name):
        return "(" + ",".join(map(str, name)) + ")"
    return " ".join(link_label(x) for x in name)


def _height_in(rows: int) -> float:
    """Rows of 0.22 in up to 48 rows, then squeezed so the chart stays under 12 in."""
    return max(2.2, min(0.22 * rows, 10.6) + 1.4)


def link_gantt_svg(link_spans: list[tuple[str, float, float]], title: str = "links") -> str:
    """When each link carried data: one row per link (a network's optional `link_spans`)."""
    link_spans = [(link_label(n), a, b) for n, a, b in link_spans]
    names = sorted({name for name, _, _ in link_spans})
    if not names:
        return empty_svg(title, "no link carried data")
    row = {name: i for i, name in enumerate(names)}
    fig = new_figure(9, _height_in(len(names)))
    ax = fig.add_subplot()
    boxes = [[(a * 1e3, row[n] - 0.4), (b * 1e3, row[n] - 0.4), (b * 1e3, row[n] + 0.4),
              (a * 1e3, row[n] + 0.4)] for n, a, b in link_spans if b > a]
    ax.add_collection(PolyCollection(boxes, facecolors="#3182bd", edgecolors="none",
                                     rasterized=len(boxes) > RASTER_ABOVE))
    ax.set_xlim(0, max(b for _, _, b in link_spans) * 1e3 * 1.01)
    ax.set_ylim(len(names) - 0.5, -0.5)
    step = max(1, len(names) // 24)
    ax.set_yticks(range(0, len(names), step), [names[i] for i in range(0, len(names), step)],
                  fontsize=7)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("link")
    ax.set_title(title)
    fig.legend(handles=[Patch(color="#3182bd", label="carrying data")], loc="outside lower center",
               frameon=False)
    return svg_of(fig)
