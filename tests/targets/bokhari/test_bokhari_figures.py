"""Reproductions of seed 003 (Bokhari) Figs. 10-12 and seed 000 Table 1 on the simulators.

What the simulator models to get there: Table 1's lambda + tau m per message; one
communication processor per node that runs the sender's start-up and carries both ends of a
message's wire time, so a node's outgoing and incoming messages serialise (003 Abstract,
Sec. 3.1); wormhole / circuit switching that holds the whole route for tau m; row-column
mesh routing (Paragon submeshes) and destination-routed 4x4 switch stages over contiguously
numbered nodes (SP2, CS-2) whose shared links serialise messages, the SP2's adapter spreading
packets over 4 routes per pair, each route number spread evenly over every stage
(literature, docs/targets.md); a barrier (Table 1) before
each phase of the partition, none between the steps of a phase; the between-phase
permutation at the memory-copy rate. Not modelled: paging, OS timer interrupts, other jobs'
traffic (Sec. 5, 6).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from phalanx.compiler import hypercube
from phalanx.compiler.driver import compile_program
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program


@cache
def simulated_s(spec: str, algorithm: str, block_bytes: int) -> float:
    compiled = compile_program(alltoall_program(resolve(spec).nnodes, block_bytes), target=spec,
                               algorithm=algorithm.replace(",", "+"), file="<fig>",
                               cost="closed-form")  # forced: no candidate is simulated
    run = simulate(compiled)
    assert run.verified
    return run.collectives[0].time_s


def predicted_s(spec: str, algorithm: str, block_bytes: int) -> float:
    target = resolve(spec)
    n = target.nnodes
    coll = recognize(0, np.full((n, n), block_bytes, dtype=np.int64), "A", "B", 1)
    return target.predict_time_s(coll, algorithm)


def gap(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"known gap: {reason}")


def test_contention_free_hypercube_matches_the_theory():
    target = resolve("hypercube:5")
    for algorithm in target.algorithms("alltoall"):
        if algorithm == "direct-copy-beside":
            continue  # below
        assert simulated_s("hypercube:5", algorithm, 512) == pytest.approx(
            predicted_s("hypercube:5", algorithm, 512), rel=1e-9)
    # The library's port model (its declared gap on these machines, closed_form_gap) runs a
    # node's copy of its own block on its processor after its first start-up, beside that
    # message's data, so the part of the copy that outlasts the data (14 against 11 ns a byte)
    # delays the next start-up; the simulator copies it beside, holding nothing.
    copy_s = 512 * target.params.copy_us_per_byte * 1e-6
    data_s = 512 * target.params.us_per_byte * 1e-6
    assert simulated_s("hypercube:5", "direct-copy-beside", 512) == pytest.approx(
        predicted_s("hypercube:5", "direct-copy-beside", 512) - (copy_s - data_s), rel=1e-9)


CARDINALITY_TWO = {32: "multiphase:2,3", 64: "multiphase:3,3"}


@pytest.mark.parametrize("spec", ["paragon:4x8", "sp2:32", "cs2:32",
                                  "paragon:8x8", "sp2:64", "cs2:64"])
def test_figs10_11_cardinality_two_wins_small_direct_wins_large(spec):
    # Figs. 10 (32 processors) and 11 (64), Sec. 5: "{2,3} and {3,3} are always optimal for
    # small message sizes", the direct {5} / {6} for large. Checked at 256 and 2000 bytes
    # (the figures' range is 0-2000) among standard, the cardinality-2 member and direct.
    two = CARDINALITY_TWO[resolve(spec).nnodes]
    candidates = ("standard", two, "direct")
    at_256 = {a: simulated_s(spec, a, 256) for a in candidates}
    at_2000 = {a: simulated_s(spec, a, 2000) for a in candidates}
    assert min(at_256, key=at_256.get) == two
    assert min(at_2000, key=at_2000.get) == "direct"


CROSSOVER = 1368  # bytes: {3,3} -> {6} on paragon:8x8, bisected by bench/bokhari.py


def test_fig11_crossover_of_3_3_and_direct_on_the_paragon_8x8():
    # Figs. 10/11 give no crossover figures (the plots are lost); bench/bokhari.py bisects
    # ours to 8 bytes: {3,3} -> {6} at 1368 bytes on paragon:8x8 (docs/targets.md lists all
    # six machines). Tolerance: the crossover lies within +-10% of that size.
    spec, two = "paragon:8x8", "multiphase:3,3"
    assert simulated_s(spec, two, int(CROSSOVER * 0.9)) < simulated_s(spec, "direct",
                                                                        int(CROSSOVER * 0.9))
    assert simulated_s(spec, "direct", int(CROSSOVER * 1.1)) < simulated_s(spec, two,
                                                                           int(CROSSOVER * 1.1))


def equipartitions(spec: str) -> list[str]:
    d = hypercube.log2_exact(resolve(spec).nnodes)
    return [hypercube.algorithm_name(p) for p in hypercube.partitions(d)
            if hypercube.is_equipartition(p)]


@pytest.mark.parametrize("spec, block_bytes", [
    ("cs2:32", 4),
    ("cs2:64", 1),
    pytest.param("paragon:4x8", 4, marks=gap(
        "{2,3} 1.79 ms < {1,2,2} 2.09 ms < standard 2.97 ms: Table 1's barrier "
        "(126d - 113 = 517 us at d = 5) costs more than the start-ups standard saves; the "
        "theory ranks them so too")),
    pytest.param("sp2:32", 4, marks=gap(
        "{2,3} 1.33 ms < {1,2,2} 1.44 ms < standard 1.92 ms: barrier 72d - 52 = 308 us "
        "against a 70 us start-up; the theory ranks them so too")),
])
def test_figs10_11_standard_best_for_the_smallest_messages(spec, block_bytes):
    # Sec. 5: standard "tends to have good performance for very small message sizes" (issue 5
    # reads: best). With one barrier per phase (Sec. 4; the theory of [3]) standard beats {2,3}
    # at m -> 0 only if 3 barriers < 5 start-ups (on 32 processors): on the CS-2 alone (barrier
    # 17d - 5.6 us, start-up 105 us, Table 1). Exact order among all equipartitions.
    times = {a: simulated_s(spec, a, block_bytes) for a in equipartitions(spec)}
    assert min(times, key=times.get) == "standard"


def test_fig12_128_processors_on_the_paragon():
    # Fig. 12 (128 and 256 processors on the Paragon), Sec. 5: the cardinality-2 member {3,4}
    # wins small messages, the direct {7} large ones, as on 32 and 64 processors. Checked at
    # 256 and 2048 bytes on the 8x16 submesh; exact order.
    spec = "paragon:8x16"
    assert simulated_s(spec, "multiphase:3,4", 256) < simulated_s(spec, "direct", 256)
    assert simulated_s(spec, "direct", 2048) < simulated_s(spec, "multiphase:3,4", 2048)


def test_fig12_256_processors_direct_stops_above_1728_bytes():
    # Fig. 12, Sec. 5: on 16x16 the OS could not post direct {8}'s 255 receives above
    # 1728 bytes (exact); {4,4} posts 15 x 16 blocks a phase and stops above 1836 bytes,
    # {2,2,2,2} (3 x 64 blocks) runs on.
    target = resolve("paragon:16x16")
    direct, four = "direct", "multiphase:4,4"
    fits = {m: [a for a in (direct, four, "multiphase:2,2,2,2") if
                target.fits(recognize(0, np.full((256, 256), m, dtype=np.int64), "A", "B", 1), a)]
            for m in (1728, 1729, 2048)}
    assert fits[1728] == [direct, four, "multiphase:2,2,2,2"]
    assert fits[1729] == [four, "multiphase:2,2,2,2"]
    assert fits[2048] == ["multiphase:2,2,2,2"]


# Seed 000 Table 1 quotes Bokhari's best multiphase times at 2 KB; tolerance +-35%. The
# candidates are the members that come out best in bench/bokhari.py (all equipartitions):
# direct where it fits, else {2,2,2,2} on 16x16 (direct, {4,4} and {2,3,3} are refused).
TABLE1 = [
    ("paragon:4x8", 7, ("direct", "multiphase:2,3")),  # 5.10 ms (-27%)
    ("paragon:8x8", 12, ("direct", "multiphase:3,3")),  # 10.68 ms (-11%)
    # 26.005 ms (-35.0%, inside by 0.02%); the 16x8 orientation gives 25.78 ms (-35.6%).
    ("paragon:8x16", 40, ("direct", "multiphase:3,4")),
    ("paragon:16x16", 88, ("multiphase:2,2,2,2",)),  # 104.5 ms (+19%)
    # SP2: 4 routes per pair, packets spread over them in turn, up-ports picked by the
    # destination's digit at each stage (params.SP2.up_route=2; docs/targets.md "SP2
    # routing"): every XOR step of the direct exchange gets link-disjoint routes, so what is
    # left is the shared engine (lambda + 2 tau m a step). The route table's exact rule is not
    # documented: the destination digit one stage up (up_route=0, the CS-2's) gave 9.34 /
    # 19.19 ms, and (source + destination digit) mod 4 (up_route=3), which also spreads every
    # stage evenly, gives 10.22 / 22.29 ms (+46% / +71%).
    ("sp2:32", 7, ("direct", "multiphase:2,3")),  # 7.95 ms (+14%)
    ("sp2:64", 13, ("direct", "multiphase:3,3")),  # 15.90 ms (+22%)
    ("cs2:32", 11, ("direct", "multiphase:2,3")),  # 8.95 ms (-19%)
    ("cs2:64", 28, ("direct", "multiphase:3,3")),  # 18.67 ms (-33%)
]


@pytest.mark.parametrize("spec, paper_ms, candidates", TABLE1)
def test_seed000_table1_best_times_at_2KB(spec, paper_ms, candidates):
    best_ms = min(simulated_s(spec, a, 2048) for a in candidates) * 1e3
    assert best_ms == pytest.approx(paper_ms, rel=0.35)
