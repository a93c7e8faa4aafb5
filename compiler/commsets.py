"""Exact communication sets of assignments and reductions.

Work happens in the destination's index space: destination dim d reads source dim
perm[d] at index (i + shift[d]) mod extent. Each array dim is spread over at most one
arrangement dim, so the elements one sender sends to one receiver form a cartesian
section of per-dimension index runs: the byte matrix is a product of per-dimension
count tables (as ScaLAPACK's PxGEMR2D intersects intervals per dimension), never an
enumeration of elements.

Senders and receivers by mapping: a distributed source sends from each element's
owner, a single-owner source from its owner, and a replicated source from the
receiver itself (a local copy; a receiver outside the source's arrangement gets it
from rank receiver mod count). Every processor of a replicated destination receives
every element; a single-owner destination, its owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from phalanx.compiler.distribution import dim_owner_map, owned_indices
from phalanx.compiler.semantics import AssignStmt, DistArray, ReduceStmt


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


def _group_by(keys: np.ndarray, nkeys: int, positions: np.ndarray) -> list[np.ndarray]:
    """groups[k] = ascending positions whose key is k, for every k < nkeys."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(nkeys + 1))
    return [positions[order[bounds[k]:bounds[k + 1]]] for k in range(nkeys)]


def _ranks(array: DistArray) -> int:
    return array.onto.count if array.mapping == "distributed" else 1


