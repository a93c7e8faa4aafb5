"""A schedule's transfers as columns of numpy arrays, for the native event core (issue 30, item 1).

runtime/native_run.py builds the core's arrays from these columns without a Python call per
message: the sends in the order the interpreter walks them (by phase, by sender, then the
sender's network messages in order of their first transfer, runtime/schedule_index.py
`messages`), the message each transfer travels in, a dense id per transfer key
(schedule_index.transfer_key: origin, final, src, dst, offset) shared by sends and receives,
and the blocks each node waits for per phase (its inbox).

Built once per schedule (ScheduleIndex.columns) and shared by the runs of a repeat. The
Transfer tuples themselves are looked up only where Python needs them: the data replay of
anything but a direct move, deadlock reports, span labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain

import numpy as np

from phalanx.compiler.columns import known_columns
from phalanx.compiler.schedule import WHOLE, Schedule, Transfer
from phalanx.runtime.freed_memory import give_back

NFIELDS = len(Transfer._fields)  # src, dst, nbytes, origin, final, message, offset
SRC, DST, NBYTES, ORIGIN, FINAL, MESSAGE, OFFSET = range(NFIELDS)
KEY_FIELDS = [ORIGIN, FINAL, SRC, DST, OFFSET]  # schedule_index.transfer_key's fields
# Rows worked on at a time where a whole column's temporary would be large (ScheduleColumns.of
# at 4096 nodes: 16.8M transfers, 134 MB an int64 column)
CHUNK = 1 << 20


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (np.unique by sorting: NumPy 2's hash-based unique took
    seconds on a million keys); one value throughout (a schedule's message ids, mostly) needs no
    sort."""
    if len(values) and values.min() == values.max():
        return values[:1].copy()
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def all_distinct(values: np.ndarray) -> bool:
    """No value occurs twice."""
    ordered = np.sort(values)
    return bool((ordered[1:] != ordered[:-1]).all())


def _table(transfers: list[Transfer]) -> np.ndarray:
    """Transfers as an (n, 7) int64 table, one row each, fields in Transfer's order."""
    flat = np.fromiter(chain.from_iterable(transfers), dtype=np.int64, count=NFIELDS * len(transfers))
    return flat.reshape(len(transfers), NFIELDS)


