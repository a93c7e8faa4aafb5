"""Seed 002_1e1cb805508c9dd7.txt's published numbers out of the calibrated ring model
(targets/ksr1/network.py; docs/targets_ksr1.md).

Calibration (issue 21): the reading loop's time per subpage (read_loop_us), an ARD's service
time per packet (ard_service_ns) and the reads a cell keeps in flight (one: the plain
`cshift`) are fitted by bench/calibrate_ksr1.py from part of Table 3 (32 cells at distance
1, 64 cells at distances 16 and 32), 128 subpages a cell. Everything else here is
validation: the other Table 3 entries, Table 2, and the Sec. 5 fits. Every run names its
algorithm (the paper's: `cshift`, `broadcast`, `reads`, ...), never `auto`. Tolerance ±15%
unless a test says otherwise; a number the calibrated model misses is a strict xfail whose
reason gives ours and why.

Units of the fits (cost.py): T in ms, N in subpages, as the seed names it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.targets.ksr1 import experiments as X
from phalanx.targets.ksr1.cost import paper_fit_ms
from phalanx.targets.ksr1.params import KsrParams

CALIBRATION = Path(__file__).resolve().parents[3] / "bench" / "results_calibrate_ksr1.json"
TABLE2, TABLE3_32, TABLE3_64 = X.TABLE2_US, X.TABLE3_MS[32], X.TABLE3_MS[64]
FIT_ENTRIES = {(32, 1), (64, 16), (64, 32)}  # bench/calibrate_ksr1.py FIT


def time_ms(result) -> float:
    assert result.verified
    return result.collectives[0].time_s * 1e3


# -- the calibration ----------------------------------------------------------------------

def test_the_parameters_are_what_the_fit_script_found():
    """params.py holds bench/calibrate_ksr1.py's result, and the paper's code it chose is
    the algorithm the reproductions run (experiments.TABLE3_ALGORITHM)."""
    chosen = json.loads(CALIBRATION.read_text())["chosen"]
    params = KsrParams()
    assert params.read_loop_us == chosen["read_loop_us"]
    assert params.ard_service_ns == chosen["ard_service_ns"]
    assert chosen["algorithm"] == X.TABLE3_ALGORITHM == "cshift"
    assert chosen["reads_in_flight"] == 1


@cache
def table3_ms(procs: int, distance: int) -> float:
    """Table 3's cshift as the paper ran it: 128 subpages a cell, plain reads, mean cell time."""
    result = X.run(X.cshift_program(procs, X.TABLE3_SUBPAGES, distance), X.TABLE3_ALGORITHM)
    assert result.verified and result.collectives[0].algorithm == X.TABLE3_ALGORITHM
    return X.mean_cell_time_s(result) * 1e3


def test_fit_data_are_met():
    """The fit's own data (not validation): 3.88 and 7.94 ms within the solver's 1%, and
    5.15 ms (which chose one read in flight) within 15%."""
    assert table3_ms(32, 1) == pytest.approx(TABLE3_32[1], rel=0.01)
    assert table3_ms(64, 32) == pytest.approx(TABLE3_64[32], rel=0.01)
    assert table3_ms(64, 16) == pytest.approx(TABLE3_64[16], rel=0.15)


# -- Table 3 (validation: the entries the fit did not use) --------------------------------

@pytest.mark.parametrize("procs, distance", [(p, d) for p, row in X.TABLE3_MS.items()
                                             for d in row if (p, d) not in FIT_ENTRIES])
def test_table3_entry(procs, distance):
    assert table3_ms(procs, distance) == pytest.approx(X.TABLE3_MS[procs][distance], rel=0.15)


def test_table3_cshift_on_32_cells_does_not_depend_on_distance():
    """Table 3 (32 processors): 3.63-3.88 ms at every distance (the paper's own spread is 7%)."""
    sim = [table3_ms(32, d) for d in TABLE3_32]
    assert max(sim) / min(sim) < 1.07


def test_table3_cshift_on_64_cells_peaks_at_distance_32():
    """Table 3 (64 processors): symmetric in d <-> 64 - d, rising to distance 32, where every
    read crosses the ARDs; the peak is 7.94 / 3.97 = 2.0 times distance 1 (issue 21 asks
    1.6-2.4; ±15% of 2.0 is stricter)."""
    sim = {d: table3_ms(64, d) for d in TABLE3_64}
    assert max(sim, key=sim.get) == 32
    assert sim[1] < sim[8] < sim[16] < sim[32]
    for d in (1, 8, 16):
        assert sim[d] == pytest.approx(sim[64 - d], rel=0.05)
    ratio = sim[32] / sim[1]
    assert 1.6 <= ratio <= 2.4
    assert ratio == pytest.approx(TABLE3_64[32] / TABLE3_64[1], rel=0.15)