class CommSet:
    """Who sends what to whom for one assignment, over `nprocs` = the larger arrangement."""

    def __init__(self, stmt: AssignStmt):
        self.stmt = stmt
        src, dst = stmt.src, stmt.dst
        self.nprocs = max(src.onto.count, dst.onto.count)
        self.dims = []  # per dest dim: (indices, src coords or None, src proc dim, dst coords, dst proc dim)
        for d, extent in enumerate(dst.shape):
            cut = stmt.window is not None and d == stmt.window.dim  # one pipeline stage
            idx = stmt.window.indices() if cut else np.arange(extent, dtype=np.int64)
            sd = stmt.perm[d]
            src_owner = dim_owner_map(src, sd)
            src_coord = None if src_owner is None else src_owner[(idx + stmt.shift[d]) % extent]
            dst_owner = dim_owner_map(dst, d)
            dst_coord = None if dst_owner is None else dst_owner[idx]
            self.dims.append((idx, src_coord, src.proc_dims[sd], dst_coord, dst.proc_dims[d]))

    @cached_property
    def _tables(self) -> list[np.ndarray]:
        """Per dest dim, counts[src coord, dst coord] (size 1 where unconstrained)."""
        src_shape, dst_shape = self.stmt.src.onto.shape, self.stmt.dst.onto.shape
        out = []
        for idx, sc, spd, dc, dpd in self.dims:
            ns = src_shape[spd] if sc is not None else 1
            nd = dst_shape[dpd] if dc is not None else 1
            table = np.zeros((ns, nd), dtype=np.int64)
            if sc is None and dc is None:
                table[0, 0] = len(idx)
            else:
                np.add.at(table, (sc if sc is not None else 0, dc if dc is not None else 0), 1)
            out.append(table)
        return out

    @cached_property
    def _rank_counts(self) -> np.ndarray:
        """counts[s, t]: elements from source rank s to destination rank t (distributed sides),
        or to/from the one column/row standing for a non-distributed side."""
        src, dst = self.stmt.src, self.stmt.dst
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        src_axes = [next(letters) for _ in src.onto.shape]
        dst_axes = [next(letters) for _ in dst.onto.shape]
        operands, subscripts = [], []
        for table, (_, sc, spd, dc, dpd) in zip(self._tables, self.dims):
            if sc is not None and dc is not None:
                operands.append(table)
                subscripts.append(src_axes[spd] + dst_axes[dpd])
            elif sc is not None:
                operands.append(table[:, 0])
                subscripts.append(src_axes[spd])
            elif dc is not None:
                operands.append(table[0, :])
                subscripts.append(dst_axes[dpd])
            else:
                operands.append(table[0, 0])
                subscripts.append("")
        out_s = ("".join(src_axes) if src.mapping == "distributed" else "") + \
                ("".join(dst_axes) if dst.mapping == "distributed" else "")
        tensor = np.einsum(",".join(subscripts) + "->" + out_s, *operands)
        return np.asarray(tensor, dtype=np.int64).reshape(_ranks(src), _ranks(dst))

    def senders(self, receiver: int) -> range:
        """Ranks that may send to `receiver` (a range: membership tests are O(1))."""
        src = self.stmt.src
        if src.mapping == "replicated":  # the receiver's own copy, or a holder's if it has none
            first = receiver % src.onto.count
            return range(first, first + 1)
        if src.mapping == "single":
            return range(src.owner, src.owner + 1)
        return range(src.onto.count)

    @cached_property
    def _receivers(self) -> range:
        dst = self.stmt.dst
        if dst.mapping == "single":
            return range(dst.owner, dst.owner + 1)
        return range(dst.onto.count)

    def receivers(self) -> range:
        return self._receivers

    def _row(self, sender: int) -> int:
        return sender if self.stmt.src.mapping == "distributed" else 0

    def _col(self, receiver: int) -> int:
        return receiver if self.stmt.dst.mapping == "distributed" else 0

    @cached_property
    def element_matrix(self) -> np.ndarray:
        """elements[p, q]: how many elements p sends to q."""
        m = np.zeros((self.nprocs, self.nprocs), dtype=np.int64)
        counts = self._rank_counts
        for q in self.receivers():
            for p in self.senders(q):
                m[p, q] += counts[self._row(p), self._col(q)]
        return m

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        return self.element_matrix * self.stmt.dst.itemsize

    @cached_property
    def _index_groups(self) -> list[list[np.ndarray] | None]:
        """Per dest dim, indices grouped by (src coord, dst coord) key; None if unconstrained."""
        out = []
        for (idx, sc, _, dc, _), table in zip(self.dims, self._tables):
            ns, nd = table.shape
            if sc is None and dc is None:
                out.append(None)
                continue
            key = (sc if sc is not None else 0) * nd + (dc if dc is not None else 0)
            out.append(_group_by(key, ns * nd, idx))
        return out

    def section(self, src: int, dst: int) -> Section:
        """The destination-space indices of the block `src` sends to `dst`."""
        s_arr, d_arr = self.stmt.src, self.stmt.dst
        if dst not in self.receivers() or src not in self.senders(dst) or src >= s_arr.onto.count:
            return Section(tuple(np.zeros(0, dtype=np.int64) for _ in d_arr.shape))
        return Section(self.section_arrays(src, dst))

    @cached_property
    def _coords(self) -> tuple[list | None, list | None]:
        """Arrangement coordinates of every source and destination rank (distributed sides)."""
        s_arr, d_arr = self.stmt.src, self.stmt.dst
        return tuple([a.onto.coords(r) for r in range(a.onto.count)]
                     if a.mapping == "distributed" else None for a in (s_arr, d_arr))

    def section_arrays(self, src: int, dst: int) -> tuple[np.ndarray, ...]:
        """`section(src, dst).indices` for a block known to exist, without the checks. The
        arrays are shared by every block with the same owner coordinates in a dimension."""
        s_all, d_all = self._coords
        s_coords = s_all[src] if s_all is not None else None
        d_coords = d_all[dst] if d_all is not None else None
        out = []
        for (idx, sc, spd, dc, dpd), table, groups in zip(self.dims, self._tables,
                                                            self._index_groups):
            if groups is None:
                out.append(idx)
                continue
            u = s_coords[spd] if sc is not None else 0
            v = d_coords[dpd] if dc is not None else 0
            out.append(groups[u * table.shape[1] + v])
        return tuple(out)


class ReduceSet:
    """Reductions move one partial result from every contributor to every receiver."""

    def __init__(self, stmt: ReduceStmt):
        self.stmt = stmt
        self.nprocs = max(stmt.src.onto.count, stmt.dst.onto.count)

    def contributors(self) -> list[int]:
        """Processors holding elements of the source (a BLOCK(k) may leave some empty)."""
        src = self.stmt.src
        if src.mapping == "distributed":
            return [p for p in range(src.onto.count)
                    if all(len(ix) for ix in owned_indices(src, p))]
        return [src.owner if src.mapping == "single" else 0]

    def receivers(self) -> list[int]:
        dst = self.stmt.dst
        if dst.mapping == "single":
            return [dst.owner]
        if dst.mapping == "replicated":
            return list(range(dst.onto.count))
        return [0]  # a one-element distributed array lives on rank 0

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        m = np.zeros((self.nprocs, self.nprocs), dtype=np.int64)
        src = self.stmt.src
        for q in self.receivers():
            for p in ([q % src.onto.count] if src.mapping == "replicated" else self.contributors()):
                m[p, q] = self.stmt.dst.itemsize
        return m
