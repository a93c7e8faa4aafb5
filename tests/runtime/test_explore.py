"""`phalanx explore` (runtime/explore.py, runtime/explore_report.py): the grid, its CSV table,
the report's winner map and crossovers, a program in place of a collective, and bad input."""

from __future__ import annotations

import csv
import io

import pytest

from phalanx.runtime.explore import Grid, parse_param, with_params
from phalanx.runtime.explore_report import (
    MAX_FIGURE_WIDTH_IN,
    Axis,
    abbreviations,
    layout,
    winner_map_svg,
    winners,
)

TINY = ("explore", "--target", "torus:2x2", "--param", "link_MBps=40,160", "--collective", "allgather",
        "--sizes", "64,4K", "--algorithm", "ring", "--algorithm", "recursive-doubling",
        "--algorithm", "auto", "--workers", "1")


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_explore_writes_one_row_a_point_with_every_parameter_a_column(cli, tmp_path):
    r = cli(*TINY, "--report", str(tmp_path / "out"))
    assert r.code == 0, r.err
    table = (tmp_path / "out" / "points.csv").read_text()
    rows = _rows(table)
    assert table.splitlines()[0] == ("target,nodes,link_MBps,kind,block_bytes,algorithm,algorithm_run,"
                                     "status,time_s,lower_bound_s,efficiency,aggregate_bandwidth_Bps,"
                                     "verified,error")
    assert [(r["link_MBps"], r["block_bytes"], r["algorithm"]) for r in rows] == [
        (bw, size, alg) for bw in ("40.0", "160.0") for size in ("64", "4096")
        for alg in ("ring", "recursive-doubling", "auto")]
    assert {r["status"] for r in rows} == {"ok"} and {r["verified"] for r in rows} == {"True"}
    for size in ("64", "4096"):  # faster links, less time: the parameter reached the machine
        t = {r["link_MBps"]: float(r["time_s"]) for r in rows if r["algorithm"] == "ring"
             and r["block_bytes"] == size}
        assert t["160.0"] < t["40.0"]
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "points.csv", "index.html", "allgather-winner.svg", "allgather-time.svg", "allgather-efficiency.svg"}
    page = (tmp_path / "out" / "index.html").read_text()
    assert "allgather: fastest algorithm (simulated)" in page and "points.csv" in page


def test_the_winner_map_and_crossovers_follow_the_table(cli, tmp_path):
    r = cli(*TINY, "--csv", str(tmp_path / "t.csv"), "--report", str(tmp_path / "out"))
    rows = _rows((tmp_path / "t.csv").read_text())
    forced = [x for x in rows if x["algorithm"] != "auto"]
    cells = {}
    for x in forced:
        key = (float(x["link_MBps"]), int(x["block_bytes"]))
        if key not in cells or float(x["time_s"]) < cells[key][1]:
            cells[key] = (x["algorithm_run"], float(x["time_s"]))
    typed = [x | {"link_MBps": float(x["link_MBps"]), "block_bytes": int(x["block_bytes"]),
                  "time_s": float(x["time_s"])} for x in rows]
    axes = [Axis("link_MBps", (40.0, 160.0)), Axis("block_bytes", (64, 4096))]
    assert winners(typed, axes) == {k: v[0] for k, v in cells.items()}
    page = (tmp_path / "out" / "index.html").read_text()
    for bw in (40.0, 160.0):
        small, large = cells[(bw, 64)][0], cells[(bw, 4096)][0]
        sentence = f"link_MBps={bw:g}: between 64 and 4K: {small} -&gt; {large}"
        assert (sentence in page) == (small != large)
    assert r.code == 0


def test_layout_puts_sizes_across_the_first_parameter_up_and_the_rest_in_panels():
    axes = [Axis("link_MBps", (40.0, 80.0)), Axis("overhead_cycles", (200.0, 400.0)),
            Axis("block_bytes", (64, 128))]
    across, up, panels = layout(axes)
    assert (across.column, up.column, [a.column for a in panels]) == (
        "block_bytes", "link_MBps", ["overhead_cycles"])
    assert abbreviations(["ring", "recursive-doubling", "dim-ordered"]) == {
        "ring": "ring", "recursive-doubling": "rd", "dim-ordered": "do"}


