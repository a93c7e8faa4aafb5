"""Real payloads: each node's local arrays as numpy, blocks packed, moved and unpacked.

At the end every destination element must have been written exactly once and equal
the reference result of the statement (numpy on the global arrays); reductions must
have received every partial result exactly once and combine to the reference.
"""

from __future__ import annotations

import bisect
import functools
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from phalanx.compiler.commsets import CommSet, ReduceSet
from phalanx.compiler.distribution import local_shape, owned_indices, owned_sections
from phalanx.compiler.layout import BlockLayout, strided_bytes
from phalanx.compiler.library.cost import combine_operations, combined_bytes
from phalanx.compiler.library.members import REDUCTIONS as REDUCTION_KINDS
from phalanx.compiler.schedule import WHOLE, Transfer
from phalanx.compiler.semantics import SPREAD, AssignStmt, DistArray, ReduceStmt
from phalanx.runtime.direct_moves import DirectMoves
from phalanx.runtime.plan_columns import all_distinct

BULK_CHECKS_KEPT = 64  # StatementFacts.bulk_checks holds at most this many answers
FLAT_CHECK_ELEMENTS = 1 << 16  # statements up to this many elements are checked all nodes at once
NUMPY_TYPES = {"byte": np.uint8, "int32": np.int32, "int64": np.int64, "float32": np.float32,
               "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}
REDUCE_FUNCTIONS = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}

# Simulated runs allocate and first touch gigabytes of arrays (16x16 at 16 KB: 1 GB of
# payload, its copy and write counts). NumPy asks the kernel for transparent huge pages on
# every array of 4 MB or more; where the kernel then compacts memory on each fault
# (transparent_hugepage/defrag = madvise) drawing that payload took 4.2 s instead of 1.6 s
# (bench/iwarp.py). NUMPY_MADVISE_HUGEPAGE=1 keeps NumPy's default.
if os.environ.get("NUMPY_MADVISE_HUGEPAGE", "0") == "0":
    getattr(np._core.multiarray, "_set_madvise_hugepage", lambda enabled: None)(False)


class ScheduleError(Exception):
    """The schedule moves data it cannot: a block its sender does not hold, a wrong size."""


def random_global(array: DistArray, rng: np.random.Generator, near_one: bool = False) -> np.ndarray:
    """Seeded data for an array; `near_one` keeps long products finite."""
    dtype = np.dtype(NUMPY_TYPES[array.elem_type])
    shape = array.shape
    if dtype.kind in "fc" and near_one:
        real = rng.uniform(0.999, 1.001, shape)
        return (real + 1j * rng.uniform(-1e-3, 1e-3, shape) if dtype.kind == "c" else real).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype, copy=False)
    if dtype == np.uint8:  # the same bytes (and generator state) as rng.bytes, 4x faster
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.integers(0, min(np.iinfo(dtype).max, 1 << 20), size=shape, dtype=dtype)


def _count_type(src: DistArray, nprocs: int) -> type:
    """The smallest exact type for per-element write counts. Each block reaches its
    destination at most once (the store and the interpreter see to that), so an element is
    written at most once per owner of its source element. Every element has an owner, so
    no element has more than (sum of the owners' local sizes - array size + 1) owners: one
    byte is enough unless sources are replicated over 255 nodes or more (a byte per
    element, not two, spares 16x16 at 16 KB a gigabyte of freshly touched pages)."""
    held = sum(math.prod(local_shape(src, p)) for p in range(nprocs))
    return np.uint8 if nprocs < 255 or held - math.prod(src.shape) + 1 < 255 else np.uint16


def _index(indices) -> tuple:
    """Index arrays (or slices) as slices where they are runs (views, fast), else an open mesh."""
    as_slices = []
    for ix in indices:
        if isinstance(ix, slice):
            as_slices.append(ix)
        elif len(ix) and ix[-1] - ix[0] + 1 == len(ix):
            as_slices.append(slice(int(ix[0]), int(ix[-1]) + 1))
        else:
            break
    else:
        return tuple(as_slices)
    return np.ix_(*[np.arange(ix.start, ix.stop, ix.step or 1) if isinstance(ix, slice) else ix
                    for ix in indices])


def move(data: CollectiveData, t: Transfer) -> None:
    """Take the block from its sender and put it at its receiver; array to array where the
    data layer can (AssignmentData.move_direct)."""
    if not data.move_direct(t):
        data.put(t, data.take(t))


def _bytes(block: np.ndarray) -> np.ndarray:
    """A block's bytes, flat (a view where the block is contiguous)."""
    return np.ascontiguousarray(block).reshape(-1).view(np.uint8)


def check_size(t: Transfer, block: np.ndarray) -> None:
    if block.nbytes != t.nbytes:
        raise ScheduleError(f"transfer {t.src}->{t.dst} of {t.block_name} says "
                            f"{t.nbytes} bytes but the block has {block.nbytes}")


