"""The `coll` dialect: collectives recognized in a program's communication sets.

Each op says which collective it is, between which arrays, on how many
processors, and exactly how many bytes each processor sends to each other one
(the P x P byte matrix, row-major: row i is what processor i sends). Lowering to
the `sched` dialect picks an algorithm for it; the op itself is target-neutral.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import I64, BoolAttr, BytesAttr, DenseArrayBase, IntegerAttr, StringAttr, i1, i64
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.kind import Kind


def _flatten(byte_matrix: Sequence[Sequence[int]]) -> np.ndarray:
    """The rows of a square matrix one after another, as int64 (an array or nested sequences)."""
    if isinstance(byte_matrix, np.ndarray) and byte_matrix.ndim == 2 and \
            byte_matrix.shape[0] == byte_matrix.shape[1]:
        return np.ascontiguousarray(byte_matrix, dtype="<i8").ravel()  # no copy of an int64 one
    n = len(byte_matrix)
    for i, row in enumerate(byte_matrix):
        if len(row) != n:
            raise ValueError(f"byte matrix row {i} has {len(row)} entries, expected {n}")
    return np.array([int(b) for row in byte_matrix for b in row], dtype="<i8")


class CollectiveOp(IRDLOperation, ABC):
    """Attributes shared by every recognized collective."""

    collective = attr_def(IntegerAttr[I64])  # index of the collective within the program
    src = attr_def(StringAttr)
    dst = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    byte_matrix = attr_def(DenseArrayBase[I64])
    line = attr_def(IntegerAttr[I64])
    root = attr_def(IntegerAttr[I64])  # the single owner of a rooted collective, else -1
    stage = attr_def(IntegerAttr[I64])  # the pipeline stage, else -1
    # The kind in groups (compiler/groups.py): each group's member count, and the members of
    # every group one after another (global ranks); both empty for a whole-statement collective.
    group_sizes = attr_def(DenseArrayBase[I64])
    group_members = attr_def(DenseArrayBase[I64])
    # Which blocks are strided in their local arrays (compiler/layout.py: bit 1, the sender
    # gathers the block; bit 2, the receiver scatters it), row-major like byte_matrix; empty
    # when none is.
    strided = attr_def(DenseArrayBase[I64])
    # Whether every origin's blocks lie back to back in its local array in the order of their
    # finals' ranks (Collective.sends_in_rank_order, compiler/layout.py); false where not proven.
    sends_in_rank_order = attr_def(BoolAttr)

    def __init__(self, collective: int, src: str, dst: str, byte_matrix: Sequence[Sequence[int]],
                 line: int = 0, root: int = -1, stage: int = -1,
                 groups: Sequence[Sequence[int]] = (),
                 strided: Sequence[Sequence[int]] = (), sends_in_rank_order: bool = False) -> None:
        super().__init__(attributes=self._common_attrs(collective, src, dst, byte_matrix, line,
                                                       root, stage, groups, strided,
                                                       sends_in_rank_order))

    @staticmethod
    def _common_attrs(
        collective: int, src: str, dst: str, byte_matrix: Sequence[Sequence[int]], line: int,
        root: int = -1, stage: int = -1, groups: Sequence[Sequence[int]] = (),
        strided: Sequence[Sequence[int]] = (), sends_in_rank_order: bool = False,
    ) -> dict[str, Attribute]:
        flat = _flatten(byte_matrix)
        return {
            "collective": IntegerAttr(collective, i64),
            "src": StringAttr(src),
            "dst": StringAttr(dst),
            "nprocs": IntegerAttr(len(byte_matrix), i64),
            "byte_matrix": DenseArrayBase(i64, BytesAttr(flat.tobytes())),
            "line": IntegerAttr(line, i64),
            "root": IntegerAttr(root, i64),
            "stage": IntegerAttr(stage, i64),
            "group_sizes": DenseArrayBase.from_list(i64, [len(g) for g in groups]),
            "group_members": DenseArrayBase.from_list(i64, [int(m) for g in groups for m in g]),
            "strided": DenseArrayBase(i64, BytesAttr(_flatten(strided).tobytes() if len(strided) else b"")),
            "sends_in_rank_order": IntegerAttr(int(sends_in_rank_order), i1),
        }

    def groups_value(self) -> tuple[tuple[int, ...], ...]:
        """The members of each group; empty for a whole-statement collective."""
        members = iter(self.group_members.get_values())
        return tuple(tuple(next(members) for _ in range(size))
                     for size in self.group_sizes.get_values())

    def strided_value(self) -> tuple[tuple[int, ...], ...]:
        """The strided bits of each block as rows; empty when no block is strided."""
        flat = list(self.strided.get_values())
        n = self.nprocs_value
        return tuple(tuple(flat[i * n:(i + 1) * n]) for i in range(n)) if flat else ()

    def sends_in_rank_order_value(self) -> bool:
        return bool(self.sends_in_rank_order.value.data)

    @property
    def kind(self) -> Kind:
        """The collective kind, the op's name after `coll.`."""
        return Kind(self.name.split(".", 1)[1])

    @property
    def nprocs_value(self) -> int:
        return self.nprocs.value.data

    def byte_matrix_array(self) -> np.ndarray:
        """The byte matrix as a read-only (nprocs, nprocs) int64 array over the attribute."""
        n = self.nprocs_value
        return np.frombuffer(self.byte_matrix.data.data, dtype="<i8").reshape(n, n)

    def byte_matrix_rows(self) -> list[list[int]]:
        return self.byte_matrix_array().tolist()

    def total_bytes(self) -> int:
        """Bytes moved between distinct processors (the diagonal stays local)."""
        rows = self.byte_matrix_rows()
        return sum(b for i, row in enumerate(rows) for j, b in enumerate(row) if i != j)

    def python_attrs(self) -> Mapping[str, object]:
        """The shared attributes as plain Python values."""
        return {
            "collective": self.collective.value.data,
            "src": self.src.data,
            "dst": self.dst.data,
            "nprocs": self.nprocs_value,
            "byte_matrix": self.byte_matrix_rows(),
            "line": self.line.value.data,
            "groups": [list(g) for g in self.groups_value()],
            "strided": [list(row) for row in self.strided_value()],
            "sends_in_rank_order": self.sends_in_rank_order_value(),
        }

    def verify_(self) -> None:
        n = self.nprocs_value
        if n < 1:
            raise VerifyException(f"'{self.name}' nprocs must be >= 1, got {n}")
        size = len(self.byte_matrix.data.data) // 8
        if size != n * n:
            raise VerifyException(
                f"'{self.name}' byte_matrix has {size} entries, expected nprocs**2 = {n * n}"
            )
        if (np.frombuffer(self.byte_matrix.data.data, dtype="<i8") < 0).any():
            raise VerifyException(f"'{self.name}' byte_matrix has a negative entry")
        sizes, members = self.group_sizes.get_values(), self.group_members.get_values()
        if sum(sizes) != len(members) or any(size < 2 for size in sizes):
            raise VerifyException(f"'{self.name}' group_sizes {list(sizes)} do not split the "
                                  f"{len(members)} group_members into groups of 2 or more")
        if len(set(members)) != len(members) or any(not 0 <= m < n for m in members):
            raise VerifyException(f"'{self.name}' group_members must be distinct ranks in "
                                  f"0..{n - 1}")
        strided = self.strided.get_values()
        if len(strided) not in (0, n * n) or any(not 0 <= bits <= 3 for bits in strided):
            raise VerifyException(f"'{self.name}' strided must be empty or nprocs**2 = {n * n} "
                                  f"entries of 0..3, got {len(strided)} entries")


