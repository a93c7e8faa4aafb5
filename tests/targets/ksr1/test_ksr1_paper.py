"""Seed 002_1e1cb805508c9dd7.txt's observations out of the ring model (targets/ksr1/network.py).

Tolerance ±15% unless a test says otherwise. Where the model, built on Table 1's vendor
latencies (175 and 600 cycles), does not reproduce a measured number, a strict xfail asserts
the paper's number and its docstring gives the model's (docs/targets_ksr1.md explains): the
paper's measurements are faster than Table 1 (Table 2: 6.07 us per subpage for one reader
against 8.75 us, which a blocking read cannot beat), and a read over ring:1 costs it about
twice a ring:0 read (Table 3) where Table 1 says 600 / 175 = 3.4.

Units of the fits (cost.py): T in ms, the size in KB (8 subpages): read per subpage the
broadcast's C1 = 0.054 would be 54 us per subpage, 8x Table 2's measured 6-7 us for the
same broadcast; per KB it is 6.75 us per subpage, as measured.
"""

from __future__ import annotations

import pytest

from phalanx.targets.ksr1 import experiments as X
from phalanx.targets.ksr1.cost import paper_fit_ms

KB = 8  # subpages per kilobyte


def per_subpage_us(result, subpages: int) -> float:
    return result.collectives[0].time_s * 1e6 / subpages


def test_broadcast_is_linear_in_subpages_and_flat_in_readers_on_one_ring0():
    """Sec. 5.2: T = C0 + C1 * N with C0 ~ 0 and one C1 for every processor count <= 32."""
    times = {(p, n): X.run(X.broadcast_program(p, n), "broadcast").collectives[0].time_s
             for p in (2, 8, 32) for n in (8, 32)}
    for p in (2, 8, 32):
        assert times[(p, 32)] / times[(p, 8)] == pytest.approx(4.0, rel=0.05)  # C0 ~ 0
    c1 = [times[(p, 32)] / 32 for p in (2, 8, 32)]
    assert max(c1) / min(c1) < 1.05  # independent of the number of readers


XFAIL_LATENCY = "Table 1's 175 / 600 cycles are slower than the paper's own measurements"


def _bcast_ms_per_kb(procs: int, subpages: int = 32) -> float:
    return X.run(X.broadcast_program(procs, subpages), "broadcast").collectives[0].time_s \
        * 1e3 * KB / subpages


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_broadcast_c1_on_one_ring0():
    """Sec. 5.2: C1 = 0.054 ms per KB (6.75 us per subpage; units: cost.py), ±15%.
    Model: 0.0717 ms/KB (+33%): one read per subpage at Table 1's 175 cycles = 8.75 us."""
    assert _bcast_ms_per_kb(32) == pytest.approx(0.054, rel=0.15)


def test_broadcast_to_64_cells_costs_more():
    """Sec. 5.2: over ring:1 the ARD path makes it dearer (fit C0 = 0.419 ms, C1 = 0.069 ms/KB)."""
    t32 = X.run(X.broadcast_program(32, 16), "broadcast").collectives[0].time_s
    t64 = X.run(X.broadcast_program(64, 16), "broadcast").collectives[0].time_s
    assert t64 > t32 * 1.2


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_broadcast_c1_on_64_cells():
    """Sec. 5.2: C1 = 0.069 ms/KB on 64 cells, ±15%. Model: 0.243 ms/KB (3.5x): the readers
    of the second ring:0 wait Table 1's 600 cycles per subpage."""
    assert _bcast_ms_per_kb(64) == pytest.approx(0.069, rel=0.15)


TABLE2 = {2: 6.07, 4: 6.26, 8: 6.50, 16: 7.31}


def _table2_us() -> dict[int, float]:
    return {p: per_subpage_us(X.run(X.distinct_reads_program(p, 16), "reads"), 16) for p in TABLE2}


def test_table2_node_contention_is_small():
    """Table 2: distinct subpages from one cell, 6.07 us (2 processors) to 7.31 us (16): it
    grows with the readers, by x1.20 in the paper; the model's growth within 15% of that."""
    sim = _table2_us()
    assert list(sim.values()) == sorted(sim.values())
    assert sim[16] / sim[2] == pytest.approx(TABLE2[16] / TABLE2[2], rel=0.15)


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_table2_levels():
    """Table 2, us per subpage, ±15%: 6.07 (2 processors) and 7.31 (16). Model: 8.96 and
    9.76 us (+48%, +34%). One reader waiting for each subpage cannot take less than the
    unloaded read, Table 1's 175 cycles = 8.75 us: the paper's 6.07 us is 121 cycles."""
    sim = _table2_us()
    assert sim[2] == pytest.approx(TABLE2[2], rel=0.15)
    assert sim[16] == pytest.approx(TABLE2[16], rel=0.15)


TABLE3_32 = {1: 3.88, 8: 3.64, 16: 3.66, 24: 3.63, 31: 3.88}
TABLE3_64 = {1: 3.97, 8: 4.41, 16: 5.15, 32: 7.94, 48: 5.20, 56: 4.38, 63: 3.92}


def _cshift_ms(procs: int, distance: int) -> float:
    return X.mean_cell_time_s(X.run(X.cshift_program(procs, 16, distance), "cshift")) * 1e3


