"""`hilbert-two-tree` broadcast (compiler/library/hilbert.py): the curve visits every node by
neighbour steps, the broadcast delivers every byte, a grid the curve does not fill is refused
with the reason (issue 27)."""

from __future__ import annotations

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.hilbert import hilbert_point
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.sweep import kind_program


@pytest.mark.parametrize("side", [2, 4, 8])
def test_the_curve_visits_every_point_once_by_neighbour_steps(side):
    points = [hilbert_point(d, side) for d in range(side * side)]
    assert points[0] == (0, 0) and len(set(points)) == side * side
    assert all(abs(r - r2) + abs(c - c2) == 1 for (r, c), (r2, c2) in zip(points, points[1:]))
    # any 4 consecutive points from a multiple of 4 fill a 2 x 2 square
    assert all(len({(r // 2, c // 2) for r, c in points[d:d + 4]}) == 1 for d in range(0, side * side, 4))


@pytest.mark.parametrize("spec", ["paragon:4x4", "torus:4x4"])
def test_hilbert_two_tree_delivers_every_byte(spec):
    assert_forced_run_verifies(spec, "broadcast", "hilbert-two-tree", 4000)


def test_a_grid_the_curve_does_not_fill_is_refused():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("broadcast", 8, 4000), target="paragon:2x4",
                        algorithm="broadcast=hilbert-two-tree")
    assert "a Hilbert curve needs a square grid of 2^k x 2^k nodes, not 2x4" in str(err.value)
