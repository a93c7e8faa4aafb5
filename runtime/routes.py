"""Schedules on the machine's topology: small multiples of a few phases, a link-load map for
the rest.

`routes_svg` draws a few phases side by side, each on the topology laid out as it is: every
link a message of the phase holds is coloured by how many messages of that phase hold it
(1: the message has the link to itself; more: they contend). That stays readable at 64 and
256 nodes, where one colour per message is a tangle. `link_load_svg` is the aggregate of
every phase the panels leave out: per statement, the bytes each link carries over all its
phases and runs. Both keep to a budget (panels, routed messages) and their titles say what
they left out. They need the network's optional `layout()` and `route()` (runtime/network.py).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, ListedColormap, Normalize

from phalanx.compiler.schedule import Phase, Schedule
from phalanx.runtime.dot import DotLimits, drawn_schedules, sampled_phases
from phalanx.runtime.network import Layout, Network
from phalanx.runtime.plots import new_figure, svg_of
from phalanx.runtime.utilisation import draw_links, draw_nodes, phase_messages

MAX_ROUTE_PANELS = 6  # phases drawn on the topology in one picture
ROUTE_COLUMNS = 3
MAX_LOAD_PANELS = 4  # statements in the link-load picture
MAX_ROUTED_PAIRS = 200_000  # (source, destination) routes the link-load picture follows
IDLE = "#e3e3e3"


class Routes:
    """A network's routes, each asked once (a picture asks the same pair many times)."""

    def __init__(self, network: Network):
        self.network = network
        self.known: dict[tuple[int, int], list[str]] = {}

    def __call__(self, src: int, dst: int) -> list[str]:
        if (src, dst) not in self.known:
            self.known[(src, dst)] = self.network.route(src, dst) or []
        return self.known[(src, dst)]


def drawable(network: Network | None, schedules: list[Schedule]) -> Layout | None:
    """The layout, when the network has one and names the links of its routes."""
    if network is None:
        return None
    layout = network.layout()
    first = next((t for s in schedules for p in s.phases for t in p.sends if t.src != t.dst), None)
    if layout is None or not layout.links or first is None or not network.route(first.src, first.dst):
        return None
    return layout