def test_table3_cshift_on_32_cells_does_not_depend_on_distance():
    """Table 3 (32 processors): 3.63-3.88 ms at every distance, within 7%."""
    sim = [_cshift_ms(32, d) for d in TABLE3_32]
    assert max(sim) / min(sim) < 1.07


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_table3_level_on_32_cells():
    """Table 3: 3.88 ms at distance 1 on 32 cells, ±15%, with 128 KB per cell (the size the
    cshift fit gives for 3.88 ms, N in KB). Model: 9.19 ms (+137%): 1024 reads of 8.96 us
    each; the paper's 3.79 us per subpage is below even a bottom-up unloaded read (4.4 us)."""
    ms = X.mean_cell_time_s(X.run(X.cshift_program(32, 128, 1), "cshift")) * 1e3 * 8
    assert ms == pytest.approx(TABLE3_32[1], rel=0.15)


def test_table3_cshift_on_64_cells_peaks_at_distance_32():
    """Table 3 (64 processors): symmetric in d <-> 64 - d, distance 1 as on 32 cells (±15%),
    peak at 32 where every read crosses the ARDs (the ratio: next test)."""
    sim = {d: _cshift_ms(64, d) for d in TABLE3_64}
    assert max(sim, key=sim.get) == 32
    for d in (8, 16):
        assert sim[d] == pytest.approx(sim[64 - d], rel=0.05)
        assert sim[1] < sim[8] < sim[16] < sim[32]
    assert sim[1] == pytest.approx(_cshift_ms(32, 1) * TABLE3_64[1] / TABLE3_32[1], rel=0.15)
    assert sim[63] == pytest.approx(sim[1], rel=0.05)


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_table3_peak_is_twice_distance_1_on_64_cells():
    """Table 3 (64 processors): 7.94 / 3.97 = 2.0 at distance 32, ±15%. Model: 3.13: each
    crossing read waits Table 1's 600 cycles, so 32 readers per ring:0 never fill the ARD
    (Sec. 5.4's bottleneck needs crossing reads under about 8 us)."""
    ratio = _cshift_ms(64, 32) / _cshift_ms(64, 1)
    assert ratio == pytest.approx(TABLE3_64[32] / TABLE3_64[1], rel=0.15)


def _concat(procs: int, alg: str, everywhere: bool):
    return X.run(X.concat_program(procs, 2, everywhere), alg).collectives[0]


def test_concatenate_all_by_cyclic_shifts_is_best_on_64_cells():
    """Secs. 5.6 / Fig. 10: algorithm 3 (N - 1 cyclic shifts) beats algorithms 1 and 2 on 64
    cells (the fits agree: 0.074 + 0.058 P + 0.022 N < 0.091 P + 0.064 N), and `auto`'s cost
    model ranks it first. The fits themselves are not reproduced (bench/ksr1.py, docs): the
    model's size term is latency-bound (two cells read over ring:1 at every shift)."""
    sim = {a: _concat(64, a, True) for a in ("allgather-seq-bcast", "allgather-tree-bcast",
                                             "allgather-cshift")}
    assert all(c.verified for c in sim.values())
    times = {a: c.time_s for a, c in sim.items()}
    assert min(times, key=times.get) == "allgather-cshift"
    assert times["allgather-seq-bcast"] / times["allgather-cshift"] > 1.15
    auto = X.run(X.concat_program(64, 2, True)).collectives[0]
    assert auto.algorithm.startswith("allgather-cshift")  # with prefetch when allowed
    predicted = {c["algorithm"]: c["predicted_time_s"] for c in auto.candidates}
    assert min(times, key=predicted.get) == "allgather-cshift"
    for size_kb in (16, 64, 256):
        assert paper_fit_ms("allgather-cshift", 64, size_kb) < paper_fit_ms(
            "allgather-seq-bcast", 64, size_kb)


def test_concatenate_one_algorithms_cost_about_the_same():
    """Sec. 5.5: "we do not see the expected performance gain by using algorithm 2": the tree
    costs what the sequential gather costs (within 15%), on one ring:0 and over two."""
    for procs in (32, 64):
        seq, tree = (_concat(procs, a, False) for a in ("gather-seq", "gather-tree"))
        assert seq.verified and tree.verified
        assert tree.time_s == pytest.approx(seq.time_s, rel=0.15)


@pytest.mark.xfail(strict=True, reason=XFAIL_LATENCY)
def test_concatenate_fits_on_64_cells():
    """Secs. 5.5-5.6 fits on 64 cells with 1 KB per cell (64 KB), ±15%: gather-seq 5.12 ms,
    algorithm 3 5.19 ms. Model: 9.99 and 15.3 ms (+95%, +195%): half the reads cross ring:1
    at Table 1's 600 cycles, and algorithm 3's 63 shifts each wait for two crossing reads."""
    for alg, everywhere in (("gather-seq", False), ("allgather-cshift", True)):
        ms = X.run(X.concat_program(64, 8, everywhere), alg).collectives[0].time_s * 1e3
        assert ms == pytest.approx(paper_fit_ms(alg, 64, 64), rel=0.15), alg


TABLE5 = {"DS1": (28.04, 34.45), "DS2": (96.79, 98.94), "DS3": (183.42, 187.43)}  # 5 threads
COMM_SUBPAGES = 1872  # sized so that the communication alone takes Table 5's 30.19 ms


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
