"""The `coll` dialect: collectives recognized in a program's communication sets.

Each op says which collective it is, between which arrays, on how many
processors, and exactly how many bytes each processor sends to each other one
(the P x P byte matrix, row-major: row i is what processor i sends). Lowering to
the `sched` dialect picks an algorithm for it; the op itself is target-neutral.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition
from xdsl.utils.exceptions import VerifyException


def _flatten(byte_matrix: Sequence[Sequence[int]]) -> list[int]:
    n = len(byte_matrix)
    for i, row in enumerate(byte_matrix):
        if len(row) != n:
            raise ValueError(f"byte matrix row {i} has {len(row)} entries, expected {n}")
    return [int(b) for row in byte_matrix for b in row]


class CollectiveOp(IRDLOperation, ABC):
    """Attributes shared by every recognized collective."""

    collective = attr_def(IntegerAttr[I64])  # index of the collective within the program
    src = attr_def(StringAttr)
    dst = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    byte_matrix = attr_def(DenseArrayBase[I64])
    line = attr_def(IntegerAttr[I64])

    @staticmethod
    def _common_attrs(
        collective: int, src: str, dst: str, byte_matrix: Sequence[Sequence[int]], line: int
    ) -> dict[str, Attribute]:
        return {
            "collective": IntegerAttr(collective, i64),
            "src": StringAttr(src),
            "dst": StringAttr(dst),
            "nprocs": IntegerAttr(len(byte_matrix), i64),
            "byte_matrix": DenseArrayBase.from_list(i64, _flatten(byte_matrix)),
            "line": IntegerAttr(line, i64),
        }

    @property
    def kind(self) -> str:
        """The collective kind, as used by algorithm registries: "alltoall", "sparse", ..."""
        return self.name.split(".", 1)[1]

    @property
    def nprocs_value(self) -> int:
        return self.nprocs.value.data

    def byte_matrix_rows(self) -> list[list[int]]:
        n = self.nprocs_value
        flat = self.byte_matrix.get_values()
        return [list(flat[i * n : (i + 1) * n]) for i in range(n)]

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
        }

    def verify_(self) -> None:
        n = self.nprocs_value
        if n < 1:
            raise VerifyException(f"'{self.name}' nprocs must be >= 1, got {n}")
        size = len(self.byte_matrix)
        if size != n * n:
            raise VerifyException(
                f"'{self.name}' byte_matrix has {size} entries, expected nprocs**2 = {n * n}"
            )
        if any(b < 0 for b in self.byte_matrix.get_values()):
            raise VerifyException(f"'{self.name}' byte_matrix has a negative entry")


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
    ) -> None:
        attrs = self._common_attrs(collective, src, dst, byte_matrix, line)
        attrs["block_bytes"] = IntegerAttr(block_bytes, i64)
        super().__init__(attributes=attrs)

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


@irdl_op_definition
class SparseOp(CollectiveOp):
    """Any other exchange: the byte matrix says who sends how much to whom."""

    name = "coll.sparse"

    def __init__(
        self,
        collective: int,
        src: str,
        dst: str,
        byte_matrix: Sequence[Sequence[int]],
        line: int = 0,
    ) -> None:
        super().__init__(attributes=self._common_attrs(collective, src, dst, byte_matrix, line))


Coll = Dialect("coll", [AlltoallOp, SparseOp], [])