@irdl_op_definition
class AlltoallOp(CollectiveOp):
    """All-to-all personalized exchange: every processor sends `block_bytes` to every other."""

    name = "coll.alltoall"

    block_bytes = attr_def(IntegerAttr[I64])

    def __init__(
        self,
        collective: int,
        src: str,
        dst: str,
        byte_matrix: Sequence[Sequence[int]],
        block_bytes: int,
        line: int = 0,
        stage: int = -1,
        groups: Sequence[Sequence[int]] = (),
        strided: Sequence[Sequence[int]] = (),
        sends_in_rank_order: bool = False,
    ) -> None:
        attrs = self._common_attrs(collective, src, dst, byte_matrix, line, -1, stage, groups,
                                   strided, sends_in_rank_order)
        attrs["block_bytes"] = IntegerAttr(block_bytes, i64)
        IRDLOperation.__init__(self, attributes=attrs)

    @staticmethod
    def uniform(
        collective: int,
        src: str,
        dst: str,
        nprocs: int,
        block_bytes: int,
        line: int = 0,
        self_bytes: int = 0,
    ) -> AlltoallOp:
        """`block_bytes` from each processor to each other one; `self_bytes` stay local."""
        rows = [
            [self_bytes if i == j else block_bytes for j in range(nprocs)] for i in range(nprocs)
        ]
        return AlltoallOp(collective, src, dst, rows, block_bytes, line)

    @property
    def block_bytes_value(self) -> int:
        return self.block_bytes.value.data

    def python_attrs(self) -> Mapping[str, object]:
        return {**super().python_attrs(), "block_bytes": self.block_bytes_value}

    def verify_(self) -> None:
        super().verify_()
        if self.block_bytes_value < 0:
            raise VerifyException(
                f"'{self.name}' block_bytes must be >= 0, got {self.block_bytes_value}"
            )


