"""Run a Plan on the native event core (runtime/engine_core, the `phalanx_engine_core` extension).

The core holds the event heap, the resources and pools, the node walkers and one process per
message, and mirrors runtime/engine.py and runtime/interpreter.py event for event, so that a
run gives the same simulated times, spans, busy times and event count as the Python engine.
A message is the program its network declares (Network.transfer_program; or its shape,
Network.program_shape, whose ops the core makes from the message's ends), plus the receiver's
combining of reduction partials on its arithmetic resource; a local copy holds its copy time.

The data check stays complete and in Python: the core logs when each message starts and ends
and when a run's last node leaves it, and this module replays runtime/data.py's moves in that
order (the payloads a message takes when it starts, put when it ends, the exactly-once
arrival check, the check of a run's payloads when it closes). The core stops for Python
when a node first enters a run that is not open yet; Python then opens it and the next runs
by index, as long as their payloads stay small (PREOPEN_RUNS, PREOPEN_BYTES), so that a
repeat of small statements runs hundreds of runs between stops and the replay checks them in
bulk. Payloads are drawn when a run opens: in run order here, in the order nodes first enter
the runs on the Python engine (the same sizes and checks; the values may differ where a later
run is entered first). A run stopped by a limit discards the runs opened ahead that no node
entered: they never started.

`native_plan` says whether a run can go native: the extension is installed, the network shows
no payloads (no fault injection), models no pack / unpack time for the plan's messages unless
its program shape carries it (the torus's WormholeShape), offers no fast path for the plan's
schedules, the plan has no pipelines, and every message has
a program (where the network's programs depend on its round-robin counters per pair, the SP2's
adapter, each message's turn is worked out from the plan's order: runtime/round_robin.py).
Otherwise runtime/simulate.py runs the Python interpreter, as before.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.layout import GATHERED, SCATTERED
from phalanx.compiler.plan_walk import AgentStart, ScheduleRun, walk_all
from phalanx.compiler.schedule import (
    ComputeStep,
    PipelineStep,
    Plan,
    RepeatStep,
    Schedule,
    Step,
    SyncMode,
    Transfer,
)
from phalanx.runtime import interpreter
from phalanx.runtime.data import Payloads
from phalanx.runtime.engine import Deadlock, Engine, Pool, Resource, Stopped, deadlock_of
from phalanx.runtime.freed_memory import give_back
from phalanx.runtime.interpreter import Execution, StepTiming
from phalanx.runtime.native_replay import END, LEAVE, START, Replay
from phalanx.runtime.native_spans import MessageLabels, NativeSpans, SpanLabels
from phalanx.runtime.network import (
    OP_KINDS,
    Acquire,
    Hold,
    MessageKind,
    Network,
    PortsShape,
    ProgramColumns,
    ProgramShape,
    Release,
    TransferProgram,
    WormholeShape,
)
from phalanx.runtime.plan_columns import (
    DST,
    FINAL,
    MESSAGE,
    NBYTES,
    ORIGIN,
    SRC,
    ScheduleColumns,
    all_distinct,
    distinct,
    slot_index,
)
from phalanx.runtime.round_robin import RunTurns
from phalanx.runtime.schedule_index import ScheduleIndex, send_name

try:  # built by `make setup` (pip install runtime/engine_core); without it runs stay in Python
    import phalanx_engine_core as core_module
except ImportError:  # pragma: no cover - every supported set-up builds it
    core_module = None
else:
    assert (core_module.LOG_START, core_module.LOG_END, core_module.LOG_LEAVE) == (START, END, LEAVE)

OP_CODES = {Acquire: 0, Hold: 1, Release: 2}  # the core's op codes (Core.add_programs)
HOLD = OP_CODES[Hold]
CORE_CODES = np.array([OP_CODES[kind] for kind in OP_KINDS], np.uint8)  # ProgramColumns.kinds -> core
# Log entries replayed at a time: a run whose every entry is in one chunk moves in bulk at once,
# its transfers checked once per schedule (ideal:1024's 2M entries took 32 chunks, each
# checked again); 48 MB of log. The entries replayed one by one go LOG_ONE_BY_ONE at a time.
# The core stops when it has logged LOG_PART entries (LOG_FULL), so that a log is never kept
# whole where it is longer (a 4096-node all-to-all's 33.5M entries, 400 MB; torus:32x32's
# message-passing all-to-all's 2.1M, whose whole log, its copy for Python and the replay's
# temporaries of the whole chunk, the chunk's transfer rows at 56 bytes each, added 130 MB
# to its peak): a run with fewer entries is still replayed whole at once (ideal:256).
LOG_CHUNK = 1 << 22
LOG_PART = 1 << 18
SMALL_SPAN = 1 << 16  # _distinct: keys of at most this many values go by a table, not a sort
GIVE_BACK_MESSAGES = 1 << 14  # a schedule of this many messages gives its temporaries back (_add_schedule)
PREOPEN_RUNS = 512  # runs opened ahead of the core at most (NativeRun._open)
PREOPEN_BYTES = 1 << 22  # and the bytes their schedules move at most
PROGRAM_CHUNK = 1 << 20  # programs built from a network's columns at once (NativeRun._add_program_chunk)
# and about this many ops at most: chunks after the first are sized by the ops per program so
# far (the SP2's programs by turn, some 80-100 ops each: sp2:256's run peaked at 444 MB with
# all of them at once, 369 MB so)
PROGRAM_OPS = 1 << 20
FIRST_PROGRAMS = 1 << 12  # the first chunk's programs, before the ops per program are known
# messages whose per-message int64 temporaries are made at once (_message_ends, _message_slots,
# _sent_ids, the wormhole programs' keys): 128 KB each, freed but kept resident by glibc under the
# core's run (a million messages' were 8 MB each; at 2^18, seven of 2 MB set torus:16x16's
# message-passing peak while its programs were made: docs/engine.md)
COLUMN_CHUNK = 1 << 14


def _as_core(values: np.ndarray, dtype: type) -> np.ndarray:
    """`values` as the core's int type, read-only (the core holds a schedule's arrays in place,
    Core.add_schedule): a view where they are 4-byte ints already (the columns' int32 indices,
    none negative where read as uint32), else a copy."""
    if values.dtype.itemsize == 4 and values.dtype.kind in "iu" and values.flags.c_contiguous:
        out = values.view(dtype)
    else:
        out = np.ascontiguousarray(values, dtype)
    out.flags.writeable = False
    return out


def _u32(values: np.ndarray) -> np.ndarray:
    """An index array as the core's uint32, refused where a value does not fit."""
    if len(values) and (values.min() < 0 or values.max() > np.iinfo(np.uint32).max):
        raise ValueError("an index of the core's arrays lies outside uint32")
    return _as_core(values, np.uint32)


