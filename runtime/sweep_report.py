"""`phalanx sweep --report DIR`: the sweep run point by point (with progress) and its
report: report.json (the `sweep --json` object), the plots as SVG files and index.html.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console

from phalanx.runtime import html
from phalanx.runtime.html import Picture, escape, ms
from phalanx.runtime.parallel import SERIAL, ParallelOptions, RunStats
from phalanx.runtime.plots import line_label, sweep_bandwidth_svg, sweep_time_svg, variation_svg
from phalanx.runtime.progress import progress_bar
from phalanx.runtime.report import prepare
from phalanx.runtime.sweep import NO_VARIATION, Variation, sweep, sweep_kind, sweep_points


def run_sweep(target_spec: str, collective: str, sizes: list[int], algorithm: str | list[str] = "all",
              seed: int = 0, console: Console | None = None,
              variation: Variation = NO_VARIATION, parallel: ParallelOptions = SERIAL,
              stats: RunStats | None = None) -> dict[str, Any]:
    """`runtime.sweep.sweep` with a progress bar that advances as each point finishes."""
    kind = sweep_kind(collective)
    with progress_bar(sweep_points(target_spec, kind, sizes, algorithm, variation),
                      f"sweep {collective} on {target_spec}", console) as steps:
        return sweep(target_spec, collective, sizes, algorithm, seed, on_point=steps.advance,
                     variation=variation, parallel=parallel, stats=stats)


def _case(r: dict[str, Any]) -> tuple[int, float, float]:
    return r["block_bytes"], r.get("variance", 0.0), r.get("zero_probability", 0.0)


def best_by_size(results: list[dict[str, Any]]) -> dict[tuple[int, float, float], dict[str, Any]]:
    """The fastest point per message size (and per Fig. 9 variation case, if any)."""
    best: dict[tuple[int, float, float], dict[str, Any]] = {}
    for r in results:
        if _case(r) not in best or r["time_s"] < best[_case(r)]["time_s"]:
            best[_case(r)] = r
    return dict(sorted(best.items()))


def sweep_pictures(data: dict[str, Any]) -> list[Picture]:
    pictures = [Picture("bandwidth-picture", "sweep-bandwidth.svg", sweep_bandwidth_svg(data),
                        "Aggregate bandwidth vs message size, one line per algorithm; dashed: "
                        "the bound"),
                Picture("time-picture", "sweep-time.svg", sweep_time_svg(data),
                        "Time vs message size, one line per algorithm (per partition for the "
                        "hypercube family); dashed: the lower bound; crosses: refused points")]
    if "variation" in data:
        pictures.append(Picture("variation-picture", "sweep-variation.svg", variation_svg(data),
                                "Bandwidth vs message-size variation (Fig. 9 of seed 001), one "
                                "line per algorithm and base block size"))
    return pictures


def _results_table(results: list[dict[str, Any]]) -> str:
    rows = [[escape(line_label(r)), str(r["block_bytes"]), ms(r["time_s"]), ms(r["lower_bound_s"]),
             f"{r['efficiency']:.3f}", f"{r['aggregate_bandwidth_Bps'] / 1e6:.1f}",
             html.verdict(r.get("verified", True))] for r in results]
    return html.table(["algorithm", "block bytes", "time (ms)", "lower bound (ms)", "efficiency",
                       "bandwidth (MB/s)", "data"], rows)


def _failures_table(failures: list[dict[str, Any]]) -> str:
    """Points the machine refused (e.g. Fig. 12's direct exchange above 1728 bytes)."""
    if not failures:
        return '<p class="note">Every point ran.</p>'
    rows = [[escape(line_label(f) if "variance" in f else f["algorithm"]), str(f["block_bytes"]),
             escape(f["error"])] for f in failures]
    return html.table(["algorithm", "block bytes", "why it was refused"], rows)


def sweep_html(data: dict[str, Any], pictures: list[Picture]) -> str:
    results = data["results"]
    algorithms: dict[str, int] = defaultdict(int)
    for r in results:
        algorithms[r["algorithm"]] += 1
    verified = all(r.get("verified", True) for r in results)
    summary = html.table([], [
        ["target", escape(data["target"]["spec"])], ["collective", escape(data["collective"])],
        ["algorithms", escape(", ".join(algorithms))],
        ["message sizes (bytes)", escape(", ".join(str(s) for s in sorted({r["block_bytes"]
                                                                          for r in results})))],
        ["result", html.verdict(verified)]])
    summary += "<h3>Target parameters</h3>" + html.params_table(data["target"])
    failures = data.get("failures", [])
    if failures:
        summary += (f'<p class="bad">{len(failures)} points were refused by the machine: see '
                    '<a href="#failures">Refused points</a>.</p>')
    winners = html.table(["block bytes", "fastest algorithm", "time (ms)", "efficiency"], [
        [str(case[0]), escape(line_label(r)), ms(r["time_s"]), f"{r['efficiency']:.3f}"]
        for case, r in best_by_size(results).items()])
    sections = [("summary", "Summary", summary),
                ("plots", "Plots", "".join(html.figure(p) for p in pictures)),
                ("winners", "Fastest per size", winners),
                ("results", "All points", _results_table(results)),
                *([("failures", "Refused points", _failures_table(failures))] if failures else []),
                ("files", "Files", "<ul>" + "".join(f'<li><a href="{f}">{f}</a></li>' for f in (
                    "report.json", *(p.file for p in pictures))) + "</ul>")]
    return html.page(f"Phalanx sweep: {data['collective']} on {data['target']['spec']}", sections)


def write_sweep_report(data: dict[str, Any], directory: str | Path) -> Path:
    """Write report.json, the plots and index.html; returns the path of index.html."""
    directory = prepare(directory)
    (directory / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    pictures = sweep_pictures(data)
    for p in pictures:
        (directory / p.file).write_text(p.svg)
    index = directory / "index.html"
    index.write_text(sweep_html(data, pictures))
    return index
