"""SVG plots for reports, drawn with matplotlib (Agg, no display): sweeps and shared helpers.

Every picture has a title, axis labels with units and a legend. Text stays text in the
SVG (`svg.fonttype = none`) so that files stay small and readable; ids are salted with
a fixed string so that the same data gives the same file.
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: reports are written by batch runs and tests
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)

matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "phalanx",
                            "font.family": "DejaVu Sans", "font.size": 9,
                            "axes.titlesize": 11, "axes.grid": True, "grid.alpha": 0.3})

RASTER_ABOVE = 4000  # draw collections of more shapes than this as an embedded bitmap


def new_figure(width_in: float, height_in: float) -> Figure:
    return Figure(figsize=(width_in, height_in), layout="constrained")


def svg_of(fig: Figure) -> str:
    """The figure as SVG text (deterministic: no date in the metadata)."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def empty_svg(title: str, message: str) -> str:
    """A small picture that says why there is nothing to draw."""
    fig = new_figure(6, 1.2)
    fig.set_gid("phalanx-empty")  # a marker for tests: this picture has no chart
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.4, message, ha="center", va="center", transform=ax.transAxes)
    return svg_of(fig)


def line_label(r: dict[str, Any]) -> str:
    """The line a sweep point belongs to: its algorithm, and its Fig. 9 variation if any."""
    if "variance" not in r:
        return r["algorithm"]
    return f"{r['algorithm']} V={r['variance']:g} P={r['zero_probability']:g}"