class BlockStore:
    """Which node holds which block: blocks start at their senders and move with transfers.

    Blocks of equal content (a broadcast's blocks for every receiver, an allgather's
    copies of one part) form a class: a node that holds or has received one of them may
    send any other of the class, which is how tree algorithms copy and forward. Each
    block still has to reach its own destination exactly once.

    A transfer may carry a piece of a block (Transfer.offset): its origin
    sends it from its source, a node with a copy of the block's content or of that piece
    forwards it, and the destination assembles the block from its pieces, each byte once.
    Without classes a block's packed copy at its origin goes once every byte of it has been
    cut into pieces, and its destination keeps no piece (it has nothing to forward).
    """

    def __init__(self, nprocs: int, blocks: list[tuple[int, int]] | np.ndarray, content=None,
                 fresh: np.ndarray | None = None):
        """`blocks`: (origin, final) of every block, as pairs or an (n, 2) array; `fresh`, where
        given, the (nprocs, nprocs) matrix they make (StatementFacts.due_blocks), copied."""
        self.nprocs = nprocs
        self.pieces: list[dict[tuple, np.ndarray]] = [{} for _ in range(nprocs)]
        # (origin, final) -> the block's bytes so far and the (start, stop) byte spans of its
        # pieces that came, in order: a block is whole when they tile it, each byte once
        self.assembling: dict[tuple[int, int], tuple[np.ndarray, list[tuple[int, int]]]] = {}
        self.held: list[dict[tuple[int, int], np.ndarray]] = [{} for _ in range(nprocs)]  # received
        self.copies: list[dict[object, np.ndarray]] = [{} for _ in range(nprocs)]
        # Without classes, bytes cut into pieces so far from each block packed at its origin
        self.cut: dict[object, int] = {}
        # Without classes a block's only copy is the one that moves: keeping delivered
        # payloads would just hold every byte of the exchange in memory twice.
        self.shared = content is not None
        self.content = content or (lambda origin, final: (origin, final))
        # fresh[origin, final]: the block is still in its source, never sent (packed on send)
        if fresh is not None:
            self.fresh = fresh.copy()
            return
        self.fresh = np.zeros((nprocs, nprocs), bool)
        pairs = np.asarray(blocks, np.int64).reshape(-1, 2)
        self.fresh[pairs[:, 0], pairs[:, 1]] = True

    def take(self, t: Transfer, pack) -> np.ndarray:
        if t.offset != WHOLE:
            return self.take_piece(t, pack)
        key = (t.origin, t.final)
        fresh = self.unsent(t)  # never sent yet
        payload: np.ndarray | None
        if key in self.held[t.src]:
            payload = self.held[t.src].pop(key)
        elif fresh and t.src == t.origin:
            self.fresh[key] = False
            payload = None
        elif fresh and self.content(*key) in self.copies[t.src]:
            self.fresh[key] = False  # sent from a copy: the source's block is spent
            payload = self.copies[t.src][self.content(*key)]
        else:
            raise ScheduleError(f"node {t.src} sends block {t.origin}->{t.final}, which it "
                                "does not hold (never had it, or already sent it on)")
        if payload is None:
            payload = pack(t.origin, t.final)
        check_size(t, payload)
        return payload

    def take_piece(self, t: Transfer, pack) -> np.ndarray:
        """The bytes of a piece, from the origin's source, a copy of the content or of the piece."""
        origin, offset, label = t.origin, t.offset, t.block_name
        if not 0 <= origin < self.nprocs or offset < 0:
            raise ScheduleError(f"transfer {t.src}->{t.dst} names {label}, outside blocks "
                                f"0..{self.nprocs - 1} and their bytes")
        content = self.content(origin, t.final)
        whole = self.copies[t.src].get(content)
        if whole is None and t.src == origin:  # packed once, then every piece is cut from it
            whole = self.copies[origin][content] = pack(origin, t.final)
        if whole is not None:
            flat = _bytes(whole)
            if offset + t.nbytes > flat.size:
                raise ScheduleError(f"transfer {t.src}->{t.dst} sends {label}, past the "
                                    f"block's {flat.size} bytes")
            if not self.shared and t.src == origin:  # its only copy: dropped once every byte was cut
                cut = self.cut[content] = self.cut.get(content, 0) + t.nbytes
                if cut >= flat.size:
                    del self.copies[origin][content], self.cut[content]
            return flat[offset:offset + t.nbytes]
        piece = self.pieces[t.src].get((content, offset, t.nbytes))
        if piece is None:
            raise ScheduleError(f"node {t.src} sends {label}, which it does not hold")
        return piece

    def arrive_piece(self, t: Transfer, payload: np.ndarray, block_nbytes: int) -> np.ndarray | None:
        """Keep a piece where it arrives (to forward it); at its destination add it to the
        block, which is returned (as bytes) once every byte has come, each exactly once."""
        origin, offset = t.origin, t.offset
        if t.dst != t.final or self.shared:  # (a block's own destination forwards it only as a copy)
            self.pieces[t.dst][(self.content(origin, t.final), offset, t.nbytes)] = payload
        if t.dst != t.final:
            return None
        key = (origin, t.final)
        if key not in self.assembling:
            self.assembling[key] = (np.zeros(block_nbytes, np.uint8), [])
        buffer, spans = self.assembling[key]
        start, stop = offset, offset + t.nbytes
        at = bisect.bisect_left(spans, (start, stop))  # the spans before end by start, the next
        overlaps = stop > start and ((at > 0 and spans[at - 1][1] > start) or
                                     (at < len(spans) and spans[at][0] < stop))
        if stop > block_nbytes or overlaps:
            raise ScheduleError(f"{t.block_name} overlaps bytes that already arrived or lies past the "
                                f"block's {block_nbytes} bytes")
        if stop > start:  # (the spans kept are disjoint and not empty: their ends are in order too)
            spans.insert(at, (start, stop))
        buffer[start:stop] = payload
        if sum(b - a for a, b in spans) < block_nbytes:  # (disjoint spans inside the block)
            return None
        del self.assembling[key]
        return buffer

    def unsent(self, t: Transfer) -> bool:
        """The block is still at its origin, never sent (not even to the origin itself)."""
        n = self.nprocs
        return 0 <= t.origin < n and 0 <= t.final < n and bool(self.fresh[t.origin, t.final])

    def spend(self, t: Transfer) -> None:
        """An unsent block leaves its origin straight for its destination (no payload kept)."""
        self.fresh[t.origin, t.final] = False

    def keep(self, t: Transfer, payload: np.ndarray) -> None:
        self.held[t.dst][(t.origin, t.final)] = payload
        if self.shared:
            self.copies[t.dst][self.content(t.origin, t.final)] = payload

    def delivered(self, t: Transfer, payload: np.ndarray) -> None:
        """A block reached its destination, which keeps a copy it may forward."""
        if self.shared:
            self.copies[t.dst][self.content(t.origin, t.final)] = payload


def _whole_source(origin: int, final: int) -> tuple:
    """A replicated destination's blocks from one sender: all the same bytes."""
    return (origin, "all")


