"""Whole blocks moved from their origin straight into their destination's array, many at once.

The native core's replay (runtime/native_replay.py) moves a chunk of direct moves in bulk:
runtime/data.py's AssignmentData marks the blocks delivered, and when the collective closes
this module writes every delivered block at once, node by node, with array indexing instead
of one Python call per block. It does what AssignmentData.move_direct does block by block:
each destination element whose block was delivered gets the source element that the
statement's index maps (compiler/commsets.py section_index_maps) say it reads, from the
block's origin; the data check counts the writes per block (AssignmentData.block_count, and
`elements` says which elements each block wrote) and compares the arrays with the reference
result as before. An element's origin is the node that owns its source
element, so a block that was not delivered leaves its elements unwritten.

Only plain statements qualify: no reduction, no collapsed or spread dimension, both sides
distributed, every processor dimension of the source owning along some dimension. Others
move block by block (AssignmentData.move_in_bulk).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import dim_owner_map
from phalanx.compiler.semantics import AssignStmt
from phalanx.grammar.ast import Mapping


def _along(values: np.ndarray, d: int, ndim: int) -> np.ndarray:
    """A 1-D array shaped to broadcast along dimension d of ndim."""
    return values.reshape([-1 if k == d else 1 for k in range(ndim)])


def _run(indices: np.ndarray) -> slice | np.ndarray:
    """Ascending consecutive indices as a slice (a view, copied at memory speed), else as they are."""
    if len(indices) and (np.diff(indices) == 1).all():
        return slice(int(indices[0]), int(indices[-1]) + 1)
    return indices


@dataclass(frozen=True)
class DirectMoves:
    """A plain assignment's element geometry: per destination dim, the source index each
    global destination index reads and the source processor coordinate owning it."""

    stmt: AssignStmt
    source_of: tuple[np.ndarray, ...]  # per dst dim, by global dst index: src global index, -1 outside
    owner_of: tuple[np.ndarray | None, ...]  # per dst dim, by src global index: src proc coordinate
    stride: tuple[int, ...]  # per dst dim: its src proc dim's row-major stride (0: not distributed)
    owned: tuple[tuple[slice | np.ndarray, ...], ...]  # per dst node: owned_sections of the destination
    # per destination node: _geometry's result, shared by the runs of a repeat
    cache: dict[int, tuple] = field(default_factory=dict, compare=False, repr=False)
    # per (dst dim, run of owned indices): _dim's result
    dim_cache: dict[tuple, tuple] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def of(stmt: AssignStmt, commset: CommSet,
           owned: list[tuple[slice | np.ndarray, ...]]) -> DirectMoves | None:
        """The geometry of a plain statement (None for others); `owned`: per destination node,
        the global indices it owns per dim (compiler/distribution.py owned_sections, which
        StatementFacts works out once for both)."""
        src, dst = stmt.src, stmt.dst
        ndim = len(dst.shape)
        if stmt.reduces or stmt.collapsed or len(src.shape) != ndim or min(stmt.perm, default=0) < 0 \
                or src.mapping is not Mapping.DISTRIBUTED or dst.mapping is not Mapping.DISTRIBUTED:
            return None
        shape = src.onto.shape
        strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
        source_of, owner_of, stride, covered = [], [], [], set()
        for d, (idx, src_idx) in enumerate(commset.index_maps):
            full = np.full(dst.shape[d], -1, np.int64)
            full[idx] = src_idx
            source_of.append(full)
            owner_of.append(dim_owner_map(src, stmt.perm[d]))
            proc_dim = src.proc_dims[stmt.perm[d]]
            stride.append(0 if proc_dim is None else strides[proc_dim])
            covered.add(proc_dim)
        if not set(range(len(shape))) <= covered:  # a source dimension replicated over processors
            return None
        return DirectMoves(stmt, tuple(source_of), tuple(owner_of), tuple(stride), tuple(owned))

    def _geometry(self, final: int, shape: tuple[int, ...]) -> tuple[list[np.ndarray], np.ndarray, tuple,
                                                                      list[np.ndarray]]:
        """Node `final`'s source reads per destination dim (clipped to 0), which of its elements
        the statement writes (a mask of `shape`), the index of the source array they read and,
        per dim, which of its indices the statement writes (the mask is their product): the
        same for every run of the statement, so worked out once (`cache`), each dim's part once
        per distinct run of owned indices (`_dim`: ideal:4096's nodes all own the whole first
        dim of B, so it is worked out once, not 4096 times)."""
        hit = self.cache.get(final)
        if hit is None:
            stmt = self.stmt
            ndim = len(shape)
            parts = [self._dim(d, ix) for d, ix in enumerate(self.owned[final])]
            reads = [r for r, _, _, _ in parts]
            # (kept as the per-dim masks broadcast, not as a mask of the node's every element:
            # the cache would hold a byte per element of the array, 1 GB at 16x16 and 16 KB)
            dims = [m for _, m, _, _ in parts]
            inside = np.True_ if all(every for _, _, every, _ in parts) else \
                functools.reduce(np.logical_and, [_along(m, d, ndim) for d, m in enumerate(dims)])
            by_src_dim = [reads[stmt.perm.index(s)] for s in range(ndim)]
            runs = [parts[stmt.perm.index(s)][3] for s in range(ndim)]
            index = tuple(runs) if all(isinstance(r, slice) for r in runs) else np.ix_(*by_src_dim)
            hit = self.cache[final] = (reads, np.broadcast_to(inside, shape), index, dims)
        return hit

    def _dim(self, d: int, owned: slice | np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, bool, slice | np.ndarray]:
        """Along destination dim d, for a node owning global indices `owned`: the source index
        each reads (clipped to 0), which it writes, whether it writes them all, and the reads
        as a run (a slice) where they are one; kept per run of owned indices (`dim_cache`)."""
        key = (d, owned.start, owned.stop, owned.step) if isinstance(owned, slice) else None
        hit = self.dim_cache.get(key) if key is not None else None
        if hit is None:
            ix = np.arange(owned.start, owned.stop, owned.step or 1) if isinstance(owned, slice) \
                else np.asarray(owned)
            read = self.source_of[d][ix]
            written = read >= 0
            clipped = np.maximum(read, 0)
            hit = (clipped, written, bool(written.all()), _run(clipped))
            if key is not None:
                self.dim_cache[key] = hit
        return hit

    def writes_exactly(self, final: int, shape: tuple[int, ...], due: list[np.ndarray]) -> bool:
        """With every due block of node `final` come once, its elements written are those due:
        each element has one origin (the owner of its source element), so the elements written
        are `_geometry`'s mask, a product of per-dim masks, as the due elements are (`due`: per
        dim, which of the node's indices are due). Compared dim by dim, never element by element."""
        dims = self._geometry(final, shape)[3]
        empty, due_empty = not all(m.any() for m in dims), not all(m.any() for m in due)
        if empty or due_empty:
            return empty and due_empty
        return all(np.array_equal(m, w) for m, w in zip(dims, due))

    def writes_everywhere(self, final: int, shape: tuple[int, ...]) -> bool:
        """The statement writes every element of node `final`'s destination array."""
        return all(bool(m.all()) for m in self._geometry(final, shape)[3])

    def elements(self, final: int, shape: tuple[int, ...],
                 every_block: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Node `final`'s elements (its destination array of `shape`) that the statement writes
        (a mask) and, unless `every_block` (all its due blocks are written), the origin of each
        (whose block writes it); the data check counts writes per block from these."""
        reads, mask, _, _ = self._geometry(final, shape)
        if every_block:
            return mask, None
        ndim = len(shape)
        origin = self.stmt.src.onto.base + sum(
            _along(owner[r] * stride, d, ndim) for d, (owner, r, stride)
            in enumerate(zip(self.owner_of, reads, self.stride)) if owner is not None)
        return mask, np.broadcast_to(origin, shape)

    def write(self, source: np.ndarray, final: int, dst_local: np.ndarray, delivered_from: np.ndarray,
              every_block: bool) -> None:
        """Write, at node `final`, every element of the blocks delivered to it
        (`delivered_from[origin]`; `every_block`: all its blocks came) from the global source
        array (AssignmentData.block_count counts them, block by block)."""
        values = self.values(source, final, dst_local.shape)
        if every_block and self.writes_everywhere(final, dst_local.shape):
            dst_local[...] = values
            return
        mask, origin = self.elements(final, dst_local.shape, every_block)
        if origin is not None:  # only the elements whose origin's block came
            mask = mask & delivered_from[origin]
        if mask.all():
            dst_local[...] = values
        else:
            dst_local[mask] = values[mask]

    def values(self, source: np.ndarray, final: int, shape: tuple[int, ...]) -> np.ndarray:
        """What the blocks write at node `final` (its destination array of `shape`): each element
        the source element it reads (clipped to 0 where the statement writes none); a view of
        the global source array where the reads are runs (`write` copies it into the node's
        array, the data check compares it where it lands without a copy)."""
        _, _, index, _ = self._geometry(final, shape)
        return source[index].transpose(list(self.stmt.perm))

    def whole_values(self, source: np.ndarray) -> np.ndarray | None:
        """What the blocks write over the whole destination array where every global
        destination index is read (no section): the source element each reads, in the
        destination's shape (a view of `source` where the reads are runs, the source itself for
        `B = A` between distributions); None otherwise. Node q's `values` are its owned part
        of it (the same reads per dim, restricted to q's indices), so where it equals the
        reference result every node's values equal their part of the reference, each compared
        once and row by row along the whole array (ideal:4096's 4096 nodes read 8 bytes from
        each of 4096 rows of A each: one cache line and page per 8 bytes)."""
        if any((s < 0).any() for s in self.source_of):
            return None
        stmt = self.stmt
        reads = [self.source_of[stmt.perm.index(d)] for d in range(len(self.source_of))]
        runs = [_run(r) for r in reads]
        index = tuple(runs) if all(isinstance(r, slice) for r in runs) else np.ix_(*reads)
        return source[index].transpose(list(stmt.perm))

    def writes_exactly_everywhere(self, due: list[np.ndarray]) -> bool:
        """Per destination dim, the global indices the statement writes are those due (`due`:
        per dim, a mask of global indices): then `writes_exactly` holds for every node (its
        masks are these, restricted to its indices). False says nothing."""
        return all(np.array_equal(s >= 0, m) for s, m in zip(self.source_of, due))

    def write_all(self, source: np.ndarray, dst_flat: np.ndarray,
                  reads: tuple[np.ndarray, np.ndarray | None]) -> None:
        """Every node's due blocks all came: write them all at once into the nodes' arrays laid
        out node after node in `dst_flat`, as `write` of every node with blocks due with
        `every_block` would. `reads`: flat_reads' answer."""
        gather, inside = reads
        if inside is None:
            dst_flat[...] = source.reshape(-1)[gather]
        else:
            dst_flat[inside] = source.reshape(-1)[gather[inside]]

    def flat_reads(self, source_shape: tuple[int, ...], shapes: list[tuple[int, ...]],
                   has_due: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """For write_all, per element of the nodes' arrays laid out node after node (`shapes`),
        the flat index of the source element it reads and whether it is written (None: every
        one); a node without blocks due (`has_due`) writes nothing. StatementFacts keeps it."""
        ids = np.arange(int(np.prod(source_shape))).reshape(source_shape)
        gathers, insides = [np.zeros(0, np.int64)], [np.zeros(0, bool)]
        for final, shape in enumerate(shapes):
            if not int(np.prod(shape)):
                continue
            _, mask, index, _ = self._geometry(final, shape)
            gathers.append(np.broadcast_to(ids[index].transpose(list(self.stmt.perm)), shape).reshape(-1))
            insides.append(np.broadcast_to(mask & bool(has_due[final]), shape).reshape(-1))
        inside = np.concatenate(insides)
        return np.concatenate(gathers), None if inside.all() else inside
