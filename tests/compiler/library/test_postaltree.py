"""The postal-tree reduce (compiler/library/postaltree.py): its tree holds every member once,
parents before children; its simulated time is its closed form (exactly where no link is
shared, within 2% elsewhere), on any number of members; its partials arrive on every family."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.postaltree import postal_tree_parents, postal_tree_s
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

TOLERANCE = 0.02


def _reduce(spec: str, size: int):
    machine = resolve(spec)
    compiled = compile_program(kind_program("reduce", machine.nnodes, size), target=spec,
                               algorithm="reduce=postal-tree")
    return machine, compiled


@pytest.mark.parametrize("spec, size", [("ideal:7", 2048), ("ideal:13", 128), ("ideal:16", 8192),
                                        ("cs2:16", 2048), ("sp2:8", 2048), ("hypercube:4", 2048)])
def test_simulated_time_is_the_closed_form(spec, size):
    machine, compiled = _reduce(spec, size)
    result = simulate(compiled).collectives[0]
    assert result.algorithm == "postal-tree"
    assert result.verified, result.problems
    expected = postal_tree_s(machine.nnodes, size, 8, machine.library.machine.port)
    assert result.time_s == pytest.approx(expected, rel=TOLERANCE), (result.time_s, expected)
    assert result.time_s >= result.lower_bound_s


def test_cs2_64_at_2_kb():
    """alpha 105 us, a partial's wire 51.2 us, its merge 2.56 us: a member done by t has
    children done by t - 2.56 - 51.2 i - 156.2 us; 64 members fit by 675.92 us (the k-nomial
    tree: 783.5). Its children ranked in the order they send keep the fat tree's leaf entry
    links to one receiver each: the simulator meets the closed form (compile only here; the
    grid simulates it)."""
    port = resolve("cs2:64").library.machine.port
    assert postal_tree_s(64, 2048, 8, port) == pytest.approx(675.92e-6, abs=0.01e-6)


@pytest.mark.parametrize("members", [2, 3, 7, 16, 33, 64])
def test_every_member_once_parents_first(members):
    port = resolve("ideal:64").library.machine.port
    parents = postal_tree_parents(members, 2048, 8, port)
    assert len(parents) == members and parents[0] == 0
    assert all(0 <= parents[v] < v for v in range(1, members))


def test_one_child_waits_for_the_other():
    """ideal:3 at 2 KB: both partials straight to the root (alpha + 2 n beta + merges) beats a
    chain (2 (alpha + n beta) + merges): the root has two children."""
    port = resolve("ideal:3").library.machine.port
    assert postal_tree_parents(3, 2048, 8, port) == [0, 0, 0]
    assert postal_tree_s(3, 2048, 8, port) == pytest.approx((10 + 2 * 20.48 + 2.56) * 1e-6)


@pytest.mark.parametrize("spec", ["torus:4x4", "iwarp:4x4", "paragon:4x4", "proteus"])
def test_every_partial_arrives(spec):
    machine, compiled = _reduce(spec, 2048)
    result = simulate(compiled).collectives[0]
    assert result.algorithm == "postal-tree"
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
