"""Exact communication sets of assignments and reductions.

Work happens in the destination's index space: position j of destination section dim d
reads source section dim perm[d] at position j + shift[d] (compiler/semantics.py
AssignStmt). Each array dim is spread over at most one arrangement dim, so the elements
one sender sends to one receiver form a cartesian section of per-dimension index sets:
the byte matrix is a product of per-dimension count tables (as ScaLAPACK's PxGEMR2D
intersects intervals per dimension), never an enumeration of elements. A source dim that
no destination dim reads (a reduction's dim, a scalar subscript) contributes a factor of
one where the sender holds any of its indices: a sender sends one partial result per
destination element.

Senders and receivers by mapping: a distributed source sends from each element's
owner, a single-owner source from its owner, and a replicated source from the
receiver itself (a local copy; a receiver outside the source's arrangement gets it
from the source's processor of rank receiver mod count). Every processor of a replicated
destination receives every element; a single-owner destination, its owner. Ranks in
the byte matrix are machine nodes: an arrangement placed `at b` starts at node b.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from phalanx.compiler.distribution import dim_owner_map, owned_indices
from phalanx.compiler.semantics import AssignStmt, DistArray, Op, ReduceStmt, Triplet
from phalanx.grammar.ast import Mapping


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

    def strided_runs(self) -> tuple[tuple[tuple[int, int, int], ...], ...]:
        """Per dimension, (start, stride, count) runs: each a maximal arithmetic progression
        read from the left (a strided section over a BLOCK owner is one run)."""
        return tuple(_strided_runs(ix) for ix in self.indices)


def _runs(ix: np.ndarray) -> tuple[tuple[int, int], ...]:
    if len(ix) == 0:
        return ()
    breaks = np.flatnonzero(np.diff(ix) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(ix)]))
    return tuple((int(ix[s]), int(e - s)) for s, e in zip(starts, ends))


def _strided_runs(ix: np.ndarray) -> tuple[tuple[int, int, int], ...]:
    """Cut `ix` where its step changes: a run takes the step from its first two indices and
    goes on while the step stays the same (a last lone index is a run of one)."""
    out, i, n = [], 0, len(ix)
    steps = np.diff(ix)
    # change[k]: the step into ix[k + 1] differs from the one into ix[k]
    change = np.flatnonzero(steps[1:] != steps[:-1]) + 1 if n > 2 else np.zeros(0, np.int64)
    cuts = iter(change.tolist())
    while i < n:
        if i == n - 1:
            out.append((int(ix[i]), 1, 1))
            break
        step = int(steps[i])
        end = next((c for c in cuts if c > i), n - 1)  # the run's last index: ix[end]
        out.append((int(ix[i]), step, end - i + 1))
        i = end + 1
    return tuple(out)


def _group_by(keys: np.ndarray, nkeys: int, positions: np.ndarray) -> list[np.ndarray]:
    """groups[k] = ascending positions whose key is k, for every k < nkeys."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(nkeys + 1))
    return [positions[order[bounds[k]:bounds[k + 1]]] for k in range(nkeys)]


def _ranks(array: DistArray) -> int:
    return array.onto.count if array.mapping is Mapping.DISTRIBUTED else 1


def _owns_any(array: DistArray, dim: int, indices: np.ndarray) -> np.ndarray | None:
    """Per arrangement coordinate of `dim`, 1 where it holds any of `indices` (None: `*`)."""
    owner = dim_owner_map(array, dim)
    if owner is None:
        return None
    out = np.zeros(array.onto.shape[array.proc_dims[dim]], dtype=np.int64)
    out[owner[indices]] = 1
    return out


