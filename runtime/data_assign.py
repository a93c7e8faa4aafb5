"""An assignment's payloads: local arrays, blocks moved one by one or in bulk."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.layout import BlockLayout, strided_bytes
from phalanx.compiler.library.cost import combine_operations, combined_bytes
from phalanx.compiler.schedule import WHOLE, Transfer
from phalanx.compiler.semantics import AssignStmt, Op
from phalanx.runtime.block_indexes import BlockIndexes
from phalanx.runtime.data_check import assignment_problems, covers_exactly
from phalanx.runtime.data_facts import BULK_CHECKS_KEPT, StatementFacts, as_index
from phalanx.runtime.data_pieces import PieceArrivals, PieceTiling
from phalanx.runtime.data_store import BlockStore, check_size
from phalanx.runtime.data_values import (
    COMBINE,
    byte_payload,
    random_global,
    reads_source_in_place,
    to_destination_layout,
)
from phalanx.runtime.direct_moves import DirectMoves
from phalanx.runtime.plan_columns import DST, FINAL, NBYTES, OFFSET, ORIGIN, SRC, ScheduleColumns

BULK_CHECK_ROWS = 1 << 13  # transfer rows checked and moved in bulk at a time (448 KB of table)


def _flat(matrix: np.ndarray) -> np.ndarray:
    """A C-contiguous matrix as a flat view (indexed by block id origin * n + final)."""
    assert matrix.flags.c_contiguous, "a block matrix the data layer made, C-contiguous"
    return matrix.reshape(-1)


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
    # a reduction's partials: (origin, final) -> times they came (data_check.reduction_problems;
    # block_count says it for the others: a dict entry per block held 1M at 32x32)
    arrived: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    # A reduction along dims recognized as a reduce or allreduce: partials bound for one
    # destination travel combined (as TimingData and the cost models count them).
    combines: bool = False
    block_indexes: BlockIndexes | None = field(default=None, repr=False)  # shared by a statement's runs
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
    # the pieces moved in bulk so far, per block of the tiling they make (None: none accepted)
    arrivals: PieceArrivals | None = field(default=None, repr=False)
    # writes the source's payload words, where build deferred them (`drawn`); None: written
    draw: Callable[[], None] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, stmt: AssignStmt, rng: np.random.Generator,
              sources: dict | None = None, combines: bool = False,
              shared: dict | None = None, commset: CommSet | None = None) -> AssignmentData:
        """`sources` shares one global source array among a pipeline's stages (they move
        windows of the same statement), instead of drawing it again per stage. `combines`:
        the statement is a reduce or allreduce (of partial blocks). `shared` keeps what does
        not depend on the values (StatementFacts), by statement, for the next run of it (a
        repeat's iterations): only the arrays are drawn, moved and checked again. `commset`:
        the statement's communication set where the compile built it (StatementFacts.of)."""
        facts = shared.get(id(stmt)) if shared is not None else None
        if facts is None:
            facts = StatementFacts.of(stmt, commset)
            if shared is not None:
                shared[id(stmt)] = facts
        key = (stmt.src.name, stmt.loc.line) if stmt.window is not None else None
        draw = None  # the source's payload, written before the first value is read (`drawn`)
        if sources is not None and key in sources:
            a = sources[key]
        elif key is None and stmt.src.elem_type == "byte" and reads_source_in_place(stmt):
            a, draw = byte_payload(stmt.src, rng)  # (the reference is a view: no value read)
        else:
            a = random_global(stmt.src, rng, near_one=stmt.op is Op.PROD)
            if sources is not None and key is not None:
                sources[key] = a
        b = facts.reference(stmt, a)
        assert draw is None or b.size == 0 or np.may_share_memory(a, b), \
            "reads_source_in_place: the reference is a view of the source"
        # Views where the owned indices are runs: the global arrays are only read.
        src_local = [a[ix] for ix in facts.src_owned]
        ref = [b[ix] for ix in facts.dst_owned]
        dst_flat = np.zeros(int(facts.dst_offsets[-1]), dtype=b.dtype)
        writes_flat = None
        if stmt.reduces:  # (no boundary: initial_flat is an eoshift's)
            writes_flat = np.zeros(int(facts.dst_offsets[-1]), dtype=facts.count_type)
        n = facts.commset.nprocs
        store = BlockStore(n, None, facts.content, facts.due_blocks, source=a)
        return cls(stmt, facts.commset, src_local, facts.views(dst_flat),
                   facts.views(writes_flat) if writes_flat is not None else [], ref,
                   facts.expected, store,
                   facts.layout, combines=combines, block_indexes=facts.block_indexes, source=a,
                   direct=facts.direct, bulk_checks=facts.bulk_checks, facts=facts, dst_flat=dst_flat,
                   result=b, block_count=np.zeros((n, n), np.uint8), draw=draw)

    def drawn(self) -> None:
        """Write the source's payload if it is not yet (build defers it where the reference
        is the source read in place): called before any of its values is read, by a block's
        move (`_src_block`), the writes of the blocks moved in bulk and the data check
        (runtime/data_check.py), unless the check can tell without a value that every block
        landed where the reference reads it (data_check.correct_where_they_land)."""
        if self.draw is not None:
            draw, self.draw = self.draw, None
            draw()

    def _block_index(self, origin: int, final: int) -> tuple[tuple, tuple[int, ...], tuple]:
        """Block (origin, final)'s index into the origin's source array, its shape in
        destination layout and its index into the final's destination array; worked out once
        per statement (StatementFacts.block_indexes): the runs of a repeat share them."""
        assert self.block_indexes is not None, "AssignmentData.build gives it the statement's"
        hit = self.block_indexes.get(origin, final)
        if hit is None:
            section = self.commset.section_arrays(origin, final)
            stmt = self.stmt
            src_idx: list = [None] * len(stmt.src.shape)
            for d, ix in enumerate(section):
                if stmt.perm[d] >= 0:
                    src_idx[stmt.perm[d]] = self.layout.converted("src", d, ix)
            for c in stmt.collapsed:
                src_idx[c] = self.layout.collapsed_local(origin, c)
            hit = (as_index(src_idx), tuple(len(ix) for ix in section),
                   as_index([self.layout.converted("dst", d, ix) for d, ix in enumerate(section)]))
            self.block_indexes.put(origin, final, hit)
        return hit

    def _src_block(self, origin: int, final: int) -> np.ndarray:
        """The block in destination layout: the origin's elements (source dim perm[d] read
        by destination dim d), combined along reduced dims, copied along spread ones."""
        self.drawn()
        src_index, shape, _ = self._block_index(origin, final)
        return to_destination_layout(self.stmt, self.src_local[origin][src_index], shape)

    def pack(self, origin: int, final: int) -> np.ndarray:
        return np.ascontiguousarray(self._src_block(origin, final))

    def dst_index(self, origin: int, final: int):
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
        block = self._src_block(t.origin, t.final)
        check_size(t, block)
        self._store(t.origin, t.final, block)
        return True

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        """`transfers` (rows of Transfer's fields) are direct moves that move_in_bulk makes as
        take / put (or move_direct) would, in any order, without an error, of an assignment
        whose blocks carry distinct bytes and do not combine: whole blocks from their origin
        straight to their destination, each still unsent and of its block's size, each once;
        pieces of blocks from their origin straight to their destination, each once and not come
        before, that tile their blocks exactly once with the pieces accepted before
        (runtime/data_pieces.py).
        While no block has been taken or moved the answer depends only on the statement and
        the transfers: it is kept per statement (StatementFacts.bulk_checks; the runs of a
        repeat ask it of the same schedule's transfers), for the same array object."""
        if not self.untouched:
            answer, tiling = self._can_move_in_bulk(transfers)
        else:
            hit = self.bulk_checks.get(id(transfers))
            if hit is not None and hit[0] is transfers:
                answer, tiling = hit[1], hit[2]
            else:
                if len(self.bulk_checks) >= BULK_CHECKS_KEPT:
                    self.bulk_checks.clear()
                answer, tiling = self._can_move_in_bulk(transfers)
                self.bulk_checks[id(transfers)] = (transfers, answer, tiling)
        if answer and tiling is not None and self.arrivals is None:
            self.arrivals = PieceArrivals(tiling)  # (no piece moved yet: see _can_move_in_bulk)
        return answer

    def _can_move_in_bulk(self, transfers: np.ndarray) -> tuple[bool, PieceTiling | None]:
        """can_move_in_bulk's answer and, where the transfers' pieces make a new tiling (no
        piece moved in bulk before), that tiling."""
        if self.store.shared or self.stmt.reduces:
            return False, None
        n = self.commset.nprocs
        seen = self._whole_blocks_once(transfers)
        if seen is None:
            return False, None
        pieces = transfers[:, OFFSET] != WHOLE
        if not pieces.any():
            return True, None
        rows = transfers[pieces]
        if self.arrivals is not None:  # pieces of the tiling accepted before, each once
            at = self.arrivals.tiling.find(rows)
            ok = at is not None and self.arrivals.fresh(at) and \
                not seen[self.arrivals.tiling.blocks].any()
            return ok, None
        tiling = PieceTiling.of(rows, self.commset.byte_matrix)
        if tiling is None or not self.store.fresh[tiling.blocks // n, tiling.blocks % n].all() \
                or seen[tiling.blocks].any():
            return False, None
        return True, tiling

    def _whole_blocks_once(self, transfers: np.ndarray) -> np.ndarray | None:
        """Where every transfer goes from its origin straight to its final node (blocks of
        this statement's nodes) and its whole blocks are unsent, of their block's size and
        each once: which block ids (origin * n + final) the whole blocks are, a flag per id;
        else None. The table is read BULK_CHECK_ROWS rows at a time, so that its columns are
        read from the cache (16.8M rows of 56 bytes at 4096 nodes: each column read over the
        whole table read all of it again), and the blocks by flat id."""
        n = self.commset.nprocs
        fresh, sizes = _flat(self.store.fresh), self.commset.byte_matrix.reshape(-1)
        seen, count = np.zeros(n * n, bool), 0
        for start in range(0, len(transfers), BULK_CHECK_ROWS):
            chunk = transfers[start:start + BULK_CHECK_ROWS]
            origin, final = chunk[:, ORIGIN], chunk[:, FINAL]
            if not ((chunk[:, SRC] == origin).all() and (chunk[:, DST] == final).all()
                    and 0 <= origin.min() and origin.max() < n and 0 <= final.min() and final.max() < n):
                return None
            pieces = chunk[:, OFFSET] != WHOLE
            whole = chunk[~pieces] if pieces.any() else chunk
            ids = whole[:, ORIGIN] * n + whole[:, FINAL]
            if not (fresh[ids].all() and (whole[:, NBYTES] == sizes[ids]).all()):
                return None
            seen[ids] = True
            count += len(ids)
        return seen if int(np.count_nonzero(seen)) == count else None  # (else a block twice)

    def move_in_bulk(self, transfers: np.ndarray) -> None:
        """Move the blocks of `transfers` (can_move_in_bulk said they can) from their origins
        into their destinations' arrays: whole blocks, and the blocks whose last piece came
        (PieceArrivals). A plain statement's are marked delivered and written all at once
        when the collective closes (runtime/direct_moves.py), others block by block."""
        self.untouched = False
        n = self.commset.nprocs
        if self.arrivals is None:  # (no piece was accepted: whole blocks, read as _whole_blocks_once)
            for start in range(0, len(transfers), BULK_CHECK_ROWS):
                chunk = transfers[start:start + BULK_CHECK_ROWS]
                self._moved(chunk[:, ORIGIN] * n + chunk[:, FINAL])
            return
        pieces = transfers[:, OFFSET] != WHOLE
        rows = transfers[pieces]
        self.store.fresh[rows[:, ORIGIN], rows[:, FINAL]] = False  # cut from the source
        at = self.arrivals.tiling.find(rows)
        assert at is not None, "can_move_in_bulk found every piece in the tiling"
        whole_o, whole_f = self.arrivals.arrive(at)
        whole = transfers[~pieces]
        self._moved(np.concatenate((whole[:, ORIGIN] * n + whole[:, FINAL], whole_o * n + whole_f)))

    def _moved(self, ids: np.ndarray) -> None:
        """Whole blocks `ids` (origin * n + final, each once) came to their destinations: a plain
        statement's are marked delivered and counted, others written block by block."""
        _flat(self.store.fresh)[ids] = False
        if self.direct is not None:
            if self.delivered is None:
                self.delivered = np.zeros(self.store.fresh.shape, bool)
            _flat(self.delivered)[ids] = True
            counts = _flat(self.block_count)
            counts[ids] = np.minimum(counts[ids] + 1, 2)
            return
        for o, f in zip(*np.divmod(ids, self.commset.nprocs)):
            self._store(int(o), int(f), self._src_block(int(o), int(f)))

    def write_delivered(self) -> None:
        """Write the blocks moved in bulk into their destinations' arrays (move_in_bulk): where
        every due block came, a small statement's in one gather into the flat buffer
        (DirectMoves.write_all), else node by node."""
        if self.delivered is None or self.direct is None or self.source is None:
            return
        self.drawn()
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
        index = self.dst_index(origin, final)
        if self.stmt.reduces:
            seen = self.writes[final][index] > 0
            block = np.where(seen, COMBINE[self.stmt.op](self.dst_local[final][index], block), block)
            self.writes[final][index] += 1
        self.dst_local[final][index] = block
        self._count(origin, final)

    def _count(self, origin: int, final: int) -> None:
        """Block (origin, final) reached its destination once more."""
        self.block_count[origin, final] = min(int(self.block_count[origin, final]) + 1, 2)
        if self.stmt.reduces:
            self.arrived[(origin, final)] = self.arrived.get((origin, final), 0) + 1

    def message_bytes(self, cols: ScheduleColumns) -> tuple[np.ndarray, np.ndarray]:
        """wire_bytes and combine_operations below of every message of the columns at once."""
        if not self.combines:
            return cols.summed_bytes(), cols.no_operations()
        nbytes, finals = cols.combined_bytes()
        return nbytes, combine_operations(nbytes, finals, self.stmt.dst.itemsize)

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

    def strided_bits(self) -> np.ndarray | None:
        """strided_bytes' GATHERED | SCATTERED bits of every block (origin, final) as a P x P
        array, for a whole schedule at once (runtime/native_run.py); None: no block is strided."""
        matrix = self.layout.matrix()
        return np.array(matrix, np.uint8) if matrix else None

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
            self.store.delivered(t, payload)
        else:
            self.store.keep(t, payload)

    def _put_piece(self, t: Transfer, payload: np.ndarray) -> None:
        """A piece of a block: forwarded on, or (the last one) completing the block."""
        origin = t.origin
        # (a block's pieces all move in bulk or all one by one: a run's pieces go in bulk only
        # where every piece of the schedule can, and then each transfer comes once)
        assert self.arrivals is None or not self.arrivals.started(origin, t.final), \
            f"{t.block_name} moved one by one after pieces of its block moved in bulk"
        _, shape, dst_index = self._block_index(origin, t.final)
        dtype = self.dst_local[t.final].dtype
        into = self._in_place(t.final, shape, dst_index) if t.dst == t.final else None
        block = self.store.arrive_piece(t, payload, math.prod(shape) * dtype.itemsize, into)
        if block is None:
            return
        if into is None:
            self.put(t._replace(src=t.final, offset=WHOLE), block.view(dtype).reshape(shape))
        else:  # (written where it lands, piece by piece)
            self._count(origin, t.final)

    def _in_place(self, final: int, shape: tuple[int, ...], dst_index: tuple) -> np.ndarray | None:
        """The bytes of block (origin, final) in its destination's array, where its pieces can be
        written as they come rather than assembled in a buffer and copied there (the buffers of a
        multiphase exchange in pieces were a second copy of the whole destination array): a
        plain statement's (no combining, no classes of equal blocks), whose blocks write each
        due element exactly once (so a block never whole writes no element another block
        writes: the check counts its elements as never arrived, as before), where the block
        is a contiguous run of the array (at `dst_index`, of `shape`). None: a buffer of its own."""
        if self.stmt.reduces or self.store.shared or not covers_exactly(self):
            return None
        array = self.dst_local[final]
        view = array[dst_index]
        if view.shape != shape or not view.flags.c_contiguous or not np.may_share_memory(view, array):
            return None  # (an open mesh's gather is a copy)
        return view.reshape(-1).view(np.uint8)

    def problems(self) -> list[str]:
        """Empty when every expected element arrived exactly once with the right value
        (runtime/data_check.py)."""
        return assignment_problems(self)
