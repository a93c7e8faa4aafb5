"""Real payloads: each node's local arrays as numpy, blocks packed, moved and unpacked.

At the end every destination element must have been written exactly once and equal
the reference result of the statement (numpy on the global arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_index_map, owned_indices
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.semantics import AssignStmt, DistArray

NUMPY_TYPES = {"byte": np.uint8, "int32": np.int32, "int64": np.int64, "float32": np.float32,
               "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}


@lru_cache(maxsize=64)
def _local_maps(array: DistArray) -> tuple[np.ndarray, ...]:
    """Global-to-local index map of each dimension (cached: every block of an array uses it)."""
    return tuple(local_index_map(dd, extent, array.onto.count)
                 for dd, extent in zip(array.dist, array.shape))


class ScheduleError(Exception):
    """The schedule moves data it cannot: a block its sender does not hold, a wrong size."""


def random_global(array: DistArray, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(NUMPY_TYPES[array.elem_type])
    if dtype.kind == "c":
        return (rng.standard_normal(array.shape) + 1j * rng.standard_normal(array.shape)).astype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(array.shape).astype(dtype)
    return rng.integers(0, np.iinfo(dtype).max, size=array.shape, dtype=dtype)


@dataclass
class AssignmentData:
    """Source and destination local arrays of one assignment, with write counts."""

    stmt: AssignStmt
    commset: CommSet
    src_local: list[np.ndarray]
    dst_local: list[np.ndarray]
    writes: list[np.ndarray]
    reference: list[np.ndarray]
    held: list[dict[tuple[int, int], np.ndarray | None]] = field(default_factory=list)

    @classmethod
    def build(cls, stmt: AssignStmt, rng: np.random.Generator) -> AssignmentData:
        commset = CommSet(stmt)
        n = commset.nprocs
        a = random_global(stmt.src, rng)
        b = np.transpose(a, stmt.perm)
        src_local = [a[np.ix_(*owned_indices(stmt.src, p))] for p in range(n)]
        ref = [b[np.ix_(*owned_indices(stmt.dst, q))] for q in range(n)]
        dst_local = [np.zeros_like(r) for r in ref]
        writes = [np.zeros(r.shape, dtype=np.int32) for r in ref]
        m = commset.byte_matrix
        # None = still in the source array, packed when first sent.
        held = [{(p, q): None for q in range(n) if m[p, q] > 0} for p in range(n)]
        return cls(stmt, commset, src_local, dst_local, writes, ref, held)

    def _local(self, array: DistArray, dim: int, global_idx: np.ndarray) -> np.ndarray:
        return _local_maps(array)[dim][global_idx]

    def pack(self, origin: int, final: int) -> np.ndarray:
        section = self.commset.section(origin, final).indices
        perm = self.stmt.perm
        src_idx = [None] * len(perm)
        for d, ix in enumerate(section):
            src_idx[perm[d]] = self._local(self.stmt.src, perm[d], ix)
        block = self.src_local[origin][np.ix_(*src_idx)]
        return np.ascontiguousarray(np.transpose(block, perm))

    def unpack(self, origin: int, final: int, payload: np.ndarray) -> None:
        section = self.commset.section(origin, final).indices
        dst_idx = [self._local(self.stmt.dst, d, ix) for d, ix in enumerate(section)]
        self.dst_local[final][np.ix_(*dst_idx)] = payload
        self.writes[final][np.ix_(*dst_idx)] += 1

    def take(self, t: Transfer) -> np.ndarray:
        key = (t.origin, t.final)
        if key not in self.held[t.src]:
            raise ScheduleError(f"node {t.src} sends block {t.origin}->{t.final}, which it "
                                "does not hold (never had it, or already sent it on)")
        payload = self.held[t.src].pop(key)
        if payload is None:
            payload = self.pack(t.origin, t.final)
        if payload.nbytes != t.nbytes:
            raise ScheduleError(f"transfer {t.src}->{t.dst} of block {t.origin}->{t.final} says "
                                f"{t.nbytes} bytes but the block has {payload.nbytes}")
        return payload

    def put(self, t: Transfer, payload: np.ndarray) -> None:
        if t.dst == t.final:
            self.unpack(t.origin, t.final, payload)
        else:
            self.held[t.dst][(t.origin, t.final)] = payload

    def problems(self) -> list[str]:
        """Empty when every element arrived exactly once with the right value."""
        out = []
        m = self.commset.byte_matrix
        for q, (w, got, ref) in enumerate(zip(self.writes, self.dst_local, self.reference)):
            if (w == 0).any():
                missing = [p for p in range(self.commset.nprocs)
                           if m[p, q] and (p, q) not in self._delivered(q)]
                out.append(f"node {q}: {int((w == 0).sum())} elements never arrived "
                           f"(blocks from {missing})")
            if (w > 1).any():
                out.append(f"node {q}: {int((w > 1).sum())} elements arrived more than once")
            if (w == 1).all() and not np.array_equal(got, ref):
                out.append(f"node {q}: delivered values differ from the reference result")
        return out

    def _delivered(self, q: int) -> set[tuple[int, int]]:
        delivered = set()
        for p in range(self.commset.nprocs):
            ix = self.commset.section(p, q).indices
            dst_idx = [self._local(self.stmt.dst, d, i) for d, i in enumerate(ix)]
            if ix and all(len(i) for i in ix) and (self.writes[q][np.ix_(*dst_idx)] > 0).all():
                delivered.add((p, q))
        return delivered