def section_index_maps(stmt: AssignStmt) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Per destination dim, (destination indices written, source indices they read) in
    global indices, one pair per position; the source is None for a dim spread adds.
    eoshift's boundary positions and rows outside a pipeline stage's window are left out."""
    out = []
    src_triplets = stmt.src_triplets
    for d, trip in enumerate(stmt.dst_triplets):
        idx = trip.indices()
        keep = None  # the positions kept, where some are not
        if stmt.window is not None and d == stmt.window.dim:  # one pipeline stage
            keep = np.isin(idx, stmt.window.indices())
        sd = stmt.perm[d]
        src_idx = None
        if sd >= 0:
            strip, shift = src_triplets[sd], stmt.shift[d]
            if stmt.op is not Op.EOSHIFT and 0 <= shift and shift + trip.count <= strip.count:
                # positions shift.. read in order: no wrap, nothing left out
                src_idx = Triplet(strip.lo + strip.stride * shift, strip.stride, trip.count).indices()
            else:
                pos = np.arange(shift, shift + trip.count, dtype=np.int64)
                if stmt.op is Op.EOSHIFT:
                    inside = (pos >= 0) & (pos < strip.count)
                    keep = inside if keep is None else keep & inside
                else:
                    pos %= strip.count
                src_idx = strip.lo + strip.stride * pos
            if keep is not None:
                src_idx = src_idx[keep]
        out.append((idx if keep is None else idx[keep], src_idx))
    return out


def replica_for(src: DistArray, receiver: int) -> int:
    """The node a replicated source's copy comes from: the receiver's own, or the source's
    processor of rank receiver mod count when the receiver holds none."""
    if receiver in src.onto.nodes:
        return receiver
    return src.onto.base + receiver % src.onto.count


class CommSet:
    """Who sends what to whom for one assignment, over `nprocs` machine nodes (up to the
    end of the later-placed arrangement)."""

    def __init__(self, stmt: AssignStmt):
        self.stmt = stmt
        src, dst = stmt.src, stmt.dst
        self.nprocs = max(src.onto.nodes.stop, dst.onto.nodes.stop)
        self.dims = []  # per dest dim: (indices, src coords or None, src proc dim, dst coords, dst proc dim)
        self.index_maps = section_index_maps(stmt)
        for d, (idx, src_idx) in enumerate(self.index_maps):
            sd = stmt.perm[d]
            src_owner = dim_owner_map(src, sd) if sd >= 0 else None
            src_coord = None if src_owner is None else src_owner[src_idx]
            dst_owner = dim_owner_map(dst, d)
            dst_coord = None if dst_owner is None else dst_owner[idx]
            self.dims.append((idx, src_coord, src.proc_dims[sd] if sd >= 0 else None,
                              dst_coord, dst.proc_dims[d]))
        # Collapsed source dims: (src proc dim, per-coordinate 0/1 "holds any of its indices").
        self.collapsed = [(src.proc_dims[c], _owns_any(src, c, stmt.src_triplets[c].indices()))
                          for c in stmt.collapsed]

    @cached_property
    def _tables(self) -> list[np.ndarray]:
        """Per dest dim, counts[src coord, dst coord] (size 1 where unconstrained)."""
        src_shape, dst_shape = self.stmt.src.onto.shape, self.stmt.dst.onto.shape
        out = []
        for idx, sc, spd, dc, dpd in self.dims:
            ns = src_shape[spd] if sc is not None else 1
            nd = dst_shape[dpd] if dc is not None else 1
            if sc is None and dc is None:
                table = np.full((1, 1), len(idx), dtype=np.int64)
            else:
                key = (sc * nd if sc is not None else 0) + (dc if dc is not None else 0)
                table = np.bincount(key, minlength=ns * nd).reshape(ns, nd)
            out.append(table)
        return out

    @cached_property
    def _rank_counts(self) -> np.ndarray:
        """counts[s, t]: elements from source rank s to destination rank t (ranks within the
        arrangements of distributed sides), or to/from the one column/row standing for a
        non-distributed side."""
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
        for spd, holds in self.collapsed:
            if holds is not None:
                operands.append(holds)
                subscripts.append(src_axes[spd])
        out_s = ("".join(src_axes) if src.mapping is Mapping.DISTRIBUTED else "") + \
                ("".join(dst_axes) if dst.mapping is Mapping.DISTRIBUTED else "")
        tensor = np.einsum(",".join(subscripts) + "->" + out_s, *operands)
        return np.asarray(tensor, dtype=np.int64).reshape(_ranks(src), _ranks(dst))

    def senders(self, receiver: int) -> range:
        """Ranks that may send to `receiver` (a range: membership tests are O(1))."""
        src = self.stmt.src
        if src.mapping is Mapping.REPLICATED:
            first = replica_for(src, receiver)
            return range(first, first + 1)
        if src.mapping is Mapping.SINGLE:
            return range(src.owner, src.owner + 1)
        return src.onto.nodes

    @cached_property
    def _receivers(self) -> range:
        dst = self.stmt.dst
        if dst.mapping is Mapping.SINGLE:
            return range(dst.owner, dst.owner + 1)
        return dst.onto.nodes

    def receivers(self) -> range:
        return self._receivers

    @cached_property
    def element_matrix(self) -> np.ndarray:
        """elements[p, q]: how many elements p sends to q (read-only)."""
        m = np.zeros((self.nprocs, self.nprocs), dtype=np.int64)
        counts = self._rank_counts
        src, dst = self.stmt.src, self.stmt.dst
        receivers = self.receivers()
        if src.mapping is Mapping.DISTRIBUTED:  # every node of the source sends to every receiver
            # counts' columns are the receivers' ranks, or its one column for all of them
            m[src.onto.nodes.start:src.onto.nodes.stop, receivers.start:receivers.stop] = counts
        else:
            to = np.arange(receivers.start, receivers.stop)
            cols = to - dst.onto.base if dst.mapping is Mapping.DISTRIBUTED else np.zeros_like(to)
            if src.mapping is Mapping.SINGLE:
                senders = np.full_like(to, src.owner)
            else:  # replica_for, for every receiver
                nodes = src.onto.nodes
                inside = (to >= nodes.start) & (to < nodes.stop)
                senders = np.where(inside, to, src.onto.base + to % src.onto.count)
            np.add.at(m, (senders, to), counts[0, cols])
        m.setflags(write=False)
        return m

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        """bytes[p, q]: how many bytes p sends to q (read-only; the element matrix itself where
        an element is a byte)."""
        itemsize = self.stmt.dst.itemsize
        if itemsize == 1:
            return self.element_matrix
        m = self.element_matrix * itemsize
        m.setflags(write=False)
        return m

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
        if dst not in self.receivers() or src not in self.senders(dst) or src not in s_arr.onto.nodes:
            return Section(tuple(np.zeros(0, dtype=np.int64) for _ in d_arr.shape))
        return Section(self.section_arrays(src, dst))

    @cached_property
    def _coords(self) -> tuple[list | None, list | None]:
        """Arrangement coordinates of every source and destination rank (distributed sides)."""
        s_arr, d_arr = self.stmt.src, self.stmt.dst
        return tuple([a.onto.coords(r) for r in range(a.onto.count)]
                     if a.mapping is Mapping.DISTRIBUTED else None for a in (s_arr, d_arr))

    def section_arrays(self, src: int, dst: int) -> tuple[np.ndarray, ...]:
        """`section(src, dst).indices` for a block known to exist, without the checks. The
        arrays are shared by every block with the same owner coordinates in a dimension."""
        s_all, d_all = self._coords
        s_coords = s_all[src - self.stmt.src.onto.base] if s_all is not None else None
        d_coords = d_all[dst - self.stmt.dst.onto.base] if d_all is not None else None
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


    def dim_sections(self) -> list[tuple[list[np.ndarray], np.ndarray, np.ndarray]]:
        """Per destination dim d, (sections, src_key, dst_key) over machine ranks 0..nprocs-1:
        `section_arrays(p, q)[d]` is `sections[src_key[p] + dst_key[q]]` for every block that
        exists, so a property of a dimension's sections maps onto all blocks at once."""
        s_all, d_all = self._coords
        out = []
        for (idx, sc, spd, dc, dpd), table, groups in zip(self.dims, self._tables,
                                                            self._index_groups):
            src_key = np.zeros(self.nprocs, dtype=np.int64)
            dst_key = np.zeros(self.nprocs, dtype=np.int64)
            if groups is None:
                out.append(([idx], src_key, dst_key))
                continue
            if sc is not None and s_all is not None:
                base = self.stmt.src.onto.base
                src_key[base:base + len(s_all)] = [c[spd] * table.shape[1] for c in s_all]
            if dc is not None and d_all is not None:
                base = self.stmt.dst.onto.base
                dst_key[base:base + len(d_all)] = [c[dpd] for c in d_all]
            out.append((groups, src_key, dst_key))
        return out

    @cached_property
    def _read_index(self) -> list[np.ndarray | None]:
        """Per destination dim, the source index each destination index reads (-1 where
        none does; None for a dim spread adds)."""
        out = []
        for extent, (idx, src_idx) in zip(self.stmt.dst.shape, self.index_maps):
            if src_idx is None:
                out.append(None)
                continue
            full = np.full(extent, -1, dtype=np.int64)
            full[idx] = src_idx
            out.append(full)
        return out

    def content(self, src: int, dst: int) -> tuple:
        """What block (src, dst) carries, as a key: blocks with equal keys carry equal bytes
        (the same source elements of one sender, in the same destination layout), as a
        spread's copies of one panel for the members of a processor row do."""
        key: list = [src]
        for ix, read in zip(self.section_arrays(src, dst), self._read_index):
            key.append(len(ix) if read is None else read[ix].tobytes())
        return tuple(key)