def _by_algorithm(results: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    lines: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        lines[line_label(r)].append(r)
    return {alg: sorted(rs, key=lambda r: r["block_bytes"]) for alg, rs in lines.items()}


def _bound_points(results: list[dict[str, Any]]) -> list[tuple[int, float, float]]:
    """(block bytes, lower bound s, bandwidth at the bound B/s) per message size."""
    out = {}
    for r in results:
        if r["lower_bound_s"] > 0 and r["time_s"] > 0 and "variance" not in r:
            moved_bytes = r["aggregate_bandwidth_Bps"] * r["time_s"]
            out[r["block_bytes"]] = (r["lower_bound_s"], moved_bytes / r["lower_bound_s"])
    return [(size, *out[size]) for size in sorted(out)]


def _size_axis(ax: Any) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size per pair (bytes, log scale)")


def _refused(ax: Any, data: dict[str, Any], y: float) -> None:
    """Points the machine refused (sweep `failures`) as crosses at height y."""
    failures = [f for f in data.get("failures", []) if "variance" not in f]
    if failures:
        ax.plot([f["block_bytes"] for f in failures], [y] * len(failures), "rx", markersize=7,
                label=f"refused ({len(failures)} points, see the failures table)")


def sweep_bandwidth_svg(data: dict[str, Any]) -> str:
    """Aggregate bandwidth vs message size, one line per algorithm, the bound dashed."""
    title = f"{data['collective']} on {data['target']['spec']}: bandwidth vs message size"
    if not data["results"]:
        return empty_svg(title, "no point ran: see the failures table")
    fig = new_figure(7, 4)
    ax = fig.add_subplot()
    for alg, rs in _by_algorithm(data["results"]).items():
        ax.plot([r["block_bytes"] for r in rs], [r["aggregate_bandwidth_Bps"] / 1e6 for r in rs],
                marker="o", label=alg)
    bound = _bound_points(data["results"])
    if bound:
        ax.plot([b[0] for b in bound], [b[2] / 1e6 for b in bound], "k--",
                label="bound (bytes / lower bound)")
    _refused(ax, data, 0.0)
    _size_axis(ax)
    ax.set_ylabel("aggregate bandwidth (MB/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(loc="best", fontsize=7)
    return svg_of(fig)


def sweep_time_svg(data: dict[str, Any]) -> str:
    """Time vs message size (log-log), one line per algorithm (per partition: Figs. 10-12 of
    seed 003), the lower bound dashed, refused points as crosses."""
    title = f"{data['collective']} on {data['target']['spec']}: time vs message size"
    if not data["results"]:
        return empty_svg(title, "no point ran: see the failures table")
    fig = new_figure(7, 4.5)
    ax = fig.add_subplot()
    for alg, rs in _by_algorithm(data["results"]).items():
        ax.plot([r["block_bytes"] for r in rs], [r["time_s"] * 1e3 for r in rs],
                marker="o", markersize=3, label=alg)
    bound = _bound_points(data["results"])
    if bound:
        ax.plot([b[0] for b in bound], [b[1] * 1e3 for b in bound], "k--", label="lower bound")
    _refused(ax, data, min(r["time_s"] for r in data["results"]) * 1e3)
    _size_axis(ax)
    ax.set_yscale("log")
    ax.set_ylabel("time (ms, log scale)")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=7, ncol=2 if len(ax.get_lines()) > 8 else 1)
    return svg_of(fig)


def variation_svg(data: dict[str, Any]) -> str:
    """Fig. 9 of 001: bandwidth vs variance V (a) or zero-message probability P (b), one line
    per algorithm and base block size B, each point the mean over the sampled matrices."""
    v = data["variation"]
    if not data["results"]:
        return empty_svg("message-size variation", "no point ran: see the failures table")
    axis = "variance" if len(v["variances"]) > 1 or len(v["zero_probabilities"]) == 1 \
        else "zero_probability"
    other = "zero_probability" if axis == "variance" else "variance"
    lines: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in data["results"]:
        lines[f"{r['algorithm']} B={r['block_bytes']} {other[0].upper()}={r[other]:g}"].append(r)
    fig = new_figure(7, 4.5)
    ax = fig.add_subplot()
    for label, rs in lines.items():
        rs = sorted(rs, key=lambda r: r[axis])
        ax.plot([r[axis] for r in rs], [r["aggregate_bandwidth_Bps"] / 1e6 for r in rs],
                marker="o", markersize=3, label=label)
    ax.set_xlabel("size variance V (sizes in [B - VB, B + VB])" if axis == "variance"
                  else "probability P of a zero-length message")
    ax.set_ylabel("aggregate bandwidth (MB/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{data['collective']} on {data['target']['spec']}: message-size variation "
                 f"(mean of {v['samples']} matrices per point)")
    ax.legend(loc="best", fontsize=7)
    return svg_of(fig)


def candidates_svg(line: int, kind: str, rows: list[dict[str, Any]]) -> str:
    """Per candidate algorithm the time `auto` ranked it by, coloured by whether it was predicted
    or simulated, and the own time of the one that ran; the bound as a line."""
    fig = new_figure(6.5, 0.45 * len(rows) + 1.4)
    ax = fig.add_subplot()
    names = [r["algorithm"] for r in rows]
    ys = range(len(rows))
    for figure, colour in (("predicted", "#9ecae1"), ("simulated", "#fdae6b")):
        mine = [(y, r["time_s"]) for y, r in zip(ys, rows) if r["figure"] == figure]
        if mine:
            ax.barh([y + 0.2 for y, _ in mine], [t * 1e3 for _, t in mine], height=0.4, color=colour,
                    label=f"{figure}: what auto ranked")
    ran = [(y, r["ran_s"]) for y, r in zip(ys, rows) if r["ran_s"] is not None]
    if ran:
        ax.barh([y - 0.2 for y, _ in ran], [t * 1e3 for _, t in ran], height=0.4,
                color="#3182bd", label="ran in the program (own time)")
    if rows and rows[0]["lower_bound_s"] > 0:
        ax.axvline(rows[0]["lower_bound_s"] * 1e3, color="k", linestyle="--", label="lower bound")
    ax.set_yticks(list(ys), names)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("algorithm")
    ax.set_title(f"line {line}: {kind} candidates")
    ax.legend(loc="lower right")
    return svg_of(fig)
