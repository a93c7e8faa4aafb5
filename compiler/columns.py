"""A schedule's phases as columns: how the all-to-all family's generators build them in numpy.

A generator of the all-to-all family (direct, pairwise, phased, message-passing, Bruck) works
out its transfers as one int64 table, a row per transfer in TRANSFER_FIELDS order, phase after
phase (`PhaseColumns`), without a Python loop over the P x P blocks. Three things read the
table without a Transfer object: the IR (compiler/ir/dialects/sched.py stores exactly these
rows), the cost model (compiler/library/cost.py groups them into messages) and the event
estimate of `--cost simulate` (Target.estimated_events). A Schedule's phases hold their rows
of the table (`TransferRows`), whose Transfer objects are built in C (`transfers_of`) only when
something asks for one: the native run reads the table itself and builds none.

`phases()` remembers the table of the phases it built (`known_columns`), so that the IR of a
schedule is its table, not a walk over its transfers, and the IR's tables give back the very
same phases (`phases_of_rows`): a million-message schedule goes to the IR and back without
building its transfers twice.
"""

from __future__ import annotations

import gc
import io
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain

import numpy as np

from phalanx.compiler.schedule import TRANSFER_FIELDS, WHOLE, Phase, SyncMode, Transfer

FIELDS = len(TRANSFER_FIELDS)
# The last few phase tuples built from columns, by id (the entry holds the tuple, so the id
# stays its own), with their rows and offsets as the IR stores them.
_KNOWN: OrderedDict[int, tuple[tuple[Phase, ...], bytes, bytes]] = OrderedDict()
_KNOWN_SIZE = 8


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


RANGE_ROWS = 256  # rows column_ranges reads as one long row


