"""A local copy on the tori holds its node's processor (WormholeNetwork.copy_program), and a
node starts its messages before its copies (compiler/plan_walk.py `messages`), on both engines."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import with_schedule
from phalanx.compiler.driver import compile_program
from phalanx.compiler.plan_walk import messages
from phalanx.compiler.schedule import Phase, Schedule, SyncMode, Transfer
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.targets.iwarp.params import IWarpParams

PARAMS = IWarpParams()
COPY_S = PARAMS.copy_s(4096)  # 51.2 us: 8 KB read and written at the four streams' 160 MB/s
OVERHEAD_S = PARAMS.overhead_s  # 20 us


def linear_broadcast():
    """The root sends its 4 KB to each of 15 nodes in turn and copies its own in the last phase."""
    compiled = compile_program(kind_program("broadcast", 16, 4096), target="torus:4x4",
                               algorithm="broadcast=linear", cost="closed-form")
    (schedule,) = compiled.schedules
    *_, (last_message, copy) = (p.sends for p in schedule.phases)
    assert copy.src == copy.dst == 0 and last_message.src != last_message.dst
    return compiled, schedule, copy


def moved(schedule: Schedule, copy: Transfer, first: tuple[Phase, ...], sync: SyncMode) -> Schedule:
    """The schedule with the root's copy taken out of its last phase, `first` before the rest."""
    phases = [Phase.of([t for t in p.sends if t != copy]) for p in schedule.phases]
    return dataclasses.replace(schedule, phases=tuple(dataclasses.replace(p, sync=sync)
                                                      for p in (*first, *phases)))


def run(compiled, schedule: Schedule) -> tuple[float, float]:
    """(time, the root processor's busy time), the same on both engines, the data verified."""
    out = []
    for engine in ("python", "native"):
        result = simulate(with_schedule(compiled, schedule), engine_choice=engine)
        assert result.collectives[0].verified, result.collectives[0].problems
        busy = {r.name: r.busy_s for r in result.network.resources()}
        out.append((result.collectives[0].time_s, busy["node 0 processor"]))
    assert out[0] == pytest.approx(out[1], rel=1e-12)
    return out[0]


def test_the_copy_is_the_processors_busy_time():
    compiled, schedule, _ = linear_broadcast()
    _, busy_s = run(compiled, schedule)
    assert busy_s == pytest.approx(15 * OVERHEAD_S + COPY_S, rel=1e-9)


def test_a_copy_ahead_of_a_start_up_delays_it_by_the_copy_time():
    """In eager phases the root posts its next message while the last streams: a copy in a
    phase of its own before the first message holds the processor that start-up needs."""
    compiled, schedule, copy = linear_broadcast()
    eager = dataclasses.replace(schedule, phases=tuple(dataclasses.replace(p, sync=SyncMode.EAGER)
                                                       for p in schedule.phases))
    base_s, _ = run(compiled, eager)
    ahead_s, _ = run(compiled, moved(schedule, copy, (Phase.of([copy]),), SyncMode.EAGER))
    assert ahead_s == pytest.approx(base_s + COPY_S, rel=1e-9)


def test_a_copy_listed_before_the_phases_message_runs_after_its_start_up():
    """The copy listed first in phase 0 still runs after the message's start-up, beside its
    streaming (4 KB take 102.4 us of wire), so the broadcast takes as long as with the copy last."""
    compiled, schedule, copy = linear_broadcast()
    base_s, _ = run(compiled, schedule)
    first = Phase.of([copy, *schedule.phases[0].sends])
    rest = moved(schedule, copy, (), SyncMode.LOCAL)
    listed_first = dataclasses.replace(rest, phases=(first, *rest.phases[1:]))
    assert run(compiled, listed_first)[0] == pytest.approx(base_s, rel=1e-12)
    assert [g[0].dst for g in messages(list(first.sends))] == [1, 0]
