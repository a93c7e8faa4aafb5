"""A reduce's contributor that sends to the root spends a start-up its relays miss (docs/bounds.md,
"Straight messages' start-ups"): its value worked by hand on torus:8x8 at 128 B and 2 KB, never
below "relays' merges", where it applies, and every reduce algorithm on small tori and
torus:8x8 above it."""

from __future__ import annotations

import pytest

from conftest import runnable_times, whole_machine_collective
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.reducemerge import relay_merges_bound_s
from phalanx.compiler.library.reducestraight import max_contributors, relay_shares, straight_startups_bound_s
from phalanx.compiler.target import resolve

ROUNDING = 1e-9


def torus_8x8(size: int):
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    return machine, port, whole_machine_collective(machine, size, Kind.REDUCE)


def test_torus_8x8_2k_by_hand():
    """At the bound (99.46 us) the start-ups at 0, h and 2h bring relays 1048.9, 626.6 and
    306.6 B (3h: none), 66 B short of 2 KB. A contributor of class k (its first message to q
    at k h) sends q 2048 - 1982.1 + r_k B; q merges (6.25 ns a byte, its four streams as fast)
    what the classes from k on send in T - k h - alpha: from 3h 47 contributors of 66 B, and
    each earlier class what h more leaves, 8.6, 4.6 and 2.9 of them: 63 in all."""
    machine, port, coll = torus_8x8(2048)
    alpha, hold = port.startup_s, port.hold_s
    merge = port.combine_s_per_op / 8
    bound_s = straight_startups_bound_s(coll, port)
    relays = relay_shares(bound_s, port, merge, 2048)
    assert [round(r, 1) for r in relays] == [1048.9, 626.6, 306.6, 0.0]
    short = 2048 - sum(relays)
    capacity = [(bound_s - k * hold - alpha) / merge for k in range(4)]
    by_hand = capacity[3] / short + sum((capacity[k] - capacity[k + 1]) / (short + relays[k])
                                        for k in range(3))
    assert by_hand == pytest.approx(63, rel=1e-9)
    assert max_contributors(bound_s, 2048, relays, port, merge) == pytest.approx(63, rel=1e-9)
    assert bound_s == pytest.approx(99.465e-6, rel=1e-5)
    assert machine.binding_bound(coll) == (pytest.approx(bound_s, rel=1e-12), "straight start-ups")
    assert bound_s > relay_merges_bound_s(coll, port)  # 97.04 us


def test_torus_8x8_128_by_hand():
    """128 B: only the start-up at 0 reaches a relay (100.8 B); 38 contributors send q their
    27.2 B at h, 25 their 128 B at 0."""
    machine, port, coll = torus_8x8(128)
    merge = port.combine_s_per_op / 8
    bound_s = straight_startups_bound_s(coll, port)
    relays = relay_shares(bound_s, port, merge, 128)
    assert len(relays) == 2 and relays[1] == 0
    later = (bound_s - port.hold_s - port.startup_s) / merge / (128 - relays[0])
    earlier = port.hold_s / merge / 128
    assert later + earlier == pytest.approx(63, rel=1e-9)
    assert bound_s == pytest.approx(46.602e-6, rel=1e-5)


def test_it_is_left_out_where_relays_merges_is():
    torus = resolve("torus:4x4")
    port = torus.library.machine.port
    assert straight_startups_bound_s(whole_machine_collective(torus, 2048, Kind.BROADCAST), port) == 0
    for spec in ("ideal:8", "paragon:4x4", "cs2:8", "proteus:32"):
        machine = resolve(spec)
        coll = whole_machine_collective(machine, 2048, Kind.REDUCE)
        assert straight_startups_bound_s(coll, machine.library.machine.port) == 0


@pytest.mark.parametrize("spec, size", [(spec, size)
                                        for spec in ("torus:4x4", "iwarp:4x4", "torus:2x4", "torus:8x8")
                                        for size in (8, 128, 2048, 16384, 131072)])
def test_never_below_relays_merges(spec, size):
    machine = resolve(spec)
    port = machine.library.machine.port
    coll = whole_machine_collective(machine, size, Kind.REDUCE)
    assert straight_startups_bound_s(coll, port) >= relay_merges_bound_s(coll, port) * (1 - ROUNDING)


@pytest.mark.parametrize("spec, sizes", [("torus:4x4", (100, 128, 2048, 16384)),
                                         ("iwarp:4x4", (128, 2048, 16384)),
                                         ("torus:2x4", (100, 128, 2048, 16384)), ("torus:2x2", (128, 2048)),
                                         ("torus:8x8", (128, 2048, 16384))])
def test_no_reduce_beats_the_straight_startups_or_relay_merges_bound(spec, sizes):
    """Both bounds against one simulation of every reduce algorithm (reducemerge.py's too).
    100 B: byte elements, one merge operation a byte (50 ns, more than a byte's wire)."""
    machine = resolve(spec)
    port = machine.library.machine.port
    for size in sizes:
        coll = whole_machine_collective(machine, size, Kind.REDUCE)
        times = runnable_times(machine, coll)
        assert times, (spec, size)
        for bound_s in (straight_startups_bound_s(coll, port), relay_merges_bound_s(coll, port)):
            assert bound_s > 0
            for algorithm, time_s in times:
                assert time_s >= bound_s * (1 - ROUNDING), (spec, size, algorithm, time_s, bound_s)