def column_ranges(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Each column's least and greatest value in an (n, k) int64 table, or None for an empty
    one. Read RANGE_ROWS rows at a time as one long row, so numpy reduces along contiguous
    memory (a 16.8M-row table: 0.17 s instead of 0.85 s for `rows.min(axis=0)` and max)."""
    n, k = rows.shape
    if n == 0:
        return None
    body = n // RANGE_ROWS * RANGE_ROWS
    parts = [rows[body:]] if body < n else []
    if body:
        long_rows = np.ascontiguousarray(rows[:body]).reshape(-1, k * RANGE_ROWS)
        parts += [long_rows.min(axis=0).reshape(-1, k), long_rows.max(axis=0).reshape(-1, k)]
    both = np.concatenate(parts)
    return both.min(axis=0), both.max(axis=0)


class TransferRows(Sequence[Transfer]):
    """A phase's transfers as rows of its schedule's int64 table (TRANSFER_FIELDS), the
    Transfer objects made only when one is asked for: then all of the phase's at once, kept,
    and the rows behave as the tuple of them (equality, hash, `+`, slices). Their number and
    the table (`rows`, read-only) need no object: the native run reads the schedule's table
    (known_columns) and builds none, where a million-message schedule's Transfers cost the
    compile a second of CPU and about 100 bytes each."""

    __slots__ = ("rows", "_built")

    def __init__(self, rows: np.ndarray):
        self.rows = rows
        self._built: tuple[Transfer, ...] | None = None

    def built(self) -> tuple[Transfer, ...]:
        """The Transfers, made on first use."""
        if self._built is None:
            self._built = transfers_of(self.rows)
        return self._built

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):  # an index or a slice, as the tuple's
        return self.built()[i]

    def __iter__(self) -> Iterator[Transfer]:
        return iter(self.built())

    def __contains__(self, t: object) -> bool:
        return t in self.built()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TransferRows):
            return self is other or (len(self) == len(other) and bool((self.rows == other.rows).all()))
        return self.built() == other

    def __hash__(self) -> int:
        return hash(self.built())

    def __add__(self, other: tuple[Transfer, ...] | TransferRows) -> tuple[Transfer, ...]:
        return self.built() + (other.built() if isinstance(other, TransferRows) else other)

    def __radd__(self, other: tuple[Transfer, ...]) -> tuple[Transfer, ...]:
        return other + self.built()

    def __repr__(self) -> str:
        return repr(self.built())

    def __reduce__(self) -> tuple:
        return TransferRows, (np.array(self.rows),)


def table(transfers: tuple[Transfer, ...] | list[Transfer]) -> np.ndarray:
    """The (n, 7) int64 table of transfers (TRANSFER_FIELDS), read as one stream of their
    fields: np.array of the transfers walks each as a nested sequence, 4-9x slower (1M
    transfers: 0.98 -> 0.11 CPU-s; the contention estimate of a 1M-transfer schedule)."""
    return np.fromiter(chain.from_iterable(transfers), dtype=np.int64,
                       count=FIELDS * len(transfers)).reshape(-1, FIELDS)


def rows(src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, origin: np.ndarray,
         final: np.ndarray, message: int | np.ndarray = 0, offset: int = WHOLE) -> np.ndarray:
    """A table from its columns (a scalar message id or offset for every row)."""
    out = np.empty((len(src), FIELDS), dtype=np.int64)
    for c, column in enumerate((src, dst, nbytes, origin, final, message, offset)):
        out[:, c] = column
    return out


def stored(tables: Iterable[np.ndarray]) -> bytes:
    """Tables of TRANSFER_FIELDS rows one after another, as the IR stores them (little-endian
    int64), written a table at a time: no joined table is built beside the bytes (a gigabyte
    for a 4096-node all-to-all), and the bytes are those the IR keeps (PhaseColumns.phases)."""
    out = io.BytesIO()
    for t in tables:
        out.write(np.ascontiguousarray(t, dtype="<i8").reshape(-1, FIELDS))
    return out.getvalue()  # CPython hands over its buffer: no copy


@dataclass(frozen=True)
class PhaseColumns:
    """Phases that send and receive the same transfers (Phase.of): phase k's transfers are
    rows [offsets[k], offsets[k + 1]) of `rows`, entered with `syncs[k]`. Where the rows are
    a (read-only) view of `stored`, bytes as the IR stores them, the IR keeps those bytes."""

    rows: np.ndarray  # (n, 7) int64, TRANSFER_FIELDS
    offsets: np.ndarray  # (phases + 1,) int64, from 0 to n
    syncs: tuple[SyncMode, ...]
    stored: bytes | None = None  # the rows' bytes (stored()), when the rows are a view of them

    def __post_init__(self) -> None:
        if self.stored is not None and len(self.stored) != self.rows.size * 8:
            raise ValueError(f"stored holds {len(self.stored)} bytes, the rows {self.rows.size * 8}")

    @staticmethod
    def of(tables: Iterable[np.ndarray], sync: SyncMode = SyncMode.LOCAL) -> PhaseColumns:
        """Phases of the given tables, in order, all entered with `sync`."""
        tables = list(tables)
        return PhaseColumns.of_stored(stored(tables), [len(t) for t in tables], (sync,) * len(tables))

    @staticmethod
    def of_stored(data: bytes, counts: Sequence[int] | np.ndarray,
                  syncs: tuple[SyncMode, ...]) -> PhaseColumns:
        """Phases of `counts[k]` rows each of a table stored() (a generator that writes its
        table a part at a time), entered with `syncs`."""
        return PhaseColumns(np.frombuffer(data, dtype="<i8").reshape(-1, FIELDS),
                            np.concatenate(([0], np.cumsum(counts, dtype=np.int64))), syncs, data)

    def phase_rows(self, k: int) -> np.ndarray:
        return self.rows[self.offsets[k]:self.offsets[k + 1]]

    def nonempty(self) -> PhaseColumns:
        """The phases that send something (what Algorithm.schedule keeps)."""
        keep = np.flatnonzero(np.diff(self.offsets) > 0)
        if len(keep) == len(self.syncs):
            return self
        counts = np.diff(self.offsets)[keep]
        return PhaseColumns(self.rows, np.concatenate(([0], np.cumsum(counts))),
                            tuple(self.syncs[k] for k in keep.tolist()), self.stored)

    def phases(self) -> tuple[Phase, ...]:
        """The Phases, each sending and receiving one TransferRows over the table (the
        Transfers made when first asked for); remembered with their IR tables, which the
        rows are views of."""
        bounds = self.offsets.tolist()
        rows_bytes = self.stored if self.stored is not None else stored([self.rows])
        table = np.frombuffer(rows_bytes, "<i8").reshape(-1, FIELDS)
        phases = []
        for a, b, sync in zip(bounds, bounds[1:], self.syncs):
            transfers = TransferRows(table[a:b])
            phases.append(Phase(transfers, transfers, sync))  # type: ignore[arg-type]
        out = tuple(phases)
        _KNOWN[id(out)] = (out, rows_bytes, self.offsets.astype("<i8").tobytes())
        while len(_KNOWN) > _KNOWN_SIZE:
            _KNOWN.popitem(last=False)
        return out


def known_columns(phases: tuple[Phase, ...]) -> tuple[bytes, bytes] | None:
    """(rows, offsets) as the IR stores them, of phases built by PhaseColumns.phases (each
    phase sends and receives the same rows), else None."""
    entry = _KNOWN.get(id(phases))
    return (entry[1], entry[2]) if entry is not None and entry[0] is phases else None


def send_rows(phases: tuple[Phase, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every phase's sends as one (n, 7) int64 table, phase after phase, and where each
    phase's rows start (one more than phases): the table the phases were built from where it
    is known (read-only, no Transfer made), else their Transfers' fields."""
    known = known_columns(phases)
    if known is not None:
        return np.frombuffer(known[0], "<i8").reshape(-1, FIELDS), np.frombuffer(known[1], "<i8")
    counts = [len(p.sends) for p in phases]
    return (table([t for p in phases for t in p.sends]),
            np.concatenate(([0], np.cumsum(counts, dtype=np.int64))))


def phases_of_rows(sends: bytes, send_offsets: bytes, recvs: bytes, recv_offsets: bytes,
                   syncs: tuple[SyncMode, ...]) -> tuple[Phase, ...] | None:
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
    sync: SyncMode = SyncMode.LOCAL
