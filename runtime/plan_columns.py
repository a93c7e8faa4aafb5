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

from phalanx.compiler.schedule import WHOLE, Schedule, Transfer

NFIELDS = len(Transfer._fields)  # src, dst, nbytes, origin, final, message, offset
SRC, DST, NBYTES, ORIGIN, FINAL, MESSAGE, OFFSET = range(NFIELDS)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (np.unique by sorting: NumPy 2's hash-based unique took
    seconds on a million keys)."""
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


def _dense_ids(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An id per row of `keys` (n, k) of ints >= -1, equal for equal rows; and the distinct
    rows, by id. Columns are packed 16 bits each into as few sort keys as they fit in."""
    if len(keys) == 0:
        return np.zeros(0, np.int64), keys
    if keys.min() >= -1 and keys.max() < (1 << 15) - 1:
        packed = [np.zeros(len(keys), np.int64) for _ in range((keys.shape[1] + 2) // 3)]
        for j in range(keys.shape[1]):
            packed[j // 3] = (packed[j // 3] << 16) | (keys[:, j] + 1)
        sort_keys = np.column_stack(packed)
        del packed
    else:
        sort_keys = keys
    order = np.lexsort(sort_keys.T[::-1])
    ordered = sort_keys[order]
    new = np.empty(len(keys), bool)
    new[0] = True
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    ids = np.empty(len(keys), np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, keys[order[new]]


def _message_order(table: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The rows in walk order: by phase and sender (stable), then each sender's messages in
    order of their first transfer, a message's transfers in order. A transfer with message id
    0 travels alone; others travel with those of the same phase, sender, receiver and id."""
    by_sender = np.lexsort((table[:, SRC], phase))
    shared = np.flatnonzero(table[by_sender, MESSAGE] != 0)
    if not len(shared):  # every transfer travels alone
        return by_sender
    group = np.arange(len(by_sender))  # the position of the message's first transfer
    rows = by_sender[shared]
    keys = np.column_stack((phase[rows], table[rows, SRC], table[rows, DST], table[rows, MESSAGE]))
    ids, distinct = _dense_ids(keys)
    first = np.full(len(distinct), len(by_sender), np.int64)
    np.minimum.at(first, ids, shared)
    group[shared] = first[ids]
    return by_sender[np.argsort(group, kind="stable")]


@dataclass(frozen=True)
class ScheduleColumns:
    """A schedule's sends, in walk order, and its receives, as columns."""

    schedule: Schedule
    sends: list[Transfer]  # the schedule's sends in walk order
    table: np.ndarray  # (transfers, 7) int64: their fields
    phase: np.ndarray  # phase of each
    msg_start: np.ndarray  # message m carries transfers msg_start[m]..msg_start[m + 1]
    key: np.ndarray  # each transfer's key id
    recv_slot: np.ndarray  # the inbox entries, by slot (phase * nprocs + node): the slot
    recv_key: np.ndarray  # and the key id it waits for (once per slot)
    key_due: np.ndarray  # per key id, the slot whose inbox receives it, -1: none
    key_fields: np.ndarray  # per key id, its (origin, final, src, dst, offset)

    @staticmethod
    def of(schedule: Schedule) -> ScheduleColumns:
        nprocs = schedule.nprocs
        sends = [t for phase in schedule.phases for t in phase.sends]
        send_phase = np.repeat(np.arange(len(schedule.phases)), [len(p.sends) for p in schedule.phases])
        table = _table(sends)
        walked = (table[:, SRC] >= 0) & (table[:, SRC] < nprocs)  # the interpreter's nodes only
        if walked.all():
            rows = _message_order(table, send_phase)
        else:
            rows = np.flatnonzero(walked)[_message_order(table[walked], send_phase[walked])]
        table, phase = table[rows], send_phase[rows]
        sends = [sends[i] for i in rows.tolist()]
        starts = np.ones(len(table), bool)  # a message starts where its (phase, src, dst, id) changes
        if len(table):
            same = (phase[1:] == phase[:-1]) & (table[1:, SRC] == table[:-1, SRC]) & \
                (table[1:, DST] == table[:-1, DST]) & (table[1:, MESSAGE] == table[:-1, MESSAGE]) & \
                (table[1:, MESSAGE] != 0)
            starts[1:] = ~same
        msg_start = np.append(np.flatnonzero(starts), len(table))
        recvs = [t for p in schedule.phases for t in p.recvs]
        recv_phase = np.repeat(np.arange(len(schedule.phases)), [len(p.recvs) for p in schedule.phases])
        recv_table = _table(recvs)
        fields = [ORIGIN, FINAL, SRC, DST, OFFSET]
        keys = np.empty((len(table) + len(recv_table), len(fields)), np.int64)
        keys[:len(table)], keys[len(table):] = table[:, fields], recv_table[:, fields]
        ids, key_fields = _dense_ids(keys)
        del keys
        nkeys = len(key_fields)
        key, recv_key = ids[:len(table)], ids[len(table):]
        # The inbox a key is due in: its last receive (ScheduleIndex.due); none at a node
        # outside the schedule (the interpreter finds no inbox there).
        key_due = np.full(nkeys, -1, np.int64)
        recv_slot = recv_phase * nprocs + recv_table[:, DST]
        mine = (recv_table[:, DST] >= 0) & (recv_table[:, DST] < nprocs)
        by_key = np.argsort(recv_key, kind="stable")
        ordered = recv_key[by_key]
        last = by_key[np.concatenate((ordered[1:] != ordered[:-1], [True]))] if len(ordered) else by_key
        key_due[recv_key[last]] = np.where(mine[last], recv_slot[last], -1)
        # Each node's inbox per phase: the keys it receives, once each, slots in order.
        pairs = distinct(recv_slot[mine] * max(nkeys, 1) + recv_key[mine])
        return ScheduleColumns(schedule, sends, table, phase, msg_start, key,
                               pairs // max(nkeys, 1), pairs % max(nkeys, 1), key_due, key_fields)

    @property
    def nkeys(self) -> int:
        return len(self.key_fields)

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
        return tuple(self.sends[self.msg_start[m]:self.msg_start[m + 1]])

    def summed_bytes(self) -> np.ndarray:
        """Each message's wire bytes where they are its blocks' bytes summed."""
        if not len(self.table):
            return np.zeros(0, np.int64)
        return np.add.reduceat(self.table[:, NBYTES], self.first)

    @cached_property
    def direct(self) -> np.ndarray:
        """Per transfer: a whole block going from its origin straight to its destination."""
        t = self.table
        return (t[:, SRC] == t[:, ORIGIN]) & (t[:, DST] == t[:, FINAL]) & (t[:, OFFSET] == WHOLE)
