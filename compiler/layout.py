"""Where an assignment's blocks lie in the local arrays, and which of them are strided.

A block (origin, final) of an assignment (compiler/commsets.py) is read from the origin's
local array and written into the final's, both row-major, in the destination's order. The
sender's code gathers it into a message unless it is one run of consecutive elements of the
origin's array; the receiver's code scatters it unless it is one run of the final's
(application buffering: iWarp's pack_cycles_per_word, targets/iwarp/params.py). The layout
depends on the statement and the distributions only, so the compiler records it in the
collective (`Collective.strided`) and the runtime moves real blocks with the same index maps:
a timing run without payloads (runtime/timing.py) packs what a run with data packs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import dim_local_map, dim_owner_map, local_shapes, owned_indices
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.semantics import AssignStmt, DistArray, Op, Triplet
from phalanx.grammar.ast import Mapping

# Bits of a block's entry in Collective.strided.
GATHERED = 1  # not one run of the origin's array: the sender's code gathers it
SCATTERED = 2  # not one run of the final's array: the receiver's code scatters it


@lru_cache(maxsize=64)
def local_maps(array: DistArray) -> tuple[np.ndarray, ...]:
    """Global-to-local index map of each dimension (cached: every block of an array uses it)."""
    return tuple(dim_local_map(array, d) for d in range(len(array.shape)))


def extent_and_run(ix) -> tuple[int, bool]:
    """How many indices a local index set (a slice from `_local`, or an array) holds, and
    whether they are consecutive and ascending."""
    if isinstance(ix, slice):
        return ix.stop - ix.start, ix.step in (None, 1)
    return len(ix), len(ix) < 2 or bool(np.all(np.diff(ix) == 1))


def one_run(dims: list[tuple[np.ndarray, np.ndarray]], axes: tuple[int, ...],
            shape: np.ndarray) -> np.ndarray:
    """Which blocks are one run of their row-major local array, for many blocks at once:
    `dims[j]` holds each block's extent along array axis `axes[j]` and whether its local
    indices there are consecutive, j being the order the block's elements are read in (the
    axes are a permutation of the array's); `shape[..., a]` is each block's array extent
    along axis a. Axes the block spans once do not matter; the others must keep the array's
    order and be runs, and every axis inside the outermost of them must be taken whole."""
    ok = np.ones(dims[0][0].shape if dims else shape.shape[:-1], dtype=bool)
    last = np.full(ok.shape, -1)  # the axis of the last wide dimension read so far
    for (extent, run), a in zip(dims, axes):
        wide = extent > 1
        ok &= ~wide | (run & (last < a))
        last = np.where(wide, a, last)
    extent_of = dict(zip(axes, (extent for extent, _ in dims)))
    outer = np.zeros(ok.shape, dtype=bool)  # some wide dimension lies outside axis a
    for a in range(len(axes)):
        ok &= ~outer | (extent_of[a] == shape[..., a])
        outer |= extent_of[a] > 1
    return ok


def _local(array: DistArray, dim: int, global_idx: np.ndarray) -> np.ndarray | slice:
    """Local indices of global ones; a slice when a run maps onto a run (local maps
    increase on each owner, so equal spans mean every index in between is consecutive)."""
    local_map = local_maps(array)[dim]
    n = len(global_idx)
    if n and global_idx[-1] - global_idx[0] + 1 == n:
        first, last = int(local_map[global_idx[0]]), int(local_map[global_idx[-1]])
        if last - first + 1 == n:
            return slice(first, last + 1)
    return local_map[global_idx]


class BlockLayout:
    """The local indices of an assignment's blocks on their origins and finals."""

    def __init__(self, stmt: AssignStmt, commset: CommSet):
        self.stmt, self.commset = stmt, commset
        self._conversions: dict[tuple[str, int, int], tuple] = {}
        self._collapsed: dict[tuple[int, int], np.ndarray | slice] = {}

    @cached_property
    def _source_of(self) -> list[np.ndarray | None]:
        """Per destination dim, the source index each destination index reads (None for a
        dim spread adds)."""
        out = []
        for d, (idx, src_idx) in enumerate(self.commset.index_maps):
            if src_idx is None:
                out.append(None)
                continue
            full = np.full(self.stmt.dst.shape[d], -1, dtype=np.int64)
            full[idx] = src_idx
            out.append(full)
        return out

    def converted(self, side: str, d: int, ix: np.ndarray):
        """Local indices (slice or array) of destination-dim `d`'s section array `ix` on the
        destination, or of the source indices it reads on the source. Blocks share their
        section arrays (one per owner-coordinate pair and dimension), so each is converted
        once; the cache holds `ix` itself, which keeps its id from being reused."""
        key = (side, d, id(ix))
        hit = self._conversions.get(key)
        if hit is None:
            if side == "dst":
                local = _local(self.stmt.dst, d, ix)
            else:
                local = _local(self.stmt.src, self.stmt.perm[d], self._source_of[d][ix])
            hit = self._conversions[key] = (ix, local)
        return hit[1]

    def collapsed_local(self, origin: int, dim: int):
        """Local indices, on `origin`, of the indices of collapsed source dim `dim` it holds."""
        hit = self._collapsed.get((origin, dim))
        if hit is None:
            held = owned_indices(self.stmt.src, origin)[dim]
            wanted = self.stmt.src_triplets[dim].indices()
            hit = self._collapsed[(origin, dim)] = _local(self.stmt.src, dim,
                                                          np.intersect1d(held, wanted))
        return hit

    def strides(self, origin: int, final: int) -> int:
        """GATHERED | SCATTERED bits of block (origin, final)."""
        return int(self._bits[origin, final])

    def matrix(self) -> tuple[tuple[int, ...], ...]:
        """strides() of every block that carries bytes (0 elsewhere); () when no block is
        strided, the common case of whole rows, which keeps the IR small."""
        return tuple(map(tuple, self._bits.tolist())) if self._bits.any() else ()

    @cached_property
    def _bits(self) -> np.ndarray:
        """strides() of every block (uint8), worked out once per class of origins and class of
        finals and spread over the P x P blocks: two origins are alike when they hold local
        arrays of one shape and their blocks' sections have the same extents and runs in every
        dimension, whatever the final, and likewise two finals (a 4096-node all-to-all's 16.8M
        blocks are one pair of classes)."""
        n = self.commset.nprocs
        origins = [local_shapes(self.stmt.src, n)] + [a[:, None] for extent, run in self._collapsed_runs
                                                      for a in (extent, run)]
        finals = [local_shapes(self.stmt.dst, n)]
        for side_runs, src_key, dst_key in self._dim_runs:
            rows, cols = _alike(_section_classes(side_runs), src_key, dst_key)
            origins.append(rows[:, None])
            finals.append(cols[:, None])
        _, first_p, origin_class = np.unique(np.hstack(origins), axis=0, return_index=True,
                                             return_inverse=True)
        _, first_q, final_class = np.unique(np.hstack(finals), axis=0, return_index=True,
                                            return_inverse=True)
        grid = self.block_bits(first_p, first_q)
        if not grid.any():  # no block is strided (whole rows: the common case)
            return np.zeros((n, n), dtype=np.uint8)
        bits = grid[origin_class.reshape(-1, 1), final_class.reshape(1, -1)]
        bits[self.commset.byte_matrix <= 0] = 0
        return bits

    def block_bits(self, origins: np.ndarray, finals: np.ndarray) -> np.ndarray:
        """GATHERED | SCATTERED bits (uint8) of blocks (origins[i], finals[j]), as an
        (len(origins), len(finals)) array, whether or not they carry bytes."""
        src_dims, dst_dims = [], []
        for side_runs, src_key, dst_key in self._dim_runs:
            key = src_key[origins][:, None] + dst_key[finals][None, :]
            for side, out in (("src", src_dims), ("dst", dst_dims)):
                if side in side_runs:
                    extent, run = side_runs[side]
                    out.append((extent[key], run[key]))
        dst_shape = local_shapes(self.stmt.dst, self.commset.nprocs)[finals]
        scattered = ~one_run(dst_dims, tuple(range(len(dst_dims))), dst_shape[None, :, :])
        if min(self.stmt.perm, default=0) < 0:
            gathered = np.ones(scattered.shape, dtype=bool)  # a spread copies elements: a gather loop
        else:
            # Source dims read by destination dims, in destination order; a dim the statement
            # collapses (scalar subscript, reduction) is read innermost.
            for extent, run in self._collapsed_runs:
                src_dims.append(tuple(np.broadcast_to(a[origins][:, None], scattered.shape)
                                      for a in (extent, run)))
            src_shape = local_shapes(self.stmt.src, self.commset.nprocs)[origins]
            gathered = ~one_run(src_dims, tuple(self.stmt.perm) + tuple(self.stmt.collapsed),
                                src_shape[:, None, :])
        bits = np.where(gathered, GATHERED, 0) | np.where(scattered, SCATTERED, 0)
        return np.broadcast_to(bits.astype(np.uint8), (len(origins), len(finals)))

    @cached_property
    def _dim_runs(self) -> list[tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]]:
        """Per destination dim: {side: (extent, run) of each of its sections (CommSet.dim_sections)
        in the local indices of that side ("src" left out for a dim spread adds)}, src_key, dst_key."""
        out = []
        for d, (sections, src_key, dst_key) in enumerate(self.commset.dim_sections()):
            lengths = np.array([len(ix) for ix in sections], dtype=np.int64)
            joined = np.concatenate(sections) if sections else np.zeros(0, dtype=np.int64)
            side_runs = {"dst": (lengths, _consecutive(local_maps(self.stmt.dst)[d][joined], lengths))}
            if self.stmt.perm[d] >= 0:
                local = local_maps(self.stmt.src)[self.stmt.perm[d]][self._source_of[d][joined]]
                side_runs["src"] = (lengths, _consecutive(local, lengths))
            out.append((side_runs, src_key, dst_key))
        return out

    @cached_property
    def _collapsed_runs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per collapsed source dim: each node's extent of the indices it holds and whether they
        are one run of its local array (collapsed_local)."""
        n = self.commset.nprocs
        out = []
        for c in self.stmt.collapsed:
            runs = [extent_and_run(self.collapsed_local(p, c)) for p in range(n)]
            out.append((np.array([e for e, _ in runs], dtype=np.int64),
                        np.array([r for _, r in runs], dtype=bool)))
        return out


def sends_in_rank_order(stmt: AssignStmt) -> bool:
    """Whether every origin's local array, read in row-major order, sends each element to one
    final, the finals' ranks never decreasing (Collective.sends_in_rank_order); False unless
    proven: only a plain copy of a whole distributed array onto a distributed one qualifies.

    An element's final is its destination owner: the arrangement's base plus a sum over dims d
    of r_d(i_d), the owner coordinate along d times that arrangement dim's row-major stride (0
    for `*`). Over a product of ascending index sets such a sum never decreases in row-major
    order iff every step of r_d in its set is >= the sum over inner dims e > d of (max - min) of
    r_e on theirs (the last element with i_d against the first with its successor). The dims
    use distinct arrangement dims, so every combination of per-dim sets is some origin's: the
    least steps and the largest spans over the owner coordinates decide for all origins, in
    O(extent) per dim (no loop over origins, blocks or elements).
    """
    src, dst = stmt.src, stmt.dst
    rank = len(dst.shape)
    whole = tuple(Triplet.whole(e) for e in dst.shape)
    plain = (stmt.op is Op.COPY and stmt.perm == tuple(range(rank)) and not any(stmt.shift)
             and stmt.window is None and src.shape == dst.shape
             and stmt.src_triplets == whole and stmt.dst_triplets == whole)
    if not plain or not all(_spread_over_every_proc_dim(a) for a in (src, dst)):
        return False  # a replicated or single-owner end, an index map, a section, a stage
    strides = np.cumprod((dst.onto.shape[1:] + (1,))[::-1])[::-1]  # Processors.rank's row-major
    inner_span = 0  # sum over the dims inside d of the largest (max - min) of their terms
    for d in reversed(range(rank)):
        owner, proc_dim = dim_owner_map(dst, d), dst.proc_dims[d]
        term = np.zeros(dst.shape[d], dtype=np.int64) if owner is None else owner * strides[proc_dim]
        least_step, span = _steps_and_span(src, d, term)
        if least_step < inner_span:
            return False
        inner_span += span
    return True


def _spread_over_every_proc_dim(array: DistArray) -> bool:
    """A distributed array whose dims use every dim of its arrangement: each element has one
    owner (the checker requires it of a program's arrays; this holds any other to it)."""
    used = [p for p in array.proc_dims if p is not None]
    return array.mapping is Mapping.DISTRIBUTED and len(used) == len(array.onto.shape)


def _steps_and_span(src: DistArray, d: int, term: np.ndarray) -> tuple[float, int]:
    """Over the source's owner coordinates along dim d, the least step of `term` (per global
    index) between consecutive local indices of one coordinate (inf where none holds two), and
    the largest max - min of `term` over one coordinate's local indices. A coordinate's local
    indices are its global ones ascending (compiler/distribution.py: local maps increase on
    each owner), so a stable sort by owner lists every coordinate's in local order."""
    owner = dim_owner_map(src, d)
    if owner is None:  # `*`: every origin holds the whole dim
        owner = np.zeros(len(term), dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    by_owner, values = owner[order], term[order]
    steps = np.diff(values)[by_owner[1:] == by_owner[:-1]]
    starts = np.flatnonzero(np.r_[True, by_owner[1:] != by_owner[:-1]])
    spans = np.maximum.reduceat(values, starts) - np.minimum.reduceat(values, starts)
    return (int(steps.min()) if steps.size else np.inf), int(spans.max())


def _consecutive(local: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per section, consecutive pieces of `local` of these lengths: whether its indices are
    consecutive and ascending (extent_and_run's run, for all sections at once)."""
    # the steps other than +1 (step i: local[i] to local[i + 1]), few: a section's indices are
    # a run where none of its steps, starts[k] to starts[k] + lengths[k] - 2, is one (no cumsum
    # over every index: at torus:16x16 and 16 KB, 4M of them per side)
    breaks = np.flatnonzero(np.diff(local) != 1)
    starts = np.cumsum(lengths) - lengths
    first_break = np.searchsorted(breaks, starts)  # the first break at or after each start
    past = np.append(breaks, len(local))[first_break]  # (len(local): no break after it)
    return past >= starts + lengths - 1


def _section_classes(side_runs: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per section, an id shared by the sections with the same extents and runs on both sides."""
    columns = [a.astype(np.int64) for extent, run in side_runs.values() for a in (extent, run)]
    _, ids = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    return ids.reshape(-1)


def _alike(ids: np.ndarray, src_key: np.ndarray, dst_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node as an origin and as a final, a class in one dimension: origins p and p' are in
    one class when sections src_key[p] + dst_key[q] and src_key[p'] + dst_key[q] have the same
    id (`ids`) for every q, and likewise finals."""
    us, u_of = np.unique(src_key, return_inverse=True)
    vs, v_of = np.unique(dst_key, return_inverse=True)
    table = ids[us[:, None] + vs[None, :]]
    _, row_class = np.unique(table, axis=0, return_inverse=True)
    _, col_class = np.unique(table, axis=1, return_inverse=True)
    return row_class.reshape(-1)[u_of.reshape(-1)], col_class.reshape(-1)[v_of.reshape(-1)]


def strided_bytes(group: tuple[Transfer, ...], strides: Callable[[int, int], int]) -> tuple[int, int]:
    """(bytes the sender's code must gather, bytes the receiver's must scatter) of one message
    of these blocks, given each block's GATHERED | SCATTERED bits: a block is gathered as it
    leaves its origin's array and scattered as it enters its final's; forwarded blocks (and
    pieces of blocks) sit in message buffers on the way."""
    gather = scatter = 0
    for t in group:
        bits = strides(t.origin, t.final)
        if t.src == t.origin and bits & GATHERED:
            gather += t.nbytes
        if t.dst == t.final and bits & SCATTERED:
            scatter += t.nbytes
    return gather, scatter