def test_table3_through_the_cli_with_the_papers_algorithm(cli, tmp_path):
    """The reproduction as a user runs it: `run --algorithm cshift`."""
    path = tmp_path / "table3.phx"
    path.write_text(X.cshift_program(32, X.TABLE3_SUBPAGES, 1))
    out = cli("run", str(path), "--algorithm", X.TABLE3_ALGORITHM, "--json")
    assert out.code == 0, out.err
    result = out.json()
    (coll,) = result["collectives"]
    assert result["verified"] and coll["algorithm"] == X.TABLE3_ALGORITHM
    assert coll["time_s"] * 1e3 == pytest.approx(TABLE3_32[1], rel=0.15)


# -- Table 2 (validation) -------------------------------------------------------------------

TABLE2_SUBPAGES = 64  # a reader's distinct subpages (the seed does not give Table 2's size)


@cache
def table2_us() -> dict[int, float]:
    return {p: time_ms(X.run(X.distinct_reads_program(p, TABLE2_SUBPAGES), "reads")) * 1e3
            / TABLE2_SUBPAGES for p in (2, 16)}


def test_table2_node_contention_is_small():
    """Sec. 5.3 / Table 2: "node contention is not a major problem": reading distinct
    subpages of one cell costs more with more readers, but by under 25% up to 16 processors
    (the paper: x1.20)."""
    sim = table2_us()
    assert 1 < sim[16] / sim[2] < 1.25


@pytest.mark.xfail(strict=True, reason=(
    "ours x1.006 (x1.03 at 16 subpages a reader): with the calibrated 21 us loop between "
    "reads, cell 0's busiest CIU and the ring's slots are busy 11-12% of the time, so 15 "
    "readers hardly wait for each other; the paper's 20% growth came with 6-7 us reads"))
def test_table2_growth():
    """Table 2: 7.31 / 6.07 = x1.20 from 2 to 16 processors, ±15%."""
    sim = table2_us()
    assert sim[16] / sim[2] == pytest.approx(TABLE2[16] / TABLE2[2], rel=0.15)


@pytest.mark.xfail(strict=True, reason=(
    "Table 2 contradicts Table 3 for any reading-loop time: one reader of cell 0 takes 6.07 us "
    "per subpage, below Table 1's unloaded read (175 cycles = 8.75 us) and below the loop time "
    "alone that Table 3 needs (read_loop_us = 21.41, since a loop with reads in flight still "
    "runs once per subpage); ours 30.3 us (2 processors), 30.5 us (16)"))
def test_table2_levels():
    """Table 2, us per subpage, ±15%: 6.07 (2 processors) and 7.31 (16)."""
    sim = table2_us()
    assert sim[2] == pytest.approx(TABLE2[2], rel=0.15)
    assert sim[16] == pytest.approx(TABLE2[16], rel=0.15)


# -- Sec. 5.2 broadcast fit (validation) -----------------------------------------------------

@cache
def broadcast_fit(procs: int) -> tuple[float, float]:
    """(C0 ms, C1 ms per subpage) through broadcasts of 32 and 128 subpages."""
    small, large = (time_ms(X.run(X.broadcast_program(procs, n), "broadcast")) for n in (32, 128))
    c1 = (large - small) / 96
    return small - 32 * c1, c1


def test_broadcast_is_linear_in_subpages_and_flat_in_readers_on_one_ring0():
    """Sec. 5.2: T = C0 + C1 * N with C0 ~ 0 and one C1 for every processor count <= 32."""
    fits = [broadcast_fit(p) for p in (2, 8, 32)]
    for c0, c1 in fits:
        assert abs(c0) < 0.02 * 128 * c1  # C0 ~ 0: under 2% of a 128-subpage broadcast
    c1s = [c1 for _, c1 in fits]
    assert max(c1s) / min(c1s) < 1.05


def test_broadcast_to_64_cells_costs_more():
    """Sec. 5.2: over ring:1 the ARD path makes it dearer (C1 0.069 against 0.054)."""
    assert broadcast_fit(64)[1] > broadcast_fit(32)[1] * 1.2


