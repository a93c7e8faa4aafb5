"""Relays' start-ups between the drain's windows (docs/bounds.md, "Relays' start-ups between the
drain's windows"): where it applies, and every reduce algorithm on small one-engine machines
above it."""

from __future__ import annotations

import pytest

from conftest import runnable_times, whole_machine_collective
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.reducedrain import drain_bound_s
from phalanx.compiler.library.reducerelays import relay_startups_bound_s
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import Target, resolve

ROUNDING = 1e-9


def reduce_of(machine: Target, size: int, kind: Kind = Kind.REDUCE) -> Collective:
    """The sweep's reduce (or other kind) of `size`-byte partials on the whole machine."""
    return whole_machine_collective(machine, size, kind)


def test_sp2_64_at_2_kb_charges_the_relays_start_ups_above_the_drain():
    """sp2:64, 2 KB (n beta = 88 us > alpha = 70 us): 340.3 us against the drain's 311.2 us."""
    machine = resolve("sp2:64")
    port = machine.library.machine.port
    coll = reduce_of(machine, 2048)
    assert relay_startups_bound_s(coll, port) == pytest.approx(340.3e-6, rel=1e-3)
    assert relay_startups_bound_s(coll, port) > drain_bound_s(coll, port)
    assert machine.binding_bound(coll)[1] == "relay start-ups"


def test_it_is_left_out_for_short_partials_other_kinds_and_several_streams():
    sp2 = resolve("sp2:64")
    port = sp2.library.machine.port
    assert relay_startups_bound_s(reduce_of(sp2, 128), port) == 0  # n beta <= alpha
    assert relay_startups_bound_s(reduce_of(sp2, 16384, "broadcast"), port) == 0
    torus = resolve("torus:4x4")
    assert relay_startups_bound_s(reduce_of(torus, 16384), torus.library.machine.port) == 0


@pytest.mark.parametrize("spec", ["paragon:4x4", "paragon:2x4", "sp2:8", "sp2:16", "cs2:8"])
def test_no_reduce_beats_the_relay_start_ups_bound(spec):
    machine = resolve(spec)
    port = machine.library.machine.port
    applied = 0
    for size in (2048, 8192, 16384, 65536):
        coll = reduce_of(machine, size)
        bound_s = relay_startups_bound_s(coll, port)
        if bound_s == 0:  # n beta <= alpha: 2 KB on the Paragon and CS-2
            assert size == 2048 and not spec.startswith("sp2"), spec
            continue
        applied += 1
        times = runnable_times(machine, coll)
        for algorithm, time_s in times:
            assert time_s >= bound_s * (1 - ROUNDING), (spec, size, algorithm, time_s, bound_s)
        assert times, (spec, size)
    assert applied >= 3, spec
