"""Where pipeline stages cut an assignment (compiler/stages.py, docs/language.md `pipeline`):
the dimension is chosen as documented, the stages partition the statement exactly, and each
stage's byte matrix is the whole statement's scaled by 1/N where the documentation says so."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import error_of
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.driver import load
from phalanx.compiler.ir.build import arrays_from_module, assign_from_op, module_from_program
from phalanx.compiler.ir.dialects import dist
from phalanx.compiler.ir.transforms.recognize_collectives import recognize_statement
from phalanx.compiler.semantics import AssignStmt, PipelineStmt, check
from phalanx.compiler.stages import choose_cut


def _pipeline(decls: str, assign: str, stages: int = 8, procs: str = "processors P(64)") -> PipelineStmt:
    source = (f"target ideal:64\n{procs}\n{decls}\npipeline stages={stages} {{\n"
              f'  compute "work" on P cost 1 ms\n  {assign}\n}}\n')
    (pipeline,) = check(load(source, "t.phx")).statements
    return pipeline


def _assigns(pipeline: PipelineStmt) -> list[AssignStmt]:
    return [s for stage in pipeline.stages for s in stage if isinstance(s, AssignStmt)]


def _whole(stmt: AssignStmt) -> AssignStmt:
    from dataclasses import replace

    return replace(stmt, window=None, stage=None)


# The rows of docs/language.md's table: declarations, assignment, the 1-based dimension cut,
# whether each stage's byte matrix is the whole's / 8, and each stage's collective kind.
DOCUMENTED = [
    ("array A(1024, 1024) of complex64 distribute (BLOCK, *) onto P\n"
     "array B(1024, 1024) of complex64 distribute (*, BLOCK) onto P", "B = A", 1, True, "alltoall"),
    ("array A(512, 16, 512) of float64 distribute (BLOCK, *, *) onto P\n"
     "array B(512, 16, 512) of float64 distribute (*, *, BLOCK) onto P", "B = A", 2, True, "alltoall"),
    ("array A(512, 512) of float64 distribute (BLOCK, *) onto P\n"
     "array B(512, 512) of float64 distribute (BLOCK, *) onto P", "B = cshift(A, 1, dim=2)", 2, True,
     "sparse"),  # every element stays on its processor
    ("array A(512, 512) of float64 distribute (*, BLOCK) onto P\n"
     "array B(512, 512) of float64 distribute (*, BLOCK) onto P", "B = transpose(A)", 1, True,
     "alltoall"),
    ("array A(4096) of float64 distribute (CYCLIC) onto P\n"
     "array B(4096) of float64 distribute (BLOCK) onto P", "B = A", 1, False, "sparse"),
]


@pytest.mark.parametrize("decls, assign, dimension, proportional, kind", DOCUMENTED)
def test_cut_dimension_and_stage_matrices_as_documented(decls, assign, dimension, proportional, kind):
    stages = _assigns(_pipeline(decls, assign))
    assert [s.window.dim + 1 for s in stages] == [dimension] * 8
    whole = CommSet(_whole(stages[0])).byte_matrix
    for s in stages:
        assert (CommSet(s).byte_matrix * 8 == whole).all() == proportional
        assert recognize_statement(0, s).kind == kind
    if not proportional:  # the CYCLIC row: each stage is 64 senders to 8 receivers
        m = CommSet(stages[0]).byte_matrix
        assert (m.sum(axis=1) > 0).sum() == 64 and (m.sum(axis=0) > 0).sum() == 8


def test_the_undistributed_dimension_wins_a_tie_and_gives_contiguous_stages():
    stages = _assigns(_pipeline(DOCUMENTED[1][0], "B = A"))
    assert [s.window.runs for s in stages] == [((2 * k, 2 * k + 2),) for k in range(8)]


def test_a_distributed_cut_takes_a_slice_of_every_owner():
    """(BLOCK, *) to (*, BLOCK), 1024 rows on 64: each sender's 16 rows, 2 per stage."""
    stages = _assigns(_pipeline(DOCUMENTED[0][0], "B = A"))
    assert stages[3].window.runs == tuple((16 * p + 6, 16 * p + 8) for p in range(64))


