"""Issue 18's table: `auto` on the tori within 5% of the best algorithm forced with
`--algorithm` (it was 1.29-1.65x), with `--cost target`. Store-forward, two-stage, direct and
message passing have no closed form that follows the wormhole simulator, so `--cost target`
simulates them (IWarpTarget.closed_form_gap) and says so in each candidate's source."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.timing import simulated_time_s

SIXTY_FOUR_TO_EIGHT = """processors P(64)
processors Q(8)
array A(64, 16384) of byte distribute (BLOCK, *) onto P
array B(64, 16384) of byte distribute (*, BLOCK) onto Q
B = A
"""

# (case, target, program, best forced algorithm, its simulated ms, auto's old choice and ms).
# The issue's best on the complete all-to-alls was `phased` (7.387 and 6.978 ms, checked below);
# `phased-unswitched` (issue 27, branch a2atorus) takes its phases without the switch's software;
# `split-ties` (branch cshift) the 64-to-8 pattern's row-4 blocks half each way round (`direct`:
# 1.928 ms).
TABLE = [
    ("transpose 2304-byte blocks", "iwarp:8x8", alltoall_program(64, 2304), "phased-unswitched",
     4.993, "store-forward", 10.023),
    ("slab FFT 64 KB blocks", "iwarp:4x4", alltoall_program(16, 65536), "direct", 24.881,
     "store-forward", 41.041),
    ("64 senders to 8 receivers, 2 KB", "torus:8x8", SIXTY_FOUR_TO_EIGHT, "split-ties", 1.685,
     "store-forward", 3.151),
    ("all-to-all 2 KB", "iwarp:8x8", alltoall_program(64, 2048), "phased-unswitched", 4.584,
     "store-forward", 9.016),
]
ISSUE_PHASED_MS = {"transpose 2304-byte blocks": 7.387, "all-to-all 2 KB": 6.978}


@pytest.mark.parametrize("case, target, source, best, best_ms, old, old_ms", TABLE,
                         ids=[row[0] for row in TABLE])
def test_auto_is_within_five_percent_of_the_best_forced(case, target, source, best, best_ms, old,
                                                        old_ms):
    compiled = compile_program(source, target=target)
    run = simulate(compiled)
    assert run.verified
    machine, coll = compiled.target, compiled.collectives[0]
    # every algorithm auto may take, forced (timed without payload: the same time, test_timing.py)
    forced = {a: simulated_time_s(machine, coll, a) for a, why in machine.candidates(coll) if why is None}
    assert forced[best] * 1e3 == pytest.approx(best_ms, rel=1e-3)  # the issue's figures
    assert forced[old] * 1e3 == pytest.approx(old_ms, rel=1e-3)
    if case in ISSUE_PHASED_MS:
        assert forced["phased"] * 1e3 == pytest.approx(ISSUE_PHASED_MS[case], rel=1e-3)
    assert run.collectives[0].time_s <= 1.05 * min(forced.values())
    assert run.collectives[0].algorithm == best


def test_candidates_say_which_times_were_simulated():
    compiled = compile_program(alltoall_program(64, 2048), target="iwarp:8x8")
    sources = {c.algorithm: c.source for c in compiled.candidates[0]}
    # phased's closed form follows (within 2%), but auto ranks like against like (issue 29)
    assert sources["phased"].startswith("simulated: ranked with candidates whose closed form does "
                                        "not follow the simulator (")
    assert sources["store-forward"].startswith("simulated: the closed form does not follow the "
                                               "simulator (each hop's messages wait for memory")
    assert all(sources[a].startswith("simulated") for a in
               ("message-passing", "message-passing-random", "two-stage", "direct"))
