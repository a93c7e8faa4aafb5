"""bench/efficiency.py on tiny cases: a row's fields, the previous best, the summary, the table."""

from __future__ import annotations

import json
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
    assert row["recognized"] == "alltoall" and row["binds"] == "rounds and relays"
    assert set(row["times_s"]) >= {"direct", "standard", "multiphase:1,2"}
    assert row["best_s"] == min(row["times_s"].values())
    assert row["efficiency"] == pytest.approx(row["bound_s"] / row["best_s"])
    assert 0 < row["efficiency"] <= 1
    # Bruck's (issue 27) beats every algorithm hypercube:3 had before for 8-byte blocks; in
    # radix 2 with the top bit's round unpacked (radix.py) by that round's copy more
    assert row["best"] == "radix-bruck" and row["times_s"][row["previous_best"]] > row["best_s"]
    assert row["times_s"]["bruck"] > row["best_s"]


def test_direct_messages_are_measured_against_the_fixed_routes_too(bench, tmp_path):
    """torus:4x4's transpose: e-cube routes put several 64 KB messages on one link, a bound for
    the schedules of direct messages only; the relaying ones are not measured against it."""
    row = bench.measure(bench.Point("torus:4x4", "permutation", 65536))
    assert row["direct_bound_s"] > row["bound_s"]
    assert row["direct_best"] in ("direct", "colouring") and "store-forward" in row["times_s"]
    best_direct_s = row["times_s"][row["direct_best"]]
    assert row["direct_efficiency"] == pytest.approx(row["direct_bound_s"] / best_direct_s)
    assert 0 < row["efficiency"] < row["direct_efficiency"] <= 1
    assert "direct_bound_s" not in bench.measure(bench.Point("sp2:8", "permutation", 65536))
    table = tmp_path / "t.md"
    bench.save([row], [], "bench/efficiency.py --test", 0.0, tmp_path / "r.json", table)
    assert f"| {row['direct_best']}, {bench.ms(row['direct_bound_s'])}, " in table.read_text()


def test_a_name_main_did_not_have_is_not_a_previous_best(bench):
    assert bench.previous("alltoall", "multiphase:2,4") and bench.previous("broadcast", "binomial")
    assert not bench.previous("alltoall", "bruck")


def test_sizes_above_the_ksr1_cap_are_recorded_as_skipped(bench):
    row = bench.measure(bench.Point("ksr1:8", "alltoall", 4096))
    assert "above 2048 B" in row["skipped"] and "efficiency" not in row


def test_summary_and_table(bench, tmp_path):
    rows = [bench.measure(bench.Point("ideal:8", kind, 8)) for kind in ("cshift", "sparse")]
    s = bench.summary(rows, [])
    assert s["all"]["cases"] == 2 and s["without_ksr1_proteus"]["cases"] == 2
    effs = [r["efficiency"] for r in rows]
    assert s["all"]["below_half"] == sum(e < 0.5 for e in effs) == len(s["below_half"])
    assert s["all"]["geomean"] == pytest.approx((effs[0] * effs[1]) ** 0.5)
    table = tmp_path / "t.md"
    report = bench.save(rows, [], "bench/efficiency.py --quick", 0.0, tmp_path / "r.json", table)
    text = table.read_text()
    assert "| cshift | 8 |" in text and "#### ideal:8" in text
    # ideal:8 is not a target of the planned grid: nothing of it is counted as measured
    assert report["complete"] == {"planned": 9 * 11 * 6, "timed": 0, "skipped": 0, "not_runnable": 0,
                                  "not_measured": 9 * 11 * 6, "outside_plan": 2,
                                  "smpi_planned": 4 * (5 + 3 * 4), "smpi_measured": 0,
                                  "smpi_skipped": 0, "smpi_outside_plan": 0}
    assert "**Grid: 0 of 594 planned cases timed**" in text and "2 more outside the plan" in text
    assert text.startswith(bench.GENERATED[0]) and text.rstrip().endswith(bench.GENERATED[1])


