"""Pattern recognition: classify an assignment's communication from its byte matrix.

Returns plain data (kind, sizes, participants); the target's generators decide how
to move it (analysis apart from emission, as Devito does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Collective:
    """A recognized collective: `byte_matrix[p][q]` bytes go from processor p to q."""

    index: int
    kind: str  # "alltoall" or "sparse"
    nprocs: int
    byte_matrix: tuple[tuple[int, ...], ...]
    src: str
    dst: str
    line: int

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.byte_matrix, dtype=np.int64).reshape(self.nprocs, self.nprocs)

    @property
    def network_matrix(self) -> np.ndarray:
        """Bytes between distinct nodes (the diagonal stays local)."""
        m = self.matrix.copy()
        np.fill_diagonal(m, 0)
        return m

    @property
    def total_bytes(self) -> int:
        """Bytes that cross the network (between distinct nodes)."""
        return int(self.network_matrix.sum())

    @property
    def block_bytes(self) -> int | None:
        """Bytes per source-destination pair where uniform (alltoall), else None."""
        off = self.network_matrix[~np.eye(self.nprocs, dtype=bool)]
        return int(off[0]) if off.size and (off == off[0]).all() else None

    @property
    def participants(self) -> tuple[int, ...]:
        m = self.matrix
        return tuple(int(p) for p in np.flatnonzero(m.sum(axis=0) + m.sum(axis=1)))


def classify(byte_matrix: np.ndarray) -> str:
    """alltoall: every processor sends a block of the same, nonzero size to every other."""
    n = byte_matrix.shape[0]
    off = byte_matrix[~np.eye(n, dtype=bool)]
    if n > 1 and off.size and off[0] > 0 and (off == off[0]).all():
        return "alltoall"
    return "sparse"


def recognize(index: int, byte_matrix: np.ndarray, src: str, dst: str, line: int) -> Collective:
    n = byte_matrix.shape[0]
    rows = tuple(tuple(int(x) for x in row) for row in byte_matrix)
    return Collective(index, classify(byte_matrix), n, rows, src, dst, line)
