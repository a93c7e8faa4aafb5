"""Pattern recognition: which collective a statement is, derived from its byte matrix.

The statement says what it computes (copy, transpose, cshift, reduction) and how its
arrays are mapped; the byte matrix says who sends to whom. Recognition returns plain
data (kind, sizes, participants); the target's generators decide the schedule
(analysis apart from emission, as Devito does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("alltoall", "alltoallv", "broadcast", "scatter", "gather", "allgather", "reduce",
         "allreduce", "cshift", "permutation", "sparse")


@dataclass(frozen=True)
class Collective:
    """A recognized collective: `byte_matrix[p][q]` bytes go from processor p to q."""

    index: int
    kind: str
    nprocs: int
    byte_matrix: tuple[tuple[int, ...], ...]
    src: str
    dst: str
    line: int
    root: int | None = None  # the single owner of broadcast, scatter, gather and reduce

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
        """Bytes per source-destination pair where uniform, else None."""
        off = self.network_matrix
        sent = off[off > 0]
        return int(sent[0]) if sent.size and (sent == sent[0]).all() else None

    @property
    def participants(self) -> tuple[int, ...]:
        m = self.matrix
        return tuple(int(p) for p in np.flatnonzero(m.sum(axis=0) + m.sum(axis=1)))


def _off_diagonal(m: np.ndarray) -> np.ndarray:
    return m[~np.eye(m.shape[0], dtype=bool)]


def classify(m: np.ndarray, op: str = "copy", src_mapping: str = "distributed",
             dst_mapping: str = "distributed", nreceivers: int = 1) -> str:
    """The collective kind of a statement from what it computes, its mappings and matrix."""
    net = m.copy()
    np.fill_diagonal(net, 0)
    if not net.any():
        return "sparse"  # everything stays local
    senders = np.flatnonzero(net.sum(axis=1))
    receivers = np.flatnonzero(net.sum(axis=0))
    if op in ("sum", "max", "min", "prod"):
        if len(senders) == 1 and src_mapping == "single":
            return "broadcast" if nreceivers > 1 else "permutation"
        return "allreduce" if nreceivers > 1 else "reduce"
    if op == "cshift":
        return "cshift"
    if src_mapping == "single" and len(senders) == 1:
        if dst_mapping == "replicated":
            return "broadcast"
        if dst_mapping == "distributed" and len(receivers) > 1:
            return "scatter"
    if dst_mapping == "single" and len(receivers) == 1 and len(senders) > 1:
        return "gather"
    if src_mapping == "distributed" and dst_mapping == "replicated":
        return "allgather"
    off = _off_diagonal(m)
    n = m.shape[0]
    if n > 1 and (off > 0).all():
        return "alltoall" if (off == off[0]).all() else "alltoallv"
    if ((net > 0).sum(axis=1) <= 1).all() and ((net > 0).sum(axis=0) <= 1).all():
        return "permutation"
    return "sparse"


def recognize(index: int, byte_matrix: np.ndarray, src: str, dst: str, line: int,
              op: str = "copy", src_mapping: str = "distributed",
              dst_mapping: str = "distributed", nreceivers: int = 1,
              root: int | None = None) -> Collective:
    n = byte_matrix.shape[0]
    rows = tuple(tuple(int(x) for x in row) for row in byte_matrix)
    kind = classify(byte_matrix, op, src_mapping, dst_mapping, nreceivers)
    keeps_root = kind in ("broadcast", "scatter", "gather", "reduce")
    return Collective(index, kind, n, rows, src, dst, line, root if keeps_root else None)
