"""Reproductions of seed 003 (Bokhari) Figs. 10-11 and seed 000 Table 1 on the simulators.

What the simulator models to get there: Table 1's lambda + tau m per message holding the
sender's communication engine (lambda) and then the whole route (wormhole / circuit
switching) for tau m; row-column mesh routing (Paragon) and destination-routed 4x4
switch stages (SP2, CS-2) whose shared links serialise messages; a barrier (Table 1)
before each phase of the partition; the between-phase permutation at the memory-copy
rate. Not modelled: paging, OS timer interrupts, other jobs' traffic (Sec. 5, 6).
"""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program


def simulated_s(spec: str, algorithm: str, block_bytes: int) -> float:
    compiled = compile_program(alltoall_program(resolve(spec).nnodes, block_bytes), target=spec,
                               algorithm=algorithm.replace(",", "+"), file="<fig>")
    run = simulate(compiled)
    assert run.verified
    return run.collectives[0].time_s


def test_contention_free_hypercube_matches_the_theory():
    target = resolve("hypercube:5")
    import numpy as np

    from phalanx.compiler.recognize import recognize
    coll = recognize(0, np.full((32, 32), 512, dtype=np.int64), "A", "B", 1)
    for algorithm in target.algorithms("alltoall"):
        assert simulated_s("hypercube:5", algorithm, 512) == pytest.approx(
            target.predict_time_s(coll, algorithm), rel=1e-9)


@pytest.mark.parametrize("spec, small", [("paragon:4x8", "multiphase:2,3"),
                                         ("sp2:32", "multiphase:2,3"),
                                         ("cs2:32", "multiphase:2,3")])
def test_fig10_cardinality_two_wins_small_direct_wins_large(spec, small):
    # Fig. 10 (32 processors): {2,3} best for small messages, {5} for large (Sec. 5).
    candidates = ("standard", "multiphase:2,3", "direct")
    at_256 = {a: simulated_s(spec, a, 256) for a in candidates}
    at_2000 = {a: simulated_s(spec, a, 2000) for a in candidates}
    assert min(at_256, key=at_256.get) == small
    assert min(at_2000, key=at_2000.get) == "direct"


def test_fig11_on_the_paragon_8x8():
    # Fig. 11 (64 processors): {3,3} beats {6} at 256 bytes, {6} wins at 2000 bytes.
    assert simulated_s("paragon:8x8", "multiphase:3,3", 256) < simulated_s("paragon:8x8", "direct", 256)
    assert simulated_s("paragon:8x8", "direct", 2000) < simulated_s("paragon:8x8", "multiphase:3,3", 2000)


def gap(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"known gap: {reason}")


@pytest.mark.parametrize("spec, paper_ms", [
    pytest.param("paragon:4x8", 7, marks=gap("simulated 4.49 ms vs 7 ms (-36%)")),
    ("paragon:8x8", 12),  # simulated 8.99 ms (-25%)
    pytest.param("sp2:32", 7, marks=gap("simulated 10.72 ms vs 7 ms (+53%): "
                                           "destination routing shares up-ports 4 ways")),
    ("cs2:32", 11),  # simulated 7.40 ms (-33%)
])
def test_seed000_table1_best_times_at_2KB(spec, paper_ms):
    # Seed 000 Table 1 quotes Bokhari's best multiphase times at 2 KB; tolerance +-35%.
    # At 2 KB the best simulated member is the direct exchange on every machine here.
    two = "multiphase:2,3" if resolve(spec).nnodes == 32 else "multiphase:3,3"
    best_ms = min(simulated_s(spec, a, 2048) for a in ("direct", two)) * 1e3
    assert best_ms == pytest.approx(paper_ms, rel=0.35)


def test_fig11_crossover_of_3_3_and_direct_on_the_paragon_8x8():
    # Figs. 10/11 give no crossover figures; bench/bokhari.py bisects ours to 8 bytes: {3,3} ->
    # {6} at 1320 bytes on paragon:8x8 (1368 on 4x8, 584 / 400 on sp2:32 / 64, 1448 / 976 on
    # cs2:32 / 64). Tolerance: the crossover lies within +-10% of 1320 bytes.
    spec, two = "paragon:8x8", "multiphase:3,3"
    assert simulated_s(spec, two, 1188) < simulated_s(spec, "direct", 1188)
    assert simulated_s(spec, "direct", 1452) < simulated_s(spec, two, 1452)


def test_fig10_smallest_messages_favour_many_phases_on_the_cs2():
    # Sec. 5: the standard exchange does well for very small messages. On cs2:32 at 16 bytes the
    # theory ranks standard first (0.970 ms); simulated, {1,1,1,2} wins at 1.017 ms and standard
    # (1.028 ms) is within 2% of it: switch contention costs the 16-block messages a little.
    times = {a: simulated_s("cs2:32", a, 16) for a in
             ("standard", "multiphase:1,1,1,2", "multiphase:2,3", "direct")}
    best = min(times, key=times.get)
    assert best in ("standard", "multiphase:1,1,1,2")
    assert times["standard"] <= 1.02 * times[best] < times["multiphase:2,3"] < times["direct"]
