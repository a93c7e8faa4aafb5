"""Proteus's communication cycles as a lower bound (docs/bounds.md, "Proteus's cycles"): a
cluster forwards one packet a cycle boundary, a packet is released two boundaries after it is
forwarded, and what is released can be forwarded from the next boundary on; worked by hand,
met by one message, and never beaten (tests/compiler/library/test_bounds.py runs every
algorithm against it)."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import recognized_collectives
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.proteus.cost import boundaries_to_reach, clusters_reached

ROUNDING = 1e-9


def test_a_cluster_s_data_reaches_few_clusters_per_boundary():
    """r_k = 1 + r_0 + ... + r_(k-3): the source alone for two boundaries, one more cluster at
    the third (its packet forwarded at the first), then each holder adds one a boundary from the
    third boundary after its release."""
    assert [clusters_reached(k) for k in range(10)] == [1, 1, 1, 2, 3, 4, 6, 9, 13, 19]
    assert [boundaries_to_reach(n) for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)] == [0, 3, 4, 5, 6, 6, 7, 7, 7, 8]


def test_one_message_between_clusters_meets_two_cycles():
    """PP 0 to PP 4 (clusters 0 and 1), 8 bytes: forwarded at the first boundary, granted at
    the second, released at the third: two control parts and the packet at the link rate."""
    machine = resolve("proteus")
    matrix = np.zeros((32, 32), dtype=np.int64)
    matrix[0, 4] = 8
    coll = recognize(0, matrix, "A", "B", 1)
    expected_s = 2 * machine.params.overhead_s + 8 / machine.params.link_Bps
    assert machine.binding_bound(coll) == (pytest.approx(expected_s, rel=ROUNDING), "communication cycles")
    assert simulated_time_s(machine, coll, "direct") == pytest.approx(expected_s, rel=ROUNDING)


@pytest.mark.parametrize("kind", ["broadcast", "gather", "allgather", "reduce", "alltoall"])
def test_eight_clusters_need_six_cycles(kind):
    """Every cluster's data to all 8 clusters, or all 8 clusters' data to one (a root's, or an
    input every element of the result depends on): boundary 7, six cycles of 0.1 ms, and the
    busiest cluster's bytes at the link rate."""
    machine = resolve("proteus")
    (coll,) = recognized_collectives(kind_program(kind, 32, 8), target=machine.spec)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "communication cycles"
    assert 6 * machine.params.overhead_s <= bound_s < 6 * machine.params.overhead_s + 1e-4
    for algorithm, unmet in machine.candidates(coll):
        if unmet is None:
            assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm


def test_a_fixed_cycle_counts_its_whole_length():
    """With cycle_ms=4.1 (Sec. 3.2's fixed cycle) every cycle lasts 4.1 ms: a broadcast of 8 B
    takes at least six of them."""
    machine = resolve("proteus:cycle_ms=4.1")
    (coll,) = recognized_collectives(kind_program("broadcast", 32, 8), target=machine.spec)
    assert machine.binding_bound(coll) == (pytest.approx(6 * 4.1e-3), "communication cycles")


def test_a_shift_s_messages_inside_clusters_take_no_colour():
    """The sweep's cshift (PP r to r - 1): 8 messages cross clusters, one out of and one into
    each, and 24 stay in a cluster's memory. Coloured by the cluster ports they do not pass,
    the latter made 4 phases and posted the crossing messages after the first boundary
    (300.4 us); in one phase with them (compiler/library/colouring.py) the shift meets its two
    cycles."""
    machine = resolve("proteus")
    (coll,) = recognized_collectives(kind_program("cshift", 32, 8), target=machine.spec)
    schedule = machine.schedule_for(coll, "colouring")
    assert len([p for p in schedule.phases if p.sends]) == 1
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "communication cycles"
    assert simulated_time_s(machine, coll, "colouring") == pytest.approx(bound_s, rel=ROUNDING)


def test_queued_messages_let_the_controllers_order_a_permutation():
    """The sweep's permutation (a transpose of 32 PPs): `queued` posts every block at once; the
    CCs' one-a-cycle forwarding and the GCI's grants order them, in fewer cycles than the
    colour phases, which wait for each other; `auto` (which simulates the record) takes it."""
    machine = resolve("proteus")
    (coll,) = recognized_collectives(kind_program("permutation", 32, 8), target=machine.spec)
    schedule = machine.schedule_for(coll, "queued")
    assert len(schedule.phases) == 1
    queued_s = simulated_time_s(machine, coll, "queued")
    assert queued_s < simulated_time_s(machine, coll, "colouring")
    assert queued_s >= machine.binding_bound(coll)[0]
    assert machine.choose(coll, "auto") == "queued"
