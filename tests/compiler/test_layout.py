"""compiler/layout.py: which blocks are strided, worked out per class of origins and finals,
held to the definition block by block (the per-block loop it replaced)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sections import CASES, draw_cases

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_shape
from phalanx.compiler.layout import GATHERED, SCATTERED, BlockLayout, extent_and_run, one_run
from phalanx.compiler.semantics import check
from phalanx.grammar.parser import parse
from phalanx.runtime.sweep import alltoall_program


def statement(program: str):
    (stmt,) = check(parse(program, "s.phx")).communications()
    return stmt


def bits_block_by_block(layout: BlockLayout) -> np.ndarray:
    """GATHERED | SCATTERED of every block that carries bytes, one block at a time, from its
    sections' local indices (the definition)."""
    stmt, commset = layout.stmt, layout.commset
    out = np.zeros((commset.nprocs, commset.nprocs), dtype=np.int64)
    for p, q in zip(*np.nonzero(commset.byte_matrix > 0)):
        section = commset.section_arrays(int(p), int(q))
        dst = [extent_and_run(layout.converted("dst", d, ix)) for d, ix in enumerate(section)]
        scattered = not one_run([(np.array(e), np.array(r)) for e, r in dst], tuple(range(len(dst))),
                                np.array(local_shape(stmt.dst, int(q))))
        gathered = True
        if min(stmt.perm, default=0) >= 0:
            src = [extent_and_run(layout.converted("src", d, ix)) for d, ix in enumerate(section)]
            src += [extent_and_run(layout.collapsed_local(int(p), c)) for c in stmt.collapsed]
            gathered = not one_run([(np.array(e), np.array(r)) for e, r in src],
                                   tuple(stmt.perm) + tuple(stmt.collapsed),
                                   np.array(local_shape(stmt.src, int(p))))
        out[p, q] = (GATHERED if gathered else 0) | (SCATTERED if scattered else 0)
    return out


@pytest.mark.parametrize("chunk", range(3))
def test_the_classes_give_every_block_its_bits(chunk):
    """Random sections, shifts, spreads and reductions over BLOCK, CYCLIC(k), replicated and
    single-owner arrays on placed arrangements (tests/compiler/test_sections.py's cases)."""
    strided = 0
    for case in draw_cases(CASES)[chunk::6]:
        stmt = statement(case["program"])
        layout = BlockLayout(stmt, CommSet(stmt))
        want = bits_block_by_block(layout)
        assert (layout._bits == want).all(), case["program"]
        strided += bool(want.any())
    assert strided >= 10  # the cases hold strided blocks as well as runs


@pytest.mark.parametrize("program, gathered, scattered", [
    (alltoall_program(16, 8), False, False),  # row p's columns for q: one run at both ends
    ("processors P(8)\narray A(64, 64) of int32 distribute (BLOCK, *) onto P\n"
     "array B(64, 64) of int32 distribute (BLOCK, *) onto P\nB = transpose(A)\n", True, True),
    ("processors P(4, 4)\narray A(32, 32) of int32 distribute (CYCLIC(2), BLOCK) onto P\n"
     "array B(32, 32) of int32 distribute (BLOCK, CYCLIC) onto P\nB = A\n", True, True),
])
def test_known_layouts(program, gathered, scattered):
    stmt = statement(program)
    layout = BlockLayout(stmt, CommSet(stmt))
    bits = layout._bits[layout.commset.byte_matrix > 0]
    assert (bits & GATHERED > 0).any() == gathered and (bits & SCATTERED > 0).any() == scattered
    assert (layout._bits == bits_block_by_block(layout)).all()
