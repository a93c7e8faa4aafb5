"""`recognize-collectives`: replace each `dist.assign` and `dist.reduce` by its collective.

Input: a module of `dist` ops. Output: the same module with every assignment and
reduction (pipeline stages included) replaced by a `coll.<kind>` op carrying the exact
byte matrix (compiler/commsets.py), the root where there is one, and the collective's
index in program order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from phalanx.compiler.commsets import CommSet, ReduceSet
from phalanx.compiler.ir.build import arrays_from_module, assign_from_op, reduce_from_op
from phalanx.compiler.ir.dialects import coll, dist
from phalanx.compiler.recognize import Collective, recognize
from phalanx.compiler.semantics import ReduceStmt


def collective_op(c: Collective, stage: int = -1) -> coll.CollectiveOp:
    root = -1 if c.root is None else c.root
    if c.kind == "alltoall":
        return coll.AlltoallOp(c.index, c.src, c.dst, c.byte_matrix, c.block_bytes or 0, c.line,
                               stage)
    return coll.KIND_OPS[c.kind](c.index, c.src, c.dst, c.byte_matrix, c.line, root, stage)


def collective_from_op(op: coll.CollectiveOp) -> Collective:
    rows = tuple(tuple(r) for r in op.byte_matrix_rows())
    root = op.root.value.data
    return Collective(op.collective.value.data, op.kind, op.nprocs_value, rows, op.src.data,
                      op.dst.data, op.line.value.data, root if root >= 0 else None)


def recognize_statement(index: int, stmt) -> Collective:
    """The collective of one assignment or reduction."""
    if isinstance(stmt, ReduceStmt):
        rset = ReduceSet(stmt)
        receivers = rset.receivers()
        return recognize(index, rset.byte_matrix, stmt.src.name, stmt.dst.name, stmt.loc.line,
                         stmt.op, stmt.src.mapping, stmt.dst.mapping, len(receivers),
                         receivers[0] if len(receivers) == 1 else stmt.src.owner)
    cset = CommSet(stmt)
    root = stmt.src.owner if stmt.src.mapping == "single" else stmt.dst.owner
    # A reduction along a dimension moves blocks of partial results, each to its own
    # destination: recognized from its byte matrix like a copy, not as a reduce of one value.
    op = "copy" if stmt.reduces else stmt.op
    return recognize(index, cset.byte_matrix, stmt.src.name, stmt.dst.name, stmt.loc.line,
                     op, stmt.src.mapping, stmt.dst.mapping, len(cset.receivers()), root)


@dataclass(frozen=True)
class RecognizeCollectives(ModulePass):
    name = "recognize-collectives"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arrays = arrays_from_module(op)
        index = 0
        for child in list(op.walk()):
            if isinstance(child, dist.AssignOp):
                stmt = assign_from_op(child, arrays)
                stage = child.stage.value.data
            elif isinstance(child, dist.ReduceOp):
                stmt, stage = reduce_from_op(child, arrays), -1
            else:
                continue
            found = recognize_statement(index, stmt)
            child.parent_block().insert_op_before(collective_op(found, stage), child)
            child.detach()
            child.erase()
            index += 1