XFAIL_BROADCAST = (
    "the seed's broadcast contradicts its Table 2: with 2 processors both are one cell reading "
    "cell 0's subpages, 54 us per subpage in the fit (C1 = 0.054 ms for every count <= 32) and "
    "6.07 us in Table 2; calibrated on Table 3, ours costs a broadcast read what a cshift read "
    "costs")


@pytest.mark.xfail(strict=True, reason=XFAIL_BROADCAST + ": C1 0.0303 ms per subpage (-44%)")
def test_broadcast_c1_on_one_ring0():
    """Sec. 5.2: C1 = 0.054 ms per subpage on <= 32 processors, ±15%."""
    assert broadcast_fit(32)[1] == pytest.approx(0.054, rel=0.15)


@pytest.mark.xfail(strict=True, reason=XFAIL_BROADCAST + ": on 64 cells C1 0.0518 ms per "
                   "subpage (-25%; the second ring:0's readers wait 600 cycles and the loop)")
def test_broadcast_c1_on_64_cells():
    """Sec. 5.2: C1 = 0.069 ms per subpage on 64 processors, ±15%."""
    assert broadcast_fit(64)[1] == pytest.approx(0.069, rel=0.15)


@pytest.mark.xfail(strict=True, reason=(
    "no start-up cost in the model: ours C0 = 0.0005 ms on 64 cells; the seed's 0.419 ms is "
    "8 reads over ring:1 with the calibrated loop (51 us each), which no mechanism supplies"))
def test_broadcast_c0_on_64_cells():
    """Sec. 5.2: C0 = 0.419 ms on 64 processors, ±15%."""
    assert broadcast_fit(64)[0] == pytest.approx(0.419, rel=0.15)


# -- Sec. 5.4 cshift fit (validation) --------------------------------------------------------

@cache
def cshift_fit() -> tuple[float, float]:
    """(C1 ms per processor, C2 ms per subpage): T = C1 N_procs + C2 N_subpages by least
    squares over 8-64 processors and 32 and 128 subpages a cell, distance 1."""
    runs = [(p, n, X.mean_cell_time_s(X.run(X.cshift_program(p, n, 1), X.TABLE3_ALGORITHM)) * 1e3)
            for p in (8, 16, 32, 64) for n in (32, 128)]
    a = np.array([[p, n] for p, n, _ in runs], dtype=float)
    c1, c2 = np.linalg.lstsq(a, np.array([t for *_, t in runs]), rcond=None)[0]
    return float(c1), float(c2)


def test_cshift_c2():
    """Sec. 5.4: C2 = 0.029 ms per subpage, ±15%."""
    assert cshift_fit()[1] == pytest.approx(0.029, rel=0.15)


@pytest.mark.xfail(strict=True, reason=(
    "the model has no per-processor cost at distance 1 (each cell reads its neighbour, on one "
    "ring:0 untouched by the others): ours C1 = 0.0007 ms, from the two cells that cross ring:1 "
    "on 64; the seed's 0.007 ms per processor is 0.22 ms of Table 3's 3.88 on 32 cells"))
def test_cshift_c1():
    """Sec. 5.4: C1 = 0.007 ms per processor, ±15%."""
    assert cshift_fit()[0] == pytest.approx(0.007, rel=0.15)


# -- Secs. 5.5-5.6 concatenate (validation) --------------------------------------------------

def _concat(procs: int, alg: str, everywhere: bool, subpages: int = 2):
    return X.run(X.concat_program(procs, subpages, everywhere), alg).collectives[0]


def test_concatenate_all_by_cyclic_shifts_is_best_on_64_cells():
    """Secs. 5.6 / Fig. 10: algorithm 3 (N - 1 cyclic shifts) beats algorithms 1 and 2 on 64
    cells (the fits agree: 0.074 + 0.058 P + 0.022 N < 0.091 P + 0.064 N), and `auto`'s cost
    model ranks it first."""
    sim = {a: _concat(64, a, True) for a in ("allgather-seq-bcast", "allgather-tree-bcast",
                                             "allgather-cshift")}
    assert all(c.verified for c in sim.values())
    times = {a: c.time_s for a, c in sim.items()}
    assert min(times, key=times.get) == "allgather-cshift"
    assert times["allgather-seq-bcast"] / times["allgather-cshift"] > 1.15
    auto = compile_program(X.concat_program(64, 2, True), file="<ksr1 experiment>")  # ranks, not run
    predicted = {c.algorithm: c.time_s for c in auto.candidates[0]}
    assert min(times, key=predicted.get) == "allgather-cshift"
    for subpages in (128, 512, 2048):
        assert paper_fit_ms("allgather-cshift", 64, subpages) < paper_fit_ms(
            "allgather-seq-bcast", 64, subpages)