class ReductionOp(CollectiveOp, ABC):
    """A reduce or allreduce: partial results combined element-wise."""

    # A reduction along dimensions: the bytes of one element of its partials, which are blocks
    # of such elements; 0 where each partial is one element (`s = sum(A)`).
    element_bytes = attr_def(IntegerAttr[I64])

    def __init__(self, collective: int, src: str, dst: str, byte_matrix: Sequence[Sequence[int]],
                 line: int = 0, root: int = -1, stage: int = -1,
                 groups: Sequence[Sequence[int]] = (), element_bytes: int = 0,
                 strided: Sequence[Sequence[int]] = (), sends_in_rank_order: bool = False) -> None:
        attrs = self._common_attrs(collective, src, dst, byte_matrix, line, root, stage, groups,
                                   strided, sends_in_rank_order)
        attrs["element_bytes"] = IntegerAttr(element_bytes, i64)
        IRDLOperation.__init__(self, attributes=attrs)

    def element_bytes_value(self) -> int | None:
        """None where each partial is one element."""
        return self.element_bytes.value.data or None

    def python_attrs(self) -> Mapping[str, object]:
        return {**super().python_attrs(), "element_bytes": self.element_bytes.value.data}

    def verify_(self) -> None:
        super().verify_()
        if self.element_bytes.value.data < 0:
            raise VerifyException(f"'{self.name}' element_bytes must be >= 0, got "
                                  f"{self.element_bytes.value.data}")


def _kind_op(kind: Kind, doc: str, base: type[CollectiveOp] = CollectiveOp) -> type[CollectiveOp]:
    """One op per collective kind; they differ only in name (the kind) and a reduction's
    element size."""
    camel = "".join(part.capitalize() for part in kind.split("_"))
    return irdl_op_definition(type(f"{camel}Op", (base,), {"name": f"coll.{kind}",
                                                            "__doc__": doc}))


AlltoallvOp = _kind_op(Kind.ALLTOALLV, "All-to-all with blocks of different sizes.")
BroadcastOp = _kind_op(Kind.BROADCAST, "The root's data to every processor.")
ScatterOp = _kind_op(Kind.SCATTER, "The root's data, a different part to each processor.")
GatherOp = _kind_op(Kind.GATHER, "Every processor's part concatenated on the root.")
AllgatherOp = _kind_op(Kind.ALLGATHER, "Every processor's part concatenated on every processor.")
ReduceOp = _kind_op(Kind.REDUCE, "Partial results combined on the root.", ReductionOp)
AllreduceOp = _kind_op(Kind.ALLREDUCE, "Partial results combined on every processor.", ReductionOp)
CshiftOp = _kind_op(Kind.CSHIFT, "A circular shift along one dimension.")
PermutationOp = _kind_op(Kind.PERMUTATION, "Each processor sends to at most one other.")
SparseOp = _kind_op(Kind.SPARSE, "Any other exchange: the byte matrix says who sends how much to whom.")

KIND_OPS: dict[Kind, type[CollectiveOp]] = {Kind(op.name.split(".", 1)[1]): op for op in (
    AlltoallOp, AlltoallvOp, BroadcastOp, ScatterOp, GatherOp, AllgatherOp, ReduceOp, AllreduceOp,
    CshiftOp, PermutationOp, SparseOp)}

Coll = Dialect("coll", list(KIND_OPS.values()), [])
