"""Utilisation pictures from a network model's resources, and routes on a topology.

Generic: every network model lists its resources (`resources()`, each with a `name`
and the `busy_s` the engine accumulated). Names that carry a node number ("node 3 send
port", "link 3 +x") become a grid, one column per node and one row per kind of
resource; other names become a bar chart of the busiest resources.

Optional operations of runtime/network.py's `Network` (docs/reports.md):
- `layout() -> Layout`: node coordinates and, per link resource name, the two nodes it
  joins. The heatmap is then drawn on the topology.
- `route(src, dst) -> list[str]`: names of the link resources a message holds. With
  `layout()` runtime/routes.py draws phases' messages on the topology.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize

from phalanx.compiler.plan_walk import messages
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.runtime.network import Layout, Network
from phalanx.runtime.plots import empty_svg, new_figure, svg_of

MAX_GRID_ROWS = 24  # more kinds of resource than this: a bar chart instead of a grid
MAX_BARS = 40
_NODE = re.compile(r"(\(\d+(?:,\d+)*\)|\d+)")  # "(2,3)" coordinates or a node number
HEAT = colormaps["viridis"]


def utilisation(resources: Sequence[Any], total_time_s: float) -> dict[str, float]:
    """Busy time over run time per resource name, in [0, 1]."""
    if total_time_s <= 0:
        return {r.name: 0.0 for r in resources}
    return {r.name: min(r.busy_s / total_time_s, 1.0) for r in resources}


def _node_order(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", key))


def _grid(names: list[str]) -> tuple[list[str], list[str], dict[str, tuple[int, int]]] | None:
    """(row kinds, node columns, name -> (row, col)) when every name carries a node number."""
    cells: dict[str, tuple[str, int]] = {}
    for name in names:
        match = _NODE.search(name)
        if match is None:
            return None
        kind = (name[:match.start()] + name[match.end():]).replace("  ", " ").strip()
        cells[name] = (kind, match.group(1))
    kinds = sorted({k for k, _ in cells.values()})
    nodes = sorted({n for _, n in cells.values()}, key=_node_order)
    if len(kinds) > MAX_GRID_ROWS:
        return None
    col = {n: i for i, n in enumerate(nodes)}
    return kinds, nodes, {name: (kinds.index(k), col[n]) for name, (k, n) in cells.items()}


def _title(what: str, use: dict[str, float]) -> str:
    mean = sum(use.values()) / len(use)
    return f"{what}\nbusy time / run time: mean {mean:.0%}, max {max(use.values()):.0%}"


def _key_style(name: str) -> str:
    match = _NODE.search(name)
    return "coordinates" if match and match.group(1).startswith("(") else "node"


def grid_heatmap_svg(use: dict[str, float], title: str) -> str:
    """One grid per naming style (node numbers, coordinates): rows are kinds, columns nodes."""
    groups: dict[str, list[str]] = {}
    for name in use:
        groups.setdefault(_key_style(name), []).append(name)
    grids = [_grid(names) for names in groups.values()]
    if any(g is None for g in grids):
        return bars_svg(use, title)
    widest = max(len(g[1]) for g in grids)
    heights = [len(g[0]) + 1.5 for g in grids]
    fig = new_figure(min(max(5.0, 0.28 * widest + 3), 11), 0.4 * sum(heights) + 1.2)
    axes = fig.subplots(len(grids), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, (kinds, nodes, where), style in zip(axes, grids, groups):
        heat = np.full((len(kinds), len(nodes)), np.nan)
        for name, cell in where.items():
            heat[cell] = use[name]
        image = ax.imshow(heat, aspect="auto", cmap=HEAT, vmin=0, vmax=1, interpolation="nearest")
        ax.set_yticks(range(len(kinds)), kinds)
        step = max(1, len(nodes) // 32)
        ax.set_xticks(range(0, len(nodes), step), nodes[::step], rotation=90 if style == "coordinates" else 0)
        ax.grid(visible=False)
        ax.set_xlabel("node (coordinates)" if style == "coordinates" else "node")
        ax.set_ylabel("resource")
    axes[0].set_title(_title(title, use))
    fig.colorbar(image, ax=list(axes), label="utilisation (fraction of run time)")
    return svg_of(fig)


def bars_svg(use: dict[str, float], title: str) -> str:
    busiest = sorted(use.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_BARS]
    fig = new_figure(7, 0.22 * len(busiest) + 1.4)
    ax = fig.add_subplot()
    ax.barh(range(len(busiest)), [v for _, v in busiest], color=[HEAT(v) for _, v in busiest],
            label="utilisation")
    ax.set_yticks(range(len(busiest)), [k for k, _ in busiest])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("utilisation (fraction of run time)")
    ax.set_ylabel("resource")
    shown = f" ({len(busiest)} busiest of {len(use)})" if len(busiest) < len(use) else ""
    ax.set_title(_title(title + shown, use))
    ax.legend(loc="lower right")
    return svg_of(fig)


def link_segments(layout: Layout, a: int, b: int, offset: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Line pieces for link a->b: straight between neighbours, two stubs for a wrap-around."""
    pa, pb = np.array(layout.positions[a], float), np.array(layout.positions[b], float)
    d = pb - pa
    length = float(np.hypot(*d)) or 1.0
    normal = np.array([-d[1], d[0]]) / length * offset
    if length <= 1.01:
        return [(pa + normal + 0.12 * d, pb + normal - 0.12 * d)]
    step = -d / length * 0.45  # a wrap-around link leaves a outwards and enters b from outside
    return [(pa + normal, pa + step + normal), (pb - step + normal, pb + normal)]