def test_a_planned_case_counts_and_a_case_below_half_is_listed(bench, tmp_path):
    row = {"target": "ideal:64", "kind": "cshift", "size_bytes": 8, "nodes": 64, "bound_s": 1e-5,
           "binds": "start-up", "best": "direct", "best_s": 4e-5, "efficiency": 0.25}
    skipped = {"target": "ksr1", "kind": "alltoall", "size_bytes": 16384, "skipped": "above 2048 B"}
    smpi = {"target": "hypercube:6", "kind": "broadcast", "size_bytes": 65536,
            "auto_simgrid": {"algorithm": "binomial", "time_s": 2.0},
            "smpi_best": {"algorithm": "NTSB", "time_s": 1.0}, "auto_over_smpi_best": 2.0}
    table = tmp_path / "t.md"
    report = bench.save([row, skipped], [smpi], "bench/efficiency.py --test", 0.0, tmp_path / "r.json",
                        table)
    c = report["complete"]
    assert (c["timed"], c["skipped"], c["not_measured"], c["smpi_measured"]) == (1, 1, 592, 1)
    text = table.read_text()
    assert "- ideal:64 cshift 8 B: direct 0.25 (start-up)" in text
    assert "- hypercube:6 broadcast 65536 B: auto binomial 2.000x SMPI's NTSB" in text


def test_a_simgrid_case_too_large_for_memory_is_skipped_without_running(bench):
    """64 nodes x 1 MB blocks of an allgather: 4 GB delivered, over bench/collectives.py's cap."""
    row = bench.smpi_row(bench.load_collectives_bench(), None, "ideal:64", "allgather", 1 << 20)
    assert row["skipped"].startswith("4294967296 bytes delivered in all > 268435456")
    assert "auto_simgrid" not in row and "smpi" not in row


def test_the_hand_written_part_is_kept_and_a_file_without_markers_refused(bench, tmp_path):
    table, results = tmp_path / "t.md", tmp_path / "r.json"
    row = bench.measure(bench.Point("ideal:8", "cshift", 8))
    bench.save([row], [], "bench/efficiency.py --a", 0.0, results, table)
    table.write_text("# Title\n\n" + table.read_text() + "\n## Analysis\n\nhand-written\n")
    report = bench.save([], [], "bench/efficiency.py --no-grid --no-smpi", 0.0, results, table)
    assert [r["command"] for r in report["runs"]] == ["bench/efficiency.py --a"]  # measured nothing
    text = table.read_text()
    assert text.startswith("# Title\n\n" + bench.GENERATED[0])
    assert text.endswith("## Analysis\n\nhand-written\n")
    assert text.count(bench.GENERATED[0]) == 1 and "| cshift | 8 |" in text
    plain = tmp_path / "plain.md"
    plain.write_text("# notes\n")
    with pytest.raises(SystemExit, match="plain.md has no generated part"):
        bench.save([], [], "bench/efficiency.py --b", 0.0, results, plain)
    assert plain.read_text() == "# notes\n"


def test_an_empty_table_option_writes_the_results_only(bench, tmp_path, monkeypatch):
    """`--table ''` means no table (it crashed: the empty path is the current folder)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    assert bench.main(["--targets", "ideal:8", "--kinds", "cshift", "--sizes", "8", "--no-smpi",
                       "--out", str(out), "--table", ""]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    assert [r["kind"] for r in json.loads(out.read_text())["rows"]] == ["cshift"]


def test_an_unknown_kind_is_refused_with_the_known_ones(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--kinds", "alltoal", "--no-smpi"])
    assert "unknown kind(s) alltoal; choose from alltoall" in capsys.readouterr().err


def test_the_grid_on_two_workers_gives_the_serial_rows(tmp_path):
    """Issue 28 item 5: the benchmark maps its cases through runtime/parallel.py; run as a user
    runs it, serially and on a two-process LocalCluster."""
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
