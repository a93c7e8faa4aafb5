"""grouped-halving (compiler/library/groupedhalving.py): the groups, the rotated rings, the data
on small tori, the preconditions and the 8x8 figure (issue 27, branch tred5)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.groupedhalving import GroupedGrid, groups, ordered_steps, partner
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

ELEMENT = 8  # kind_program's partials are float64


def grid(spec: str, n: int) -> GroupedGrid:
    compiled = compile_program(kind_program("reduce", n, 4 * n * ELEMENT), target=spec,
                               algorithm="reduce=grouped-halving")
    return GroupedGrid(compiled.collectives[0], compiled.target.library.machine)


def test_half_1_groups_its_first_four_steps_in_pairs_and_half_0_its_second_and_third():
    g = grid("torus:8x8", 64)
    steps = {h: ordered_steps(g, h) for h in (0, 1)}
    assert [s[1:] for s in steps[0]] == [(1, 0), (0, 0), (1, 1), (0, 1), (1, 2), (0, 2)]
    assert [len(group) for group in groups(g, 1)] == [2, 2, 1, 1]
    assert [len(group) for group in groups(g, 0)] == [1, 2, 1, 1, 1]
    assert [s for group in groups(g, 1) for s in group] == steps[1]


def test_two_steps_in_one_dimension_are_not_grouped():
    """torus:4x2 (rows of 2): half 0's second and third steps both go down the columns."""
    g = grid("torus:4x2", 8)
    assert [[s[1] for s in group] for group in groups(g, 0)] == [[1], [0], [0]]
    assert [[s[1] for s in group] for group in groups(g, 1)] == [[1, 0], [0]]


def test_half_1_pairs_the_neighbours_half_0_does_not():
    """On a row of 8, half 0's first pairs are 0-1, 2-3, ...; half 1's (rotated) 1-2, 3-4, ...,
    7-0, so that node 1 sends half 0 west and half 1 east; a group's block is a 2 x 2 of four
    distinct nodes."""
    g = grid("torus:8x8", 64)
    first = {h: ordered_steps(g, h)[0] for h in (0, 1)}
    assert [partner(g, v, first[0]) for v in range(8)] == [1, 0, 3, 2, 5, 4, 7, 6]
    assert [partner(g, v, first[1]) for v in range(8)] == [7, 2, 1, 4, 3, 6, 5, 0]
    a, b = groups(g, 1)[0]
    for v in range(64):
        block = {v, partner(g, v, a), partner(g, v, b), partner(g, partner(g, v, a), b)}
        assert len(block) == 4


HALVINGS = ("grouped-halving", "collected-halving")  # (collected-halving: its last step collected)


@pytest.mark.parametrize("algorithm", HALVINGS)
@pytest.mark.parametrize("spec, n, root", [("torus:2x2", 4, 0), ("torus:2x4", 8, 5), ("torus:4x2", 8, 3),
                                           ("torus:4x4", 16, 6), ("iwarp:4x4", 16, 9), ("torus:4x8", 32, 0),
                                           ("torus:8x4", 32, 13)])
def test_the_data_arrives(spec: str, n: int, root: int, algorithm: str):
    source = kind_program("reduce", n, 4 * n * ELEMENT * 3).replace("on P(0)", f"on P({root})")
    compiled = compile_program(source, target=spec, algorithm=f"reduce={algorithm}")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


@pytest.mark.parametrize("algorithm", HALVINGS)
def test_preconditions_refuse_with_the_reason(algorithm: str):
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("reduce", 12, 12 * 4 * ELEMENT), target="torus:3x4",
                        algorithm=f"reduce={algorithm}")
    assert (f"algorithm '{algorithm}' cannot lower the reduce of line 4 on torus:3x4: the "
            "grid's sides must be powers of two of at least 2, not 3 x 4") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("reduce", 16, 4096), target="paragon:4x4",
                        algorithm=f"reduce={algorithm}")
    assert "streams one message at a time" in str(err.value)


def test_the_16_kb_reduce_on_the_8x8_torus():
    """The figure of docs/efficiency.md (branch tred5): below crossed-halving's 553.55 us."""
    machine = resolve("torus:8x8")
    coll = compile_program(kind_program("reduce", 64, 16384), target="torus:8x8",
                           algorithm="reduce=grouped-halving").collectives[0]
    assert simulated_time_s(machine, coll, "grouped-halving") == pytest.approx(521.15e-6, rel=1e-6)
    assert simulated_time_s(machine, coll, "crossed-halving") == pytest.approx(553.55e-6, rel=1e-6)
