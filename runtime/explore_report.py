"""`phalanx explore --report DIR`: index.html with the plots of a design-space exploration.

Per collective kind: the winning algorithm (least simulated time) as a coloured map over two
of the grid's varying axes (message size across when sizes vary, the first varying parameter
up), with a legend and black crossover lines where the winner changes, as small multiples over
the remaining axes; time and efficiency against the same across-axis, one line per algorithm,
as small multiples; a table of the crossovers and one of the points that did not run.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from phalanx.runtime import html
from phalanx.runtime.explore import Grid, ok_rows
from phalanx.runtime.html import Picture, escape
from phalanx.runtime.plots import new_figure, svg_of
from phalanx.runtime.report import prepare

MAX_PANELS = 16  # small multiples drawn per picture; every point is in the CSV table
NO_WINNER = "(no point ran)"


@dataclass(frozen=True)
class Axis:
    column: str
    values: tuple[Any, ...]

    def label(self, value: Any) -> str:
        if self.column == "block_bytes":
            return _bytes(value)
        return value if isinstance(value, str) else f"{value:g}"

    @property
    def title(self) -> str:
        return "message size (bytes per block)" if self.column == "block_bytes" else self.column


def _bytes(n: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def axes_of(grid: Grid) -> list[Axis]:
    """The grid's axes with more than one value, in order: machines, parameters, sizes."""
    axes = [Axis("target", grid.targets)] + [Axis(p.name, p.values) for p in grid.params]
    axes.append(Axis("block_bytes", grid.sizes))
    return [a for a in axes if len(a.values) > 1]


def layout(axes: list[Axis]) -> tuple[Axis | None, Axis | None, list[Axis]]:
    """(across, up, panels): sizes across when they vary, the first other axis up, the rest
    as small multiples."""
    across = next((a for a in axes if a.column == "block_bytes"), axes[-1] if axes else None)
    rest = [a for a in axes if a is not across]
    return across, (rest[0] if rest else None), rest[1:]


def _key(row: dict[str, Any], axes: list[Axis]) -> tuple[Any, ...]:
    return tuple(row[a.column] for a in axes)


