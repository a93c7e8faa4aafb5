"""bench/collectives.py on one tiny case: the row's fields, no time below its bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_bench_script

ROOT = Path(__file__).resolve().parents[2]
needs_simgrid = pytest.mark.simgrid  # skipped where SimGrid is missing (tests/conftest.py)


def load_bench():
    return load_bench_script("bench/collectives.py", "bench_collectives")


def check_phalanx(row: dict) -> None:
    ph = row["phalanx"]
    assert ph["algorithms"] and ph["best"] is not None
    for point in ph["algorithms"] + [ph["auto"]]:
        if "error" in point:
            continue
        assert set(point) >= {"algorithm", "time_s", "lower_bound_s", "lower_bound_binds",
                              "efficiency", "verified"}
        assert point["verified"]
        assert point["time_s"] >= point["lower_bound_s"] * (1 - 1e-12), point
        assert point["efficiency"] == pytest.approx(point["lower_bound_s"] / point["time_s"])
        assert point["lower_bound_binds"] in ("start-up", "port bandwidth", "cut", "pipeline")
    assert ph["best"]["time_s"] == min(p["time_s"] for p in ph["algorithms"] if "time_s" in p)
    assert ph["auto"]["time_s"] >= ph["best"]["time_s"] * (1 - 1e-12)


def test_broadcast_hypercube3_phalanx_part():
    bench = load_bench()
    row = bench.measure("hypercube:3", "broadcast", 2048, None, bench.MAX_PHALANX_BYTES, False)
    assert (row["target"], row["kind"], row["size_bytes"], row["nodes"]) == ("hypercube:3", "broadcast",
                                                                            2048, 8)
    check_phalanx(row)
    assert {p["algorithm"] for p in row["phalanx"]["algorithms"]} >= {"binomial", "linear", "chain"}
    assert "smpi" not in row


def test_allreduce_rows_reduce_partials_of_the_row_size():
    """An allreduce of `size` bytes is a Phalanx allreduce of a `size`-byte partial (issue 27)."""
    bench = load_bench()
    row = bench.measure("hypercube:3", "allreduce", 8, None, bench.MAX_PHALANX_BYTES, False)
    check_phalanx(row)
    larger = bench.measure("hypercube:3", "allreduce", 2048, None, bench.MAX_PHALANX_BYTES, False)
    check_phalanx(larger)
    assert larger["phalanx"]["best"]["time_s"] > row["phalanx"]["best"]["time_s"]
    skipped = bench.measure("hypercube:3", "allgather", 2048, None, 1024, False)
    assert "skipped" in skipped["phalanx"]


@needs_simgrid
def test_broadcast_hypercube3_beside_smpi(tmp_path):
    """With SMPI: every algorithm timed or its failure recorded, auto on SimGrid, and SMPI's
    binomial tree within 1% of Phalanx's binomial (same platform, same start-up charge)."""
    out = tmp_path / "results.json"
    assert load_bench().main(["--targets", "hypercube:3", "--only", "broadcast", "--sizes", "2K",
                              "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    (row,) = result["rows"]
    check_phalanx(row)
    smpi = {p["algorithm"]: p for p in row["smpi"]["algorithms"]}
    assert all("time_s" in p or "error" in p or "timeout_s" in p for p in smpi.values())
    assert smpi["binomial_tree"]["verified"]
    binomial = next(p for p in row["phalanx"]["algorithms"] if p["algorithm"] == "binomial")
    assert smpi["binomial_tree"]["time_s"] == pytest.approx(binomial["time_s"], rel=0.01)
    assert row["smpi"]["best"]["time_s"] == min(p["time_s"] for p in smpi.values() if "time_s" in p)
    sg = row["phalanx"]["auto_simgrid"]
    assert sg["verified"] and sg["time_s"] >= sg["lower_bound_s"] * (1 - 1e-9)
    assert row["phalanx"]["best_over_smpi_best"] > 0
