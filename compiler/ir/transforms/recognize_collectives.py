"""`recognize-collectives`: replace each `dist.assign` and `dist.reduce` by its collective.

Input: a module of `dist` ops. Output: the same module with every assignment and
reduction (pipeline stages included) replaced by a `coll.<kind>` op carrying the exact
byte matrix (compiler/commsets.py), the root where there is one, the members of each group
of a collective in groups (compiler/groups.py), and the collective's index: the
statement's own (`collective` of its `dist` op, its place in the program's communication
statements), not the order the pass meets it in. The indices must number the statements
0..n-1, each once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.commsets import CommSet, ReduceSet
from phalanx.compiler.ir.build import arrays_from_module, assign_from_op, reduce_from_op
from phalanx.compiler.ir.dialects import coll, dist
from phalanx.compiler.kind import Kind
from phalanx.compiler.layout import BlockLayout, sends_in_rank_order
from phalanx.compiler.recognize import Collective, connected_groups, recognize, with_matrix
from phalanx.compiler.semantics import Op, ReduceStmt
from phalanx.grammar.ast import Mapping


def collective_op(c: Collective, stage: int = -1) -> coll.CollectiveOp:
    root = -1 if c.root is None else c.root
    if c.kind is Kind.ALLTOALL:
        return coll.AlltoallOp(c.index, c.src, c.dst, c.matrix, c.block_bytes or 0, c.line,
                               stage, c.groups, c.strided, c.sends_in_rank_order)
    if c.kind in (Kind.REDUCE, Kind.ALLREDUCE):
        return coll.KIND_OPS[c.kind](c.index, c.src, c.dst, c.matrix, c.line, root, stage,
                                     c.groups, c.element_bytes or 0, c.strided,
                                     c.sends_in_rank_order)
    return coll.KIND_OPS[c.kind](c.index, c.src, c.dst, c.matrix, c.line, root, stage,
                                 c.groups, c.strided, c.sends_in_rank_order)


def collective_from_op(op: coll.CollectiveOp) -> Collective:
    """The op's Collective. The same one for every op with the same attributes (a clone of the
    module shares them), so that the memos keyed by it (Target.predict, schedule_for) find it
    at once: a 4096-node byte matrix is 16.8M ints to turn into tuples, hash and compare."""
    key = _op_key(op)
    known = _FROM_OPS.get(key)
    if known is not None and known[0] is op.byte_matrix.data.data:
        return known[1]
    root = op.root.value.data
    matrix = op.byte_matrix_array()
    rows = tuple(map(tuple, matrix.tolist()))
    element_bytes = op.element_bytes_value() if isinstance(op, coll.ReductionOp) else None
    return _remember(key, op, with_matrix(Collective(
        op.collective.value.data, op.kind, op.nprocs_value, rows, op.src.data, op.dst.data,
        op.line.value.data, root if root >= 0 else None, op.groups_value(), element_bytes,
        op.strided_value(), op.sends_in_rank_order_value()), matrix))


def _op_key(op: coll.CollectiveOp) -> tuple:
    """The op's attributes, its byte matrix by the id of its bytes (a clone shares them)."""
    element_bytes = op.element_bytes_value() if isinstance(op, coll.ReductionOp) else None
    return (id(op.byte_matrix.data.data), op.collective.value.data, op.kind, op.src.data,
            op.dst.data, op.line.value.data, op.root.value.data, op.groups_value(), element_bytes,
            op.strided_value(), op.sends_in_rank_order_value())


def _remember(key: tuple, op: coll.CollectiveOp, found: Collective) -> Collective:
    """`found` is the Collective of `op`, whose _op_key is `key` (collective_from_op gives it back
    for the op and its clones)."""
    _FROM_OPS[key] = (op.byte_matrix.data.data, found)
    while len(_FROM_OPS) > 64:
        _FROM_OPS.popitem(last=False)
    return found


# The Collectives of the last ops read or made, by their attributes (the byte matrix's bytes
# object held, so its id stays its own).
_FROM_OPS: OrderedDict[tuple, tuple[bytes, Collective]] = OrderedDict()


