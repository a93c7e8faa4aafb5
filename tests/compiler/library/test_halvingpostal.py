"""The halving-postal reduce (compiler/library/halvingpostal.py): the simulator meets its closed
form on `ideal` and on the Paragon's issue-27 case, its partials arrive on every target family,
and it needs 2^d members."""

from __future__ import annotations

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.halvingfanin import halving_fan_in_s
from phalanx.compiler.library.halvingpostal import halving_postal_s, postal_halved_rounds
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

TOLERANCE = 0.02


def _reduce(spec: str, size: int, algorithm: str = "halving-postal"):
    machine = resolve(spec)
    compiled = compile_program(kind_program("reduce", machine.nnodes, size), target=spec,
                               algorithm=f"reduce={algorithm}")
    return machine, compiled


@pytest.mark.parametrize("spec, size, k", [("ideal:16", 2048, 2), ("ideal:8", 8192, 3),
                                           ("ideal:64", 2048, 3)])
def test_simulated_time_is_the_closed_form(spec, size, k):
    """Halving over some bits, postal columns and the fan-in into the root, and k = lg P
    (halving-direct's shape): the simulator meets halving_postal_s, data verified."""
    machine, compiled = _reduce(spec, size)
    n = machine.nnodes
    assert postal_halved_rounds(compiled.collectives[0], machine.library.machine, n) == k
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    expected = halving_postal_s(n, k, size, 8, machine.library.machine.port)
    assert result.time_s == pytest.approx(expected, rel=TOLERANCE), (result.time_s, expected)


def test_paragon_8x8_at_16_kb_beats_both_fan_ins():
    """Issue 27's case: three halving rounds and 8-member postal columns, 1.014 ms (its closed
    form), where halving-fan-in takes 1.042 ms (k = 4) and its closed form picks no better."""
    machine, compiled = _reduce("paragon:8x8", 16384)
    port = machine.library.machine.port
    assert postal_halved_rounds(compiled.collectives[0], machine.library.machine, 64) == 3
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s == pytest.approx(1014.0e-6, rel=1e-3)
    assert result.time_s == pytest.approx(halving_postal_s(64, 3, 16384, 8, port), rel=1e-3)
    assert result.time_s < min(halving_fan_in_s(64, k, 16384, 8, port) for k in range(7))
    assert result.time_s >= result.lower_bound_s


@pytest.mark.parametrize("spec, size", [("hypercube:3", 2048), ("torus:4x4", 2048), ("sp2:16", 4096),
                                        ("cs2:16", 16384), ("iwarp:4x4", 512)])
def test_every_partial_arrives(spec, size):
    assert_forced_run_verifies(spec, "reduce", "halving-postal", size)


def test_refused_on_members_not_a_power_of_two():
    machine, compiled = _reduce("ideal:16", 2048)
    coll = compile_program(kind_program("reduce", 12, 2048), target="ideal:12",
                           algorithm="reduce=knomial").collectives[0]
    reason = dict(resolve("ideal:12").candidates(coll))["halving-postal"]
    assert reason is not None and "power of two" in reason, reason
    assert dict(machine.candidates(compiled.collectives[0]))["halving-postal"] is None
