"""`recognize-collectives`: replace each `dist.assign` by the collective it is.

Input: a module of `dist` ops. Output: the same module with every `dist.assign`
replaced by a `coll.alltoall` or `coll.sparse` op carrying the exact byte matrix
(compiler/commsets.py) and the collective's index in program order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.ir.build import arrays_from_module, assign_from_op
from phalanx.compiler.ir.dialects import coll, dist
from phalanx.compiler.recognize import Collective, recognize


def collective_op(c: Collective) -> coll.CollectiveOp:
    if c.kind == "alltoall":
        return coll.AlltoallOp(c.index, c.src, c.dst, c.byte_matrix, c.block_bytes or 0, c.line)
    return coll.SparseOp(c.index, c.src, c.dst, c.byte_matrix, c.line)


def collective_from_op(op: coll.CollectiveOp) -> Collective:
    rows = tuple(tuple(r) for r in op.byte_matrix_rows())
    return Collective(op.collective.value.data, op.kind, op.nprocs_value, rows, op.src.data,
                      op.dst.data, op.line.value.data)


@dataclass(frozen=True)
class RecognizeCollectives(ModulePass):
    name = "recognize-collectives"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arrays = arrays_from_module(op)
        index = 0
        for assign in [o for o in op.ops if isinstance(o, dist.AssignOp)]:
            stmt = assign_from_op(assign, arrays)
            found = recognize(index, CommSet(stmt).byte_matrix, stmt.src.name, stmt.dst.name,
                              stmt.loc.line)
            assign.parent_block().insert_op_before(collective_op(found), assign)
            assign.detach()
            assign.erase()
            index += 1