def test_concatenate_one_algorithms_cost_about_the_same():
    """Sec. 5.5: "we do not see the expected performance gain by using algorithm 2": the tree
    costs what the sequential gather costs (within 15%), on one ring:0 and over two."""
    for procs in (32, 64):
        seq, tree = (_concat(procs, a, False) for a in ("gather-seq", "gather-tree"))
        assert seq.verified and tree.verified
        assert tree.time_s == pytest.approx(seq.time_s, rel=0.15)


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


LOOP_ONLY = "the calibrated loop and Table 1's latencies alone"
CONCAT_FITS = [  # (processors, algorithm, everywhere) at 8 subpages a cell, ours in the reason
    pytest.param(32, "gather-seq", False, marks=_xfail(
        f"ours 7.52 ms (-19%): {LOOP_ONLY}; the fit's C1 = 0.050 ms per processor is a "
        "per-step cost (1.6 ms on 32) the model does not have"), id="32-gather-seq"),
    pytest.param(32, "gather-tree", False, marks=_xfail(
        f"ours 7.53 ms (-22%): {LOOP_ONLY}; the fit's 0.442 ms per tree level is not modelled"),
        id="32-gather-tree"),
    pytest.param(32, "allgather-seq-bcast", True, marks=_xfail(
        f"ours 15.06 ms (-22%): {LOOP_ONLY}; the fit's 0.091 ms per processor is not modelled"),
        id="32-allgather-seq-bcast"),
    pytest.param(32, "allgather-cshift", True, id="32-allgather-cshift"),
    pytest.param(64, "gather-seq", False, id="64-gather-seq"),
    pytest.param(64, "gather-tree", False, marks=_xfail(
        "ours 20.76 ms (+19%): the tree's reads cross ring:1 as the sequential gather's do; "
        "the fit has it 6% cheaper than that"), id="64-gather-tree"),
    pytest.param(64, "allgather-seq-bcast", True, id="64-allgather-seq-bcast"),
    pytest.param(64, "allgather-cshift", True, marks=_xfail(
        "ours 26.07 ms (+73%): each of the 63 shifts waits for its two cells that read over "
        "ring:1 (600 cycles and the loop, 51 us a subpage), where the fit's 0.022 ms per "
        "subpage is below even a ring:0 read of the calibrated loop (30 us)"),
        id="64-allgather-cshift"),
]


@pytest.mark.parametrize("procs, alg, everywhere", CONCAT_FITS)
def test_concatenate_fit(procs, alg, everywhere):
    """Secs. 5.5-5.6 fits at 8 subpages a cell (N = 8 P subpages), ±15%."""
    ms = _concat(procs, alg, everywhere, subpages=8).time_s * 1e3
    assert ms == pytest.approx(paper_fit_ms(alg, procs, 8 * procs), rel=0.15)


# -- Sec. 6 / Table 5 ---------------------------------------------------------------------

TABLE5 = {"DS1": (28.04, 34.45), "DS2": (96.79, 98.94), "DS3": (183.42, 187.43)}  # 5 threads
# Sized so that the communication alone takes Table 5's 30.19 ms. Both cells read in every
# stage (a pipeline stage moves each owner pair's share, docs/language.md), as the paper's
# threads on both cells do; stages cut by rows had one cell read at a time (550 subpages).
COMM_SUBPAGES = 995


def test_table5_overlap_of_computation_and_remote_reads():
    """Sec. 6 / Table 5 (5 threads): computation 1:1, 1:3, 1:6 to 30.19 ms of remote reads
    overlap in a 5-stage pipeline: combined time within 15% of the measured one, and close
    to the larger of the two (most of the smaller one hidden)."""
    comm_ms = X.run(X.overlap_program(0.0, COMM_SUBPAGES), "cshift").total_time_s * 1e3
    assert comm_ms == pytest.approx(30.19, rel=0.02)
    for compute_ms, paper_ms in TABLE5.values():
        result = X.run(X.overlap_program(compute_ms, COMM_SUBPAGES), "cshift")
        combined_ms = result.total_time_s * 1e3
        assert result.verified
        assert combined_ms == pytest.approx(paper_ms, rel=0.15)
        hidden = compute_ms + comm_ms - combined_ms
        assert hidden > 0.7 * min(compute_ms, comm_ms)