@dataclass
class StatementFacts:
    """What an assignment's payloads need that does not depend on the values: its
    communication set, each node's owned indices, the elements due, the initial write counts,
    the blocks and their content classes, the layout (with its cached index conversions).
    Built once per statement and shared by the runs of a repeat."""

    commset: CommSet
    src_owned: list[tuple]
    dst_owned: list[tuple]
    expected: list[np.ndarray]
    # per node, the elements written before any block moves (eoshift's boundary, counted once),
    # views of `initial_flat`; None: none is (AssignmentData.element_writes)
    initial: list[np.ndarray] | None
    blocks: np.ndarray  # (blocks, 2): origin and final of each
    content: Callable | None
    layout: BlockLayout
    direct: DirectMoves | None  # the element geometry that writes delivered blocks at once, if plain
    block_indexes: dict = field(default_factory=dict)  # AssignmentData._block_index, filled as used
    # AssignmentData.can_move_in_bulk's answers for untouched payloads, by the transfers' id
    bulk_checks: dict[int, tuple[np.ndarray, bool]] = field(default_factory=dict)
    # Every node's destination array (and a reduction's write counts) are views of one flat
    # buffer each, node after node: `dst_offsets` (nodes + 1) where each starts.
    dst_offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    initial_flat: np.ndarray | None = None  # the initial counts, node after node (None: all zero)
    count_type: type = np.uint8  # a reduction's per-element write counts (_count_type)
    due_blocks: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), bool))  # byte_matrix > 0
    all_due: bool = False  # every element of every node's destination array is written
    node_shapes: list[tuple[int, ...]] = field(default_factory=list)  # each node's destination array's
    receivers: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # nodes with blocks due
    slots: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)  # views' (start, stop, shape)
    # A small statement's flat index of each node's element in the global reference result
    # (AssignmentData.problems' one comparison), made when first used; None: not made yet
    reference_gather: np.ndarray | None = None
    # DirectMoves.flat_reads of a small plain statement, made when first used
    direct_reads: tuple[np.ndarray, np.ndarray | None] | None = None
    # The reference result is the source array itself, the same elements in the same layout (a
    # whole-array copy between distributions), so each run takes it as it is; None: not known yet
    reference_is_source: bool | None = None
    # Every due block, once each, writes each node's due elements exactly once with the initial
    # counts (the statement's geometry; None: not worked out yet, AssignmentData.covers_exactly)
    exact_cover: bool | None = None

    def reference(self, stmt: AssignStmt, a: np.ndarray) -> np.ndarray:
        """reference_array(stmt, a); worked out once where it is `a` itself."""
        if self.reference_is_source:
            return a
        b = reference_array(stmt, a)
        if self.reference_is_source is None:
            self.reference_is_source = b.shape == a.shape and b.strides == a.strides and \
                b.__array_interface__["data"] == a.__array_interface__["data"]
        return b

    def flat_reads(self, source: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | None:
        """DirectMoves.flat_reads of a plain statement of at most FLAT_CHECK_ELEMENTS source
        elements, made once; None for others (they write node by node)."""
        if self.direct is None or source.size > FLAT_CHECK_ELEMENTS:
            return None
        if self.direct_reads is None:
            self.direct_reads = self.direct.flat_reads(source.shape, self.node_shapes, self.receivers)
        return self.direct_reads

    def reference_flat(self, result: np.ndarray) -> np.ndarray | None:
        """Every node's reference elements, node after node (the flat destination buffer's
        layout), from the global reference `result`; None for statements past FLAT_CHECK_ELEMENTS."""
        if result.size > FLAT_CHECK_ELEMENTS:
            return None
        if self.reference_gather is None:
            ids = np.arange(result.size).reshape(result.shape)
            self.reference_gather = np.concatenate([ids[ix].reshape(-1) for ix in self.dst_owned] or
                                                   [np.zeros(0, np.int64)])
        return result.reshape(-1)[self.reference_gather]

    @staticmethod
    def of(stmt: AssignStmt) -> StatementFacts:
        commset = CommSet(stmt)
        n = commset.nprocs
        due = reference_due(stmt)
        owned = [owned_sections(stmt.dst, q) for q in range(n)]
        dst_owned = [_index(ix) for ix in owned]
        expected = [_product_mask(due, ix) for ix in owned]
        count = np.uint16 if stmt.reduces and n >= 255 else _count_type(stmt.src, n)
        writes = [np.zeros(e.shape, dtype=count) for e in expected]
        if stmt.op == "eoshift":
            # The boundary positions: due, but no source element reaches them; the owner writes
            # the boundary value 0 itself (its array starts zeroed), without communication.
            sent = []
            for extent, (idx, _) in zip(stmt.dst.shape, commset.index_maps):
                sent.append(np.zeros(extent, dtype=bool))
                sent[-1][idx] = True
            for w, want, ix in zip(writes, expected, owned):
                w[want & ~_product_mask(sent, ix)] = 1
        m = commset.byte_matrix
        blocks = np.argwhere(m > 0)
        # Blocks with the same source elements carry the same bytes (a replicated destination;
        # a spread's copies of one section), so a node may forward the copy it received.
        content = None
        if stmt.dst.mapping == "replicated":
            content = _whole_source
        elif stmt.op == SPREAD or (stmt.reduces and any(
                p < 0 and t.count > 1 for p, t in zip(stmt.perm, stmt.dst_triplets))):
            # (a reduction spread along a dim: each partial's copies for the group's members)
            content = commset.content
        sizes = [w.size for w in writes]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        shapes = [w.shape for w in writes]
        slots = list(zip(offsets[:-1].tolist(), offsets[1:].tolist(), shapes))
        initial_flat = initial = None
        if stmt.op == "eoshift":  # (others start with no element written: nothing kept)
            initial_flat = np.concatenate([w.reshape(-1) for w in writes] or [np.zeros(0, count)])
            initial = [initial_flat[a:b].reshape(shape) for a, b, shape in slots]  # (one copy, not two)
        return StatementFacts(commset, [_index(owned_sections(stmt.src, p)) for p in range(n)],
                              dst_owned, expected, initial, blocks, content,
                              BlockLayout(stmt, commset),
                              DirectMoves.of(stmt, commset) if content is None else None,
                              dst_offsets=offsets, initial_flat=initial_flat, count_type=count,
                              due_blocks=m > 0, all_due=all(bool(e.all()) for e in expected),
                              node_shapes=shapes, receivers=(m > 0).any(axis=0), slots=slots)

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        """Each node's array (the shape of its destination array) as a view of `flat`."""
        return [flat[a:b].reshape(shape) for a, b, shape in self.slots]


@dataclass
class AssignmentData:
    """Source and destination local arrays of one assignment, with write counts: per block
    (`block_count`, how often each block reached its destination) and, for a reduction, whose
    partials combine where they meet, per element (`writes`). An assignment's elements are
    written exactly once where every due block came once and the statement's blocks cover each
    node's due elements exactly once (StatementFacts.exact_cover, worked out once per statement):
    no per-element count as large as the array is kept (issue 30)."""

    stmt: AssignStmt
    commset: CommSet
    src_local: list[np.ndarray]
    dst_local: list[np.ndarray]
    writes: list[np.ndarray]  # a reduction's per-element counts (empty for other assignments)
    reference: list[np.ndarray]
    expected: list[np.ndarray]  # elements this statement (or stage) must write
    store: BlockStore = field(repr=False)
    layout: BlockLayout = field(repr=False)
    arrived: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    # A reduction along dims recognized as a reduce or allreduce: partials bound for one
    # destination travel combined (as TimingData and the cost models count them).
    combines: bool = False
    block_indexes: dict = field(default_factory=dict, repr=False)  # shared by a statement's runs
    source: np.ndarray | None = field(default=None, repr=False)  # the global source array
    direct: DirectMoves | None = field(default=None, repr=False)  # StatementFacts.direct
    # delivered[origin, final]: moved in bulk, written when the collective closes (write_delivered)
    delivered: np.ndarray | None = field(default=None, repr=False)
    bulk_checks: dict = field(default_factory=dict, repr=False)  # StatementFacts.bulk_checks
    untouched: bool = field(default=True, repr=False)  # no block taken or moved yet
    # dst_local's flat buffer (StatementFacts.views), the global reference result
    facts: StatementFacts | None = field(default=None, repr=False)
    dst_flat: np.ndarray | None = field(default=None, repr=False)
    result: np.ndarray | None = field(default=None, repr=False)
    # block_count[origin, final]: times the block reached its destination, 2 for any more
    block_count: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8), repr=False)

    @classmethod
    def build(cls, stmt: AssignStmt, rng: np.random.Generator,
              sources: dict | None = None, combines: bool = False,
              shared: dict | None = None) -> AssignmentData:
        """`sources` shares one global source array among a pipeline's stages (they move
        windows of the same statement), instead of drawing it again per stage. `combines`:
        the statement is a reduce or allreduce (of partial blocks). `shared` keeps what does
        not depend on the values (StatementFacts), by statement, for the next run of it (a
        repeat's iterations): only the arrays are drawn, moved and checked again."""
        facts = shared.get(id(stmt)) if shared is not None else None
        if facts is None:
            facts = StatementFacts.of(stmt)
            if shared is not None:
                shared[id(stmt)] = facts
        key = (stmt.src.name, stmt.loc.line) if stmt.window is not None else None
        if sources is not None and key in sources:
            a = sources[key]
        else:
            a = random_global(stmt.src, rng, near_one=stmt.op == "prod")
            if sources is not None and key is not None:
                sources[key] = a
        b = facts.reference(stmt, a)
        # Views where the owned indices are runs: the global arrays are only read.
        src_local = [a[ix] for ix in facts.src_owned]
        ref = [b[ix] for ix in facts.dst_owned]
        dst_flat = np.zeros(int(facts.dst_offsets[-1]), dtype=b.dtype)
        writes_flat = None
        if stmt.reduces:  # (no boundary: initial_flat is an eoshift's)
            writes_flat = np.zeros(int(facts.dst_offsets[-1]), dtype=facts.count_type)
        n = facts.commset.nprocs
        store = BlockStore(n, facts.blocks, facts.content, facts.due_blocks)
        return cls(stmt, facts.commset, src_local, facts.views(dst_flat),
                   facts.views(writes_flat) if writes_flat is not None else [], ref,
                   facts.expected, store,
                   facts.layout, combines=combines, block_indexes=facts.block_indexes, source=a,
                   direct=facts.direct, bulk_checks=facts.bulk_checks, facts=facts, dst_flat=dst_flat,
                   result=b, block_count=np.zeros((n, n), np.uint8))

    def _block_index(self, origin: int, final: int) -> tuple[tuple, tuple[int, ...], tuple]:
        """Block (origin, final)'s index into the origin's source array, its shape in
        destination layout and its index into the final's destination array; worked out once
        per statement (StatementFacts.block_indexes): the runs of a repeat share them."""
        hit = self.block_indexes.get((origin, final))
        if hit is None:
            section = self.commset.section_arrays(origin, final)
            stmt = self.stmt
            src_idx: list = [None] * len(stmt.src.shape)
            for d, ix in enumerate(section):
                if stmt.perm[d] >= 0:
                    src_idx[stmt.perm[d]] = self.layout.converted("src", d, ix)
            for c in stmt.collapsed:
                src_idx[c] = self.layout.collapsed_local(origin, c)
            hit = self.block_indexes[(origin, final)] = (
                _index(src_idx), tuple(len(ix) for ix in section),
                _index([self.layout.converted("dst", d, ix) for d, ix in enumerate(section)]))
        return hit

    def _src_block(self, origin: int, final: int) -> np.ndarray:
        """The block in destination layout: the origin's elements (source dim perm[d] read
        by destination dim d), combined along reduced dims, copied along spread ones."""
        src_index, shape, _ = self._block_index(origin, final)
        return to_destination_layout(self.stmt, self.src_local[origin][src_index], shape)

    def pack(self, origin: int, final: int) -> np.ndarray:
        return np.ascontiguousarray(self._src_block(origin, final))

    def _dst_index(self, origin: int, final: int):
        return self._block_index(origin, final)[2]

    def take(self, t: Transfer) -> np.ndarray:
        self.untouched = False
        return self.store.take(t, self.pack)

    def movable(self, t: Transfer) -> bool:
        """`move_direct` can move this transfer now: origin to final, never sent before."""
        return (t.src == t.origin and t.dst == t.final and t.offset == WHOLE
                and not self.store.shared and self.store.unsent(t))

    def move_direct(self, t: Transfer) -> bool:
        """Move a block from its origin straight into its destination's array, as take + put
        would, without the payload in between (the fast path moves a million of these on
        32x32). False when the transfer is not such a move; then use take and put."""
        if not self.movable(t):
            return False
        self.untouched = False
        self.store.spend(t)
        self.arrived[(t.origin, t.final)] = self.arrived.get((t.origin, t.final), 0) + 1
        block = self._src_block(t.origin, t.final)
        check_size(t, block)
        self._store(t.origin, t.final, block)
        return True

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        """`transfers` (rows of Transfer's fields) are direct moves that move_in_bulk makes as
        take / put (or move_direct) would, in any order, without an error: whole blocks from
        their origin straight to their destination, each still unsent and of its block's size,
        each once, of an assignment whose blocks carry distinct bytes and do not combine.
        While no block has been taken or moved the answer depends only on the statement and
        the transfers: it is kept per statement (StatementFacts.bulk_checks; the runs of a
        repeat ask it of the same schedule's transfers), for the same array object."""
        if not self.untouched:
            return self._can_move_in_bulk(transfers)
        hit = self.bulk_checks.get(id(transfers))
        if hit is not None and hit[0] is transfers:
            return hit[1]
        if len(self.bulk_checks) >= BULK_CHECKS_KEPT:
            self.bulk_checks.clear()
        answer = self._can_move_in_bulk(transfers)
        self.bulk_checks[id(transfers)] = (transfers, answer)
        return answer

    def _can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        if self.store.shared or self.stmt.reduces:
            return False
        src, dst, nbytes, origin, final = transfers[:, :5].T
        n = self.commset.nprocs
        if not ((src == origin) & (dst == final) & (transfers[:, 6] == WHOLE)).all() or \
                ((origin < 0) | (origin >= n) | (final < 0) | (final >= n)).any():
            return False
        if not (self.store.fresh[origin, final].all()
                and (nbytes == self.commset.byte_matrix[origin, final]).all()):
            return False
        return all_distinct(origin * n + final)

    def move_in_bulk(self, transfers: np.ndarray) -> None:
        """Move the blocks of `transfers` (can_move_in_bulk said they can) from their origins
        into their destinations' arrays: a plain statement's are marked delivered and written
        all at once when the collective closes (runtime/direct_moves.py), others block by block."""
        origin, final = transfers[:, 3], transfers[:, 4]
        self.untouched = False
        self.store.fresh[origin, final] = False
        if self.direct is not None:
            if self.delivered is None:
                self.delivered = np.zeros(self.store.fresh.shape, bool)
            self.delivered[origin, final] = True
            self.block_count[origin, final] = np.minimum(self.block_count[origin, final] + 1, 2)
            return
        for o, f in zip(origin.tolist(), final.tolist()):
            self._store(o, f, self._src_block(o, f))

    def write_delivered(self) -> None:
        """Write the blocks moved in bulk into their destinations' arrays (move_in_bulk): where
        every due block came, a small statement's in one gather into the flat buffer
        (DirectMoves.write_all), else node by node."""
        if self.delivered is None or self.direct is None or self.source is None:
            return
        due = self.commset.byte_matrix > 0
        reads = self.facts.flat_reads(self.source) if self.facts is not None else None
        if reads is not None and self.dst_flat is not None and \
                bool((self.delivered == self.facts.due_blocks).all()):
            self.direct.write_all(self.source, self.dst_flat, reads)
            self.delivered = None
            return
        for final in np.flatnonzero(self.delivered.any(axis=0)).tolist():
            came = self.delivered[:, final]
            self.direct.write(self.source, final, self.dst_local[final], came,
                              bool((came == due[:, final]).all()))
        self.delivered = None

    def _store(self, origin: int, final: int, block: np.ndarray) -> None:
        """Write block (origin, final) at its destination and count it; a reduction's partials
        combine with those there, and count per element."""
        index = self._dst_index(origin, final)
        if self.stmt.reduces:
            seen = self.writes[final][index] > 0
            block = np.where(seen, COMBINE[self.stmt.op](self.dst_local[final][index], block), block)
            self.writes[final][index] += 1
        self.dst_local[final][index] = block
        self.block_count[origin, final] = min(int(self.block_count[origin, final]) + 1, 2)

    def sums_blocks(self) -> bool:
        """A message's wire bytes are its blocks' bytes summed and its receiver combines nothing
        (not a reduce: wire_bytes and combine_operations below)."""
        return not self.combines

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int:
        """Bytes one message of these blocks puts on the wire: summed, or for a reduce the
        partials bound for one destination combined (the partials of a group cover the same
        destination elements, compiler/ir/transforms/recognize_collectives.py)."""
        if self.combines:
            return combined_bytes(group)
        return sum(t.nbytes for t in group)

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]:
        """(bytes the sender's code must gather, bytes the receiver's must scatter): the
        blocks that are not one run of their array (compiler/layout.py)."""
        return strided_bytes(group, self.layout.strides)

    def combine_operations(self, group: tuple[Transfer, ...]) -> int:
        """A reduce's receiver merges the message's elements into its partials, one operation
        per element; other assignments store their blocks."""
        if not self.combines:
            return 0
        return combine_operations(self.wire_bytes(group), len({t.final for t in group}),
                                  self.stmt.dst.itemsize)

    def put(self, t: Transfer, payload: np.ndarray) -> None:
        if t.offset != WHOLE:
            self._put_piece(t, payload)
            return
        if t.dst == t.final:
            self._store(t.origin, t.final, payload)
            self.arrived[(t.origin, t.final)] = self.arrived.get((t.origin, t.final), 0) + 1
            self.store.delivered(t, payload)
        else:
            self.store.keep(t, payload)

    def _put_piece(self, t: Transfer, payload: np.ndarray) -> None:
        """A piece of a block: forwarded on, or (the last one) completing the block."""
        origin = t.origin
        section = self.commset.section_arrays(origin, t.final)
        shape = tuple(len(ix) for ix in section)
        dtype = self.dst_local[t.final].dtype
        block = self.store.arrive_piece(t, payload, math.prod(shape) * dtype.itemsize)
        if block is not None:
            self.put(t._replace(src=t.final, offset=WHOLE), block.view(dtype).reshape(shape))

    def problems(self) -> list[str]:
        """Empty when every expected element arrived exactly once with the right value (a
        reduction's: every partial once, combined to the reference)."""
        self.write_delivered()
        if self.stmt.reduces:
            return self._reduction_problems()
        if self._all_correct():
            return []
        out = []
        m = self.commset.byte_matrix
        cover = self.covers_exactly()
        right = (self.block_count == (m > 0)).all(axis=0) & cover  # per node: each due block once
        for q, (got, ref, want) in enumerate(zip(self.dst_local, self.reference, self.expected)):
            if right[q] and np.array_equal(got, ref):
                continue  # the common case, checked without building masks
            # (where every due block came once, the exact cover says each due element came once)
            w = want if right[q] else self.element_writes(q, self.block_count[:, q])
            missing = want & (w == 0)
            if missing.any():
                senders = [p for p in range(self.commset.nprocs)
                           if m[p, q] and (w[self._dst_index(p, q)] == 0).any()]
                out.append(f"node {q}: {int(missing.sum())} elements never arrived "
                           f"(blocks from {senders})")
            if (w > 1).any() or (~want & (w > 0)).any():
                out.append(f"node {q}: {int(((w > 1) | (~want & (w > 0))).sum())} elements "
                           "arrived more than once or where none were due")
            ok = want & (w == 1)
            if not np.array_equal(got[ok], ref[ok]):
                out.append(f"node {q}: delivered values differ from the reference result")
        return out

    def _all_correct(self) -> bool:
        """The common case, checked in three array operations over every node at once (a small
        statement whose every element is due): each element written once, each equal to its
        reference. False says nothing: the node-by-node check then finds what is wrong."""
        if self.facts is None or self.result is None or not self.facts.all_due \
                or self.result.size > FLAT_CHECK_ELEMENTS:  # (no whole-buffer temporaries for big ones)
            return False
        if not ((self.block_count == self.facts.due_blocks).all() and self.covers_exactly()):
            return False
        reference = self.facts.reference_flat(self.result)
        return reference is not None and bool((self.dst_flat == reference).all())

    def covers_exactly(self) -> bool:
        """StatementFacts.exact_cover, worked out node by node the first time (with each
        node's temporary counts only)."""
        facts = self.facts
        assert facts is not None, "AssignmentData.build gives every assignment its facts"
        if facts.exact_cover is None:
            due = facts.due_blocks.astype(np.uint8)
            facts.exact_cover = all(bool((self.element_writes(q, due[:, q]) == want).all())
                                    for q, want in enumerate(self.expected))
        return facts.exact_cover

    def element_writes(self, q: int, came: np.ndarray) -> np.ndarray:
        """Node q's per-element write counts (`came[origin]`: times each block reached it; a
        reduction's are kept as they happen): the initial counts, plus each block's count on
        its elements (a plain statement's as runtime/direct_moves.py writes them, others at
        the block's index). Made for the check where something is wrong, and once per
        statement for covers_exactly."""
        if self.stmt.reduces:
            return self.writes[q]
        facts = self.facts
        assert facts is not None, "AssignmentData.build gives every assignment its facts"
        shape = self.dst_local[q].shape
        w = np.zeros(shape, np.uint8) if facts.initial is None else facts.initial[q].astype(np.uint8)
        if not came.any():
            return w
        if self.direct is not None:
            inside, origin = self.direct.elements(q, shape, every_block=bool(
                (came == facts.due_blocks[:, q]).all()))
            w += inside if origin is None else np.where(inside, came[origin], 0).astype(np.uint8)
            return w
        for p in np.flatnonzero(came).tolist():
            w[self._dst_index(p, q)] += came[p]
        return w

    def _reduction_problems(self) -> list[str]:
        out = []
        m = self.commset.byte_matrix
        for q, (w, got, ref, want) in enumerate(zip(self.writes, self.dst_local, self.reference,
                                                    self.expected)):
            got_from = {p: c for (p, final), c in self.arrived.items() if final == q}
            due = {p for p in range(self.commset.nprocs) if m[p, q] > 0}
            if set(got_from) != due or any(c != 1 for c in got_from.values()):
                out.append(f"node {q}: partial results from {sorted(got_from)} (counts "
                           f"{sorted(got_from.values())}), expected each of {sorted(due)} once")
            if (want & (w == 0)).any() or (~want & (w > 0)).any():
                out.append(f"node {q}: {int((want & (w == 0)).sum())} elements got no partial "
                           f"result, {int((~want & (w > 0)).sum())} got one where none was due")
            exact = np.issubdtype(ref.dtype, np.integer)
            if not (np.array_equal(got[want], ref[want]) if exact else
                    np.allclose(got[want], ref[want], rtol=1e-5)):
                out.append(f"node {q}: combined {self.stmt.op} differs from the reference")
        return out


