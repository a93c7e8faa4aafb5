"""bench/efficiency.py on tiny cases: a row's fields, the previous best, the summary, the table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import load_bench_script

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return load_bench_script("bench/efficiency.py", "bench_efficiency")


@pytest.fixture(scope="module")
def bench():
    return load_bench()


def test_a_case_times_every_algorithm_against_the_bound(bench):
    row = bench.measure(bench.Point("hypercube:3", "alltoall", 8))
    assert row["recognized"] == "alltoall" and row["binds"] == "start-up"
    assert set(row["times_s"]) >= {"direct", "standard", "multiphase:1,2"}
    assert row["best_s"] == min(row["times_s"].values())
    assert row["efficiency"] == pytest.approx(row["bound_s"] / row["best_s"])
    assert 0 < row["efficiency"] <= 1
    # Bruck's (issue 27) beats every algorithm hypercube:3 had before for 8-byte blocks
    assert row["best"] == "bruck" and row["times_s"][row["previous_best"]] > row["best_s"]


def test_direct_messages_are_measured_against_the_fixed_routes_too(bench):
    """torus:4x4's transpose: e-cube routes put several 64 KB messages on one link, a bound for
    the schedules of direct messages only; the relaying ones are not measured against it."""
    row = bench.measure(bench.Point("torus:4x4", "permutation", 65536))
    assert row["direct_bound_s"] > row["bound_s"]
    assert row["direct_best"] in ("direct", "colouring") and "store-forward" in row["times_s"]
    best_direct_s = row["times_s"][row["direct_best"]]
    assert row["direct_efficiency"] == pytest.approx(row["direct_bound_s"] / best_direct_s)
    assert 0 < row["efficiency"] < row["direct_efficiency"] <= 1
    assert "direct_bound_s" not in bench.measure(bench.Point("sp2:8", "permutation", 65536))
    report = {"run": {"command": "bench/efficiency.py", "subset": True, "wall_s": 1.0},
              "summary": bench.summary([row]), "rows": [row], "smpi": []}
    assert f"| {row['direct_best']}, {bench.ms(row['direct_bound_s'])}, " in bench.markdown(report)


def test_a_name_main_did_not_have_is_not_a_previous_best(bench):
    assert bench.previous("alltoall", "multiphase:2,4") and bench.previous("broadcast", "binomial")
    assert not bench.previous("alltoall", "bruck")


def test_sizes_above_the_ksr1_cap_are_recorded_as_skipped(bench):
    row = bench.measure(bench.Point("ksr1:8", "alltoall", 4096))
    assert "above 2048 B" in row["skipped"] and "efficiency" not in row


def test_summary_and_table(bench):
    rows = [bench.measure(bench.Point("ideal:8", kind, 8)) for kind in ("cshift", "sparse")]
    s = bench.summary(rows)
    assert s["all"]["cases"] == 2 and s["without_ksr1_proteus"]["cases"] == 2
    effs = [r["efficiency"] for r in rows]
    assert s["all"]["below_half"] == sum(e < 0.5 for e in effs)
    assert s["all"]["geomean"] == pytest.approx((effs[0] * effs[1]) ** 0.5)
    report = {"run": {"command": "bench/efficiency.py --quick", "subset": True, "wall_s": 1.0},
              "summary": s, "rows": rows, "smpi": []}
    table = bench.markdown(report)
    assert "| ideal:8 | cshift | 8 |" in table and "A subset of the grid" in table


def test_an_unknown_kind_is_refused_with_the_known_ones(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--kinds", "alltoal", "--no-smpi"])
    assert "unknown kind(s) alltoal; choose from alltoall" in capsys.readouterr().err


def test_the_grid_on_two_workers_gives_the_serial_rows(tmp_path):
    """Issue 28 item 5: the benchmark maps its cases through runtime/parallel.py; run as a user
    runs it, serially and on a two-process LocalCluster."""
    import json
    import subprocess

    rows = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        subprocess.run([sys.executable, str(ROOT / "bench/efficiency.py"), "--targets", "ideal:8",
                        "--kinds", "cshift,broadcast,alltoall", "--sizes", "8", "--no-smpi",
                        "--workers", workers, "--out", str(out), "--table", str(tmp_path / "t.md")],
                       check=True, capture_output=True, text=True, timeout=300)
        rows[workers] = [{k: v for k, v in r.items() if k != "wall_s"}
                         for r in json.loads(out.read_text())["rows"]]
    assert sorted(r["kind"] for r in rows["1"]) == ["alltoall", "broadcast", "cshift"]
    assert all(0 < r["efficiency"] <= 1 for r in rows["1"])
    assert rows["2"] == rows["1"]
