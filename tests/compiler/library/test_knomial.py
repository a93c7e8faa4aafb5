"""The k-nomial reduce (knomial.py): its radix follows the partial's size (the binomial tree for
long partials, every partial straight to the root for short ones, k = 4 between on ideal:16),
its simulated time on `ideal` is its closed form within 2%, and its data arrives on any P. The
cut scatter-doubling broadcast and the halving-direct reduce (knomial.py too): their closed forms
and their data. (The cut-halving reduce's are in test_allreduce.py, beside its allreduce twin.)"""

from __future__ import annotations

from dataclasses import replace

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library import cost
from phalanx.compiler.library.knomial import (
    direct_halved_rounds,
    far_scatter_loads_less,
    halving_direct_s,
    radix,
)
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


@pytest.mark.parametrize("algorithm, spec, size", [
    ("knomial", "ideal:12", 256), ("knomial", "hypercube:3", 2048), ("knomial", "torus:3x4", 8),
    ("halving-direct", "hypercube:4", 2048), ("halving-direct", "torus:4x4", 2048),
    ("halving-direct", "sp2:16", 512)])
def test_every_partial_arrives(algorithm, spec, size):
    """k-nomial on any number of members; halving-direct on machines other than ideal."""
    machine = resolve(spec)
    compiled = compile_program(kind_program("reduce", machine.nnodes, size), target=spec,
                               algorithm=f"reduce={algorithm}")
    result = simulate(compiled).collectives[0]
    assert result.algorithm == algorithm
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


@pytest.mark.parametrize("size, k", [(128, 0), (2048, 2), (65536, 3)])
def test_the_cut_scatter_doubling_broadcast_meets_its_closed_form(size, k):
    """ideal:16: the binomial tree at 128 B (k = 0), two halving bits at 2 KB (100.96 us),
    three at 64 KB (1.299 ms): scatter-doubling's 2 lg P start-ups less the one its last
    scatter round and first doubling round cost apart (cost.halving_doubling_s, no merges)."""
    machine = resolve("ideal:16")
    port = machine.library.machine.port
    compiled = compile_program(kind_program("broadcast", 16, size), target="ideal:16",
                               algorithm="broadcast=cut-scatter-doubling")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    no_merges = replace(port, combine_s_per_op=0.0)
    assert cost.least_halved_rounds(16, size, 1, no_merges) == k
    assert result.time_s == pytest.approx(cost.halving_doubling_s(16, k, size, 1, no_merges),
                                          rel=TOLERANCE)


@pytest.mark.parametrize("spec, halved, far", [
    ("cs2:64", 5, True), ("cs2:64", 2, False), ("paragon:8x8", 5, True), ("torus:8x8", 3, True),
    ("sp2:64", 5, False), ("hypercube:6", 5, False), ("ideal:64", 5, False)])
def test_the_scatter_goes_farthest_first_where_it_loads_the_routes_less(spec, halved, far):
    """The CS-2's fat tree: nearest first, the round of rank bit 2 has a leaf switch's four
    senders on one up-link (4 pieces of 2^-k of the block), farthest first one sender a leaf;
    the SP2's adapter spreads a pair's packets over its four routes and the hypercube's rounds
    take disjoint wires: alike loads, nearest first; no routes (ideal): nearest first."""
    machine = resolve(spec).library.machine
    assert far_scatter_loads_less(machine, list(range(machine.nnodes)), halved) is far


@pytest.mark.parametrize("spec, size", [("cs2:64", 131072), ("cs2:16", 20000), ("paragon:4x4", 65536),
                                        ("hypercube:4", 65536), ("torus:4x4", 2048), ("ideal:8", 20000)])
def test_the_cut_scatter_doubling_broadcast_delivers_the_block(spec, size):
    """Farthest first or not (far_scatter_loads_less), on every kind of machine; cs2:64 at
    128 KB: k = 5 and farthest first, 13.745 ms (nearest first 15.906)."""
    machine = resolve(spec)
    compiled = compile_program(kind_program("broadcast", machine.nnodes, size), target=spec,
                               algorithm="broadcast=cut-scatter-doubling")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
    if spec == "cs2:64":
        assert result.time_s == pytest.approx(13.745e-3, rel=1e-6)


@pytest.mark.parametrize("spec, size, k",
                         [("ideal:16", 128, 0), ("ideal:16", 2048, 4), ("ideal:8", 65536, 3)])
def test_the_halving_direct_reduce_meets_its_closed_form(spec, size, k):
    """ideal:16 at 128 B: the binomial tree (k = 0, 45.76 us) beats lg P halvings and a gather;
    at 2 KB 4 halvings, then the 15 reduced 128-byte pieces into the root at once (90.96 us,
    where cut-halving's binomial gather pays 3 start-ups more: 106.08 us); ideal:8 64 KB."""
    machine = resolve(spec)
    n = machine.nnodes
    compiled = compile_program(kind_program("reduce", n, size), target=spec,
                               algorithm="reduce=halving-direct")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert direct_halved_rounds(compiled.collectives[0], machine.library.machine, n) == k
    expected = halving_direct_s(n, k, size, 8, machine.library.machine.port)
    assert result.time_s == pytest.approx(expected, rel=TOLERANCE), (result.time_s, expected)