def _dense_ids(columns: list[np.ndarray], index: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """An id per row of the table whose columns these are (ints, one array each), equal for
    equal rows, ids in the rows' lexicographic order; and a row of each id (the index of one
    row that has it); both of type `index`. Where the columns' spans multiply to less than
    2**62, each row is one int (mixed radix, so in the same order), built column by column,
    and one sort of those ints does it; else a lexsort of the columns."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, index), np.zeros(0, index)
    low = [int(c.min()) for c in columns]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(columns, low)]
    new = np.empty(n, bool)
    new[0] = True
    if np.prod(np.array(spans, dtype=object)) < 1 << 62:
        packed = np.subtract(columns[0], low[0], dtype=np.int64)  # (a column may be int32)
        for column, lo, span in zip(columns[1:], low[1:], spans[1:]):
            packed *= span
            packed += column
            packed -= lo
        order = np.argsort(packed)
        for lo in range(0, n - 1, CHUNK):  # the sorted keys a chunk at a time, not a sorted copy
            ordered = packed[order[lo:lo + CHUNK + 1]]
            np.not_equal(ordered[1:], ordered[:-1], out=new[lo + 1:lo + len(ordered)])
        del packed
    else:
        order = np.lexsort(columns[::-1])
        new[1:] = False
        for column in columns:
            ordered = column[order]
            new[1:] |= ordered[1:] != ordered[:-1]
        del ordered
    ids = np.empty(n, index)
    if new.all():  # every row its own key
        ids[order] = np.arange(n, dtype=index)
        return ids, order.astype(index)
    ids[order] = np.cumsum(new, dtype=index) - 1
    return ids, order[new].astype(index)


def _joined(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two int64 columns one after the other, int32 where every value fits (the sends' and the
    receives' key fields: 75 MB less at torus:16x16's bidirectional-rings reduce, 3.8M rows)."""
    fits = len(a) and len(b) and min(int(a.min()), int(b.min())) >= np.iinfo(np.int32).min and \
        max(int(a.max()), int(b.max())) <= np.iinfo(np.int32).max
    return np.concatenate((a, b), dtype=np.int32 if fits else np.int64, casting="unsafe")


def _message_order(table: np.ndarray, phase: np.ndarray) -> np.ndarray | None:
    """The rows in walk order: by phase and sender (stable), then each sender's messages in
    order of their first transfer, a message's transfers in order; None where the rows are in
    that order already (a generator's order: no index array of them made). A transfer with
    message id 0 travels alone; others travel with those of the same phase, sender, receiver
    and id."""
    src = table[:, SRC]
    if len(src) < 2:
        return None
    same_phase = phase[1:] == phase[:-1]
    if ((phase[1:] > phase[:-1]) | same_phase & (src[1:] > src[:-1])).all():
        return None  # by phase and sender, one transfer a sender per phase (a phased schedule's)
    later = phase[1:] > phase[:-1]
    later |= same_phase & (src[1:] >= src[:-1])
    del same_phase
    by_sender = None if later.all() else np.lexsort((src, phase))  # None: as they come
    del later
    if by_sender is None and _messages_together(table, phase):
        return None  # a library generator's order: no message grouping of every transfer
    message = table[:, MESSAGE] if by_sender is None else table[by_sender, MESSAGE]
    shared = np.flatnonzero(message != 0)
    del message
    if not len(shared):  # every transfer travels alone
        return by_sender
    as_they_come = by_sender is None
    if by_sender is None:
        by_sender = np.arange(len(src))
    group = np.arange(len(by_sender))  # the position of the message's first transfer
    rows = by_sender[shared]
    ids, distinct = _dense_ids([phase[rows], table[rows, SRC], table[rows, DST], table[rows, MESSAGE]])
    first = np.full(len(distinct), len(by_sender), np.int64)
    np.minimum.at(first, ids, shared)
    group[shared] = first[ids]
    if (group[1:] >= group[:-1]).all():  # each message's transfers together already (a phased
        return None if as_they_come else by_sender  # schedule's, one a sender): no reordering
    return by_sender[np.argsort(group, kind="stable")]


def _copies_last(table: np.ndarray, phase: np.ndarray, rows: np.ndarray | None) -> np.ndarray | None:
    """`rows` (None: as they are) with each sender's local copies of a phase after its network
    messages, both in their order (compiler/plan_walk.py `messages`); `rows` itself where that
    is so already (a phased schedule's one transfer a sender: no index array made)."""
    src = table[:, SRC] if rows is None else table[rows, SRC]
    copy = src == (table[:, DST] if rows is None else table[rows, DST])
    if not copy.any():
        return rows
    p = phase if rows is None else phase[rows]
    same = (p[1:] == p[:-1]) & (src[1:] == src[:-1])
    if not (same & copy[:-1] & ~copy[1:]).any():  # no copy before a message of its sender's phase
        return rows
    order = np.lexsort((copy, src, p))  # stable: by phase, sender, then copies last
    return order if rows is None else rows[order]


def _messages_together(table: np.ndarray, phase: np.ndarray) -> bool:
    """Rows by phase and sender (given) are also by receiver and message id within a phase
    and sender, so rows of the same message are adjacent: they are in walk order as they are
    (`_message_order`'s grouping would find the same). Checked a chunk at a time: grouping
    torus:64x64's 16.8M transfers by message took 1.3 GB of temporaries, the run's peak."""
    for lo in range(0, len(phase) - 1, CHUNK):
        at = slice(lo, lo + CHUNK + 1)
        p, s, d, m = phase[at], table[at, SRC], table[at, DST], table[at, MESSAGE]
        same_sender = (p[1:] == p[:-1]) & (s[1:] == s[:-1])
        ascending = (d[1:] > d[:-1]) | (d[1:] == d[:-1]) & (m[1:] >= m[:-1])
        if not (ascending | ~same_sender).all():
            return False
    return True


def _index_type(largest: int) -> type:
    """The index columns' type: int32 where every index (transfer, key, slot; -1 for none) fits,
    half of int64's bytes (a million transfers' eight index columns: 32 MB saved), else int64.
    Arithmetic on them that can pass 2**31 (a slot's phase x nprocs) is done in int64."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64


def slot_index(slots: np.ndarray, nslots: int, index: type) -> np.ndarray:
    """How entries sorted by slot are found by slot, the smaller of two forms: where there are
    at least as many entries as slots, where each slot's entries start (nslots + 1 offsets);
    else each entry's slot, as given (the length tells them apart: `slot_range`, and the
    core's Sched::entries_of). A 4096-node all-to-all's one phase: 4,097 offsets, not 16.8M
    slots; torus:64x64's phased one: 16.8M slots, not 134M offsets."""
    if len(slots) < nslots:
        return slots.astype(index, copy=False)
    return np.searchsorted(slots, np.arange(nslots + 1, dtype=slots.dtype)).astype(index)


def slot_range(of: np.ndarray, nslots: int, slot: int) -> tuple[int, int]:
    """The entries of `slot` by a `slot_index` of them."""
    if len(of) == nslots + 1:
        return int(of[slot]), int(of[slot + 1])
    lo, hi = np.searchsorted(of, [slot, slot + 1]).tolist()
    return lo, hi


@dataclass(frozen=True)
class ScheduleColumns:
    """A schedule's sends, in walk order, and its receives, as columns."""

    schedule: Schedule
    # the index columns are int32 where every index fits (_index_type), else int64; read-only
    # (the core holds some of them in place, runtime/native_run.py)
    rows: np.ndarray | None  # per send in walk order, its position among the schedule's sends
    # (phase by phase); None: the sends are in walk order as they are (`sent`)
    phase_start: np.ndarray  # where each phase's sends start among them (one more than phases)
    table: np.ndarray  # (transfers, 7) int64: their fields (a send's phase: `phases`)
    msg_start: np.ndarray  # message m carries transfers msg_start[m]..msg_start[m + 1]
    key: np.ndarray  # each transfer's key id
    # the inbox entries by slot (phase * nprocs + node): slot_index, the smaller of offsets per
    # slot and a slot per entry (torus:64x64's phased all-to-all has 134M slots, 8 an entry)
    recv_slots: np.ndarray
    recv_key: np.ndarray  # the key id each inbox entry waits for (once per slot), by slot and key
    key_due: np.ndarray  # per key id, the slot whose inbox receives it, -1: none
    key_table: np.ndarray  # (rows, 7) int64 transfers whose keys the ids number
    # per key id, a row of key_table with that key; None where key_table is `table` and every
    # key is a send's: then worked out from `key` when asked (`key_row`: deadlock reports)
    rows_of_keys: np.ndarray | None

    @staticmethod
    def of(schedule: Schedule) -> ScheduleColumns:
        """The columns, from the schedule's own int64 table where the compiler built its phases
        from one (compiler/columns.py known_columns: no pass over the Transfer tuples), and
        with the key ids worked out once where every phase receives what it sends. Built in
        the index type, with no whole-column int64 temporaries where they can be avoided (at
        4096 nodes each is 134 MB; the build's peak was three times what it keeps)."""
        nprocs, phases = schedule.nprocs, schedule.phases
        phase_start = np.zeros(len(phases) + 1, np.int64)
        np.cumsum([len(p.sends) for p in phases], out=phase_start[1:])
        recv_is_sends = all(p.recvs is p.sends for p in phases)  # Phase.of: the receives are the sends
        nrecvs = 0 if recv_is_sends else sum(len(p.recvs) for p in phases)
        nslots = len(phases) * nprocs
        index = _index_type(max(int(phase_start[-1]) + nrecvs, nslots))
        send_phase = np.repeat(np.arange(len(phases), dtype=index), np.diff(phase_start))
        known = known_columns(phases)
        if known is not None:  # read-only, shares the IR's bytes
            all_sends = np.frombuffer(known[0], "<i8").reshape(-1, NFIELDS)
        else:
            all_sends = _table([t for phase in phases for t in phase.sends])
        walked = (all_sends[:, SRC] >= 0) & (all_sends[:, SRC] < nprocs)  # the interpreter's nodes only
        if walked.all():
            rows = _copies_last(all_sends, send_phase, _message_order(all_sends, send_phase))
        else:
            order = _copies_last(all_sends[walked], send_phase[walked],
                                 _message_order(all_sends[walked], send_phase[walked]))
            rows = np.flatnonzero(walked) if order is None else np.flatnonzero(walked)[order]
        del walked
        give_back()  # the walk order's temporaries, before the sends' table is copied in that order
        table, phase = (all_sends, send_phase) if rows is None else (all_sends[rows], send_phase[rows])
        starts = np.ones(len(table), bool)  # a message starts where its (phase, src, dst, id) changes
        if len(table):
            same = phase[1:] == phase[:-1]
            for field in (SRC, DST, MESSAGE):
                same &= table[1:, field] == table[:-1, field]
            same &= table[1:, MESSAGE] != 0
            np.logical_not(same, out=starts[1:])
            del same
        msg_start = np.arange(len(table) + 1, dtype=index) if starts.all() else \
            np.append(np.flatnonzero(starts), len(table)).astype(index)
        del starts
        fields = KEY_FIELDS
        if recv_is_sends:
            recv_dst, recv_phase = all_sends[:, DST], send_phase
            recv_key, key_row = _dense_ids([all_sends[:, f] for f in fields], index)
            key_table = all_sends
            key = recv_key if rows is None else recv_key[rows]
            nkeys = len(key_row)
            if rows is None:  # key_row is the inverse of `key` (ScheduleColumns.key_row)
                key_row = None
        else:
            del all_sends  # (`table` is what is kept of the sends)
            recv_table = _table([t for p in phases for t in p.recvs])
            recv_phase = np.repeat(np.arange(len(phases), dtype=index), [len(p.recvs) for p in phases])
            joined = [_joined(table[:, f], recv_table[:, f]) for f in fields]
            recv_dst = recv_table[:, DST].copy()  # (what is read of the receives from here on)
            del recv_table  # (made again below where a key is only received: seldom)
            ids, key_row = _dense_ids(joined, index)
            del joined
            key, recv_key = ids[:len(table)], ids[len(table):]
            nkeys = len(key_row)
            sent_key = np.zeros(nkeys, bool)
            sent_key[key] = True
            if sent_key.all():  # every key is a send's: its fields are in `table` (key_row from `key`)
                key_table, key_row = table, None
            else:  # (the sends' and receives' rows, which key_row indexes, kept: twice the table)
                key_table = np.concatenate((table, _table([t for p in phases for t in p.recvs])))
            del sent_key
        # The inbox a key is due in: its last receive (ScheduleIndex.due); none at a node
        # outside the schedule (the interpreter finds no inbox there).
        key_due = np.full(nkeys, -1, index)
        if recv_is_sends and len(recv_key) == nkeys:  # each key received once: due where it is received
            last = None
        else:
            by_key = np.argsort(recv_key, kind="stable")
            ordered = recv_key[by_key]
            last = by_key[np.concatenate((ordered[1:] != ordered[:-1], [True]))] if len(ordered) else by_key
            del by_key, ordered
        for lo in range(0, len(recv_key) if last is None else len(last), CHUNK):
            at = slice(lo, lo + CHUNK) if last is None else last[lo:lo + CHUNK]
            dst = recv_dst[at]
            mine = (dst >= 0) & (dst < nprocs)
            key_due[recv_key[at][mine]] = recv_phase[at][mine].astype(np.int64) * nprocs + dst[mine]
        # Each node's inbox per phase: the keys it receives, once each, slots in order.
        if last is None:  # the keys due, by (slot, key): a stable sort of the keys by their slot
            by_slot = np.argsort(key_due, kind="stable")
            inbox_key = by_slot[nkeys - int(np.count_nonzero(key_due >= 0)):].astype(index)
            del by_slot
            recv_slots = slot_index(key_due[inbox_key], nslots, index)
        else:
            dst = recv_dst
            mine = (dst >= 0) & (dst < nprocs)
            recv_slot = recv_phase[mine].astype(np.int64) * nprocs + dst[mine]
            pairs = distinct(recv_slot * max(nkeys, 1) + recv_key[mine])
            del recv_slot, mine
            recv_slots = slot_index(pairs // max(nkeys, 1), nslots, index)
            inbox_key = (pairs % max(nkeys, 1)).astype(index)
        del recv_key
        del phase
        columns = ScheduleColumns(schedule, None if rows is None else rows.astype(index), phase_start, table,
                                  msg_start, key, recv_slots, inbox_key, key_due, key_table, key_row)
        for array in (columns.rows, msg_start, key, recv_slots, inbox_key, key_due, key_row):
            if array is not None:
                array.flags.writeable = False
        give_back()  # the key ids' and inboxes' temporaries
        return columns

    @property
    def sent(self) -> np.ndarray:
        """Per send in walk order, its position among the schedule's sends (phase by phase)."""
        return np.arange(len(self.table)) if self.rows is None else self.rows

    def phases(self, at: np.ndarray) -> np.ndarray:
        """The phase of the sends at these walk positions, from where each phase's sends start
        (no phase column kept: 67 MB at 4096 nodes)."""
        return np.searchsorted(self.phase_start, at if self.rows is None else self.rows[at], side="right") - 1

    @cached_property
    def phase(self) -> np.ndarray:
        """The phase of each send in walk order, made when first asked (a send looked up one
        by one, `send`: the replay of messages one by one, deadlock reports, span labels)."""
        return self.phases(np.arange(len(self.table)))

    @property
    def key_row(self) -> np.ndarray:
        """Per key id, a row of key_table with that key."""
        if self.rows_of_keys is not None:
            return self.rows_of_keys
        out = np.empty(self.nkeys, np.int64)
        out[self.key] = np.arange(len(self.key))
        return out

    @property
    def nslots(self) -> int:
        return len(self.schedule.phases) * self.schedule.nprocs

    @property
    def recv_slot(self) -> np.ndarray:
        """The slot of each inbox entry (recv_key's)."""
        if len(self.recv_slots) < self.nslots + 1:
            return self.recv_slots
        return np.repeat(np.arange(self.nslots), np.diff(self.recv_slots))

    def inbox(self, slot: int) -> np.ndarray:
        """The key ids due in a slot's inbox."""
        lo, hi = slot_range(self.recv_slots, self.nslots, slot)
        return self.recv_key[lo:hi]

    def send(self, i: int) -> Transfer:
        """The i-th send in walk order."""
        row = i if self.rows is None else int(self.rows[i])
        k = int(self.phase[i])
        return self.schedule.phases[k].sends[row - int(self.phase_start[k])]

    @cached_property
    def sends(self) -> list[Transfer]:
        """The schedule's sends in walk order (built when first asked: tests, and networks that
        give programs message by message)."""
        flat = [t for phase in self.schedule.phases for t in phase.sends]
        return [flat[i] for i in self.sent.tolist()]

    def fields_of(self, key_ids: np.ndarray) -> np.ndarray:
        """The (origin, final, src, dst, offset) of these key ids, a row each."""
        return self.key_table[self.key_row[key_ids]][:, KEY_FIELDS]

    @property
    def key_fields(self) -> np.ndarray:
        """Per key id, its (origin, final, src, dst, offset)."""
        return self.fields_of(np.arange(self.nkeys))

    @property
    def nkeys(self) -> int:
        return len(self.key_due)

    @property
    def nmessages(self) -> int:
        return len(self.msg_start) - 1

    @cached_property
    def first(self) -> np.ndarray:
        """Each message's first transfer."""
        return self.msg_start[:-1]

    @cached_property
    def msg_of(self) -> np.ndarray:
        """The message of each transfer."""
        return np.repeat(np.arange(self.nmessages), np.diff(self.msg_start))

    def group(self, m: int) -> tuple[Transfer, ...]:
        """Message m's transfers (runtime/schedule_index.py `messages`' groups)."""
        return tuple(self.send(i) for i in range(int(self.msg_start[m]), int(self.msg_start[m + 1])))

    def summed_bytes(self) -> np.ndarray:
        """Each message's wire bytes where they are its blocks' bytes summed."""
        if not len(self.table):
            return np.zeros(0, np.int64)
        if self.nmessages == len(self.table):  # a transfer each: the column itself, read-only
            column = self.table[:, NBYTES]
            column.flags.writeable = False
            return column
        return np.add.reduceat(self.table[:, NBYTES], self.first)

    def no_operations(self) -> np.ndarray:
        """A zero per message (no message combines partials), read-only, of no memory."""
        return np.broadcast_to(np.int64(0), (self.nmessages,))

    def combined_bytes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each message's wire bytes where reduction partials bound for one destination combine
        (compiler/library/cost.py combined_bytes: per final and piece its largest transfer's
        bytes, summed), and its distinct finals, for all messages at once."""
        if not len(self.table):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        t, message = self.table, self.msg_of
        order = np.lexsort((t[:, OFFSET], t[:, FINAL], message))
        message, final, offset = message[order], t[order, FINAL], t[order, OFFSET]
        new_final = np.ones(len(order), bool)  # a message's first transfer of a final
        new_final[1:] = (message[1:] != message[:-1]) | (final[1:] != final[:-1])
        new_piece = new_final.copy()  # ... or of a piece of it
        new_piece[1:] |= offset[1:] != offset[:-1]
        pieces = np.flatnonzero(new_piece)
        largest = np.maximum.reduceat(t[order, NBYTES], pieces)
        # every message has a transfer, so the sorted messages' first pieces are its starts
        starts = np.flatnonzero(np.diff(message[pieces], prepend=-1))
        finals = np.add.reduceat(new_final.astype(np.int64), self.first)  # in message order
        return np.add.reduceat(largest, starts), finals

    @cached_property
    def direct(self) -> np.ndarray:
        """Per transfer: a whole block going from its origin straight to its destination."""
        t = self.table
        return (t[:, SRC] == t[:, ORIGIN]) & (t[:, DST] == t[:, FINAL]) & (t[:, OFFSET] == WHOLE)