def _i32(values: np.ndarray) -> np.ndarray:
    """A slot or barrier index, -1 for none, as the core's int32, refused where one does not fit."""
    if len(values) and (values.min() < -1 or values.max() > np.iinfo(np.int32).max):
        raise ValueError("an index of the core's arrays lies outside int32")
    return _as_core(values, np.int32)


def _message_ends(cols: ScheduleColumns, nprocs: int) -> tuple[np.ndarray, np.ndarray]:
    """Each message's sender and receiver as int32 (a node of the schedule; the core refuses
    others), filled a chunk of messages at a time: no int64 column of them (134 MB each at
    4096 nodes)."""
    if nprocs > np.iinfo(np.int32).max:
        raise ValueError("a node of the core's arrays lies outside int32")
    src, dst = np.empty(cols.nmessages, np.int32), np.empty(cols.nmessages, np.int32)
    for lo in range(0, cols.nmessages, COLUMN_CHUNK):
        rows = cols.first[lo:lo + COLUMN_CHUNK]
        for out, column in ((src, SRC), (dst, DST)):
            ends = cols.table[rows, column]
            if ends.min() < 0 or ends.max() > np.iinfo(np.int32).max:
                raise ValueError("an index of the core's arrays lies outside int32")
            out[lo:lo + len(rows)] = ends
    return src, dst


def _message_slot_index(cols: ScheduleColumns, src: np.ndarray, nprocs: int, nslots: int) -> np.ndarray:
    """plan_columns.slot_index of the messages' slots, the offsets counted a chunk of messages at
    a time where there are at least as many messages as slots (no slot per message beside them:
    67 MB at ideal:4096's 16.8M messages, at the run's peak)."""
    if len(src) < nslots:
        return slot_index(_message_slots(cols, src, nprocs), nslots, np.uint32)
    if len(src) > np.iinfo(np.uint32).max:  # (the offsets are summed in uint32)
        raise ValueError("an index of the core's arrays lies outside uint32")
    offsets = np.zeros(nslots + 1, np.uint32)  # counts shifted by one, then summed in place
    for _, slot in _message_slot_chunks(cols, src, nprocs):
        first, last = int(slot[0]), int(slot[-1])
        offsets[first + 1:last + 2] += np.bincount(slot - first).astype(np.uint32)
    return np.cumsum(offsets, out=offsets)


def _message_slots(cols: ScheduleColumns, src: np.ndarray, nprocs: int) -> np.ndarray:
    """Each message's slot (phase * nprocs + sender) as uint32 (no int64 slot per message: 134
    MB at 4096 nodes); the core gets the smaller of them and offsets per slot
    (plan_columns.slot_index: torus:64x64's phased all-to-all has 8 slots a message, 537 MB of
    offsets)."""
    out = np.empty(len(src), np.uint32)
    for lo, slot in _message_slot_chunks(cols, src, nprocs):
        out[lo:lo + len(slot)] = slot
    return out


def _message_slot_chunks(cols: ScheduleColumns, src: np.ndarray,
                         nprocs: int) -> Iterator[tuple[int, np.ndarray]]:
    """The messages' slots (phase * nprocs + sender) a chunk at a time, with the chunk's first
    message: from the messages' phases and senders, which come in slot order (the walk's: by
    phase and sender), checked."""
    last = 0  # the slot of the chunk before's last message
    for lo in range(0, len(src), COLUMN_CHUNK):
        slot = cols.phases(cols.first[lo:lo + COLUMN_CHUNK]) * nprocs + src[lo:lo + COLUMN_CHUNK]
        if slot[0] < last or (slot[1:] < slot[:-1]).any():
            raise AssertionError("the schedule's messages are not in slot order (by phase and sender)")
        last = int(slot[-1])
        yield lo, slot


def _one_value(values: np.ndarray, where: np.ndarray) -> bool:
    """`values` are one value where `where` is true (or nowhere true), read in place."""
    return values.min(where=where, initial=np.iinfo(np.int64).max) >= \
        values.max(where=where, initial=np.iinfo(np.int64).min)