def route_panels(schedules: list[Schedule], limits: DotLimits | None = None
                 ) -> tuple[list[tuple[Schedule, int, int]], str]:
    """(schedule, phase, runs) of the panels and a note on the phases left out: the drawn
    statements' phases, first, last and an even sample between, MAX_ROUTE_PANELS in all."""
    drawn, note = drawn_schedules(schedules, limits or DotLimits())
    drawn = [(s, runs) for s, runs in drawn if any(_crosses(p) for p in s.phases)]
    panels: list[tuple[Schedule, int, int]] = []
    per_statement = max(1, MAX_ROUTE_PANELS // max(len(drawn), 1))
    left = 0
    for s, runs in drawn:
        busy = [k for k, p in enumerate(s.phases) if _crosses(p)]
        kept = [busy[j] for j in sampled_phases(len(busy), min(per_statement,
                                                                MAX_ROUTE_PANELS - len(panels)))]
        kept = kept if len(panels) < MAX_ROUTE_PANELS else []
        left += len(busy) - len(kept)
        panels += [(s, k, runs) for k in kept]
    notes = [note] if note else []
    if left:
        notes.append(f"{len(panels)} phases drawn, {left} other phases with messages are in "
                     "the link-load picture")
    return panels, "; ".join(notes)


def _crosses(phase: Phase) -> bool:
    """Some transfer of the phase goes between two nodes."""
    return any(t.src != t.dst for t in phase.sends)


def phase_load(routes: Routes, phase: Phase) -> tuple[Counter, int]:
    """Messages of the phase holding each link, and the phase's messages."""
    load: Counter = Counter()
    sent = phase_messages(phase)
    for m in sent:
        load.update(routes(m[0].src, m[0].dst))
    return load, len(sent)


def _grid(count: int, columns: int, nnodes: int):
    ncols = min(columns, count)
    nrows = -(-count // ncols)
    side = 3.6 if nnodes > 64 else 3.0
    fig = new_figure(side * ncols + 1.2, (side + 0.4) * nrows + 0.7)
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def _panel(ax, layout: Layout, values: dict, color, title: str) -> None:
    """One panel of a grid: the topology with its links coloured by `values`."""
    draw_links(ax, layout, values, color, 0.1, IDLE)
    draw_nodes(ax, layout, labels=len(layout.positions) <= 16)
    ax.locator_params(nbins=5)
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=6)


def _close_grid(fig, axes, used: int, title: str, note: str) -> None:
    """Blank the grid's unused panels and title the figure, with what the budget left out."""
    for ax in axes.flat[used:]:
        ax.set_axis_off()
    fig.suptitle(title + (f"\n{note}" if note else ""), fontsize=10)


def routes_svg(network: Network, layout: Layout, schedules: list[Schedule], title: str) -> str:
    """Small multiples: a few phases' messages along their routes, links coloured by how many
    messages of the phase hold them."""
    panels, note = route_panels(schedules)
    routes = Routes(network)
    loads = [phase_load(routes, s.phases[k]) for s, k, _ in panels]
    most = max((max(load.values(), default=1) for load, _ in loads), default=1)
    # Dark blue for a link to itself, warmer as more messages share it (never pale on white).
    cmap = ListedColormap(colormaps["plasma"](np.linspace(0.0, 0.8, max(most, 2))))
    norm = BoundaryNorm(np.arange(0.5, most + 1.5), cmap.N)
    fig, axes = _grid(len(panels), ROUTE_COLUMNS, len(layout.positions))
    for ax, (s, k, runs), (load, sent) in zip(axes.flat, panels, loads):
        ran = f", {runs} runs" if runs > 1 else ""
        _panel(ax, layout, dict(load), lambda v: cmap(norm(v)),
               f"line {s.line} {s.kind}{ran}\nphase {k} of {len(s.phases)}: {sent} messages, "
               f"at most {max(load.values(), default=0)} on a link")
        ax.xaxis.label.set_size(7)
        ax.yaxis.label.set_size(7)
    _close_grid(fig, axes, len(panels), title, note)
    ticks = list(range(1, most + 1, max(1, most // 8)))
    fig.colorbar(ScalarMappable(norm, cmap), ax=axes, ticks=ticks, shrink=0.8,
                 label="messages of the phase on the link (1: no contention); grey: idle")
    return svg_of(fig)


def statement_loads(routes: Routes, schedules: list[Schedule]
                    ) -> tuple[list[tuple[Schedule, int, Counter]], str]:
    """Per statement (its first schedule and runs): bytes each link carries over all its
    phases and runs, within MAX_ROUTED_PAIRS routes; and a note on what is left. Every
    transfer from a to b takes a's route to b, so bytes are summed per pair and each pair
    routed once."""
    drawn, _ = drawn_schedules(schedules, DotLimits(max_collectives=MAX_LOAD_PANELS,
                                                    max_edges=1 << 62))
    out: list[tuple[Schedule, int, Counter]] = []
    routed = 0
    for s, runs in drawn:
        pairs: Counter = Counter()
        for p in s.phases:
            for t in p.sends:
                if t.src != t.dst:
                    pairs[(t.src, t.dst)] += t.nbytes
        if not pairs:
            continue
        if out and routed + len(pairs) > MAX_ROUTED_PAIRS:
            break
        load: Counter = Counter()
        for (src, dst), nbytes in pairs.items():
            for link in routes(src, dst):
                load[link] += nbytes * runs
        routed += len(pairs)
        out.append((s, runs, load))
    statements = {(s.line, s.kind, s.algorithm) for s in schedules}
    left = len(statements) - len(out)
    return out, (f"{len(out)} of {len(statements)} statements drawn (picture budget)" if left else "")


def link_load_svg(network: Network, layout: Layout, schedules: list[Schedule], title: str) -> str:
    """Per statement, the data each link carries over all its phases and runs (MB)."""
    loads, note = statement_loads(Routes(network), schedules)
    fig, axes = _grid(len(loads), 2, len(layout.positions))
    most = max(max(load.values()) for _, _, load in loads)
    unit, scale = ("MB", 1e6) if most >= 1e6 else ("KB", 1e3)
    cmap, norm = colormaps["viridis"], Normalize(0, most / scale)
    for ax, (s, runs, load) in zip(axes.flat, loads):
        ran = f" over its {runs} runs" if runs > 1 else ""
        _panel(ax, layout, {k: v / scale for k, v in load.items()}, lambda v: cmap(norm(v)),
               f"line {s.line} {s.kind} by {s.algorithm}: all {len(s.phases)} phases{ran}\n"
               f"busiest link {max(load.values()) / scale:.3g} {unit}")
    _close_grid(fig, axes, len(loads), title, note)
    fig.colorbar(ScalarMappable(norm, cmap), ax=axes, shrink=0.8,
                 label=f"data carried by the link ({unit}); grey: idle")
    return svg_of(fig)
