"""The k-nomial reduce (knomial.py): its radix follows the partial's size (the binomial tree for
long partials, every partial straight to the root for short ones, k = 4 between on ideal:16),
its simulated time on `ideal` is its closed form within 2%, and its data arrives on any P."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library import cost
from phalanx.compiler.library.knomial import radix
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

TOLERANCE = 0.02


@pytest.mark.parametrize("size, k", [(8, 16), (512, 4), (65536, 2)])
def test_the_radix_trades_start_ups_against_the_roots_port(size, k):
    """ideal:16 (alpha 10 us, beta 0.01 us/B): 15 partials of 8 B cost the root 1.2 us, less
    than a second start-up; at 512 B two rounds of three (2 x 26.0 us) beat four of one (63.0)
    and one of fifteen (87.4); at 64 KB every partial more at a parent costs 655 us."""
    machine = resolve("ideal:16")
    coll = compile_program(kind_program("reduce", 16, size), target="ideal:16",
                           algorithm="reduce=knomial").collectives[0]
    assert radix(coll, machine.library.machine, 16) == k


@pytest.mark.parametrize("spec, size", [("ideal:16", 512), ("ideal:16", 8), ("ideal:8", 4096)])
def test_simulated_time_is_the_closed_form(spec, size):
    machine = resolve(spec)
    n = machine.nnodes
    compiled = compile_program(kind_program("reduce", n, size), target=spec,
                               algorithm="reduce=knomial")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    port = machine.library.machine.port
    k = radix(compiled.collectives[0], machine.library.machine, n)
    expected = cost.knomial_reduce_s(n, k, size, 8, port)
    assert result.time_s == pytest.approx(expected, rel=TOLERANCE), (k, result.time_s, expected)


@pytest.mark.parametrize("spec, size", [("ideal:12", 256), ("hypercube:3", 2048), ("torus:3x4", 8)])
def test_every_partial_arrives_on_any_number_of_members(spec, size):
    machine = resolve(spec)
    compiled = compile_program(kind_program("reduce", machine.nnodes, size), target=spec,
                               algorithm="reduce=knomial")
    result = simulate(compiled).collectives[0]
    assert result.algorithm == "knomial"
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