def _distinct_of_small(key: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """`_distinct` of one int key per row below `span`, by a table of each key's first row:
    no sort of the rows (np.unique's sorted copies and inverse, 8 bytes a row each, set
    torus:32x32's phased all-to-all's peak: its messages differ only by their phase)."""
    n = len(key)
    first_row = np.full(span, n, np.int64)
    np.minimum.at(first_row, key, np.arange(n))
    first, rank = _ranked_first_rows(first_row, n, np.int64)
    return first, rank[key]


def _ranked_first_rows(first_row: np.ndarray, n: int, rank_type: type) -> tuple[np.ndarray, np.ndarray]:
    """From each key value's first row (`n` where no row has it): the present values' first
    rows in the order they come, and each value's rank among them (`rank_type`)."""
    present = np.flatnonzero(first_row < n)
    first = first_row[present]
    order = np.argsort(first, kind="stable")
    rank = np.zeros(len(first_row), rank_type)
    rank[present[order]] = np.arange(len(order))
    return first[order], rank


def _distinct(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a table of non-negative ints given as its columns, in the order
    they first come (as indices of their first rows), and which of them each row is. Where
    the columns' spans multiply to less than 2**62 each row is one int (mixed radix), built
    column by column: the table itself is never stacked (16.8M rows at 4096 nodes)."""
    spans = [int(c.max(initial=0)) + 1 for c in columns]
    n = len(columns[0])
    if np.prod(np.array(spans, dtype=object)) < 1 << 62:  # each row one int: a 1-d unique, much faster
        key = columns[0].astype(np.int64)
        for column, span in zip(columns[1:], spans[1:]):
            key *= span
            key += column
        if n and key.min() == key.max():  # one row throughout (shaped programs of one size): no sort
            return np.zeros(1, np.int64), np.zeros(n, np.int64)
        span = int(np.prod(spans))
        if span <= SMALL_SPAN:  # few possible rows (a phased schedule's phases): no sort
            return _distinct_of_small(key, span)
        if all_distinct(key):  # every row its own (ideal's all-to-all): one sort
            return np.arange(n), np.arange(n)
        _, first, which = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, which = np.unique(np.column_stack(columns), axis=0, return_index=True,
                                    return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return first[order], rank[which.reshape(-1)]


def add_shape(core, shape: ProgramShape, resource_id: Callable[[Resource | Pool], int]) -> int:
    """The shape in `core` (shapes.rs), its resources named by their core ids; returns its id."""
    def ids(resources: tuple[Resource | Pool, ...]) -> list[int]:
        return [resource_id(r) for r in resources]

    if isinstance(shape, PortsShape):
        return core.add_ports_shape(ids(shape.send_ports), ids(shape.recv_ports), shape.startup_s)
    if isinstance(shape, WormholeShape):
        t = shape.route
        return core.add_wormhole_shape(t.rows, t.cols, ids(t.cpus), ids(t.inject), ids(t.vcs), ids(t.wires),
                                       ids(t.memory), t.overhead_s, t.hop_s, ids(shape.library_sends),
                                       ids(shape.library_receives), shape.receive_overhead_s,
                                       shape.phased_overhead_s)
    return core.add_torus_shape(shape.rows, shape.cols, ids(shape.cpus), ids(shape.inject), ids(shape.vcs),
                                ids(shape.wires), ids(shape.memory), shape.overhead_s, shape.hop_s)


def native_available() -> bool:
    """The extension is installed (`make setup` builds it)."""
    return core_module is not None


@dataclass
class NativePlan:
    """A plan the core can run, with its schedules' indexes (by collective)."""

    plan: Plan
    indexes: dict[int, ScheduleIndex]


def native_plan(plan: Plan, network: Network, fast: bool) -> NativePlan | None:
    """The plan prepared for the core, or None where it must run on the Python engine."""
    if core_module is None or network.sees_payloads or _has_pipeline(plan.steps):
        return None
    out = NativePlan(plan, {})
    for schedule in plan.schedules():
        # the interpreter runs an eager schedule without the fast path (Interpreter._enter)
        if fast and not schedule.eager and network.fast_plan(schedule) is not None:
            return None
        index = out.indexes.setdefault(schedule.collective, ScheduleIndex(schedule))
        cols = index.columns()
        # pack / unpack time runs natively only where the shape carries it (the torus's WormholeShape)
        if any(network.packs(m) for m in distinct(cols.table[:, MESSAGE]).tolist()) and \
                not isinstance(network.program_shape(_sent_ids(cols)), WormholeShape):
            return None
        if not _has_programs(cols, network):
            return None
    return out


def _has_programs(cols: ScheduleColumns, network: Network) -> bool:
    """Every message of the schedule that crosses the network has a program: all of them
    where the network gives their shape (Network.program_shape) or their programs as columns
    (Network.programs_as_columns, built once, when the core's arrays are), else each asked
    with the bytes of its first transfer (whether there is one does not depend on the byte
    count)."""
    message = _sent_ids(cols)
    if network.program_shape(message) is not None or network.programs_as_columns(message) or \
            network.round_robin() is not None:
        return True
    sent = np.flatnonzero(cols.table[cols.first, SRC] != cols.table[cols.first, DST])
    return all(network.transfer_program(cols.send(int(cols.msg_start[m]))) is not None for m in sent.tolist())


def _sent_ids(cols: ScheduleColumns) -> np.ndarray:
    """The distinct message ids of the schedule's messages that cross the network (not local
    copies): what a network's program_shape and programs_as_columns ask about (which ids
    there are), worked out a chunk of messages at a time (16.8M at 4096 nodes)."""
    found = [np.zeros(0, np.int64)]
    for lo in range(0, cols.nmessages, COLUMN_CHUNK):
        first = cols.first[lo:lo + COLUMN_CHUNK]
        sent = cols.table[first, SRC] != cols.table[first, DST]
        found.append(distinct(cols.table[first[sent], MESSAGE]))
    return distinct(np.concatenate(found))


def _strided_bytes(cols: ScheduleColumns, bits: np.ndarray | None,
                   msgs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Messages `msgs`' (gather, scatter) bytes, compiler/layout.py `strided_bytes` of their
    transfers at once, from every block's GATHERED | SCATTERED bits (`strided_bits`; None: none)."""
    if bits is None or not len(msgs):
        return np.zeros(len(msgs), np.int64), np.zeros(len(msgs), np.int64)
    starts, lengths = cols.msg_start[msgs], cols.msg_start[msgs + 1] - cols.msg_start[msgs]
    firsts = np.cumsum(lengths) - lengths  # where each message's transfers start among `t`'s rows
    t = cols.table[np.repeat(starts - firsts, lengths) + np.arange(int(lengths.sum()))]
    block = bits[t[:, ORIGIN], t[:, FINAL]]
    gather = np.where((t[:, SRC] == t[:, ORIGIN]) & (block & GATHERED != 0), t[:, NBYTES], 0)
    scatter = np.where((t[:, DST] == t[:, FINAL]) & (block & SCATTERED != 0), t[:, NBYTES], 0)
    return np.add.reduceat(gather, firsts), np.add.reduceat(scatter, firsts)


def _chunks(n: int) -> Iterable[np.ndarray]:
    """0..n - 1 as index arrays of at most COLUMN_CHUNK."""
    return (np.arange(lo, min(n, lo + COLUMN_CHUNK)) for lo in range(0, n, COLUMN_CHUNK))


def _distinct_in_chunks(columns_of: Callable[[np.ndarray], list[np.ndarray]],
                        chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_distinct` of the rows `chosen` (a flag per row) of a table of ints whose
    columns `columns_of(rows)` makes for any rows, asked COLUMN_CHUNK rows at a time: no
    column of every row (134 MB each in int64 at 4096 nodes). Returns the distinct rows' first
    rows (in the order they first come) and, per row, which of them it is (uint32; meaningless
    where not chosen). A column of one value among the chosen rows tells none apart: left out.
    Where the rest take at most SMALL_SPAN values (a phased schedule's phases) a table of each
    value's first row does it, with a uint16 key per row; else `_distinct` of the columns of the
    chosen rows."""
    n = len(chosen)
    low: list[int] | None = None
    high: list[int] = []
    for rows in _chunks(n):
        picked = rows[chosen[rows]]
        if not len(picked):
            continue
        columns = columns_of(picked)
        if low is None:
            low, high = [int(c.min()) for c in columns], [int(c.max()) for c in columns]
        else:
            low = [min(lo, int(c.min())) for lo, c in zip(low, columns)]
            high = [max(hi, int(c.max())) for hi, c in zip(high, columns)]
    which = np.zeros(n, np.uint32)
    if low is None:  # no row chosen
        return np.zeros(0, np.int64), which
    varying = [c for c, (lo, hi) in enumerate(zip(low, high)) if hi > lo]
    spans = [high[c] - low[c] + 1 for c in varying]
    if not varying:  # one row throughout
        return np.array([int(np.argmax(chosen))], np.int64), which
    if np.prod(np.array(spans, dtype=object)) > SMALL_SPAN:
        picked = np.flatnonzero(chosen)
        first, of = _distinct([columns_of(picked)[c] for c in varying])
        which[picked] = of
        return picked[first], which
    span = int(np.prod(spans))
    key = np.zeros(n, np.uint16)  # a chosen row's value, mixed radix (below SMALL_SPAN: 16 bits)
    first_row = np.full(span, n, np.int64)
    for rows in _chunks(n):
        picked = rows[chosen[rows]]
        if not len(picked):
            continue
        columns = columns_of(picked)
        value = np.zeros(len(picked), np.int64)
        for c, width in zip(varying, spans):
            value *= width
            value += columns[c] - low[c]
        key[picked] = value
        np.minimum.at(first_row, value, picked)
    first, rank = _ranked_first_rows(first_row, n, np.uint32)
    for rows in _chunks(n):
        which[rows] = rank[key[rows]]
    return first, which


def _busy(cpu: Resource, time_s: float) -> TransferProgram:
    """The processor busy for `time_s`, nothing where that is no time (WormholeNetwork.pack_program)."""
    return (Acquire(cpu), Hold(time_s), Release(cpu)) if time_s > 0 else ()


def _combine(arithmetic: Resource, time_s: float) -> TransferProgram:
    """The receiver combining partials on its arithmetic (Interpreter._send), however short."""
    return Acquire(arithmetic), Hold(time_s), Release(arithmetic)


def _has_pipeline(steps: tuple[Step, ...]) -> bool:
    return any(isinstance(s, PipelineStep) or isinstance(s, RepeatStep) and _has_pipeline(s.body)
               for s in steps)


@dataclass
class _Items:
    """The plan's steps in order (plan_walk.walk_all: repeats unrolled), as the core's item
    arrays; a NodeConsumer of every node at once (the core runs an item on the nodes it names)."""

    label_of: Callable[[str], int]
    is_compute: list[bool] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    nprocs: list[int] = field(default_factory=list)
    cost_s: list[float] = field(default_factory=list)
    label: list[int] = field(default_factory=list)
    run: list[int] = field(default_factory=list)

    def add(self, compute: bool, first: int, nprocs: int, cost_s: float, label: int, run: int) -> None:
        self.is_compute.append(compute)
        self.first.append(first)
        self.nprocs.append(nprocs)
        self.cost_s.append(cost_s)
        self.label.append(label)
        self.run.append(run)

    def compute(self, step: ComputeStep) -> None:
        self.add(True, step.first, step.nprocs, step.cost_s, self.label_of(step.label), 0)

    def communicate(self, run: ScheduleRun) -> None:
        self.add(False, 0, run.schedule.nprocs, 0.0, 0, run.run)

    def start_agent(self, start: AgentStart) -> None:
        raise AssertionError("native_plan keeps plans with pipelines on the Python engine")

    def await_agent(self, agent: int) -> None:
        raise AssertionError("native_plan keeps plans with pipelines on the Python engine")


class NativeRun:
    """One run of a plan on the core; `run()` returns the Execution the Interpreter would."""

    def __init__(self, prepared: NativePlan, network: Network, engine: Engine, data: Payloads):
        self.prepared, self.plan, self.network, self.engine = prepared, prepared.plan, network, engine
        self.data = data
        self.core = core_module.Core(self.plan.nprocs, self.plan.run_count, interpreter.MAX_SPANS,
                                     engine.max_events, engine.time_limit_s, LOG_PART)
        self.resource_ids: dict[int, int] = {}  # id(Resource or Pool) -> core id
        self.resources: list[Resource | Pool] = []  # by core id
        self.arithmetic: dict[int, Resource] = {}  # node -> its arithmetic resource
        self.labels: list[str] = []
        self.label_ids: dict[str, int] = {}
        # (collective, its messages' round-robin turns as bytes, b"" without) -> core schedule id
        self.schedule_ids: dict[tuple[int, bytes], int] = {}
        robin = network.round_robin()
        self.turns = None if robin is None else RunTurns(robin, self.plan.nprocs)
        # what each schedule's message labels are made of, when a span is read (native_spans.py)
        self.message_labels: list[MessageLabels] = []
        self.next_label = 0  # the next message label id (after the compute steps' labels)
        self.run_schedules = self.plan.run_schedules()
        self.replay = Replay(data, self._columns)
        self.opened = np.zeros(self.plan.run_count, bool)
        self.schedule_bytes: dict[int, int] = {}  # collective -> bytes its transfers move

    def run(self) -> Execution:
        """Run the plan; Python's cyclic garbage collector is paused meanwhile: the arrays are
        built from millions of small objects, none of them in a cycle, and its passes over
        them took half the time."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if collecting:
                gc.enable()

    def _run(self) -> Execution:
        self._set_items()
        core = self.core
        parts = 0  # the log's parts replayed
        while True:
            status, run = core.run()
            finished = status == core_module.FINISHED
            if finished:  # the run's queue and records, freed by the core (Core::release_run_state),
                give_back()  # not kept under the last replay
            replayed = False
            while log := core.take_log(LOG_CHUNK):
                if finished:  # nor the log's vector, handed over whole (1.6 MB at torus:16x16
                    give_back()  # message-passing; once a run, not once a part)
                self.replay.replay(np.asarray(log).reshape(-1, 3))
                replayed = True
            if replayed:  # the replay's temporaries (a part's transfer rows copied, 30 MB at
                give_back()  # torus:32x32), not kept resident under the core's run and after
            if status == core_module.LOG_FULL:  # replayed as it grows, not kept whole
                parts += 1
                continue
            if status != core_module.NEED_RUN:
                break
            self._open(run)
        if parts:  # the parts' replays left their temporaries in the heap (runtime/freed_memory.py):
            give_back()  # given back before the spans are made (torus:32x32 message-passing: 50 MB)
        self.engine.now, self.engine.events_processed = core.now, core.events
        for resource, busy_s in zip(self.resources, core.busy()):
            resource.busy_s = busy_s
        if status == core_module.DEADLOCK:
            raise self._deadlock()
        complete = status not in (core_module.STOPPED_EVENTS, core_module.STOPPED_TIME)
        if self.turns is not None and complete and self.turns.runs == self.plan.run_count:
            self.turns.write_back()
        if status == core_module.SENT_TWICE:  # the replay above raised it
            raise AssertionError("the core found a block sent twice that the data replay did not")
        starts, ends = core.timings()
        for run in np.flatnonzero(self.opened).tolist():
            if starts[run] == float("inf") and self.replay.discard(run):  # opened ahead, never entered
                self.data.discard(run)
        timings = {r: StepTiming(starts[r], ends[r]) for r in range(self.plan.run_count)}
        spans = self._spans()
        if status in (core_module.STOPPED_EVENTS, core_module.STOPPED_TIME):
            reason = f"at the limit of {self.engine.max_events} events" \
                if status == core_module.STOPPED_EVENTS else \
                f"at the time limit of {self.engine.time_limit_s:g} s"
            stop = Stopped(reason, core.events, core.now)
            return Execution(core.now, timings, spans, core.events, 0, str(stop), core.spans_left_out)
        return Execution(max(core.finish(), default=0.0), timings, spans, core.events, 0,
                         spans_left_out=core.spans_left_out)

    # -- building the core's arrays ------------------------------------------------------

    def _label(self, text: str) -> int:
        if text not in self.label_ids:
            self.label_ids[text] = len(self.labels)
            self.labels.append(text)
        return self.label_ids[text]

    def _set_items(self) -> None:
        items = _Items(self._label)
        for _ in walk_all(self.plan.steps, items):
            pass
        self.core.set_items(items.is_compute, items.first, items.nprocs, items.cost_s, items.label,
                            items.run)
        self.next_label = len(self.labels)

    def _resource(self, resource: Resource | Pool) -> int:
        key = id(resource)
        if key not in self.resource_ids:
            unit = isinstance(resource, Resource)
            capacity, grant_now = (1, True) if unit else (resource.capacity, resource.grant_now)
            self.resource_ids[key] = self.core.add_resource(unit, capacity, grant_now)
            self.resources.append(resource)
        return self.resource_ids[key]

    def _arithmetic(self, node: int) -> Resource:
        """The node's processor as it combines reduction partials (Interpreter._arithmetic)."""
        if node not in self.arithmetic:
            self.arithmetic[node] = Resource(self.engine, f"node {node} arithmetic")
        return self.arithmetic[node]

    def _open(self, run: int) -> None:
        """A node enters `run` first: open it, and the next runs not open yet while there are
        at most PREOPEN_RUNS of them moving at most PREOPEN_BYTES (module docstring)."""
        self._open_one(run)
        ahead, nbytes = run + 1, 0
        while ahead < min(self.plan.run_count, run + 1 + PREOPEN_RUNS):
            if not self.opened[ahead]:
                nbytes += self._bytes(self.run_schedules[ahead])
                if nbytes > PREOPEN_BYTES:
                    break
                self._open_one(ahead)
            ahead += 1

    def _open_one(self, run: int) -> None:
        """Draw the run's payloads, give the core its schedule. Where the network's programs
        depend on its round-robin counters, the runs before are opened first (the turns are
        taken in run order, runtime/round_robin.py) and runs of a schedule share the core's
        schedule where their messages' turns are the same."""
        if self.turns is not None:
            for earlier in range(self.turns.runs, run):
                self._open_one(earlier)
        self.opened[run] = True
        self.data.open(run)
        self.replay.open(run)
        schedule = self.run_schedules[run]
        cols = self._columns(run)
        sizes, turn = None, None  # every message's (wire bytes, merges), asked for once
        if self.turns is not None:
            sizes = self.data[run].message_bytes(cols)
            turn = self.turns.take(run, schedule.collective, cols.table[cols.first, SRC],
                                   cols.table[cols.first, DST], sizes[0])
        key = (schedule.collective, b"" if turn is None else turn.tobytes())
        if key not in self.schedule_ids:
            if sizes is None:
                sizes = self.data[run].message_bytes(cols)
            self.schedule_ids[key] = self._add_schedule(schedule, run, turn, sizes)
        self.core.open_run(run, self.schedule_ids[key])

    def _bytes(self, schedule: Schedule) -> int:
        """The bytes the schedule's transfers move (what a run of it holds, roughly)."""
        if schedule.collective not in self.schedule_bytes:
            cols = self.prepared.indexes[schedule.collective].columns()
            self.schedule_bytes[schedule.collective] = int(cols.table[:, NBYTES].sum())
        return self.schedule_bytes[schedule.collective]

    def _add_schedule(self, schedule: Schedule, run: int, turn: np.ndarray | None,
                      sizes: tuple[np.ndarray, np.ndarray]) -> int:
        """The schedule as the core's arrays, from its columns (runtime/plan_columns.py): its
        messages (ends, program, keys; `sizes`: their wire bytes and merges), per phase and node
        the messages sent and the blocks due, the barrier sets."""
        index, data = self.prepared.indexes[schedule.collective], self.data[run]
        cols = index.columns()
        nprocs, nphases, nmsg = schedule.nprocs, len(schedule.phases), cols.nmessages
        slots = nphases * nprocs
        src, dst = _message_ends(cols, nprocs)
        nbytes, operations = sizes
        program = self._add_programs(cols, src, dst, nbytes, operations, data, turn)
        if slots > np.iinfo(np.int32).max:
            raise ValueError("an index of the core's arrays lies outside int32")
        msg_slots = _message_slot_index(cols, src, nprocs, slots)
        msg_slots.flags.writeable = False  # the core holds it in place (Core.add_schedule)
        inbox_slots = _u32(cols.recv_slots)  # (a view of the columns', held by the core)
        barrier_size: list[int] = []
        barrier_delay_s: list[float] = []
        slot_barrier = np.zeros(0, np.int32)  # none: empty (a slot per phase and node where some phase has)
        for k, phase in enumerate(schedule.phases):
            for nodes in phase.barriers(nprocs):
                if not len(slot_barrier):
                    slot_barrier = np.full(slots, -1, np.int32)
                slot_barrier[k * nprocs + np.array(nodes, np.int64)] = len(barrier_size)
                barrier_size.append(len(nodes))
                barrier_delay_s.append(self.network.barrier_time_s(len(nodes)))
        slot_barrier.flags.writeable = False
        # the wire bytes for the labels of the spans kept, in the least type they fit (8-byte
        # blocks: one byte a message, not 8)
        label_bytes = nbytes.astype(np.min_scalar_type(nbytes.max(initial=0)))
        self.message_labels.append(MessageLabels(self.next_label, cols, label_bytes))
        label_base = self.next_label  # message m's span label: label_base + m
        self.next_label += nmsg
        u32 = _u32
        eager = np.array([phase.sync == SyncMode.EAGER for phase in schedule.phases], np.uint8)
        sched = self.core.add_schedule(
            nprocs, nphases, eager, u32(dst), u32(program), label_base, u32(cols.msg_start), u32(cols.key),
            msg_slots, inbox_slots, u32(cols.recv_key), _i32(cols.key_due), slot_barrier,
            u32(np.array(barrier_size, np.int64)), np.array(barrier_delay_s, np.float64))
        if nmsg >= GIVE_BACK_MESSAGES:
            # the programs' per-message temporaries (int64 columns of 8 MB at 1M messages, below
            # glibc's mmap threshold): freed, but resident under the core's run unless given back
            give_back()
        return sched

    def _add_programs(self, cols: ScheduleColumns, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                      operations: np.ndarray, data, turn: np.ndarray | None) -> np.ndarray:
        """Every message's program (as Interpreter._send times it): a local copy's copy time or
        the network's transfer, then the receiver combining reduction partials. Where the
        network gives its programs' shape (Network.program_shape) the core makes each sent
        message's ops from its ends; else the network's programs as columns where it gives them
        (Network.transfer_programs), else one by one. Returns each message's program id in the
        core. Messages alike in what their program depends on share one (made in the order
        they first come): a shaped one depends on bytes and merges only, one as columns also
        on the ends."""
        sent = src != dst
        sent_ids = _sent_ids(cols)
        shape = self.network.program_shape(sent_ids)
        if isinstance(shape, WormholeShape):
            return self._add_switched_programs(shape, cols, sent, dst, nbytes, operations, data)
        if shape is not None:
            return self._add_shaped_programs(shape, sent, dst, nbytes, operations)
        src, dst = src.astype(np.int64), dst.astype(np.int64)  # the networks' own columns' type
        if turn is not None:  # the network's round robin: programs by turn, as columns
            return self._add_programs_as_columns(cols, src, dst, nbytes, operations, turn)
        if not self.network.programs_as_columns(sent_ids):
            first = self._add_programs_one_by_one(cols, nbytes, operations)
            return np.arange(first, first + len(src))
        return self._add_programs_as_columns(cols, src, dst, nbytes, operations)

    def _add_shaped_programs(self, shape: ProgramShape, sent: np.ndarray, dst: np.ndarray,
                             nbytes: np.ndarray, operations: np.ndarray) -> np.ndarray:
        """The sent messages' programs by shape (one per distinct bytes and merges), the local
        copies' as ops; returns each message's program id (uint32). Where every sent message
        has the same bytes and merges (an all-to-all of one block size), one program and no
        key per message."""
        program = np.empty(len(sent), np.uint32)
        if _one_value(nbytes, sent) and _one_value(operations, sent):
            first_sent = int(np.argmax(sent)) if len(sent) else 0
            at = np.array([first_sent] if len(sent) and sent[first_sent] else [], np.int64)
            program_of: np.ndarray | int = 0
        else:
            sent_at = np.flatnonzero(sent)
            kept, program_of = _distinct([nbytes[sent_at], operations[sent_at]])
            at = sent_at[kept]
            del sent_at
        data_s = np.ascontiguousarray(shape.data_s(nbytes[at]), np.float64)
        combines, combine_s = self._combining(at, sent, dst, operations)
        first = self.core.add_shaped_programs(self._shape(shape), data_s, combines.astype(np.uint8),
                                              combine_s)
        program[sent] = first + program_of
        self._add_copy_programs(program, sent, dst, nbytes, operations)
        return program

    def _add_switched_programs(self, shape: WormholeShape, cols: ScheduleColumns, sent: np.ndarray,
                               dst: np.ndarray, nbytes: np.ndarray, operations: np.ndarray,
                               data) -> np.ndarray:
        """The sent messages' programs by the torus's wormhole shape (one per distinct bytes,
        merges, kind, collective and phase, and the library's strided bytes at each end, which
        the application's code packs and unpacks: the data's `strided_bytes`, as
        Interpreter._send asks), the local copies' as ops (a library copy's packing around its
        copy time); returns each message's program id (uint32). What a program depends on is
        made COLUMN_CHUNK messages at a time (_distinct_in_chunks): at 4096 nodes each such
        column of every message was 134 MB in int64, eight of them at once."""
        def kinds(msgs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return shape.kinds(cols.table[cols.first[msgs], MESSAGE])

        packs = any((kinds(msgs)[0] == MessageKind.LIBRARY).any() for msgs in _chunks(len(sent)))
        bits = data.strided_bits() if packs else None  # (asked only where a message is the library's)

        def alike(msgs: np.ndarray) -> list[np.ndarray]:
            """What the programs of messages `msgs` depend on: bytes, merges, kind, collective,
            phase, gathered and scattered bytes (only the library's messages are packed)."""
            kind, collective, phase = kinds(msgs)
            gather, scatter = _strided_bytes(cols, bits, msgs)
            plain = kind != MessageKind.LIBRARY
            gather[plain], scatter[plain] = 0, 0
            return [nbytes[msgs], operations[msgs], kind, collective, phase, gather, scatter]

        def packing(kind: np.ndarray, strided: np.ndarray) -> np.ndarray:
            """The pack (or unpack) time of these programs (only the library's are packed)."""
            out, packed = np.zeros(len(kind)), kind == MessageKind.LIBRARY
            out[packed] = self._times(strided[packed], shape.pack_s)
            return out

        at, program = _distinct_in_chunks(alike, sent)
        size, _, kind, collective, phase, gather, scatter = alike(at)
        data_s = np.ascontiguousarray(shape.route.data_s(size), np.float64)
        combines, combine_s = self._combining(at, sent, dst, operations)
        first = self.core.add_switched_programs(
            self._shape(shape), data_s, combines.astype(np.uint8), combine_s,
            np.ascontiguousarray(kind, np.uint8), packing(kind, gather), packing(kind, scatter),
            _u32(collective), _u32(phase))
        if first + len(at) > np.iinfo(np.uint32).max:
            raise ValueError("a program id of the core lies outside uint32")
        np.add(program, np.uint32(first), out=program, where=sent)
        copies = np.flatnonzero(~sent)
        if len(copies):
            size, merges, kind, _, _, gather, scatter = alike(copies)
            kept, program_of = _distinct([size, merges, dst[copies], gather, scatter])
            at = copies[kept]
            combine_s = self._times(operations[at], self.network.combine_time_s)
            cpus = shape.route.cpus
            first = self._add_program_tuples(
                (*_busy(cpus[node], pack), *self.network.copy_program(node, size),
                 *_busy(cpus[node], unpack), *(_combine(self._arithmetic(node), combine) if ops else ()))
                for pack, unpack, node, size, ops, combine in zip(
                    packing(kind[kept], gather[kept]).tolist(), packing(kind[kept], scatter[kept]).tolist(),
                    dst[at].tolist(), nbytes[at].tolist(), operations[at].tolist(), combine_s.tolist()))
            program[copies] = first + program_of
        return program

    def _combining(self, at: np.ndarray, sent: np.ndarray, dst: np.ndarray,
                   operations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of the distinct sent programs (those of messages `at`) combine reduction
        partials and their combine times; the arithmetic resources of the receivers of sent
        messages that combine told to the core."""
        merges = operations[at]
        combines = merges > 0
        combine_s = np.zeros(len(at), np.float64)
        if combines.any():
            nodes = distinct(dst[sent & (operations > 0)])
            ids = [self._resource(self._arithmetic(int(n))) for n in nodes.tolist()]
            self.core.set_arithmetic(nodes.astype(np.uint32).tolist(), ids)
            combine_s[combines] = self._times(merges[combines], self.network.combine_time_s)
        return combines, combine_s

    def _add_copy_programs(self, program: np.ndarray, sent: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                           operations: np.ndarray) -> None:
        """The local copies' programs as ops (one per distinct bytes, merges and node), into `program`."""
        copies = np.flatnonzero(~sent)
        if len(copies):
            kept, program_of = _distinct([nbytes[copies], operations[copies], dst[copies]])
            at = copies[kept]
            first, _ = self._add_program_chunk(dst[at], dst[at], nbytes[at], operations[at],
                                               np.zeros(len(at), np.int64))
            program[copies] = first + program_of

    def _shape(self, shape: ProgramShape) -> int:
        """The shape in the core (its resources by core id); returns its id."""
        return add_shape(self.core, shape, self._resource)

    def _add_programs_as_columns(self, cols: ScheduleColumns, src: np.ndarray, dst: np.ndarray,
                                 nbytes: np.ndarray, operations: np.ndarray,
                                 turn: np.ndarray | None = None) -> np.ndarray:
        """The network's programs as columns (one per distinct ends, bytes and merges, and
        round-robin turn where the network has one)."""
        kept, program_of = _distinct([src, dst, nbytes, operations] + ([] if turn is None else [turn]))
        message = cols.table[cols.first[kept], MESSAGE]
        first = None  # the first program's id: each chunk's follow on in the core
        lo, size, ops = 0, min(FIRST_PROGRAMS, PROGRAM_CHUNK), 0
        while lo < max(len(kept), 1):
            part = slice(lo, lo + size)
            at = kept[part]
            added, chunk_ops = self._add_program_chunk(src[at], dst[at], nbytes[at], operations[at],
                                                       message[part], None if turn is None else turn[at])
            first = added if first is None else first
            lo, ops = lo + size, ops + chunk_ops
            size = min(PROGRAM_CHUNK, max(1, PROGRAM_OPS * lo // max(ops, 1)))
        return first + program_of

    def _add_program_chunk(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                           operations: np.ndarray, message: np.ndarray,
                           turn: np.ndarray | None = None) -> tuple[int, int]:
        """The programs of these messages (the network's as columns) in the core, in order;
        returns the first one's id and their ops. A chunk at a time (at most PROGRAM_CHUNK
        programs and about PROGRAM_OPS ops), so that what is messages x ops (a route's hops,
        the flat ops before the core copies them) is built for that many messages at once."""
        sent = np.flatnonzero(src != dst)
        robin = self.network.round_robin() if turn is not None else None
        if not len(sent):
            columns = ProgramColumns.run(Hold, np.zeros(1, np.int64), np.zeros(0))  # none
        elif robin is not None:
            columns = robin.programs(src[sent], dst[sent], nbytes[sent], turn[sent])
        else:
            columns = self.network.transfer_programs(src[sent], dst[sent], nbytes[sent], message[sent])
        if columns is None:  # programs_as_columns said it gives them
            raise AssertionError(f"{type(self.network).__name__} gave no program columns for messages "
                                 "it said it gives them for")
        copies = np.flatnonzero(src == dst)
        copy_programs = [self.network.copy_program(node, size)  # a local copy's own ops
                         for node, size in zip(dst[copies].tolist(), nbytes[copies].tolist())]
        net_length = np.zeros(len(src), np.int64)
        net_length[copies] = [len(program) for program in copy_programs]
        net_length[sent] = np.diff(columns.offsets)
        combine = operations > 0
        offsets = np.zeros(len(src) + 1, np.int64)
        np.cumsum(net_length + 3 * combine, out=offsets[1:])
        codes = np.empty(offsets[-1], np.uint8)
        args, holds = np.zeros(offsets[-1], np.uint32), np.zeros(offsets[-1], np.float64)
        # the network's ops of each sent program, at the program's start
        net = np.repeat(offsets[sent] - columns.offsets[:-1], net_length[sent])
        net += np.arange(len(columns.kinds))
        ids = np.array([self._resource(r) for r in columns.resources], np.uint32)
        codes[net] = CORE_CODES[columns.kinds]
        args[net] = ids[columns.resource]  # a hold's is ids[0], which the core does not read
        holds[net] = columns.hold_s
        del net, columns  # before the core copies the ops
        for at, program in zip(offsets[copies].tolist(), copy_programs):
            for j, op in enumerate(program):
                if type(op) is Hold:
                    codes[at + j], holds[at + j] = HOLD, op.time_s
                else:
                    codes[at + j], args[at + j] = OP_CODES[type(op)], self._resource(op.resource)
        merges = np.flatnonzero(combine)
        if len(merges):
            at = offsets[merges] + net_length[merges]
            arithmetic = np.array([self._resource(self._arithmetic(int(n))) for n in dst[merges]], np.uint32)
            codes[at], args[at] = OP_CODES[Acquire], arithmetic
            codes[at + 1] = HOLD
            holds[at + 1] = self._times(operations[merges], self.network.combine_time_s)
            codes[at + 2], args[at + 2] = OP_CODES[Release], arithmetic
        return self.core.add_programs(_u32(offsets), codes, args, holds), len(codes)

    @staticmethod
    def _times(values: np.ndarray, time_s) -> np.ndarray:
        """`time_s(v)` of each value, called once per distinct value."""
        distinct, which = np.unique(values, return_inverse=True)
        return np.array([time_s(int(v)) for v in distinct], np.float64)[which]

    def _add_programs_one_by_one(self, cols: ScheduleColumns, nbytes: np.ndarray,
                                 operations: np.ndarray) -> int:
        """The programs of a network that gives them message by message (transfer_program)."""
        def programs():
            for m, (size, ops) in enumerate(zip(nbytes.tolist(), operations.tolist())):
                first = cols.send(int(cols.msg_start[m]))
                message = first if size == first.nbytes else first._replace(nbytes=size)
                yield self._program(first, message, size, ops)

        return self._add_program_tuples(programs())

    def _add_program_tuples(self, programs: Iterable[TransferProgram]) -> int:
        """These programs (Acquire, Hold and Release ops) in the core, in order; the first's id."""
        offsets: list[int] = [0]  # message i's program: ops offsets[i]..offsets[i + 1]
        codes: list[int] = []
        args: list[int] = []  # the resource of an acquire or release
        holds: list[float] = []  # the seconds of a hold
        resource_ids = self.resource_ids
        for program in programs:
            for op in program:
                if type(op) is Hold:
                    codes.append(HOLD)
                    args.append(0)
                    holds.append(op.time_s)
                else:
                    rid = resource_ids.get(id(op.resource))
                    codes.append(OP_CODES[type(op)])
                    args.append(self._resource(op.resource) if rid is None else rid)
                    holds.append(0.0)
            offsets.append(len(codes))
        return self.core.add_programs(_u32(np.array(offsets, np.int64)), np.array(codes, np.uint8),
                                      _u32(np.array(args, np.int64)), np.array(holds, np.float64))

    def _program(self, first: Transfer, message: Transfer, nbytes: int, operations: int) -> TransferProgram:
        """What the message's process does (Interpreter._send): the local copy or the network's
        transfer, then the receiver combining reduction partials."""
        if first.src == first.dst:
            program: TransferProgram = self.network.copy_program(first.src, nbytes)
        else:
            found = self.network.transfer_program(message)
            if found is None:  # native_plan found one for `first`: only the byte count differs
                raise AssertionError(f"{type(self.network).__name__} declared a program for "
                                     f"{first} but none for {message}")
            program = found
        if operations:
            arithmetic = self._arithmetic(first.dst)
            return (*program, Acquire(arithmetic), Hold(self.network.combine_time_s(operations)),
                    Release(arithmetic))
        return program

    # -- after the core ------------------------------------------------------------------

    def _columns(self, run: int) -> ScheduleColumns:
        return self.prepared.indexes[self.run_schedules[run].collective].columns()

    def _spans(self) -> NativeSpans:
        """The core's span columns, read in place, and what their labels are made of: no
        label's fields copied out of the schedules' columns (they were 3 MB of the 4.9 MB
        torus:16x16's message-passing all-to-all's run added; docs/engine.md)."""
        return NativeSpans(self.core.take_spans(), SpanLabels(self.labels, self.message_labels))

    def _name(self, who: tuple[int, int, int]) -> str:
        kind, a, b = who
        if kind == 0:
            return f"node {a}"
        group = self._columns(a).group(b)
        return send_name(group[0].src, group)

    def _deadlock(self) -> Deadlock:
        """runtime/engine.py's report from the core's waits (Interpreter's event names)."""
        waits: dict[str, list[tuple[str, str]]] = {}
        for who, kind, info, blockers in self.core.live_waits():
            if kind == "resource":
                holds = f"holds {self.resources[info[0]].name}"
                found = [(self._name(h), holds) for h in blockers]
            elif kind == "gate":  # a header at the switch's gate: Gates.wait's event has no producer
                found = []
            elif kind == "allof":
                found = [(self._name(c), f"{self._name(c)} unfinished") for c in blockers]
                if info[2]:
                    found += self._inbox_blockers(*info[:2], who[1])
            else:
                found = self._barrier_blockers(info[0], info[1], {n for _, n, _ in blockers}, who[1])
            waits[self._name(who)] = found
        return deadlock_of(dict(sorted(waits.items())))

    def _inbox_blockers(self, run: int, k: int, node: int) -> list[tuple[str, str]]:
        cols = self._columns(run)
        arrived = self.replay.arrived(run)
        slot = k * self.run_schedules[run].nprocs + node
        due = cols.inbox(slot)
        pending = {tuple(key) for key in cols.fields_of(due[~arrived[due]]).tolist()}
        missing = interpreter.first_missing(pending, k)
        return [] if missing is None else [missing]

    def _barrier_blockers(self, run: int, k: int, arrived: set[int], node: int) -> list[tuple[str, str]]:
        schedule = self.run_schedules[run]
        nodes = self.prepared.indexes[schedule.collective].barrier_of(k, node) or ()
        missing = set(nodes) - arrived
        if not missing:
            return []
        what = "" if len(nodes) == schedule.nprocs else f" in the group of node {nodes[0]}"
        return [(f"node {min(missing)}", f"barrier after phase {k}{what}")]
