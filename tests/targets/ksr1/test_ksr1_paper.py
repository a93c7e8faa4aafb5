"""Seed 002_1e1cb805508c9dd7.txt's observations out of the ring model (targets/ksr1/network.py).

Tolerance ±15% unless a test says otherwise. Where the model, built on Table 1's vendor
latencies (175 and 600 cycles), does not reproduce a measured number, the test pins the
measured gap (and docs/targets_ksr1.md reports it): the paper's measurements are faster
than Table 1 (Table 2: 6.07 us per subpage against 8.75 us), and a read over ring:1 costs
it about twice a ring:0 read (Table 3) where Table 1 says 600 / 175 = 3.4.

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
    # Gap: C1 = 0.054 ms/KB (Sec. 5.2) is 6.75 us per subpage; the model gives Table 1's
    # 175 cycles = 8.75 us plus slot waits: about 9.0 us, +33%.
    c1_ms_per_kb = c1[-1] * 1e3 * KB
    assert c1_ms_per_kb / 0.054 == pytest.approx(1.33, abs=0.05)


def test_broadcast_to_64_cells_costs_more():
    """Sec. 5.2: over ring:1 the ARD path makes it dearer (fit C0 = 0.419, C1 = 0.069 ms/KB).
    Gap: the model's C1 is 3.4x the 32-cell one (Table 1: 600 vs 175 cycles), the paper's 1.28x."""
    t32 = X.run(X.broadcast_program(32, 16), "broadcast").collectives[0].time_s
    t64 = X.run(X.broadcast_program(64, 16), "broadcast").collectives[0].time_s
    assert t64 > t32 * 1.2
    assert t64 / t32 == pytest.approx(3.4, rel=0.1)


def test_table2_node_contention_is_small():
    """Table 2: distinct subpages from one cell, 6.07 us (2 processors) to 7.31 us (16): the
    growth (x1.20) within 15%. Gap in absolute terms: 8.96 and 9.76 us (+48%, +34%)."""
    paper = {2: 6.07, 4: 6.26, 8: 6.50, 16: 7.31}
    sim = {p: per_subpage_us(X.run(X.distinct_reads_program(p, 16), "reads"), 16) for p in paper}
    assert list(sim.values()) == sorted(sim.values())
    assert sim[16] / sim[2] == pytest.approx(paper[16] / paper[2], rel=0.15)
    assert sim[2] / paper[2] == pytest.approx(1.48, abs=0.05)
    assert sim[16] / paper[16] == pytest.approx(1.34, abs=0.05)


TABLE3_32 = {1: 3.88, 8: 3.64, 16: 3.66, 24: 3.63, 31: 3.88}
TABLE3_64 = {1: 3.97, 8: 4.41, 16: 5.15, 32: 7.94, 48: 5.20, 56: 4.38, 63: 3.92}


def _cshift_ms(procs: int, distance: int) -> float:
    return X.mean_cell_time_s(X.run(X.cshift_program(procs, 16, distance), "cshift")) * 1e3


def test_table3_cshift_on_32_cells_does_not_depend_on_distance():
    """Table 3 (32 processors): 3.63-3.88 ms at every distance, within 7%."""
    sim = [_cshift_ms(32, d) for d in TABLE3_32]
    assert max(sim) / min(sim) < 1.07


def test_table3_cshift_on_64_cells_peaks_at_distance_32():
    """Table 3 (64 processors): symmetric in d <-> 64 - d, distance 1 as on 32 cells (±15%),
    peak at 32 where every read crosses the ARDs. Gap: the peak is 3.1x distance 1 in the
    model (Table 1's ring:1 latency), 2.0x in the paper."""
    sim = {d: _cshift_ms(64, d) for d in TABLE3_64}
    assert max(sim, key=sim.get) == 32
    for d in (8, 16):
        assert sim[d] == pytest.approx(sim[64 - d], rel=0.05)
        assert sim[1] < sim[8] < sim[16] < sim[32]
    assert sim[1] == pytest.approx(_cshift_ms(32, 1) * TABLE3_64[1] / TABLE3_32[1], rel=0.15)
    assert sim[63] == pytest.approx(sim[1], rel=0.05)
    assert sim[32] / sim[1] == pytest.approx(3.13, rel=0.05)
    assert TABLE3_64[32] / TABLE3_64[1] == pytest.approx(2.0, rel=0.01)


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
