"""compiler/layout.py `sends_in_rank_order`: whether every origin's local array, read in
row-major order, sends each element to one final with the finals' ranks never decreasing;
held to that definition element by element (the communication set's blocks), and carried
from recognition through the `coll` ops and back."""

from __future__ import annotations

import numpy as np
import pytest
from test_sections import CASES, GRIDS, draw_cases

from phalanx.compiler import groups
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_shape
from phalanx.compiler.ir.transforms.recognize_collectives import (
    collective_from_op,
    collective_op,
    recognize_statement,
)
from phalanx.compiler.kind import Kind
from phalanx.compiler.layout import BlockLayout, sends_in_rank_order
from phalanx.compiler.semantics import check
from phalanx.grammar.parser import parse
from phalanx.runtime.sweep import alltoall_program, reduction_arrays


def statement(program: str):
    (stmt,) = check(parse(program, "s.phx")).communications()
    return stmt


def _indices(ix) -> np.ndarray:
    return np.arange(ix.start, ix.stop, ix.step or 1) if isinstance(ix, slice) else ix


def in_rank_order_by_definition(stmt) -> bool:
    """The definition, one origin and one block at a time: the elements of block (p, q) of
    the communication set, located in p's local array, get final q; every element of every
    origin's array must get exactly one, and the finals must not decrease in row-major order.
    (A spread or a collapsed dim sends an element to many finals or leaves some unsent.)"""
    if min(stmt.perm, default=0) < 0 or stmt.collapsed:
        return False
    cset = CommSet(stmt)
    layout = BlockLayout(stmt, cset)
    for p in range(cset.nprocs):
        shape = local_shape(stmt.src, p)
        final = np.full(shape, -1)
        times = np.zeros(shape, dtype=np.int64)
        for q in np.flatnonzero(cset.element_matrix[p] > 0):
            by_src_dim = [None] * len(shape)
            for d, ix in enumerate(cset.section_arrays(p, int(q))):
                by_src_dim[stmt.perm[d]] = _indices(layout.converted("src", d, ix))
            times[np.ix_(*by_src_dim)] += 1
            final[np.ix_(*by_src_dim)] = q
        if (times != 1).any() or (np.diff(final.ravel()) < 0).any():
            return False
    return True


TWO_D_GRID = ("processors P(4)\nprocessors Q(2, 2)\n"
              "array A(4, 32) of byte distribute (BLOCK, *) onto P\n"
              "array B(4, 32) of byte distribute (BLOCK, BLOCK) onto Q\nB = A\n")
# Rows of X to columns within each grid column (tests/filecheck/recognize-groups.mlir): an
# all-to-all in two groups, whose senders' blocks lie in the finals' order.
GROUPED = ("processors Q(4, 2)\n"
           "array X(8, 8, 8) of float32 distribute (*, BLOCK, BLOCK) onto Q\n"
           "array Y(8, 8, 8) of float32 distribute (BLOCK, *, BLOCK) onto Q\nY = X\n")


@pytest.mark.parametrize("nprocs, block", [(4, 8), (4, 128), (64, 8), (64, 128)])
def test_an_all_to_all_of_rows_sends_in_rank_order(nprocs, block):
    """runtime/sweep.py's all-to-all: node p's local array is row p, block (p, q) its bytes
    q*b..q*b+b-1."""
    stmt = statement(alltoall_program(nprocs, block))
    assert sends_in_rank_order(stmt)
    assert in_rank_order_by_definition(stmt)


@pytest.mark.parametrize("program", [
    TWO_D_GRID,  # row p to the two nodes of grid row p // 2, its left half first
    GROUPED,
    "processors P(2, 2) at 3\nprocessors Q(2, 2) at 1\n"  # placed arrangements, 3-D arrays
    "array A(2, 2, 8) of int32 distribute (BLOCK, BLOCK, *) onto P\n"
    "array B(2, 2, 8) of int32 distribute (*, BLOCK, BLOCK) onto Q\nB = A\n",
])
def test_grids_where_the_order_holds(program):
    stmt = statement(program)
    assert sends_in_rank_order(stmt) and in_rank_order_by_definition(stmt)


P4 = "processors P(4)\n"
ROWS = "array A(4, 32) of int32 distribute (BLOCK, *) onto P\n"
SQUARE = "array A(32, 32) of int32 distribute (BLOCK, *) onto P\n"


