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

NFIELDS = len(Transfer._fields)  # src, dst, nbytes, origin, final, message, offset
SRC, DST, NBYTES, ORIGIN, FINAL, MESSAGE, OFFSET = range(NFIELDS)
KEY_FIELDS = [ORIGIN, FINAL, SRC, DST, OFFSET]  # schedule_index.transfer_key's fields


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


def _dense_ids(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """An id per row of the table whose columns these are (ints, one array each), equal for
    equal rows, ids in the rows' lexicographic order; and a row of each id (the index of one
    row that has it). Where the columns' spans multiply to less than 2**62, each row is one
    int (mixed radix, so in the same order), built column by column, and one sort of those
    ints does it; else a lexsort of the columns."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = [int(c.min()) for c in columns]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(columns, low)]
    new = np.empty(n, bool)
    new[0] = True
    if np.prod(np.array(spans, dtype=object)) < 1 << 62:
        packed = columns[0] - low[0]
        for column, lo, span in zip(columns[1:], low[1:], spans[1:]):
            packed *= span
            packed += column
            packed -= lo
        order = np.argsort(packed)
        ordered = packed[order]
        del packed
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        del ordered
    else:
        order = np.lexsort(columns[::-1])
        new[1:] = False
        for column in columns:
            ordered = column[order]
            new[1:] |= ordered[1:] != ordered[:-1]
        del ordered
    ids = np.empty(n, np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, order[new]


def _message_order(table: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The rows in walk order: by phase and sender (stable), then each sender's messages in
    order of their first transfer, a message's transfers in order. A transfer with message id
    0 travels alone; others travel with those of the same phase, sender, receiver and id."""
    src = table[:, SRC]
    if len(src) < 2 or ((phase[1:] > phase[:-1]) | ((phase[1:] == phase[:-1]) & (src[1:] >= src[:-1]))).all():
        by_sender = np.arange(len(src))  # already by phase and sender (a generator's order)
    else:
        by_sender = np.lexsort((src, phase))
    shared = np.flatnonzero(table[by_sender, MESSAGE] != 0)
    if not len(shared):  # every transfer travels alone
        return by_sender
    group = np.arange(len(by_sender))  # the position of the message's first transfer
    rows = by_sender[shared]
    ids, distinct = _dense_ids([phase[rows], table[rows, SRC], table[rows, DST], table[rows, MESSAGE]])
    first = np.full(len(distinct), len(by_sender), np.int64)
    np.minimum.at(first, ids, shared)
    group[shared] = first[ids]
    return by_sender[np.argsort(group, kind="stable")]


def _index_type(largest: int) -> type:
    """The index columns' type: int32 where every index (transfer, key, slot; -1 for none) fits,
    half of int64's bytes (a million transfers' eight index columns: 32 MB saved), else int64.
    Arithmetic on them that can pass 2**31 (a slot's phase x nprocs) is done in int64."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64


@dataclass(frozen=True)
class ScheduleColumns:
    """A schedule's sends, in walk order, and its receives, as columns."""

    schedule: Schedule
    # the index columns are int32 where every index fits (_index_type), else int64
    sent: np.ndarray  # per send in walk order, its position among the schedule's sends (phase by phase)
    phase_start: np.ndarray  # where each phase's sends start among them (one more than phases)
    table: np.ndarray  # (transfers, 7) int64: their fields
    phase: np.ndarray  # phase of each
    msg_start: np.ndarray  # message m carries transfers msg_start[m]..msg_start[m + 1]
    key: np.ndarray  # each transfer's key id
    recv_slot: np.ndarray  # the inbox entries, by slot (phase * nprocs + node): the slot
    recv_key: np.ndarray  # and the key id it waits for (once per slot)
    key_due: np.ndarray  # per key id, the slot whose inbox receives it, -1: none
    key_table: np.ndarray  # (rows, 7) int64 transfers whose keys the ids number
    key_row: np.ndarray  # per key id, a row of key_table with that key

    @staticmethod
    def of(schedule: Schedule) -> ScheduleColumns:
        """The columns, from the schedule's own int64 table where the compiler built its phases
        from one (compiler/columns.py known_columns: no pass over the Transfer tuples), and
        with the key ids worked out once where every phase receives what it sends."""
        nprocs, phases = schedule.nprocs, schedule.phases
        phase_start = np.zeros(len(phases) + 1, np.int64)
        np.cumsum([len(p.sends) for p in phases], out=phase_start[1:])
        send_phase = np.repeat(np.arange(len(phases)), np.diff(phase_start))
        known = known_columns(phases)
        if known is not None:  # read-only, shares the IR's bytes
            all_sends = np.frombuffer(known[0], "<i8").reshape(-1, NFIELDS)
        else:
            all_sends = _table([t for phase in phases for t in phase.sends])
        walked = (all_sends[:, SRC] >= 0) & (all_sends[:, SRC] < nprocs)  # the interpreter's nodes only
        if walked.all():
            rows = _message_order(all_sends, send_phase)
        else:
            rows = np.flatnonzero(walked)[_message_order(all_sends[walked], send_phase[walked])]
        in_order = len(rows) == len(all_sends) and bool((rows == np.arange(len(rows))).all())
        table, phase = (all_sends, send_phase) if in_order else (all_sends[rows], send_phase[rows])
        starts = np.ones(len(table), bool)  # a message starts where its (phase, src, dst, id) changes
        if len(table):
            same = (phase[1:] == phase[:-1]) & (table[1:, SRC] == table[:-1, SRC]) & \
                (table[1:, DST] == table[:-1, DST]) & (table[1:, MESSAGE] == table[:-1, MESSAGE]) & \
                (table[1:, MESSAGE] != 0)
            starts[1:] = ~same
        msg_start = np.append(np.flatnonzero(starts), len(table))
        fields = KEY_FIELDS
        recv_once = False  # each key received once
        if all(p.recvs is p.sends for p in phases):  # Phase.of: the receives are the sends
            recv_table, recv_phase = all_sends, send_phase
            recv_key, key_row = _dense_ids([all_sends[:, f] for f in fields])
            key_table = all_sends
            key = recv_key if in_order else recv_key[rows]
            recv_once = len(key_row) == len(recv_key)
        else:
            recv_table = _table([t for p in phases for t in p.recvs])
            recv_phase = np.repeat(np.arange(len(phases)), [len(p.recvs) for p in phases])
            key_table = np.concatenate((table, recv_table))
            ids, key_row = _dense_ids([key_table[:, f] for f in fields])
            key, recv_key = ids[:len(table)], ids[len(table):]
        nkeys = len(key_row)
        # The inbox a key is due in: its last receive (ScheduleIndex.due); none at a node
        # outside the schedule (the interpreter finds no inbox there).
        key_due = np.full(nkeys, -1, np.int64)
        recv_slot = recv_phase * nprocs + recv_table[:, DST]
        mine = (recv_table[:, DST] >= 0) & (recv_table[:, DST] < nprocs)
        if recv_once:
            last = np.arange(len(recv_key))
        else:
            by_key = np.argsort(recv_key, kind="stable")
            ordered = recv_key[by_key]
            last = by_key[np.concatenate((ordered[1:] != ordered[:-1], [True]))] if len(ordered) else by_key
        key_due[recv_key[last]] = np.where(mine[last], recv_slot[last], -1)
        # Each node's inbox per phase: the keys it receives, once each, slots in order.
        pairs = distinct(recv_slot[mine] * max(nkeys, 1) + recv_key[mine])
        del recv_slot, recv_key
        index = _index_type(max(len(table), nkeys, len(phases) * nprocs))
        return ScheduleColumns(schedule, rows.astype(index), phase_start, table, phase.astype(index),
                               msg_start.astype(index), key.astype(index),
                               (pairs // max(nkeys, 1)).astype(index), (pairs % max(nkeys, 1)).astype(index),
                               key_due.astype(index), key_table, key_row.astype(index))

    def send(self, i: int) -> Transfer:
        """The i-th send in walk order."""
        k = int(self.phase[i])
        return self.schedule.phases[k].sends[int(self.sent[i]) - int(self.phase_start[k])]

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
        return len(self.key_row)

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
        return np.add.reduceat(self.table[:, NBYTES], self.first)

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