def draw_links(ax: Any, layout: Layout, values: dict[str, float], colour, offset: float,
               idle: str | None = None) -> None:
    """Every link of the layout in one collection (fast at 1024 links), coloured by
    `colour(values[name])`; links without a value in `idle` and thin (None: coloured by 0).
    Past 64 nodes the lines are rasterized: the SVG stays small."""
    lines, colours, quiet = [], [], []
    for name, (a, b) in layout.links.items():
        pieces = [(tuple(p), tuple(q)) for p, q in link_segments(layout, a, b, offset)]
        if name in values or idle is None:
            lines += pieces
            colours += [colour(values.get(name, 0.0))] * len(pieces)
        else:
            quiet += pieces
    big = len(layout.positions) > 64
    if quiet:
        ax.add_collection(LineCollection(quiet, colors=idle, linewidths=0.6, rasterized=big))
    ax.add_collection(LineCollection(lines, colors=colours, linewidths=1.1 if big else 2.2,
                                     capstyle="butt", rasterized=big))


def draw_nodes(ax: Any, layout: Layout, labels: bool = True) -> None:
    """The nodes as circles (numbered when `labels` and at most 64), axes in topology units."""
    xy = np.array([layout.positions[n] for n in sorted(layout.positions)])
    ax.scatter(xy[:, 0], xy[:, 1], s=60 if len(xy) <= 64 else 12, color="white",
               edgecolors="k", zorder=3, label="node")
    if labels and len(xy) <= 64:
        for n, (x, y) in layout.positions.items():
            ax.text(x, y, str(n), ha="center", va="center", fontsize=6, zorder=4)
    ax.set_aspect("equal")
    ax.grid(visible=False)
    ax.set_xlabel("x (topology coordinate)")
    ax.set_ylabel("y (topology coordinate)")


def topology_heatmap_svg(layout: Layout, use: dict[str, float], title: str) -> str:
    fig = new_figure(7, 6.5)
    ax = fig.add_subplot()
    draw_links(ax, layout, use, HEAT, 0.08)
    draw_nodes(ax, layout)
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(_title(title, {k: use.get(k, 0.0) for k in layout.links} or use))
    fig.colorbar(ScalarMappable(Normalize(0, 1), HEAT), ax=ax,
                 label="link utilisation (fraction of run time)")
    return svg_of(fig)


def utilisation_svg(network: Network | None, total_time_s: float) -> str:
    """The heatmap of the run: on the topology when the network offers layout(); None: the
    run was not on a built-in network (another backend)."""
    resources = list(network.resources()) if network is not None else []
    if not resources:
        return empty_svg("utilisation", "this network model lists no resources")
    use = utilisation(resources, total_time_s)
    layout = network.layout()
    if layout is not None and layout.links:
        return topology_heatmap_svg(layout, use, "link utilisation")
    return grid_heatmap_svg(use, "utilisation of ports and links")


def phase_messages(phase: Phase) -> list[tuple[Transfer, ...]]:
    """A phase's network messages between distinct nodes: each node's sends grouped as the
    interpreter sends them (runtime/interpreter.py `messages`)."""
    by_node: dict[int, list[Transfer]] = {}
    for t in phase.sends:
        by_node.setdefault(t.src, []).append(t)
    return [m for sends in by_node.values() for m in messages(sends) if m[0].src != m[0].dst]
