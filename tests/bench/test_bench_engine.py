"""bench/engine.py on a tiny row: both engines' points, the same simulated time, the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import load_bench_script
from phalanx.compiler.kind import Kind

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    return load_bench_script("bench/engine.py", "bench_engine")


def test_a_row_runs_both_engines_in_child_processes_and_agrees(bench, tmp_path):
    row = bench.Row("ideal:4 all-to-all", "ideal:4", "direct", 64)
    args = bench.arguments(["--timeout", "120", "--no-smpi"])
    result = bench.measure(row, args, tmp_path)
    for mode in ("timing", "checked"):
        native, python = result[f"native_{mode}"], result[f"python_{mode}"]
        assert native["verified"] and python["verified"]
        assert native["events"] == python["events"] and native["messages"] == 12
        assert result[f"{mode}_same_simulated_time"] and result[f"{mode}_speedup"] > 0
        assert native["maxrss_MB"] > 0
    # issue 30's memory figure, for the checked runs (the program's two 4 x 256-byte arrays)
    checked = result["native_checked"]
    assert checked["arrays_MB"] == round(2 * 4 * 256 / 2**20, 3) and checked["imported_MB"] > 0
    over = checked["over_arrays_and_plan"] * (checked["arrays_MB"] + checked["plan_MB"])
    assert over == pytest.approx(checked["maxrss_MB"] - checked["imported_MB"], abs=0.5)  # whole MB
    assert "over_arrays_and_plan" not in result["native_timing"]
    # the figure's baseline is read once the modules the compile and the run use are imported
    # (code, not the program's data); lark's parser, built by the first compile, asks getpass
    # for the user name, which imports pwd
    for engine in ("native", "python"):
        assert set(result[f"{engine}_checked"]["imported_later"]) <= {"pwd"}
    lines = bench.table([result]).splitlines()
    assert lines[2].startswith("| ideal:4 all-to-all | 12, ") and "| timing |" in lines[2]
    assert "| checked |" in lines[3] and "x arrays + plan)" in lines[3]


def test_a_row_of_another_kind_runs_its_statement(bench, tmp_path):
    """Row.kind: an eager allreduce (eager phases run on the native core too), both engines."""
    row = bench.Row("torus:4x4 eager allreduce", "torus:4x4", "eager-cut-halving", 4096, kind=Kind.ALLREDUCE)
    args = bench.arguments(["--timeout", "120", "--no-smpi", "--mode", "timing"])
    result = bench.measure(row, args, tmp_path)
    native, python = result["native_timing"], result["python_timing"]
    assert native["verified"] and python["verified"] and result["timing_same_simulated_time"]
    assert native["events"] == python["events"] > 0 and native["messages"] > 0