def competitors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The forced algorithms' points (auto's too when it is the only one asked for)."""
    forced = [r for r in ok_rows(rows) if r["algorithm"] != "auto"]
    return forced or ok_rows(rows)


def winners(rows: list[dict[str, Any]], axes: list[Axis]) -> dict[tuple[Any, ...], str]:
    """The algorithm with the least time at each grid cell (first in grid order on a tie)."""
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in competitors(rows):
        k = _key(r, axes)
        if k not in best or r["time_s"] < best[k]["time_s"]:
            best[k] = r
    return {k: r["algorithm_run"] for k, r in best.items()}


def abbreviations(names: list[str]) -> dict[str, str]:
    """Short cell labels: short names as they are, long ones by their hyphenated initials."""
    out = {}
    for name in names:
        short = name if len(name) <= 7 else "".join(p[0] for p in name.split("-") if p)
        out[name] = short if short not in out.values() else name[:7]
    return out


def _panels(panel_axes: list[Axis]) -> list[tuple[Any, ...]]:
    return list(itertools.product(*(a.values for a in panel_axes)))[:MAX_PANELS]


def _panel_title(panel_axes: list[Axis], values: tuple[Any, ...]) -> str:
    return ", ".join(f"{a.column}={a.label(v)}" for a, v in zip(panel_axes, values)) or ""


MAX_FIGURE_WIDTH_IN = 12.0  # ~1150 px: the page's width, so no panel hides behind a scrollbar


def _grid_figure(n: int, cell_w_in: float, cell_h_in: float, extra_h_in: float):
    cols = max(1, min(3, n, int(MAX_FIGURE_WIDTH_IN // cell_w_in)))
    rows = math.ceil(n / cols)
    fig = new_figure(max(cell_w_in * cols, 6), cell_h_in * rows + extra_h_in)
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(n)]


def winner_map_svg(kind: str, rows: list[dict[str, Any]], axes: list[Axis]) -> tuple[str, list[str]]:
    """The map, and the crossovers as sentences."""
    across, up, panel_axes = layout(axes)
    win = winners(rows, axes)
    names = sorted(set(win.values()))
    colours = (["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896"]
               * 4)[:max(len(names), 1)]
    short = abbreviations(names)
    xs = across.values if across else (None,)
    ys = up.values if up else (None,)
    panels = _panels(panel_axes)
    fig, axs = _grid_figure(len(panels), 0.62 * len(xs) + 1.6, 0.42 * len(ys) + 1.3, 1.0)
    crossings = []
    for ax, panel in zip(axs, panels):
        cells = [[names.index(win[_cell(axes, across, up, panel_axes, x, y, panel)])
                  if _cell(axes, across, up, panel_axes, x, y, panel) in win else -1 for x in xs] for y in ys]
        shown = [[c if c >= 0 else math.nan for c in row] for row in cells]
        ax.imshow(shown, cmap=ListedColormap(colours), vmin=-0.5, vmax=len(colours) - 0.5,
                  origin="lower", aspect="auto", interpolation="nearest")
        for yi, row in enumerate(cells):
            for xi, c in enumerate(row):
                ax.text(xi, yi, short[names[c]] if c >= 0 else "-", ha="center", va="center",
                        fontsize=7, color="white" if c >= 0 else "black")
        crossings += _crossover_lines(ax, cells, names, xs, ys, across, up, panel_axes, panel)
        ax.set_xticks(range(len(xs)), [across.label(x) for x in xs] if across else [""])
        ax.set_yticks(range(len(ys)), [up.label(y) for y in ys] if up else [""])
        ax.set_xlabel(across.title if across else "")
        ax.set_ylabel(up.title if up else "")
        ax.grid(False)
        ax.set_title(_panel_title(panel_axes, panel), fontsize=9)
    fig.suptitle(f"{kind}: fastest algorithm (simulated); black lines: crossovers")
    fig.legend(handles=[Patch(color=colours[i], label=f"{short[n]} = {n}" if short[n] != n else n)
                        for i, n in enumerate(names)],
               loc="outside lower center", ncol=min(4, max(len(names), 1)), fontsize=8)
    return svg_of(fig), crossings


def _cell(axes: list[Axis], across: Axis | None, up: Axis | None, panel_axes: list[Axis],
          x: Any, y: Any, panel: tuple[Any, ...]) -> tuple[Any, ...]:
    where = dict(zip([a.column for a in panel_axes], panel))
    if across:
        where[across.column] = x
    if up:
        where[up.column] = y
    return tuple(where[a.column] for a in axes)


def _crossover_lines(ax: Any, cells: list[list[int]], names: list[str], xs: tuple[Any, ...],
                     ys: tuple[Any, ...], across: Axis | None, up: Axis | None, panel_axes: list[Axis],
                     panel: tuple[Any, ...]) -> list[str]:
    """Black lines between neighbouring cells whose winners differ; the changes along `across`."""
    out = []
    where = _panel_title(panel_axes, panel)
    for yi, row in enumerate(cells):
        for xi, c in enumerate(row):
            if xi + 1 < len(row) and row[xi + 1] != c and min(c, row[xi + 1]) >= 0:
                ax.plot([xi + 0.5, xi + 0.5], [yi - 0.5, yi + 0.5], color="black", linewidth=2.5)
                assert across is not None
                at = ", ".join(filter(None, [f"{up.column}={up.label(ys[yi])}" if up else "", where]))
                out.append(f"{at + ': ' if at else ''}between {across.label(xs[xi])} and "
                           f"{across.label(xs[xi + 1])}: {names[c]} -> {names[row[xi + 1]]}")
            if yi + 1 < len(cells) and cells[yi + 1][xi] != c and min(c, cells[yi + 1][xi]) >= 0:
                ax.plot([xi - 0.5, xi + 0.5], [yi + 0.5, yi + 0.5], color="black", linewidth=2.5)
    return out


def lines_svg(kind: str, rows: list[dict[str, Any]], axes: list[Axis], column: str, what: str) -> str:
    """`column` (time_s or efficiency) against the across-axis, one line per algorithm, as
    small multiples over the other axes."""
    across, up, rest = layout(axes)
    panel_axes = [a for a in (up, *rest) if a is not None]
    panels = _panels(panel_axes)
    fig, axs = _grid_figure(len(panels), 4.4, 3.0, 0.8)
    algorithms = list(dict.fromkeys(r["algorithm"] for r in ok_rows(rows)))
    for ax, panel in zip(axs, panels):
        where = dict(zip([a.column for a in panel_axes], panel))
        for alg in algorithms:
            pts = [r for r in ok_rows(rows) if r["algorithm"] == alg
                   and all(r[c] == v for c, v in where.items())]
            xs = [across.values.index(r[across.column]) if across and across.column == "target"
                  else (r[across.column] if across else 0) for r in pts]
            scale = 1e3 if column == "time_s" else 1.0
            ax.plot(xs, [r[column] * scale for r in pts], marker="o", markersize=3, label=alg)
        if across and across.column == "block_bytes":
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(across.values), [across.label(v) for v in across.values])
            ax.minorticks_off()
        elif across and across.column == "target":
            ax.set_xticks(range(len(across.values)), list(across.values))
        if column == "time_s":
            ax.set_yscale("log")
        ax.set_xlabel(across.title if across else "")
        ax.set_ylabel(what)
        ax.set_title(_panel_title(panel_axes, panel), fontsize=9)
    handles, labels = axs[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8)
    fig.suptitle(f"{kind}: {what} per algorithm")
    return svg_of(fig)


def kind_pictures(kind: str, rows: list[dict[str, Any]], axes: list[Axis]) -> tuple[list[Picture], list[str]]:
    winner_svg, crossings = winner_map_svg(kind, rows, axes)
    more = len(list(itertools.product(*(a.values for a in layout(axes)[2])))) > MAX_PANELS
    note = f" (the first {MAX_PANELS} panels; every point is in the CSV table)" if more else ""
    return [Picture(f"{kind}-winner", f"{kind}-winner.svg", winner_svg,
                    "The fastest algorithm at each grid point (least simulated time among the forced "
                    "algorithms), coloured; black lines mark crossovers" + note, wide=True),
            Picture(f"{kind}-time", f"{kind}-time.svg", lines_svg(kind, rows, axes, "time_s", "time (ms)"),
                    "Simulated time per algorithm" + note),
            Picture(f"{kind}-efficiency", f"{kind}-efficiency.svg",
                    lines_svg(kind, rows, axes, "efficiency", "efficiency (lower bound / time)"),
                    "Efficiency per algorithm: the lower bound over the simulated time" + note)], crossings


def explore_html(grid: Grid, rows: list[dict[str, Any]], sections_by_kind: dict[str, tuple[list[Picture],
                 list[str]]], csv_name: str, run: dict[str, Any]) -> str:
    not_run = [r for r in rows if r["status"] != "ok"]
    unverified = [r for r in ok_rows(rows) if not r["verified"]]
    summary = html.table([], [
        ["machines", escape(", ".join(grid.targets))],
        *[[escape(p.name), escape(", ".join(f"{v:g}" for v in p.values))] for p in grid.params],
        ["kinds", escape(", ".join(grid.kinds))],
        ["message sizes", escape(", ".join(_bytes(s) for s in grid.sizes) or "(the program's)")],
        ["algorithms", escape(", ".join(grid.algorithms))],
        ["points", f"{len(rows)} ({len(rows) - len(not_run)} ran, {len(not_run)} did not)"],
        ["run", escape(f"{run['computed']} points computed, {run['cached']} from the cache, "
                       f"{run['wall_s']} s wall time")],
        ["data", html.verdict(not unverified)]])
    sections = [("summary", "Summary", summary + f'<p><a href="{csv_name}">{csv_name}</a>: one row a '
                 "point, every parameter a column.</p>")]
    for kind, (pictures, crossings) in sections_by_kind.items():
        body = "".join(html.figure(p) for p in pictures)
        body += "<h3>Crossovers</h3>" + (html.table(["where the fastest algorithm changes"],
                                                     [[escape(c)] for c in crossings])
                                          if crossings else '<p class="note">No crossover along the '
                                          "across-axis.</p>")
        sections.append((f"kind-{kind}", kind, body))
    if not_run:
        sections.append(("not-run", "Points that did not run", html.table(
            ["target", "parameters", "kind", "bytes", "algorithm", "status", "why"],
            [[escape(r["target"]), escape(", ".join(f"{p.name}={r[p.name]:g}" for p in grid.params)),
              escape(r["kind"]), str(r["block_bytes"] or ""), escape(r["algorithm"]), escape(r["status"]),
              escape(r["error"])] for r in not_run])))
    return html.page("Phalanx exploration: " + ", ".join(grid.kinds) + " on " + ", ".join(grid.targets),
                     sections)


def write_explore_report(grid: Grid, rows: list[dict[str, Any]], directory: str | Path, csv_path: Path,
                         run: dict[str, Any]) -> Path:
    """Write the plots and index.html next to the table; returns the path of index.html."""
    directory = prepare(directory)
    axes = axes_of(grid)
    by_kind = {kind: kind_pictures(kind, [r for r in rows if r["kind"] == kind], axes) for kind in grid.kinds}
    for pictures, _ in by_kind.values():
        for p in pictures:
            (directory / p.file).write_text(p.svg)
    try:
        csv_name = str(csv_path.relative_to(directory.resolve()))
    except ValueError:
        csv_name = csv_path.as_uri()
    index = directory / "index.html"
    index.write_text(explore_html(grid, rows, by_kind, csv_name, run))
    return index