@pytest.mark.parametrize("program, truly_false", [
    # a CYCLIC destination: row p's columns go to finals 0, 1, 2, 3, 0, ...
    (P4 + ROWS + "array B(4, 32) of int32 distribute (*, CYCLIC) onto P\nB = A\n", True),
    # a transpose: its index map is not the identity
    (P4 + SQUARE + "array B(32, 32) of int32 distribute (BLOCK, *) onto P\nB = transpose(A)\n",
     True),
    # a section: the other columns stay unsent
    (P4 + ROWS + "array B(4, 16) of int32 distribute (*, BLOCK) onto P\nB = A(:, 0:15)\n", True),
    # * to BLOCK with two rows per node: each row runs through the finals 0..3 again
    (P4 + "array A(8, 32) of int32 distribute (BLOCK, *) onto P\n"
     "array B(8, 32) of int32 distribute (*, BLOCK) onto P\nB = A\n", True),
    # a replicated destination: every element to every node
    (P4 + "array A(8) of int32 distribute (BLOCK) onto P\n"
     "array B(8) of int32 replicated onto P\nB = A\n", True),
    # a broadcast: one node's array, every element to every node
    (P4 + "array A(8) of int32 on P(0)\narray B(8) of int32 replicated onto P\nB = A\n", True),
    # a reduction along a dimension: partials, not elements, leave
    (P4 + reduction_arrays(4, 64, "on P(0)"), True),
    # a cshift by a whole block: in the order of the finals, but the index map is not the
    # identity (not proven: conservative)
    (P4 + "array A(8) of int32 distribute (BLOCK) onto P\n"
     "array B(8) of int32 distribute (BLOCK) onto P\nB = cshift(A, 2)\n", False),
])
def test_cases_that_are_not_proven(program, truly_false):
    stmt = statement(program)
    assert not sends_in_rank_order(stmt)
    assert in_rank_order_by_definition(stmt) is not truly_false


def draw_plain_copy(rng) -> str:
    """`B = A` of whole distributed arrays of one shape, on two placed grids, every dim BLOCK,
    BLOCK(k), CYCLIC, CYCLIC(k) or *."""
    rank = int(rng.integers(1, 4))
    shape = tuple(int(x) for x in rng.integers(2, 9 if rank < 3 else 6, size=rank))
    lines = []
    for name, grid_name in (("A", "P"), ("B", "Q")):
        fits = [g for g in GRIDS if len(g) <= rank]
        grid = fits[int(rng.integers(0, len(fits)))]
        spread = sorted(rng.choice(rank, size=len(grid), replace=False).tolist())
        formats, next_dim = [], 0
        for d, extent in enumerate(shape):
            if d not in spread:
                formats.append("*")
                continue
            nprocs, next_dim = grid[next_dim], next_dim + 1
            formats.append([f"BLOCK({-(-extent // nprocs) + int(rng.integers(0, 2))})", "BLOCK",
                            "CYCLIC", f"CYCLIC({int(rng.integers(2, 4))})"][int(rng.integers(0, 4))])
        base = int(rng.integers(0, 3))
        lines.append(f"processors {grid_name}({', '.join(map(str, grid))})" + (f" at {base}" if base else ""))
        lines.append(f"array {name}({', '.join(map(str, shape))}) of int32 "
                     f"distribute ({', '.join(formats)}) onto {grid_name}")
    return "\n".join(lines[0::2] + lines[1::2] + ["B = A", ""])


def test_plain_copies_are_in_rank_order_exactly_when_the_definition_holds():
    """On a whole-array copy the computation decides the fact, not only proves it: it agrees
    with the definition both ways, on both outcomes."""
    rng = np.random.default_rng(27)
    outcomes = []
    for _ in range(150):
        program = draw_plain_copy(rng)
        stmt = statement(program)
        found = sends_in_rank_order(stmt)
        assert found == in_rank_order_by_definition(stmt), program
        outcomes.append(found)
    assert sum(outcomes) >= 15 and len(outcomes) - sum(outcomes) >= 15


@pytest.mark.parametrize("chunk", range(2))
def test_it_is_never_claimed_where_the_definition_fails(chunk):
    """Random sections, shifts, spreads and reductions over every mapping on placed grids
    (tests/compiler/test_sections.py's cases): True only where the definition holds."""
    for case in draw_cases(CASES)[chunk::4]:
        stmt = statement(case["program"])
        if sends_in_rank_order(stmt):
            assert in_rank_order_by_definition(stmt), case["program"]


def test_recognition_sets_it_and_the_ir_keeps_it():
    """recognize_statement's Collective carries the fact; its coll op, read back, the same."""
    for program, want in ((alltoall_program(8, 8), True), (TWO_D_GRID, True),
                          (P4 + ROWS + "array B(4, 32) of int32 distribute (*, CYCLIC) onto P\nB = A\n",
                           False)):
        found = recognize_statement(0, statement(program))
        assert found.sends_in_rank_order is want, program
        back = collective_from_op(collective_op(found))
        assert back.sends_in_rank_order is want and back == found


def test_a_collective_in_groups_keeps_it_but_its_groups_do_not():
    """The whole statement's collective keeps the fact (its ranks are the machine's); each
    group's collective on its own or embedded keeps False (not proven of a group)."""
    found = recognize_statement(0, statement(GROUPED))
    assert (found.kind, found.groups) == (Kind.ALLTOALL, ((0, 2, 4, 6), (1, 3, 5, 7)))
    assert found.sends_in_rank_order
    assert not any(g.sends_in_rank_order for g in groups.locals_of(found))
    assert not groups.embedded(found, found.groups[0]).sends_in_rank_order


def test_a_4096_node_all_to_all_is_recognized_with_it():
    """8 B blocks on 4096 nodes, A(4096, 32768): the computation looks at each dimension's
    indices once, not at the 16.8M blocks (not timed: it must run)."""
    stmt = statement(alltoall_program(4096, 8))
    assert sends_in_rank_order(stmt)
    found = recognize_statement(0, stmt)
    assert found.kind is Kind.ALLTOALL and found.sends_in_rank_order
