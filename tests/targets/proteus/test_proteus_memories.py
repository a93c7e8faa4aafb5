"""Proteus's dual-port memories as a lower bound (docs/bounds.md, "Proteus's dual-port
memories"): every byte between clusters passes its sender's DP twice and its receiver's twice,
relayed or not, so the eight DPs together carry four times what must cross; worked by hand and
never beaten (tests/compiler/library/test_bounds.py runs every algorithm against it at 2 KB)."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import checked_run
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.proteus.cost import memories_bound_s

ROUNDING = 1e-9


def test_the_memories_carry_four_passes_of_what_crosses_or_two_of_a_cluster_s_own():
    p = resolve("proteus").params
    # a broadcast's shape: 4 x 300 crossing bytes over 4 DPs beats any cluster's own 2 x 100
    out, into = np.array([100, 0, 0, 0]), np.array([0, 100, 100, 100])
    assert memories_bound_s(p, out, into) == pytest.approx(p.overhead_s + 300 / p.dp_Bps, rel=ROUNDING)
    # one cluster sending and receiving much: its own passes bind
    out, into = np.array([500, 0, 0, 0]), np.array([400, 100, 0, 0])
    assert memories_bound_s(p, out, into) == pytest.approx(p.overhead_s + 1800 / p.dp_Bps, rel=ROUNDING)
    assert memories_bound_s(p, np.zeros(4), np.zeros(4)) == 0.0


@pytest.mark.parametrize("kind, crossing", [("broadcast", 7), ("reduce", 7), ("allreduce", 8)])
def test_a_megabyte_crosses_between_clusters_seven_or_eight_times(kind, crossing):
    """A broadcast's seven other clusters each receive the 1 MB, a reduce's seven each send
    their partial, an allreduce's eight each receive one and send one: 4 passes over 8 DPs."""
    machine = resolve("proteus")
    (coll,) = recognized_collectives(kind_program(kind, 32, 1 << 20), target=machine.spec)
    p = machine.params
    expected_s = p.overhead_s + 4 * crossing * (1 << 20) / 8 / p.dp_Bps
    assert machine.binding_bound(coll) == (pytest.approx(expected_s, rel=ROUNDING), "dual-port memories")


def test_no_broadcast_of_128_kb_beats_the_memories():
    """Every candidate of a 128 KB broadcast (7.1 ms by the DPs: 56.0 ms of passes at 1 MB scale
    down), simulated; the fastest's data checked."""
    machine = resolve("proteus")
    (coll,) = recognized_collectives(kind_program("broadcast", 32, 128 << 10), target=machine.spec)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "dual-port memories" and bound_s == pytest.approx(7.1e-3, rel=1e-3)
    times = {algorithm: simulated_time_s(machine, coll, algorithm)
             for algorithm, unmet in machine.candidates(coll) if unmet is None}
    assert len(times) >= 3
    assert min(times.values()) >= bound_s * (1 - ROUNDING)
    fastest = min(times, key=times.get)
    compiled = compile_program(kind_program("broadcast", 32, 128 << 10), target=machine.spec,
                               algorithm=f"broadcast={fastest}", file="<broadcast>")
    assert not any(checked_run(compiled).problems.values())
