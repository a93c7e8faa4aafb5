"""The data check of a native run: runtime/data.py's moves replayed in the order the core ran them.

The native event core (runtime/native_run.py) logs (code, run, message) triples: a message
starts, a message ends, a run's last node leaves it. The Python engine takes a message's
payloads when it starts and puts them (or moves its blocks directly) when it ends, checks that
each transfer arrives once, and checks a run's payloads when its last node leaves it; this
module does the same, in the log's order.

A chunk of the log goes run by run (runs are independent: each has its own data). A run's
entries move in bulk where its data could move all of its schedule's transfers in bulk while
nothing had moved, and says that the chunk's transfers move without an error in any order
(CollectiveData.can_move_in_bulk: direct moves of distinct unsent blocks, or a timing run's
payload-free moves), no transfer arrives a second time, and no message ended with payloads
taken one by one. Then the moves are array operations (CollectiveData.move_in_bulk) and the
exactly-once check is one over the schedule's key ids; a run whose every message starts and
ends once in the chunk moves all its transfers at once. A run whose blocks are forwarded
(Bruck's algorithm), whole in the chunk, moves in bulk where each block's hops form one
checked path from its origin to its final node (Replay._forward_in_bulk): then they are those
end-to-end direct moves. The other runs (a piece, a reduction's partials, a block sent twice
or not held, a block that stops on its way) replay entry by entry in the log's order, so that
a wrong schedule gives the Python engine's error: the first one in the order the messages
ran (the runs moved in bulk cannot fail).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler.schedule import WHOLE
from phalanx.runtime.data import Payloads, move
from phalanx.runtime.interpreter import sent_twice
from phalanx.runtime.plan_columns import (
    DST,
    FINAL,
    NBYTES,
    OFFSET,
    ORIGIN,
    SRC,
    ScheduleColumns,
    all_distinct,
)

ORDERS_KEPT = 64  # Replay.orders holds at most this many run orders (a repeat needs a few)
LOG_ONE_BY_ONE = 1 << 16  # entries replayed one by one are made Python ints this many at a time
START, END, LEAVE = 0, 1, 2  # the core's LOG_START, LOG_END, LOG_LEAVE (checked by native_run)


@dataclass
class RunState:
    """One open run: which transfer keys arrived, which messages started without payloads."""

    columns: ScheduleColumns
    arrived: np.ndarray  # per key id
    bare: np.ndarray  # per message: started, every block moving directly, not ended yet
    # the run's data could move all its transfers in bulk while nothing had moved (None: not
    # asked yet; Replay._bulk asks before any of the run's entries is applied)
    bulk: bool | None = None
    untouched: bool = True  # nothing of the run has moved, started or arrived yet


def _rows(cols: ScheduleColumns, msgs: np.ndarray) -> np.ndarray:
    """The transfer rows of messages `msgs` (each message's in order)."""
    starts, ends = cols.msg_start[msgs], cols.msg_start[msgs + 1]
    lengths = ends - starts
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return offsets + np.arange(int(lengths.sum()))


class Replay:
    """The payloads' moves and checks of one native run, fed the core's log chunk by chunk."""

    def __init__(self, data: Payloads, columns: Callable[[int], ScheduleColumns]):
        self.data, self.columns = data, columns
        self.runs: dict[int, RunState] = {}
        self.in_flight: dict[tuple[int, int], list[Any]] = {}  # (run, message) -> payloads taken
        self.bulk_entries = 0  # log entries moved in bulk (the rest one by one)
        # _end_to_end's answers: (schedule's id, a run's entries) -> (the schedule, kept alive
        # so that its id is not reused, and the end-to-end moves or None)
        self.orders: dict[tuple[int, bytes], tuple[ScheduleColumns, np.ndarray | None]] = {}
        self.keys_distinct: dict[int, tuple[ScheduleColumns, bool]] = {}  # by the schedule's id

    def open(self, run: int) -> None:
        cols = self.columns(run)
        self.runs[run] = RunState(cols, np.zeros(cols.nkeys, bool), np.zeros(cols.nmessages, bool))

    def discard(self, run: int) -> bool:
        """Forget a run opened but never entered (a stopped run's runs opened ahead); False
        where it is not open (it finished and closed)."""
        return self.runs.pop(run, None) is not None

    def _can_bulk(self, run: int) -> bool:
        """RunState.bulk, asked of the run's data the first time (nothing of it moved yet)."""
        state = self.runs[run]
        if state.bulk is None:
            assert state.untouched, "a run's bulk check comes before any of its moves"
            state.bulk = self.data[run].can_move_in_bulk(state.columns.table)
        return state.bulk

    def arrived(self, run: int) -> np.ndarray:
        """Which key ids of the run have arrived (none for a run not open)."""
        state = self.runs.get(run)
        return state.arrived if state is not None else np.zeros(self.columns(run).nkeys, bool)

    def replay(self, log: np.ndarray) -> None:
        """Apply a chunk of the log, (code, run, message) rows in the order the core wrote them.
        Runs are independent (each its own data), so it goes run by run: the runs whose moves
        go in bulk first (direct moves, then forwarded blocks), then the others one by one in the
        log's order. Only those can fail, so the first error is still the first in the order
        the messages ran."""
        taken = self._bulk(log)
        if taken.all():
            return
        rest = log[~taken]
        forwarded = self._forward_in_bulk(rest)
        self._one_by_one(rest if forwarded is None else rest[~forwarded])

    def _bulk(self, log: np.ndarray) -> np.ndarray:
        """Apply the runs of the chunk whose entries move in bulk (`_bulk_run`), and those that
        only leave; returns which entries of the log it applied."""
        codes, runs, msgs = log[:, 0], log[:, 1], log[:, 2]  # views: uint32, not copied
        taken = np.zeros(len(log), bool)
        for run, at in _groups(runs).items():
            c = codes[at]
            moving = c != LEAVE
            if moving.any() and not (self._can_bulk(run) and  # (its leaving entries read as
                                     self._bulk_run(run, c, msgs[at])):  # neither start nor end)
                continue  # a schedule that forwards, a reduction, a block sent twice...
            taken[at] = True
            if not moving.all():
                self._leave(run)
        self.bulk_entries += int(taken.sum())
        return taken

    def _bulk_run(self, run: int, codes: np.ndarray, msgs: np.ndarray) -> bool:
        """Check a run's starts and ends in the chunk (`codes` may hold its leaving too), then
        apply them; False (nothing changed) where they cannot move in bulk. A run whose every
        message starts and ends once in the chunk, untouched before, with distinct transfer
        keys, moves all its transfers: the run's bulk check (`_can_bulk`) was of exactly those."""
        state, data = self.runs[run], self.data[run]
        cols = state.columns
        started, ended = msgs[codes == START], msgs[codes == END]
        if state.untouched and len(started) == len(ended) == cols.nmessages and \
                self._keys_distinct(cols) and _each_once(started, cols.nmessages) and \
                _each_once(ended, cols.nmessages):
            state.untouched = False
            data.move_in_bulk(cols.table)
            state.arrived[:] = True
            return True
        in_chunk = np.zeros(cols.nmessages, bool)
        in_chunk[started] = True
        if not state.bare[ended[~in_chunk[ended]]].all():  # started in an earlier chunk
            return False  # its payloads were taken one by one
        in_chunk[ended] = True
        rows = _rows(cols, np.flatnonzero(in_chunk))
        keys = cols.key[_rows(cols, ended)]
        if state.arrived[keys].any() or not all_distinct(keys):
            return False
        if not data.can_move_in_bulk(cols.table[rows]):
            return False
        state.untouched = False
        data.move_in_bulk(cols.table[_rows(cols, ended)])
        state.bare[started] = True
        state.bare[ended] = False
        state.arrived[keys] = True
        return True

    def _keys_distinct(self, cols: ScheduleColumns) -> bool:
        """No transfer key of the schedule repeats (kept per schedule, as `orders`)."""
        hit = self.keys_distinct.get(id(cols))
        if hit is None:
            hit = self.keys_distinct[id(cols)] = (cols, _keys_once(cols))
        return hit[1]

    def _forward_in_bulk(self, log: np.ndarray) -> np.ndarray | None:
        """The runs of the chunk whose schedules forward blocks (Bruck's algorithm), each whole
        in the chunk and untouched before: each block's hops, in the order they started, must
        form one path from its origin to its final node, each hop leaving the node the
        previous hop reached after that hop ended, every transfer once. Along such a path
        take / put only hand the packed block on, so the run's data moves each block origin to
        final in bulk (`can_move_in_bulk` of those end-to-end moves checks the rest: unsent,
        sizes, each block once). Returns which entries of the log it applied (those runs'
        entries, their leaving included), None where it applied none; the others then replay
        one by one."""
        codes, runs, msgs = log[:, 0], log[:, 1], log[:, 2]  # views: uint32, not copied
        taken = np.zeros(len(log), bool)
        moves = []
        for run, at in _groups(runs).items():
            state = self.runs[run]
            if not state.untouched:
                continue
            c = codes[at]
            end_to_end = self._end_to_end(state.columns, c, msgs[at])
            if end_to_end is None or not self.data[run].can_move_in_bulk(end_to_end):
                continue
            moves.append((run, state, end_to_end, bool((c == LEAVE).any())))
            taken[at] = True
        if not moves:
            return None
        for run, state, end_to_end, leaves in moves:
            state.untouched = False
            self.data[run].move_in_bulk(end_to_end)
            state.arrived[:] = True  # every key once (_end_to_end)
            if leaves:
                self._leave(run)
        self.bulk_entries += int(taken.sum())
        return taken

    def _end_to_end(self, cols: ScheduleColumns, codes: np.ndarray, msgs: np.ndarray) -> np.ndarray | None:
        """A run's end-to-end moves from its entries in the chunk (codes and messages, in log
        order): None unless every message starts once and ends once, every transfer key is
        once in the schedule and each block's hops form one path (`_paths`, checked in the
        order the hops started and ended). The runs of a repeated statement log the same
        entries, so each order of a schedule is checked once (`orders`)."""
        key = (id(cols), codes.tobytes() + msgs.tobytes())
        hit = self.orders.get(key)
        if hit is None:
            if len(self.orders) >= ORDERS_KEPT:
                self.orders.clear()
            hit = self.orders[key] = (cols, _checked_order(cols, codes, msgs))
        return hit[1]

    def _one_by_one(self, log: np.ndarray) -> None:
        """runtime/interpreter.py's _send, split at the message's start and end."""
        for start in range(0, len(log), LOG_ONE_BY_ONE):
            self._each(log[start:start + LOG_ONE_BY_ONE])

    def _each(self, log: np.ndarray) -> None:
        """_one_by_one of a slice of the log, its entries as Python ints."""
        for code, run, msg in log.tolist():
            if code == LEAVE:
                self._leave(run)
                continue
            state, data = self.runs[run], self.data[run]
            state.untouched = False
            group = state.columns.group(msg)
            if code == START:
                payloads = [None if data.movable(t) else data.take(t) for t in group]
                if any(p is not None for p in payloads):
                    self.in_flight[(run, msg)] = payloads
                else:
                    state.bare[msg] = True
                continue
            payloads = [None] * len(group) if state.bare[msg] else self.in_flight.pop((run, msg))
            state.bare[msg] = False
            cols = state.columns
            keys = cols.key[cols.msg_start[msg]:cols.msg_start[msg + 1]].tolist()
            for t, payload, key in zip(group, payloads, keys):
                if payload is not None:
                    data.put(t, payload)
                else:
                    move(data, t)
                if state.arrived[key]:
                    raise sent_twice(t)
                state.arrived[key] = True

    def _leave(self, run: int) -> None:
        self.data.close(run)
        del self.runs[run]


def _checked_order(cols: ScheduleColumns, codes: np.ndarray, msgs: np.ndarray) -> np.ndarray | None:
    """Replay._end_to_end's answer, worked out."""
    started, ended = codes == START, codes == END
    if started.sum() != cols.nmessages or ended.sum() != cols.nmessages or not _keys_once(cols):
        return None  # not every message of the run, once, in this chunk; or a key twice
    local = np.arange(len(codes))
    start_at, end_at = np.full(cols.nmessages, -1), np.full(cols.nmessages, -1)
    start_at[msgs[started]], end_at[msgs[ended]] = local[started], local[ended]
    if (start_at < 0).any() or (end_at < 0).any():
        return None
    return _paths(cols.table, start_at[cols.msg_of], end_at[cols.msg_of])


def _keys_once(cols: ScheduleColumns) -> bool:
    """No transfer key of the schedule's sends repeats: its key ids are dense (0..nkeys - 1),
    so a flag per id and a count say it (a sort of ideal:4096's 16.8M ids took 0.6 s)."""
    seen = np.zeros(cols.nkeys, bool)
    seen[cols.key] = True
    return int(np.count_nonzero(seen)) == len(cols.key)


def _groups(runs: np.ndarray) -> dict[int, np.ndarray | slice]:
    """Each run's positions in a chunk of the log, in log order, by run; a chunk of one run
    (the common case) as a slice, so that its columns are read in place, not copied (sorted,
    a 65,280-message run's chunk took 2.5 MB of positions and copies)."""
    if len(runs) and runs.min() == runs.max():
        return {int(runs[0]): slice(0, len(runs))}
    order = np.argsort(runs, kind="stable")
    ordered = runs[order]
    cuts = (np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist()
    firsts, ends = [0, *cuts], [*cuts, len(order)]
    if not len(order):
        return {}
    return {run: order[a:b] for run, a, b in zip(ordered[firsts].tolist(), firsts, ends)}


def _each_once(msgs: np.ndarray, nmessages: int) -> bool:
    """`msgs` (as many as the run has messages) names each of them once."""
    seen = np.zeros(nmessages, bool)
    seen[msgs] = True
    return bool(seen.all())


def _paths(table: np.ndarray, start_at: np.ndarray, end_at: np.ndarray) -> np.ndarray | None:
    """The end-to-end moves (origin to final, as transfer rows) of transfers `table` that
    started and ended at log positions `start_at` and `end_at`, where each block's hops form
    one path (Replay._forward_in_bulk); None where they do not."""
    if not (table[:, OFFSET] == WHOLE).all():
        return None  # pieces
    order = np.lexsort((start_at, table[:, FINAL], table[:, ORIGIN]))
    hops, start_at, end_at = table[order], start_at[order], end_at[order]
    if len(hops) == 0:
        return hops
    same = (hops[1:, ORIGIN] == hops[:-1, ORIGIN]) & (hops[1:, FINAL] == hops[:-1, FINAL])
    first = np.concatenate(([True], ~same))
    last = np.concatenate((~same, [True]))
    prev, nxt = hops[:-1][same], hops[1:][same]
    if not ((hops[first, SRC] == hops[first, ORIGIN]).all() and (hops[last, DST] == hops[last, FINAL]).all()
            and (nxt[:, SRC] == prev[:, DST]).all() and (prev[:, DST] != prev[:, FINAL]).all()
            and (nxt[:, NBYTES] == prev[:, NBYTES]).all()
            and (start_at[1:][same] > end_at[:-1][same]).all()):
        return None
    end_to_end = hops[last].copy()
    end_to_end[:, SRC] = end_to_end[:, ORIGIN]
    return end_to_end