def test_a_winner_map_of_three_panels_fits_the_page():
    """Three panels of six sizes were 16 inches wide: the third panel hid behind a scrollbar."""
    import re

    axes = [Axis("link_MBps", (40.0, 80.0, 160.0)), Axis("overhead_cycles", (200.0, 400.0, 800.0)),
            Axis("block_bytes", (64, 256, 1024, 4096, 16384, 65536))]
    rows = [{"target": "torus:8x8", "link_MBps": bw, "overhead_cycles": o, "block_bytes": b,
             "kind": "allgather", "algorithm": alg, "algorithm_run": alg, "status": "ok",
             "time_s": t * b, "verified": True}
            for bw in axes[0].values for o in axes[1].values for b in axes[2].values
            for alg, t in (("ring", 1.0), ("dim-ordered", 2.0 if b < 1024 else 0.5))]
    svg, crossings = winner_map_svg("allgather", rows, axes)
    width_pt = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', svg).group(1))
    assert 0 < width_pt <= MAX_FIGURE_WIDTH_IN * 72
    assert svg.count("overhead_cycles=") == 3  # every panel drawn
    assert len(crossings) == 9  # one per (bandwidth, overhead) row: ring below 1K, dim-ordered from 1K


def test_a_program_runs_at_every_grid_point(cli, tmp_path):
    program = tmp_path / "gather.phx"
    program.write_text("processors P(4)\narray D(64) of byte distribute BLOCK onto P\n"
                       "array R(64) of byte replicated onto P\nR = D\n")
    r = cli("explore", "--target", "ideal:4", "--param", "alpha_us=5,20", "--program", str(program),
            "--workers", "1")
    assert r.code == 0, r.err
    rows = _rows(r.out)
    assert [(x["alpha_us"], x["kind"], x["algorithm"], x["status"], x["verified"]) for x in rows] == [
        ("5.0", "program", "auto", "ok", "True"), ("20.0", "program", "auto", "ok", "True")]
    assert float(rows[1]["time_s"]) > float(rows[0]["time_s"]) > 0
    assert 0 < float(rows[0]["efficiency"]) <= 1


def test_with_params_adds_overrides_to_a_spec():
    assert with_params("torus:8x8", (("link_MBps", 80.0),)) == "torus:8x8,link_MBps=80"
    assert with_params("proteus", (("links", 2.0),)) == "proteus:links=2"
    assert parse_param("alpha_us = 5, 10") .values == (5.0, 10.0)
    assert Grid(("ideal:4",), (parse_param("a=1,2"), parse_param("b=3")), ("allgather",), (64,),
                ("all",)).settings() == [(("a", 1.0), ("b", 3.0)), (("a", 2.0), ("b", 3.0))]


@pytest.mark.parametrize("args, message", [
    (["--param", "link_MBps"], "bad --param 'link_MBps'"),
    (["--param", "link_MBps=fast"], "bad value 'fast' in --param 'link_MBps=fast': not a number"),
    (["--param", "nonsense=1,2"], "unknown parameter 'nonsense' for target 'torus'"),
    (["--param", "link_MBps=,"], "bad --param 'link_MBps=,'"),
    (["--param", "link_MBps=40", "--param", "link_MBps=80"], "a --param is given twice"),
    (["--collective", "nonsense"], "cannot explore collective 'nonsense'"),
])
def test_bad_explore_input_says_what_and_exits_2(cli, args, message):
    base = {"--collective": "allgather", "--sizes": "64"}
    for key in args[::2]:
        base.pop(key, None)
    r = cli("explore", "--target", "torus:2x2", *[x for kv in base.items() for x in kv], *args,
            "--workers", "1")
    assert r.code == 2 and r.err.startswith("phalanx: error: " + message), r.err
    assert "hint:" in r.err and "Traceback" not in r.err


def test_a_program_takes_no_sizes_and_no_all(cli, tmp_path):
    program = tmp_path / "p.phx"
    program.write_text("processors P(4)\narray D(8) of byte distribute BLOCK onto P\n")
    r = cli("explore", "--target", "ideal:4", "--program", str(program), "--sizes", "64")
    assert r.code == 2 and "--program replaces --collective and --sizes" in r.err
    r = cli("explore", "--target", "ideal:4", "--program", str(program), "--algorithm", "all")
    assert r.code == 2 and "--algorithm all is for collectives, not a program" in r.err
    r = cli("explore", "--target", "ideal:4", "--program", str(tmp_path / "missing.phx"))
    assert r.code == 2 and f"cannot read '{tmp_path / 'missing.phx'}'" in r.err


def test_a_program_error_shows_its_location_before_any_point_runs(cli, tmp_path):
    program = tmp_path / "bad.phx"
    program.write_text("processors P(4)\nB = C\n")
    r = cli("explore", "--target", "ideal:4", "--param", "alpha_us=5,20", "--program", str(program))
    assert r.code == 1 and r.err.startswith(f"{program}:2:") and "Traceback" not in r.err