# Distributions with uneven, cyclic, shifted, replicated and single-owner sides: the stages
# must partition the cut dimension and their byte matrices must add up to the whole's.
PARTITIONS = [
    ("array A(100, 30) of float64 distribute (BLOCK, *) onto P\n"
     "array B(100, 30) of float64 distribute (*, CYCLIC(3)) onto P", "B = A", 7),
    ("array A(37, 41) of int32 distribute (CYCLIC(2), *) onto P\n"
     "array B(41, 37) of int32 distribute (BLOCK(7), *) onto P", "B = transpose(A)", 5),
    ("array A(50, 20) of float32 distribute (BLOCK, *) onto P\n"
     "array B(50, 20) of float32 distribute (BLOCK, *) onto P", "B = cshift(A, 7, dim=1)", 6),
    ("array A(64, 9) of float64 replicated onto P\n"
     "array B(64, 9) of float64 distribute (CYCLIC, *) onto P", "B = A", 9),
    ("array A(33) of float64 on P(3)\narray B(33) of float64 distribute (BLOCK) onto P", "B = A", 4),
    ("array A(12, 10, 14) of float64 distribute (*, BLOCK, *) onto P\n"
     "array B(12, 10, 14) of float64 distribute (*, *, CYCLIC) onto P", "B = A", 11),
]


@pytest.mark.parametrize("decls, assign, stages", PARTITIONS)
def test_stages_partition_the_statement_exactly(decls, assign, stages):
    pipeline = _pipeline(decls, assign, stages, "processors P(8)")
    cut = _assigns(pipeline)
    assert len(cut) == stages and len({s.window.dim for s in cut}) == 1
    dim = cut[0].window.dim
    covered = np.concatenate([s.window.indices() for s in cut])
    assert all(len(s.window.indices()) > 0 for s in cut)
    assert sorted(covered.tolist()) == list(range(cut[0].dst.shape[dim]))  # each index once
    total = sum(CommSet(s).byte_matrix for s in cut)
    assert (total == CommSet(_whole(cut[0])).byte_matrix).all()
    assert [s.window for s in cut] == choose_cut(_whole(cut[0]), stages).windows()


@pytest.mark.parametrize("decls, assign, stages", PARTITIONS[:3])
def test_the_ir_carries_the_cut(decls, assign, stages):
    program = check(load(f"target ideal:8\nprocessors P(8)\n{decls}\npipeline stages={stages} {{\n"
                         f"  {assign}\n}}\n", "t.phx"))
    module = module_from_program(program)
    module.verify()
    arrays = arrays_from_module(module)
    back = [assign_from_op(op, arrays).window for op in module.walk() if isinstance(op, dist.AssignOp)]
    assert back == [s.window for s in _assigns(program.statements[0])]


def test_the_ir_refuses_a_window_that_does_not_fit():
    from xdsl.utils.exceptions import VerifyException

    for dim, window in ((2, [0, 4]), (-1, [0, 4]), (0, []), (0, [4, 2]), (0, [0, 2, 1, 3])):
        op = dist.AssignOp("B", "A", (0, 1), 3, None, "copy", window, 0, split_dim=dim, collective=0)
        with pytest.raises(VerifyException, match="split_dim|window"):
            op.verify()


def test_too_many_stages_names_the_longest_dimension():
    text = error_of("target ideal:4\nprocessors P(4)\n"
                    "array A(4, 6) of float64 distribute (BLOCK, *) onto P\n"
                    "array B(4, 6) of float64 distribute (*, BLOCK) onto P\n"
                    "pipeline stages=8 {\n  B = A\n}\n")
    first = text.splitlines()[0]
    assert first == ("t.phx:6:3: error: cannot split 'B' (4, 6) into 8 stages: its longest "
                     "dimension, dimension 2, has 6 indices")
    assert "use at most 6 stages" in text