def recognize_statement(index: int, stmt, cset: CommSet | None = None) -> Collective:
    """The collective of one assignment or reduction; `cset`: an assignment's communication
    set where it is built already (RecognizeCollectives.commsets)."""
    if isinstance(stmt, ReduceStmt):
        rset = ReduceSet(stmt)
        receivers = rset.receivers()
        return recognize(index, rset.byte_matrix, stmt.src.name, stmt.dst.name, stmt.loc.line,
                         stmt.op, stmt.src.mapping, stmt.dst.mapping, len(receivers),
                         receivers[0] if len(receivers) == 1 else stmt.src.owner)
    cset = cset if cset is not None else CommSet(stmt)
    if stmt.reduces and stmt.src.mapping is Mapping.DISTRIBUTED:
        roots = reduce_roots(cset)
        if roots is not None:
            # A reduce in every group (one group: a plain reduce), of partial blocks.
            return recognize(index, cset.byte_matrix, stmt.src.name, stmt.dst.name,
                             stmt.loc.line, stmt.op, Mapping.DISTRIBUTED, Mapping.DISTRIBUTED, len(roots),
                             roots[0] if len(roots) == 1 else None, stmt.dst.itemsize,
                             strided=BlockLayout(stmt, cset).matrix())
        groups = allreduce_groups(cset)
        if groups is not None:
            # An allreduce in every group (one group: a plain allreduce), of partial blocks.
            return recognize(index, cset.byte_matrix, stmt.src.name, stmt.dst.name,
                             stmt.loc.line, stmt.op, Mapping.DISTRIBUTED, Mapping.DISTRIBUTED,
                             max(len(g) for g in groups), None, stmt.dst.itemsize,
                             strided=BlockLayout(stmt, cset).matrix())
    root = stmt.src.owner if stmt.src.mapping is Mapping.SINGLE else stmt.dst.owner
    # Any other reduction along a dimension moves blocks of partial results, each to its own
    # destination: recognized from its byte matrix like a copy.
    op = Op.COPY if stmt.reduces else stmt.op
    src_mapping, dst_mapping = stmt.src.mapping, stmt.dst.mapping
    one_holder = stmt.op in (Op.COPY, Op.TRANSPOSE) and (src_mapping, dst_mapping) == (
        Mapping.DISTRIBUTED, Mapping.REPLICATED)
    roots = spread_roots(cset) if stmt.op is Op.SPREAD or one_holder else None
    if roots is not None:
        # Read per group: one owner of the section, a copy of it on every member. A replicated
        # copy of a distributed array that only one processor holds (`x(1)` in BLOCKs onto 64)
        # is that holder's broadcast, not an allgather.
        src_mapping, dst_mapping = Mapping.SINGLE, Mapping.REPLICATED
        root = roots[0] if len(roots) == 1 else None
    return recognize(index, cset.byte_matrix, stmt.src.name, stmt.dst.name, stmt.loc.line,
                     op, src_mapping, dst_mapping, len(cset.receivers()), root,
                     strided=BlockLayout(stmt, cset).matrix(),
                     sends_in_rank_order=sends_in_rank_order(stmt))


def _one_end_per_group(m: np.ndarray, sends: bool) -> list[tuple[tuple[int, ...], int]] | None:
    """Each group of the byte matrix (its connected components) with the one member that sends
    to the others (`sends`) or receives from them; None where a group has more than one."""
    ends = []
    for members in connected_groups(m):
        sub = m[np.ix_(members, members)].copy()
        np.fill_diagonal(sub, 0)
        nodes = np.flatnonzero(sub.sum(axis=1 if sends else 0))
        if len(nodes) != 1:
            return None
        ends.append((tuple(members), members[int(nodes[0])]))
    return ends


def _same_sections(cset: CommSet, senders, receiver: int) -> bool:
    """Whether every sender's block for `receiver` covers the same destination elements (so
    the partials combine element-wise into one block)."""
    first = cset.section_arrays(senders[0], receiver)
    return all(all(np.array_equal(a, b) for a, b in zip(first, cset.section_arrays(p, receiver)))
               for p in senders[1:])


