"""What an assignment's payloads need that does not depend on the values, once per statement."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_shapes, owned_sections
from phalanx.compiler.layout import BlockLayout
from phalanx.compiler.semantics import AssignStmt, DistArray, Op
from phalanx.grammar.ast import Mapping
from phalanx.runtime.block_indexes import BlockIndexes
from phalanx.runtime.data_values import reference_array, reference_due
from phalanx.runtime.direct_moves import DirectMoves

BULK_CHECKS_KEPT = 64  # StatementFacts.bulk_checks holds at most this many answers
FLAT_CHECK_ELEMENTS = 1 << 16  # statements up to this many elements are checked all nodes at once


def _count_type(src: DistArray, nprocs: int) -> type:
    """The smallest exact type for per-element write counts. Each block reaches its
    destination at most once (the store and the interpreter see to that), so an element is
    written at most once per owner of its source element. Every element has an owner, so
    no element has more than (sum of the owners' local sizes - array size + 1) owners: one
    byte is enough unless sources are replicated over 255 nodes or more (a byte per
    element, not two, spares 16x16 at 16 KB a gigabyte of freshly touched pages)."""
    if nprocs < 255:
        return np.uint8
    held = int(local_shapes(src, nprocs).prod(axis=1).sum())  # (every node's local_shape at once)
    return np.uint8 if held - math.prod(src.shape) + 1 < 255 else np.uint16


def as_index(indices) -> tuple:
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
    content: Callable | None
    layout: BlockLayout
    direct: DirectMoves | None  # the element geometry that writes delivered blocks at once, if plain
    block_indexes: BlockIndexes  # AssignmentData._block_index, filled as used
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
    # per node, per dim: which of its (owned) indices are due; `expected` is their product
    due_dims: list[list[np.ndarray]] = field(default_factory=list)
    # per dim: which global indices of the destination are due (reference_due)
    due_masks: list[np.ndarray] = field(default_factory=list)

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
    def of(stmt: AssignStmt, commset: CommSet | None = None) -> StatementFacts:
        """The statement's facts; `commset`: its communication set where the compile built it
        (compiler/driver.py Compiled.commsets: a 4096-node all-to-all's is built once), else
        built here."""
        commset = commset if commset is not None else CommSet(stmt)
        n = commset.nprocs
        due = reference_due(stmt)
        owned = [owned_sections(stmt.dst, q) for q in range(n)]
        dst_owned = [as_index(ix) for ix in owned]
        due_dims = [_due_along(due, sections) for sections in owned]
        shapes = [tuple(len(m) for m in dims) for dims in due_dims]
        masks: dict[tuple[int, ...], np.ndarray] = {}  # (the nodes whose every element is due share one)
        expected = [_product_mask(dims, masks) for dims in due_dims]
        count = np.uint16 if stmt.reduces and n >= 255 else _count_type(stmt.src, n)
        sizes = [math.prod(shape) for shape in shapes]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        slots = list(zip(offsets[:-1].tolist(), offsets[1:].tolist(), shapes))
        initial_flat = initial = None
        if stmt.op is Op.EOSHIFT:  # (others start with no element written: nothing kept)
            # The boundary positions: due, but no source element reaches them; the owner writes
            # the boundary value 0 itself (its array starts zeroed), without communication.
            sent = []
            for extent, (idx, _) in zip(stmt.dst.shape, commset.index_maps):
                sent.append(np.zeros(extent, dtype=bool))
                sent[-1][idx] = True
            initial_flat = np.zeros(int(offsets[-1]), count)
            initial = [initial_flat[a:b].reshape(shape) for a, b, shape in slots]  # (one copy, not two)
            for w, want, ix in zip(initial, expected, owned):
                w[want & ~_product_mask(_due_along(sent, ix), {})] = 1
        m = commset.byte_matrix
        # Blocks with the same source elements carry the same bytes (a replicated destination;
        # a spread's copies of one section), so a node may forward the copy it received.
        content = None
        if stmt.dst.mapping is Mapping.REPLICATED:
            content = _whole_source
        elif stmt.op is Op.SPREAD or (stmt.reduces and any(
                p < 0 and t.count > 1 for p, t in zip(stmt.perm, stmt.dst_triplets))):
            # (a reduction spread along a dim: each partial's copies for the group's members)
            content = commset.content
        due_blocks = m > 0
        return StatementFacts(commset, [as_index(owned_sections(stmt.src, p)) for p in range(n)],
                              dst_owned, expected, initial, content,
                              BlockLayout(stmt, commset),
                              DirectMoves.of(stmt, commset, owned) if content is None else None,
                              BlockIndexes(n), dst_offsets=offsets, initial_flat=initial_flat,
                              count_type=count,
                              due_blocks=due_blocks, all_due=all(_all_due(dims) for dims in due_dims),
                              node_shapes=shapes, receivers=due_blocks.any(axis=0), slots=slots,
                              due_dims=due_dims, due_masks=due)

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        """Each node's array (the shape of its destination array) as a view of `flat`."""
        return [flat[a:b].reshape(shape) for a, b, shape in self.slots]


def _all_due(dims: list[np.ndarray]) -> bool:
    """Every element of a node's array is due (`dims`: per dim, which of its indices are)."""
    return all(bool(m.all()) for m in dims) or any(m.size == 0 for m in dims)


def _due_along(masks: list[np.ndarray], owned) -> list[np.ndarray]:
    """Per dim, which of a node's indices (`owned`: its global indices per dim) a per-dim mask
    of global indices holds at."""
    return [m[ix] for m, ix in zip(masks, owned)]


def _product_mask(local: list[np.ndarray], every: dict[tuple[int, ...], np.ndarray]) -> np.ndarray:
    """The elements of a node's local array where every per-dimension mask (`local`, by local
    index) holds; a read-only broadcast view, as large as one dimension's. Where every element
    is, the view is `every`'s of its shape, made once."""
    shape = tuple(len(m) for m in local)
    if all(m.all() for m in local):
        if shape not in every:
            every[shape] = np.broadcast_to(np.True_, shape)
        return every[shape]
    shaped = [m.reshape([-1 if k == d else 1 for k in range(len(local))]) for d, m in enumerate(local)]
    return np.broadcast_to(functools.reduce(np.logical_and, shaped), shape)
