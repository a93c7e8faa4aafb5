"""The vectorized fast path (runtime/fastpath.py) against the event path on iWarp."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.fastpath import move_data
from phalanx.runtime.simulate import build_data, simulate
from phalanx.runtime.sweep import alltoall_program

CLOSED = "closed-form"  # every compile forces its algorithm: no candidate need be simulated


def execute(compiled, fast: bool):
    result = simulate(compiled, seed=3, fast=fast)
    return result.execution, [p for c in result.collectives for p in c.problems]


@pytest.mark.parametrize("algorithm", ["phased", "phased-global"])
def test_fast_path_and_event_path_agree_exactly_on_8x8(algorithm):
    source = alltoall_program(64, 96).replace("B = A\n", 'compute "c" on P cost 1 ms\nB = A\n')
    compiled = compile_program(source, target="iwarp:8x8", algorithm=algorithm, file="<t>", cost=CLOSED)
    slow, slow_problems = execute(compiled, fast=False)
    fast, fast_problems = execute(compiled, fast=True)
    assert slow_problems == [] and fast_problems == []
    assert fast.fast_messages == 64 * 63 and slow.fast_messages == 0
    assert fast.total_time_s == slow.total_time_s  # exactly, not approximately
    assert fast.collectives[0].time_s == slow.collectives[0].time_s


def test_other_schedules_stay_on_the_event_path():
    compiled = compile_program(alltoall_program(64, 64), target="iwarp:8x8",
                               algorithm="message-passing", file="<t>", cost=CLOSED)
    execution, problems = execute(compiled, fast=True)
    assert problems == [] and execution.fast_messages == 0 and execution.events > 0


def test_fast_path_moves_blocks_straight_and_still_catches_a_second_send():
    # The fast path moves a direct block from its origin's array into its destination's
    # without a payload in between (runtime/data.py move_direct); the same block moved again
    # is left to take + put, which refuse it.
    compiled = compile_program(alltoall_program(64, 32), target="iwarp:8x8", algorithm="phased",
                               file="<t>", cost=CLOSED)
    schedule = compiled.plan.schedules()[0]
    data = build_data(compiled.communications[0], np.random.default_rng(5))
    move_data(schedule, data)
    assert data.problems() == []
    t = next(t for t in schedule.phases[0].sends if t.src != t.dst)
    assert not data.move_direct(t)
    with pytest.raises(ScheduleError, match="does not hold"):
        data.take(t)


def test_a_block_kept_at_its_origin_then_sent_is_not_moved_twice():
    """two-stage keeps some blocks at their origin in stage 1 (a copy to itself) and sends
    them in stage 2: that send must move the kept payload, not the origin's array again
    (found by the SimGrid backend, which moves data with move_data)."""
    compiled = compile_program(alltoall_program(64, 32), target="iwarp:8x8",
                               algorithm="two-stage", file="<t>", cost=CLOSED)
    data = build_data(compiled.communications[0], np.random.default_rng(5))
    move_data(compiled.plan.schedules()[0], data)
    assert data.problems() == []