def reduce_roots(cset: CommSet) -> list[int] | None:
    """Each group's one receiver when a reduction along dimensions is a reduce in every group
    its byte matrix splits into (`sum(A, dim=2)` onto one column of a grid): in each group one
    node receives, and every member's partial covers the same destination elements (so partials
    combine element-wise into one block on the way); None otherwise."""
    m = cset.byte_matrix
    ends = _one_end_per_group(m, sends=False)
    for members, root in ends or ():
        if not _same_sections(cset, [p for p in members if m[p, root] > 0], root):
            return None
    return [root for _, root in ends] if ends else None


def allreduce_groups(cset: CommSet) -> list[tuple[int, ...]] | None:
    """The groups when a reduction along dimensions is an allreduce in every group its byte
    matrix splits into (`spread(sum(A, dim=2), dim=2, ncopies=n)` on a grid): in each group of
    two or more, every member receives a partial from every other member, at each receiver
    every member's partial (its own included) covers the same destination elements, and each
    member's partials for the receivers carry the same source elements (so every receiver
    combines the same block; a reduce-scatter's do not); None otherwise."""
    m = cset.byte_matrix
    groups = [tuple(g) for g in connected_groups(m)]
    for members in groups:
        if len(members) < 2:
            return None
        for q in members:
            if not all(m[p, q] > 0 for p in members):
                return None
            if not _same_sections(cset, members, q):
                return None
        if any(len({cset.content(p, q) for q in members}) != 1 for p in members):
            return None
    return groups or None


def spread_roots(cset: CommSet) -> list[int] | None:
    """Each group's one sender when a spread is a broadcast in every group its byte matrix
    splits into (SUMMA's panel broadcasts): in each group one node sends, and every other
    member receives from it a block of the same content (compiler/commsets.py
    `CommSet.content`); None otherwise."""
    m = cset.byte_matrix
    ends = _one_end_per_group(m, sends=True)
    for members, root in ends or ():
        others = [f for f in members if f != root]
        if not all(m[root, f] > 0 for f in others):
            return None
        if len({cset.content(root, f) for f in others}) != 1:
            return None
    return [root for _, root in ends] if ends else None


@dataclass(frozen=True)
class RecognizeCollectives(ModulePass):
    """`commsets`, where given: by collective index, the communication set of each assignment
    (None for a reduction), built by the driver from the program's statements, which the
    module's ops are (compiler/driver.py: the run's data check takes the same sets, so that a
    4096-node all-to-all's set is built once); else each is built here."""

    name = "recognize-collectives"
    commsets: tuple[CommSet | None, ...] | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arrays = arrays_from_module(op)
        statements = [child for child in op.walk() if isinstance(child, (dist.AssignOp, dist.ReduceOp))]
        _check_indices(statements)
        for child in statements:
            if isinstance(child, dist.AssignOp):
                stmt = assign_from_op(child, arrays)
                stage = child.stage.value.data
            else:
                stmt, stage = reduce_from_op(child, arrays), -1
            index = child.collective.value.data
            cset = self.commsets[index] if self.commsets is not None else None
            # (the op's statement is the program's, read back from the IR: equal but for the
            # source locations' file name)
            assert cset is None or (cset.stmt.loc.line, cset.stmt.src.name, cset.stmt.dst.name) == \
                (stmt.loc.line, stmt.src.name, stmt.dst.name), "the driver's set is of the op's statement"
            found = recognize_statement(index, stmt, cset)
            op_of_found = collective_op(found, stage)
            _remember(_op_key(op_of_found), op_of_found, found)  # what collective_from_op reads back
            child.parent_block().insert_op_before(op_of_found, child)
            child.detach()
            child.erase()


def _check_indices(statements: list[dist.AssignOp | dist.ReduceOp]) -> None:
    """The statements' collective indices are 0..n-1, each once (what plans and runs index by)."""
    seen: dict[int, int] = {}
    for child in statements:
        index, line = child.collective.value.data, child.line.value.data
        if not 0 <= index < len(statements):
            raise VerifyException(f"'{child.name}' of line {line}: collective = {index} is outside "
                                  f"0..{len(statements) - 1} (the module's {len(statements)} statements)")
        if index in seen:
            raise VerifyException(f"'{child.name}' of line {line}: collective = {index} is also the "
                                  f"statement's of line {seen[index]}; each statement has its own")
        seen[index] = line