def _product_mask(masks: list[np.ndarray], owned) -> np.ndarray:
    """The elements of a node's local array (`owned`: its global indices per dim) where every
    per-dimension mask holds; a read-only broadcast view, as large as one dimension's."""
    local = [m[ix] for m, ix in zip(masks, owned)]
    if all(m.all() for m in local):
        return np.broadcast_to(np.True_, tuple(len(m) for m in local))
    shaped = [m.reshape([-1 if k == d else 1 for k in range(len(local))]) for d, m in enumerate(local)]
    return np.broadcast_to(functools.reduce(np.logical_and, shaped), tuple(len(m) for m in local))


def reference_result(stmt: AssignStmt, a: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The statement applied to the global source with numpy, Fortran's semantics: the
    destination array (zero outside the section; a view of `a` for a whole-array copy or
    transpose) and, per destination dim, the mask of the indices it writes (the elements
    written are their product)."""
    return reference_array(stmt, a), reference_due(stmt)


def reference_array(stmt: AssignStmt, a: np.ndarray) -> np.ndarray:
    """reference_result's destination array alone (what every run of a statement needs; the
    masks are the statement's, StatementFacts.expected)."""
    section = a[np.ix_(*(t.indices() for t in stmt.src_triplets))] if stmt.src_section else a
    collapsed = stmt.collapsed
    if stmt.reduces:
        value = REDUCE_FUNCTIONS[stmt.op](section, axis=collapsed).astype(a.dtype)
    else:
        value = section.reshape([n for d, n in enumerate(section.shape) if d not in collapsed])
    kept = [d for d in range(a.ndim) if d not in collapsed]
    value = np.transpose(value, [kept.index(p) for p in stmt.perm if p >= 0])
    axis = 0
    for p, k in zip(stmt.perm, stmt.shift):
        if p < 0:
            continue
        if stmt.op == "cshift":
            value = np.roll(value, -k, axis=axis)
        elif stmt.op == "eoshift" and k:  # end-off: position j gets j + k, or 0 past the ends
            shifted = np.zeros_like(value)
            n = value.shape[axis]
            if abs(k) < n:  # else every position is past the end: all boundary
                dst = [slice(None)] * value.ndim
                src = [slice(None)] * value.ndim
                dst[axis], src[axis] = slice(max(0, -k), n - max(0, k)), slice(max(0, k), n + min(0, k))
                shifted[tuple(dst)] = value[tuple(src)]
            value = shifted
        axis += 1
    triplets = stmt.dst_triplets
    for d, p in enumerate(stmt.perm):
        if p < 0:  # spread's new dim (or a scalar subscript of the destination): copies
            value = np.repeat(np.expand_dims(value, d), triplets[d].count, axis=d)
    if not stmt.dst_section:
        return value
    b = np.zeros(stmt.dst.shape, dtype=a.dtype)
    b[np.ix_(*(t.indices() for t in triplets))] = value
    return b


def reference_due(stmt: AssignStmt) -> list[np.ndarray]:
    """Per destination dim, the mask of the indices the statement writes (its section, and
    a pipeline stage's window along the cut dimension)."""
    due = []
    for extent, t in zip(stmt.dst.shape, stmt.dst_triplets):
        due.append(np.zeros(extent, dtype=bool))
        due[-1][t.indices()] = True
    if stmt.window is not None:  # one pipeline stage: its indices along the cut dimension
        stage = np.zeros(stmt.dst.shape[stmt.window.dim], dtype=bool)
        stage[stmt.window.indices()] = True
        due[stmt.window.dim] &= stage
    return due


def to_destination_layout(stmt: AssignStmt, block: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A block read from the source (source dim order, collapsed dims included) in the
    destination's layout of `shape`: combined or dropped along collapsed dims, transposed,
    copied along spread dims."""
    collapsed = stmt.collapsed
    if collapsed:
        block = (REDUCE_FUNCTIONS[stmt.op](block, axis=collapsed).astype(block.dtype)
                 if stmt.reduces else block.reshape([n for d, n in enumerate(block.shape)
                                                     if d not in collapsed]))
    kept = [d for d in range(len(stmt.src.shape)) if d not in collapsed]
    order = [kept.index(p) for p in stmt.perm if p >= 0]
    if order != sorted(order):
        block = np.transpose(block, order)
    for d, p in enumerate(stmt.perm):
        if p < 0:
            block = np.expand_dims(block, d)
    return np.broadcast_to(block, shape) if block.shape != shape else block


@dataclass
class ReductionData:
    """Partial results of a reduction: one per contributor, combined at each receiver."""

    stmt: ReduceStmt
    partials: dict[int, np.ndarray]
    received: list[dict[int, int]]
    values: list[dict[int, np.ndarray]]
    reference: np.ndarray
    rset: ReduceSet
    store: BlockStore = field(repr=False)

    @classmethod
    def build(cls, stmt: ReduceStmt, rng: np.random.Generator) -> ReductionData:
        rset = ReduceSet(stmt)
        a = random_global(stmt.src, rng, near_one=stmt.op == "prod")
        combine = REDUCE_FUNCTIONS[stmt.op]
        partials = {}
        for p in range(rset.nprocs):
            mine = a[np.ix_(*owned_indices(stmt.src, p))]
            if mine.size:
                partials[p] = np.asarray(combine(mine), dtype=a.dtype).reshape(1)
        m = rset.byte_matrix
        blocks = [(p, q) for p in range(rset.nprocs) for q in range(rset.nprocs) if m[p, q] > 0]
        n = rset.nprocs
        return cls(stmt, partials, [{} for _ in range(n)], [{} for _ in range(n)],
                   np.asarray(combine(a), dtype=a.dtype), rset,
                   BlockStore(n, blocks, lambda o, f: (o, "partial")))

    def take(self, t: Transfer) -> np.ndarray:
        if t.offset != WHOLE:
            raise ScheduleError(f"transfer {t.src}->{t.dst} sends a piece of a partial result "
                                f"({t.block_name}); a partial is one element and moves whole")
        return self.store.take(t, lambda origin, final: self.partials[origin].copy())

    def movable(self, t: Transfer) -> bool:
        """Partials always travel as payloads (they are combined where they meet)."""
        return False

    def move_direct(self, t: Transfer) -> bool:
        return False

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        """Partials travel as payloads, one by one."""
        return False

    def move_in_bulk(self, transfers: np.ndarray) -> None:
        raise AssertionError("reduction partials do not move in bulk (can_move_in_bulk)")

    def sums_blocks(self) -> bool:
        """Partials combine on the way and at the receiver (wire_bytes, combine_operations)."""
        return False

    def combine_operations(self, group: tuple[Transfer, ...]) -> int:
        """The receiver merges what a message carries into its own partial: one operation per
        element, and a message carries one combined element per destination (wire_bytes)."""
        return self.wire_bytes(group) // self.stmt.dst.itemsize

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]:
        """A partial is one element: nothing to gather or scatter."""
        return 0, 0

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int:
        """Partials travelling together to one destination are combined on the way (the
        sender applies the reduction first): one element per destination."""
        return self.stmt.dst.itemsize * len({t.final for t in group})

    def put(self, t: Transfer, payload: np.ndarray) -> None:
        if t.dst == t.final:
            self.received[t.final][t.origin] = self.received[t.final].get(t.origin, 0) + 1
            self.values[t.final][t.origin] = payload
            self.store.delivered(t, payload)
        else:
            self.store.keep(t, payload)

    def problems(self) -> list[str]:
        out = []
        m = self.rset.byte_matrix
        combine = REDUCE_FUNCTIONS[self.stmt.op]
        for q in self.rset.receivers():
            due = {p for p in range(self.rset.nprocs) if m[p, q] > 0}
            got = self.received[q]
            if set(got) != due or any(c != 1 for c in got.values()):
                out.append(f"node {q}: partial results from {sorted(got)} (counts "
                           f"{sorted(got.values())}), expected each of {sorted(due)} once")
                continue
            # Cast like the reference: integer partials wrap in the element type (sum of bytes).
            result = np.asarray(combine(np.concatenate([self.values[q][p] for p in sorted(got)])),
                                dtype=self.reference.dtype)
            exact = np.issubdtype(self.reference.dtype, np.integer)
            if not (result == self.reference if exact else np.allclose(result, self.reference,
                                                                        rtol=1e-5)):
                out.append(f"node {q}: combined {self.stmt.op} {result} differs from the "
                           f"reference {self.reference}")
        return out


def build_data(stmt: AssignStmt | ReduceStmt, rng: np.random.Generator,
               sources: dict | None = None, kind: str = "sparse", shared: dict | None = None):
    """The payloads of one statement, recognized as a collective of `kind`; `shared` keeps
    an assignment's StatementFacts for its next run."""
    if isinstance(stmt, ReduceStmt):
        return ReductionData.build(stmt, rng)
    return AssignmentData.build(stmt, rng, sources, combines=kind in REDUCTION_KINDS, shared=shared)


NEVER_STARTED = "never started: the run stopped before any node reached this collective"


@runtime_checkable
class CollectiveData(Protocol):
    """What the interpreter (runtime/interpreter.py) asks of one collective's data while it
    runs the schedule: AssignmentData and ReductionData here, runtime/synthetic.py's
    SyntheticData and runtime/timing.py's payload-free TimingData. A send of a group of
    transfers asks `wire_bytes`, `strided_bytes` and `combine_operations` to time it (the
    native core asks `sums_blocks` first: then it sums the blocks' bytes itself), then
    moves the payloads (`movable`/`take`/`put`, or `move_direct` when no network looks at the
    bytes; the native core's replay moves a batch of transfers at once where `can_move_in_bulk`
    says that `move_in_bulk` does what those calls would, runtime/native_replay.py);
    `problems` is the data check when the collective is closed."""

    def movable(self, t: Transfer) -> bool: ...

    def move_direct(self, t: Transfer) -> bool: ...

    def take(self, t: Transfer) -> object: ...

    def put(self, t: Transfer, payload: object) -> None: ...

    def sums_blocks(self) -> bool: ...

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool: ...

    def move_in_bulk(self, transfers: np.ndarray) -> None: ...

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int: ...

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]: ...

    def combine_operations(self, group: tuple[Transfer, ...]) -> int: ...

    def problems(self) -> list[str]: ...


class Payloads:
    """The payloads of a run's collectives, each built when the first node enters its
    collective and checked and freed when the last node leaves it. A run then holds the
    collectives in flight, not every run of a repeat (500 runs of a 512 KB transpose held
    1.2 GB of arrays before; issue 20); every run is still checked element by element.

    `build(i)` makes collective i's data (AssignmentData, ReductionData, SyntheticData).
    After the run `checked()` gives each collective's problems: those still open (a stopped
    run) are checked as they stand, and those never entered say so."""

    def __init__(self, build: Callable[[int], CollectiveData], collectives):
        self.build = build
        self.expected = list(collectives)  # every collective index of the plan
        self.open_data: dict[int, CollectiveData] = {}
        self.problems: dict[int, list[str]] = {}
        self.build_s = 0.0  # wall clock spent drawing payloads
        self.peak_open = 0  # most collectives open at once

    def open(self, i: int) -> None:
        if i not in self.open_data and i not in self.problems:
            started = time.perf_counter()
            self.open_data[i] = self.build(i)
            self.peak_open = max(self.peak_open, len(self.open_data))
            self.build_s += time.perf_counter() - started

    def __getitem__(self, i: int) -> CollectiveData:
        return self.open_data[i]

    def close(self, i: int) -> None:
        self.problems[i] = self.open_data.pop(i).problems()

    def discard(self, i: int) -> None:
        """Forget collective i's data, opened but never started (a run opened ahead of a
        stopped one, runtime/native_run.py): checked() then says it never started."""
        del self.open_data[i]

    def checked(self) -> dict[int, list[str]]:
        for i in list(self.open_data):
            self.close(i)
        return {i: self.problems.get(i, [NEVER_STARTED]) for i in self.expected}
