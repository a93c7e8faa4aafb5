"""Exact communication sets of `B = A` and `B = transpose(A)`.

Work happens in the destination's index space: destination dim d reads source dim
perm[d]. With one distributed dimension per array, the elements that processor p
sends to processor q form a cartesian section of per-dimension index sets, so the
byte matrix is a product of per-dimension counts, never an enumeration of elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from phalanx.compiler.distribution import owner_map
from phalanx.compiler.semantics import AssignStmt


@dataclass(frozen=True)
class Section:
    """Global destination indices, per destination dimension, of one block."""

    indices: tuple[np.ndarray, ...]

    @property
    def count(self) -> int:
        n = 1
        for ix in self.indices:
            n *= len(ix)
        return n

    def runs(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Per dimension, the (start, length) runs of consecutive indices."""
        return tuple(_runs(ix) for ix in self.indices)


def _runs(ix: np.ndarray) -> tuple[tuple[int, int], ...]:
    if len(ix) == 0:
        return ()
    breaks = np.flatnonzero(np.diff(ix) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(ix)]))
    return tuple((int(ix[s]), int(e - s)) for s, e in zip(starts, ends))


class CommSet:
    """Who sends what to whom for one assignment, over `nprocs` = the larger arrangement."""

    def __init__(self, stmt: AssignStmt):
        self.stmt = stmt
        self.nprocs = max(stmt.src.onto.count, stmt.dst.onto.count)
        dst = stmt.dst
        self.src_dim = stmt.perm.index(stmt.src.distributed_dim)  # in destination space
        self.dst_dim = dst.distributed_dim
        src_dd = stmt.src.dist[stmt.src.distributed_dim]
        self.src_owner = owner_map(src_dd, dst.shape[self.src_dim], stmt.src.onto.count)
        self.dst_owner = owner_map(dst.dist[self.dst_dim], dst.shape[self.dst_dim],
                                   dst.onto.count)

    @cached_property
    def element_matrix(self) -> np.ndarray:
        """elements[p, q]: how many elements p sends to q."""
        n, shape = self.nprocs, self.stmt.dst.shape
        rest = 1
        for d, extent in enumerate(shape):
            if d not in (self.src_dim, self.dst_dim):
                rest *= extent
        if self.src_dim == self.dst_dim:
            pairs = np.zeros((n, n), dtype=np.int64)
            np.add.at(pairs, (self.src_owner, self.dst_owner), 1)
        else:
            pairs = np.outer(np.bincount(self.src_owner, minlength=n),
                             np.bincount(self.dst_owner, minlength=n))
        return pairs * rest

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        return self.element_matrix * self.stmt.dst.itemsize

    @cached_property
    def _index_groups(self) -> dict[int, list[np.ndarray]]:
        """Per destination dim, the indices grouped by the key the section selects on."""
        n = self.nprocs
        groups = {}
        for d, extent in enumerate(self.stmt.dst.shape):
            if d == self.src_dim == self.dst_dim:
                groups[d] = _group_by(self.src_owner * n + self.dst_owner, n * n)
            elif d == self.src_dim:
                groups[d] = _group_by(self.src_owner, n)
            elif d == self.dst_dim:
                groups[d] = _group_by(self.dst_owner, n)
        return groups

    def section(self, src: int, dst: int) -> Section:
        """The destination-space indices of the block `src` sends to `dst`."""
        n, groups = self.nprocs, self._index_groups
        out = []
        for d, extent in enumerate(self.stmt.dst.shape):
            if d == self.src_dim == self.dst_dim:
                out.append(groups[d][src * n + dst])
            elif d == self.src_dim:
                out.append(groups[d][src])
            elif d == self.dst_dim:
                out.append(groups[d][dst])
            else:
                out.append(np.arange(extent, dtype=np.int64))
        return Section(tuple(out))


def _group_by(keys: np.ndarray, nkeys: int) -> list[np.ndarray]:
    """indices[k] = ascending positions i with keys[i] == k, for every k < nkeys."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(nkeys + 1))
    return [order[bounds[k]:bounds[k + 1]].astype(np.int64) for k in range(nkeys)]
