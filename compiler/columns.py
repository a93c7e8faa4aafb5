"""A schedule's phases as columns: how the all-to-all family's generators build them in numpy.

A generator of the all-to-all family (direct, pairwise, phased, message-passing, Bruck) works
out its transfers as one int64 table, a row per transfer in TRANSFER_FIELDS order, phase after
phase (`PhaseColumns`), without a Python loop over the P x P blocks. Three things read the
table without a Transfer object: the IR (compiler/ir/dialects/sched.py stores exactly these
rows), the cost model (compiler/library/cost.py groups them into messages) and the event
estimate of `--cost simulate` (Target.estimated_events). The Transfer objects of a Schedule are
built from it once, in C (`transfers_of`), when a schedule is lowered.

`phases()` remembers the table of the phases it built (`known_columns`), so that the IR of a
schedule is its table, not a walk over its transfers, and the IR's tables give back the very
same phases (`phases_of_rows`): a million-message schedule goes to the IR and back without
building its transfers twice.
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.schedule import TRANSFER_FIELDS, WHOLE, Phase, Transfer

FIELDS = len(TRANSFER_FIELDS)
# The last few phase tuples built from columns, by id (the entry holds the tuple, so the id
# stays its own), with their rows and offsets as the IR stores them.
_KNOWN: OrderedDict[int, tuple[tuple[Phase, ...], bytes, bytes]] = OrderedDict()
_KNOWN_SIZE = 8


# A build of this many transfers or more ends with one full collection (PhaseColumns.phases).
BIG_BUILD = 1 << 20
CHUNK_ROWS = 1 << 18  # rows whose columns transfers_of holds as Python lists at once


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off while millions of Transfers are built: they are tuples
    of ints, which cannot form cycles, and the collector's passes over a growing heap cost 5x
    the building itself (1M transfers: 9.3 s with it, 1.4 s without, on the shared machine)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def transfers_of(rows: np.ndarray) -> tuple[Transfer, ...]:
    """The Transfers of an (n, 7) int64 table, in row order. Columns of node ids share one int
    object per node (object-array indexing), which halves the memory of a big schedule."""
    if not len(rows):
        return ()
    shared = []  # per column: its values as one int object each, where they are small
    for c in range(FIELDS):
        low, high = int(rows[:, c].min()), int(rows[:, c].max())
        shared.append(np.array(range(high + 1), dtype=object) if 0 <= low and high < 1 << 16
                      else None)
    out: list[Transfer] = []
    with paused_gc():
        for lo in range(0, len(rows), CHUNK_ROWS):  # columns of Python ints a chunk at a time
            part = rows[lo:lo + CHUNK_ROWS]
            columns = [part[:, c].tolist() if ints is None else ints[part[:, c]].tolist()
                       for c, ints in enumerate(shared)]
            out += map(tuple.__new__, [Transfer] * len(part), zip(*columns))
        return tuple(out)


def table(transfers: tuple[Transfer, ...] | list[Transfer]) -> np.ndarray:
    """The (n, 7) int64 table of transfers (TRANSFER_FIELDS)."""
    return np.array(transfers, dtype=np.int64).reshape(-1, FIELDS)


def rows(src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, origin: np.ndarray,
         final: np.ndarray, message: int | np.ndarray = 0, offset: int = WHOLE) -> np.ndarray:
    """A table from its columns (a scalar message id or offset for every row)."""
    out = np.empty((len(src), FIELDS), dtype=np.int64)
    for c, column in enumerate((src, dst, nbytes, origin, final, message, offset)):
        out[:, c] = column
    return out


@dataclass(frozen=True)
class PhaseColumns:
    """Phases that send and receive the same transfers (Phase.of): phase k's transfers are
    rows [offsets[k], offsets[k + 1]) of `rows`, entered with `syncs[k]`."""

    rows: np.ndarray  # (n, 7) int64, TRANSFER_FIELDS
    offsets: np.ndarray  # (phases + 1,) int64, from 0 to n
    syncs: tuple[str, ...]

    @staticmethod
    def of(tables: list[np.ndarray], sync: str = "local") -> PhaseColumns:
        """Phases of the given tables, in order, all entered with `sync`."""
        counts = [len(t) for t in tables]
        joined = np.concatenate(tables) if tables else np.zeros((0, FIELDS), dtype=np.int64)
        return PhaseColumns(joined.reshape(-1, FIELDS),
                            np.concatenate(([0], np.cumsum(counts, dtype=np.int64))),
                            (sync,) * len(tables))

    def phase_rows(self, k: int) -> np.ndarray:
        return self.rows[self.offsets[k]:self.offsets[k + 1]]

    def nonempty(self) -> PhaseColumns:
        """The phases that send something (what Algorithm.schedule keeps)."""
        keep = np.flatnonzero(np.diff(self.offsets) > 0)
        if len(keep) == len(self.syncs):
            return self
        counts = np.diff(self.offsets)[keep]
        return PhaseColumns(self.rows, np.concatenate(([0], np.cumsum(counts))),
                            tuple(self.syncs[k] for k in keep.tolist()))

    def phases(self) -> tuple[Phase, ...]:
        """The Phases, their Transfers built once; remembered with their IR tables."""
        bounds = self.offsets.tolist()
        with paused_gc():  # the phases' tuples too: a pass now would walk every transfer
            transfers = transfers_of(self.rows)
            out = tuple(Phase.of(transfers[a:b], sync)
                        for a, b, sync in zip(bounds, bounds[1:], self.syncs))
            if len(transfers) >= BIG_BUILD:
                # Transfers stay tracked by the collector (a tuple subclass is never untracked),
                # and new objects are walked once per generation they age through: one full
                # pass before the collector runs again walks them once, into the oldest.
                gc.collect()
        _KNOWN[id(out)] = (out, np.ascontiguousarray(self.rows, dtype="<i8").tobytes(),
                           self.offsets.astype("<i8").tobytes())
        while len(_KNOWN) > _KNOWN_SIZE:
            _KNOWN.popitem(last=False)
        return out


def known_columns(phases: tuple[Phase, ...]) -> tuple[bytes, bytes] | None:
    """(rows, offsets) as the IR stores them, of phases built by PhaseColumns.phases (each
    phase sends and receives the same rows), else None."""
    entry = _KNOWN.get(id(phases))
    return (entry[1], entry[2]) if entry is not None and entry[0] is phases else None


def phases_of_rows(sends: bytes, send_offsets: bytes, recvs: bytes, recv_offsets: bytes,
                   syncs: tuple[str, ...]) -> tuple[Phase, ...] | None:
    """The phases built from these IR tables by PhaseColumns.phases, if they are still known
    (equal tables give equal phases: the IR form is lossless), else None."""
    for phases, rows_bytes, offsets_bytes in reversed(_KNOWN.values()):
        if (len(phases) == len(syncs) and (sends is rows_bytes or sends == rows_bytes)
                and (recvs is sends or recvs == rows_bytes) and send_offsets == offsets_bytes
                and recv_offsets == offsets_bytes
                and all(p.sync == s and not p.barrier_groups for p, s in zip(phases, syncs))):
            return phases
    return None


@dataclass(frozen=True)
class MessagePhase:
    """One phase's network messages and local copies, in order, as the cost model sees them
    (compiler/library/estimate.py): a message's bytes are those of all its transfers."""

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    sync: str = "local"
