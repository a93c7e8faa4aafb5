"""A reduce's drain into the root (docs/bounds.md, "A reduce's drain into the root"): its closed
form where the windows at both ends are apart, and every reduce algorithm on small machines of
the families it applies to (shared engines, shared memory streams) above it."""

from __future__ import annotations

import pytest

from conftest import runnable_times, whole_machine_collective
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.reducedrain import drain_bound_s
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import Target, resolve

ROUNDING = 1e-9


def reduce_of(machine: Target, size: int, kind: Kind = Kind.REDUCE) -> Collective:
    """The sweep's reduce (or other kind) of `size`-byte partials on the whole machine."""
    return whole_machine_collective(machine, size, kind)


def test_four_streams_lose_the_first_hold_in_part_and_all_but_the_roots_in_the_last_start_up():
    """torus:8x8, 16 KB: the memories' average (2 x 63 partials over 4 x 64 streams) from alpha
    on, plus h / 2 (half the streams idle in the first hold) and alpha (1 - 2 / 64) (in the last
    alpha only the root's 4 streams and their 4 senders' carry the partials)."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    alpha, hold, beta = port.startup_s, port.hold_s, port.s_per_byte
    expected = alpha + hold / 2 + alpha * (1 - 2 / 64) + 2 * 63 * 16384 * beta / (4 * 64)
    coll = reduce_of(machine, 16384)
    assert drain_bound_s(coll, port) == pytest.approx(expected, rel=1e-9)
    assert machine.binding_bound(coll) == (pytest.approx(expected, rel=1e-9), "root drain")


def test_one_engine_machines_lose_the_first_start_up_and_all_but_two_engines_in_the_last():
    """cs2:64, 16 KB: alpha, then the engines' average (2 x 63 partials over 64 engines), plus
    alpha (1 - 2 / 64): in the last alpha only the root's engine and its sender's."""
    machine = resolve("cs2:64")
    port = machine.library.machine.port
    alpha, beta = port.startup_s, port.s_per_byte
    expected = alpha + alpha * (1 - 2 / 64) + 2 * 63 * 16384 * beta / 64
    assert drain_bound_s(reduce_of(machine, 16384), port) == pytest.approx(expected, rel=1e-9)


def test_it_is_left_out_for_other_kinds_and_ports_of_apart_directions():
    torus = resolve("torus:4x4")
    assert drain_bound_s(reduce_of(torus, 2048, "broadcast"), torus.library.machine.port) == 0
    ideal = resolve("ideal:8")
    assert drain_bound_s(reduce_of(ideal, 2048), ideal.library.machine.port) == 0


@pytest.mark.parametrize("spec", ["torus:4x4", "iwarp:4x4", "torus:2x4", "paragon:4x4", "sp2:8", "cs2:8"])
def test_no_reduce_beats_the_drain_bound(spec):
    machine = resolve(spec)
    port = machine.library.machine.port
    for size in (128, 2048, 16384, 65536):
        coll = reduce_of(machine, size)
        bound_s = drain_bound_s(coll, port)
        assert bound_s > 0
        times = runnable_times(machine, coll)
        for algorithm, time_s in times:
            assert time_s >= bound_s * (1 - ROUNDING), (spec, size, algorithm, time_s, bound_s)
        assert times, (spec, size)