class ReduceSet:
    """Reductions move one partial result from every contributor to every receiver."""

    def __init__(self, stmt: ReduceStmt):
        self.stmt = stmt
        self.nprocs = max(stmt.src.onto.nodes.stop, stmt.dst.onto.nodes.stop)

    def contributors(self) -> list[int]:
        """Processors holding elements of the source (a BLOCK(k) may leave some empty)."""
        src = self.stmt.src
        if src.mapping is Mapping.DISTRIBUTED:
            return [p for p in src.onto.nodes if all(len(ix) for ix in owned_indices(src, p))]
        return [src.owner if src.mapping is Mapping.SINGLE else 0]

    def receivers(self) -> list[int]:
        dst = self.stmt.dst
        if dst.mapping is Mapping.SINGLE:
            return [dst.owner]
        if dst.mapping is Mapping.REPLICATED:
            return list(dst.onto.nodes)
        return [dst.onto.base]  # a one-element distributed array lives on its first processor

    @cached_property
    def byte_matrix(self) -> np.ndarray:
        m = np.zeros((self.nprocs, self.nprocs), dtype=np.int64)
        src = self.stmt.src
        for q in self.receivers():
            for p in ([replica_for(src, q)] if src.mapping is Mapping.REPLICATED else self.contributors()):
                m[p, q] = self.stmt.dst.itemsize
        return m
