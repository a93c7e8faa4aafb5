"""The data check of a native run: runtime/data.py's moves replayed in the order the core ran them.

The native event core (runtime/native_run.py) logs (code, run, message) triples: a message
starts, a message ends, a run's last node leaves it. The Python engine takes a message's
payloads when it starts and puts them (or moves its blocks directly) when it ends, checks that
each transfer arrives once, and checks a run's payloads when its last node leaves it; this
module does the same, in the log's order.

A chunk of the log moves in bulk where it can: every run's data could move all of its
schedule's transfers in bulk when the run opened, and says that the chunk's
transfers move without an error in any order (CollectiveData.can_move_in_bulk: direct moves of
distinct unsent blocks, or a timing run's payload-free moves), no transfer arrives a second
time, and no message of the chunk ended with payloads taken one by one. Then the moves are
array operations (CollectiveData.move_in_bulk) and the exactly-once check is one over the
schedule's key ids. A chunk of whole runs whose blocks are forwarded (Bruck's algorithm)
moves in bulk too where each block's hops form one checked path from its origin to its final
node (Replay._forward_in_bulk): then they are those end-to-end direct moves. Any other chunk
(a piece, a reduction's partials, a block sent twice or not held, a block that stops on its
way) replays entry by entry, so that a wrong schedule gives the Python engine's error: the
first one in the order the messages ran.
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
    distinct,
)

PATH_CHECKS_KEPT = 64  # Replay.path_checks holds at most this many orders (a repeat needs one or two)
START, END, LEAVE = 0, 1, 2  # the core's LOG_START, LOG_END, LOG_LEAVE (checked by native_run)


@dataclass
class RunState:
    """One open run: which transfer keys arrived, which messages started without payloads."""

    columns: ScheduleColumns
    arrived: np.ndarray  # per key id
    bare: np.ndarray  # per message: started, every block moving directly, not ended yet
    bulk: bool  # the run's data could move all its transfers in bulk when it opened


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
        # _paths' answers: (schedule's id, relative log positions) -> (the schedule, kept alive
        # so that its id is not reused, and the end-to-end moves or None)
        self.path_checks: dict[tuple[int, bytes], tuple[ScheduleColumns, np.ndarray | None]] = {}

    def open(self, run: int) -> None:
        cols = self.columns(run)
        self.runs[run] = RunState(cols, np.zeros(cols.nkeys, bool), np.zeros(cols.nmessages, bool),
                                  self.data[run].can_move_in_bulk(cols.table))

    def arrived(self, run: int) -> np.ndarray:
        """Which key ids of the run have arrived (none for a run not open)."""
        state = self.runs.get(run)
        return state.arrived if state is not None else np.zeros(self.columns(run).nkeys, bool)

    def replay(self, log: np.ndarray) -> None:
        """Apply a chunk of the log, (code, run, message) rows in the order the core wrote them."""
        if not self._bulk(log) and not self._forward_in_bulk(log):
            self._one_by_one(log)

    def _bulk(self, log: np.ndarray) -> bool:
        """Check the chunk as a whole, then apply it; False (nothing changed) where it cannot."""
        codes, runs, msgs = log[:, 0], log[:, 1], log[:, 2].astype(np.int64)
        active = distinct(runs[codes != LEAVE]).tolist()
        if not all(self.runs[run].bulk for run in active):  # a schedule that forwards, a reduction
            return False
        moves = []
        for run in active:
            state, data = self.runs[run], self.data[run]
            mine = runs == run
            started, ended = msgs[mine & (codes == START)], msgs[mine & (codes == END)]
            cols = state.columns
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
            moves.append((state, data, started, ended, keys))
        for state, data, started, ended, keys in moves:
            cols = state.columns
            data.move_in_bulk(cols.table[_rows(cols, ended)])
            state.bare[started] = True
            state.bare[ended] = False
            state.arrived[keys] = True
        for run in runs[codes == LEAVE].tolist():
            self._leave(run)
        self.bulk_entries += len(log)
        return True

    def _forward_in_bulk(self, log: np.ndarray) -> bool:
        """A chunk that holds whole runs whose schedules forward blocks (Bruck's algorithm):
        each block's hops, in the order they started, must form one path from its origin to
        its final node, each hop leaving the node the previous hop reached after that hop
        ended, every transfer once. Along such a path take / put only hand the packed block
        on, so the run's data moves each block origin to final in bulk (`can_move_in_bulk`
        of those end-to-end moves checks the rest: unsent, sizes, each block once). False
        (nothing changed) for anything else: the entries then replay one by one."""
        codes, runs, msgs = log[:, 0], log[:, 1], log[:, 2].astype(np.int64)
        position = np.arange(len(log))
        moves = []
        for run in distinct(runs[codes != LEAVE]).tolist():
            state, data = self.runs[run], self.data[run]
            cols = state.columns
            if state.arrived.any() or state.bare.any() or any(r == run for r, _ in self.in_flight):
                return False
            mine = runs == run
            started, ended = mine & (codes == START), mine & (codes == END)
            start_at, end_at = np.full(cols.nmessages, -1), np.full(cols.nmessages, -1)
            start_at[msgs[started]], end_at[msgs[ended]] = position[started], position[ended]
            if started.sum() != cols.nmessages or ended.sum() != cols.nmessages or \
                    (start_at < 0).any() or (end_at < 0).any():
                return False  # not every message of the run, once, in this chunk
            end_to_end = self._paths(cols, start_at, end_at)
            if end_to_end is None or not data.can_move_in_bulk(end_to_end):
                return False
            moves.append((state, data, end_to_end))
        for state, data, end_to_end in moves:
            data.move_in_bulk(end_to_end)
            state.arrived[state.columns.key] = True
        for run in runs[codes == LEAVE].tolist():
            self._leave(run)
        self.bulk_entries += len(log)
        return True

    def _paths(self, cols: ScheduleColumns, start_at: np.ndarray, end_at: np.ndarray) -> np.ndarray | None:
        """`_paths` of the run's transfers, None also where a transfer key repeats; the runs of
        a repeated statement log their messages in the same order, so each order of a schedule
        is checked once (`path_checks`: by the schedule and the positions relative to the first)."""
        first = int(start_at.min()) if len(start_at) else 0
        key = (id(cols), (start_at - first).tobytes() + (end_at - first).tobytes())
        hit = self.path_checks.get(key)
        if hit is None:
            if len(self.path_checks) >= PATH_CHECKS_KEPT:
                self.path_checks.clear()
            rows = _paths(cols.table, start_at[cols.msg_of], end_at[cols.msg_of])
            hit = self.path_checks[key] = (cols, rows if all_distinct(cols.key) else None)
        return hit[1]

    def _one_by_one(self, log: np.ndarray) -> None:
        """runtime/interpreter.py's _send, split at the message's start and end."""
        for code, run, msg in log.tolist():
            if code == LEAVE:
                self._leave(run)
                continue
            state, data = self.runs[run], self.data[run]
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
