"""The rows of the native MPI program (lower_sched_to_mpi emits the interpreter that runs them):
each node's walk of the plan, compiler/plan_walk.py `walk_node` and `walk_phases`, the walk the
simulator and the MPI and SimGrid workers take, with nonblocking messages.

Rank r runs its rows in order; a row is (kind, a, b, c, d, e):

    SEND     peer, heap offset, bytes, tag, request slot    MPI_Isend
    RECV     peer, heap offset, bytes, tag, request slot    MPI_Irecv
    WAIT     first slot, slots                              MPI_Waitall
    COPY     to, from, bytes                                a local copy (or packing)
    FILL     offset, bytes, content id                      a block's pattern at its origin
    CHECK    offset, bytes, content id, first byte          a block or piece at its final node
    BARRIER                                                 MPI_Barrier of every rank
    COMPUTE  nanoseconds                                    spin
    BEGIN    run                                            start the run's clock
    END      run                                            add the run's time

A node's phase posts its sends (its own message order) and its receives (by sender, then the
sender's message order), then waits (MPI_Waitall) for what walk_phases says the phase waits for:
its receives, its sends unless the phase is eager (they stream into the next phase's wait). A
barrier is MPI_Barrier where its set is every rank, else a dissemination barrier of empty messages
within the set (Hensgen, Finkel and Manber 1988). Every node posts all of a phase's messages
before it waits for any of them, so no order of the nodes' walks can deadlock; MPI matches the
messages of a pair of ranks in the order they are posted (non-overtaking), which is one order at
both ends. A slot never posted, or waited for, holds MPI_REQUEST_NULL, which MPI_Waitall skips.

Send buffers are filled with a pattern of (content id, byte index) and every block, or piece of
a block (Transfer.offset: its bytes from that index on), that reaches its final node is
checked against it, so the executable verifies its data without Python.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.ir.dialects import dist, sched
from phalanx.compiler.kind import Kind
from phalanx.compiler.plan_walk import (
    AgentStart,
    AwaitAll,
    PhaseIndex,
    PhaseVisit,
    ScheduleRun,
    walk_node,
    walk_phases,
)
from phalanx.compiler.schedule import WHOLE, ComputeStep, Schedule, Transfer
from phalanx.grammar.ast import Mapping
from phalanx.grammar.diagnostics import usage_error

SEND, RECV, COPY, FILL, CHECK, BARRIER, COMPUTE, BEGIN, END, WAIT = range(10)
ROW_FIELDS = 6  # kind, a, b, c, d, e
SHARED_CONTENT_KINDS = (Kind.BROADCAST, Kind.ALLGATHER, Kind.REDUCE, Kind.ALLREDUCE)
LAST = 1 << 62  # a key's part that sorts after every phase and round

Row = tuple[int, int, int, int, int, int]
Key = tuple[int, ...]


@dataclass
class NativePlan:
    """Per-rank rows, heap sizes, request slots, and the schedule runs they time.

    `keys` gives each row its place in the plan: (run, phase, stage, ...), one order for
    every node (a message's send and receive share their key). `place` merges processors onto
    fewer ranks in that order.
    """

    nprocs: int
    rows: list[list[Row]]
    heap_bytes: list[int]
    schedules: list[tuple[str, str, int]] = field(default_factory=list)  # kind, algorithm, line
    keys: list[list[Key]] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)  # request slots of each rank
    processors: int = 0  # virtual processors placed on the nprocs ranks (0: as many as ranks)

    def __post_init__(self) -> None:
        self.keys = self.keys or [[(i,) for i in range(len(r))] for r in self.rows]
        self.slots = self.slots or [0] * self.nprocs

    def emit(self, rank: int, key: Key, kind: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0,
             e: int = 0) -> None:
        self.rows[rank].append((kind, a, b, c, d, e))
        self.keys[rank].append(key)


def place(plan: NativePlan, nranks: int) -> NativePlan:
    """Run the plan's processors on `nranks` MPI ranks (blocks of consecutive processors).

    Each rank runs its processors' rows merged by key: every processor's posts of a phase
    before any of their waits. A message between two processors of one rank becomes a copy
    (its slots stay MPI_REQUEST_NULL), a barrier or a clock row runs once per rank.
    """
    if nranks == plan.nprocs:
        return plan
    if not 1 <= nranks <= plan.nprocs:
        raise usage_error(f"cannot run {plan.nprocs} processors on {nranks} MPI ranks",
                          f"use between 1 and {plan.nprocs} ranks")
    host = [v * nranks // plan.nprocs for v in range(plan.nprocs)]
    base, heap = [0] * plan.nprocs, [0] * nranks
    slot_base, slots = [0] * plan.nprocs, [0] * nranks
    for v in range(plan.nprocs):
        base[v], heap[host[v]] = heap[host[v]], heap[host[v]] + plan.heap_bytes[v]
        slot_base[v], slots[host[v]] = slots[host[v]], slots[host[v]] + plan.slots[v]
    sent_from = {(key, v, row[1]): base[v] + row[2] for v in range(plan.nprocs)
                 for key, row in zip(plan.keys[v], plan.rows[v])
                 if row[0] == SEND and host[row[1]] == host[v]}  # (key, src, dst) -> where
    out = NativePlan(nranks, [[] for _ in range(nranks)], heap, plan.schedules, slots=slots,
                     processors=plan.nprocs)
    # a receive after the rows of its key at the sender: a copy from a partner after its packing
    merged: list[list[tuple[Key, bool, int, int, Row]]] = [[] for _ in range(nranks)]
    for v in range(plan.nprocs):
        merged[host[v]] += [(key, row[0] == RECV, v, i, row)
                            for i, (key, row) in enumerate(zip(plan.keys[v], plan.rows[v]))]
    for rank, rows in enumerate(merged):
        once: set[Key] = set()
        for key, _, v, _, (kind, a, b, c, d, e) in sorted(rows, key=lambda x: x[:4]):
            if kind in (BARRIER, BEGIN, END):
                if key not in once:
                    once.add(key)
                    out.emit(rank, key, kind, a)
            elif kind in (SEND, RECV) and host[a] == rank:
                if kind == RECV and c:
                    out.emit(rank, key, COPY, base[v] + b, sent_from[(key, a, v)], c)
            elif kind in (SEND, RECV):
                out.emit(rank, key, kind, host[a], base[v] + b, c, d, slot_base[v] + e)
            elif kind == WAIT:
                out.emit(rank, key, WAIT, slot_base[v] + a, b)
            elif kind == COPY:
                out.emit(rank, key, COPY, base[v] + a, base[v] + b, c)
            elif kind in (FILL, CHECK):
                out.emit(rank, key, kind, base[v] + a, b, c, d)
            else:
                out.emit(rank, key, kind, a, b, c, d, e)
    return out


def pattern_byte(content_id: int, index: int) -> int:
    """The byte at `index` of a block whose content is `content_id` (the emitted code's formula)."""
    return (content_id * 131 + (content_id >> 8) + index * 7 + 1) & 255


@dataclass
class _ScheduleFacts:
    """What every node's run of a schedule looks up: its phase index, the blocks each origin
    fills (their sizes), and per phase the messages due to each node (by sender, then the
    sender's order)."""

    index: PhaseIndex
    shared: bool
    blocks: dict[int, list[tuple[tuple[int, int], int]]]  # origin -> ((origin, final), bytes)
    inbound: dict[int, dict[int, list[tuple[int, int, tuple[Transfer, ...]]]]] = field(default_factory=dict)

    def due(self, k: int, node: int) -> list[tuple[int, int, tuple[Transfer, ...]]]:
        """(sender, its message number, the message) of phase k that `node` receives."""
        if k not in self.inbound:
            by_dst: dict[int, list[tuple[int, int, tuple[Transfer, ...]]]] = {}
            for src in sorted(self.index.by_node()[k][0]):
                for i, group in enumerate(self.index.messages(k, src)):
                    if group[0].dst != src:
                        by_dst.setdefault(group[0].dst, []).append((src, i, group))
            self.inbound[k] = by_dst
        return self.inbound[k].get(node, [])


def _facts(schedule: Schedule, shared: bool) -> _ScheduleFacts:
    blocks: dict[tuple[int, int], int] = {}
    # A transfer may be received in a later phase than the one that sends it (an eager phase's
    # receive waited for a phase on, ringreduce.split_step_phases): the rows receive every
    # message in its sending phase (`due`), which waits earlier and moves the same data. One
    # received before it is sent has no such program.
    sent: Counter[Transfer] = Counter()
    received: Counter[Transfer] = Counter()
    for k, phase in enumerate(schedule.phases):
        sent.update(phase.sends)
        received.update(phase.recvs)
        if received - sent:
            raise VerifyException(f"schedule of collective {schedule.collective} phase {k}: "
                                  "lower-sched-to-mpi needs every transfer received in the phase "
                                  "that sends it or a later one")
        for t in phase.sends:  # a block's size: a whole transfer's, or past its last piece
            end = t.nbytes if t.offset == WHOLE else t.offset + t.nbytes
            blocks[(t.origin, t.final)] = max(blocks.get((t.origin, t.final), 0), end)
    by_origin: dict[int, list[tuple[tuple[int, int], int]]] = {}
    for block, nbytes in blocks.items():
        by_origin.setdefault(block[0], []).append((block, nbytes))
    return _ScheduleFacts(PhaseIndex(schedule), shared, by_origin)


class _Program:
    """The rows of every node, built node by node (walk_node), and the runs they time."""

    def __init__(self, world: int, replicated: set[str]) -> None:
        self.plan = NativePlan(world, [[] for _ in range(world)], [0] * world)
        self.replicated = replicated
        self.facts: dict[int, _ScheduleFacts] = {}  # by id of the schedule (a repeat's runs share it)
        self.runs: dict[int, Schedule] = {}

    def schedule_facts(self, schedule: Schedule) -> _ScheduleFacts:
        if id(schedule) not in self.facts:
            shared = schedule.kind in SHARED_CONTENT_KINDS or schedule.dst in self.replicated
            self.facts[id(schedule)] = _facts(schedule, shared)
        return self.facts[id(schedule)]

    def barrier(self, node: int, nodes: tuple[int, ...], key: Key, tag: int, slots: _Slots) -> None:
        """`node`'s part of the barrier of `nodes`: MPI_Barrier where they are every rank, else
        the dissemination barrier's rounds (round r: an empty message to the node 2**r further
        on in the set, one from the node 2**r before)."""
        plan = self.plan
        if len(nodes) == plan.nprocs:
            plan.emit(node, key, BARRIER)
            return
        n, me = len(nodes), nodes.index(node)
        step, r = 1, 0
        while step < n:
            to, frm = nodes[(me + step) % n], nodes[(me - step) % n]
            first = slots.take(2)
            plan.emit(node, (*key, r, 0, node), SEND, to, 0, 0, tag, first)
            plan.emit(node, (*key, r, 0, frm), RECV, frm, 0, 0, tag, first + 1)
            plan.emit(node, (*key, r, 1), WAIT, first, 2)
            step, r = step * 2, r + 1


class _Slots:
    """A node's request slots of one run, numbered from 0 (every one is waited for by its end)."""

    def __init__(self) -> None:
        self.used = 0

    def take(self, count: int = 1) -> int:
        first = self.used
        self.used += count
        return first


class _NodeRows:
    """walk_node's consumer for one node: its compute steps and runs as rows."""

    def __init__(self, program: _Program, node: int) -> None:
        self.program, self.node = program, node
        self.last_run = -1

    def compute(self, step: ComputeStep) -> None:
        # after the node's last run: merged processors spin between their runs
        self.program.plan.emit(self.node, (self.last_run, LAST), COMPUTE, round(step.cost_s * 1e9))

    def communicate(self, run: ScheduleRun) -> None:
        self.program.runs[run.run] = run.schedule
        self.last_run = run.run
        _RunRows(self.program, self.node, run).rows()

    def start_agent(self, start: AgentStart) -> None:
        # the agent runs the stage's schedules right away: every node does, in stage order
        for run in start.runs:
            self.communicate(run)

    def await_agent(self, agent: int) -> None:
        pass  # its schedules ran when it started


class _RunRows:
    """walk_phases's consumer for one node's run of a schedule: fills, the phases' posts and
    waits, barriers, the clock, checks. Handles are request slots."""

    def __init__(self, program: _Program, node: int, run: ScheduleRun) -> None:
        self.program, self.plan, self.node = program, program.plan, node
        self.run, self.schedule = run.run, run.schedule
        self.facts = program.schedule_facts(run.schedule)
        self.tag = run.run % 32768
        self.slots = _Slots()
        self.top = 0  # the node's heap, bump-allocated for the run
        self.held: dict[tuple[int, int], int] = {}  # block (origin, final) -> heap offset
        self.copies: dict[int, int] = {}  # content id -> heap offset of a whole copy
        self.pieces: dict[tuple[int, int, int], int] = {}  # (content id, offset, bytes) -> heap offset
        self.checks: list[tuple[int, int, int, int]] = []
        self.phase = 0  # the phase the node is in; past the last, its wait for streaming sends

    def alloc(self, nbytes: int) -> int:
        offset = self.top
        self.top += nbytes
        return offset

    def content_id(self, origin: int, final: int) -> int:
        n = self.schedule.nprocs
        return origin * (n + 1) + (n if self.facts.shared else final)

    def rows(self) -> None:
        plan, node, run = self.plan, self.node, self.run
        for (origin, final), nbytes in self.facts.blocks.get(node, []):
            cid = self.content_id(origin, final)
            if cid not in self.copies:
                self.copies[cid] = self.alloc(nbytes)
                plan.emit(node, (run, -2), FILL, self.copies[cid], nbytes, cid)
            self.held[(origin, final)] = self.copies[cid]
        self.program.barrier(node, tuple(range(self.schedule.nprocs)), (run, -1), self.tag, self.slots)
        plan.emit(node, (run, -1, LAST), BEGIN, run)
        nphases = len(self.schedule.phases)
        for wait in walk_phases(self.facts.index, node, self):
            if isinstance(wait, AwaitAll):  # a barrier's rows are in already (self.barrier)
                self.wait(wait.handles, (run, self.phase, 1))
        plan.emit(node, (run, nphases, 3), END, run)
        for check in self.checks:
            plan.emit(node, (run, nphases, 4), CHECK, *check)
        plan.heap_bytes[node] = max(plan.heap_bytes[node], self.top)
        plan.slots[node] = max(plan.slots[node], self.slots.used)

    def wait(self, slots: list[int], key: Key) -> None:
        """MPI_Waitall of the slots, one row per run of consecutive ones."""
        ordered = sorted(slots)
        start = 0
        for i in range(1, len(ordered) + 1):
            if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
                self.plan.emit(self.node, key, WAIT, ordered[start], i - start)
                start = i

    # -- PhaseConsumer ---------------------------------------------------------------------

    def post(self, visit: PhaseVisit) -> tuple[list[int], list[int]]:
        self.phase = visit.k
        node, key = self.node, (self.run, visit.k, 0)
        sources = [[self.locate(t) for t in group] for group in visit.sends]  # held before the phase
        sends = []
        for i, (group, offsets) in enumerate(zip(visit.sends, sources)):
            slot = self.send(group, offsets, (*key, node, i))
            if slot is not None:
                sends.append(slot)
        receives = []
        for src, i, group in self.facts.due(visit.k, node):
            nbytes = sum(t.nbytes for t in group)
            region, slot = self.alloc(nbytes), self.slots.take()
            self.plan.emit(node, (*key, src, i), RECV, src, region, nbytes, self.tag, slot)
            self.arrive(group, region)
            receives.append(slot)
        return sends, receives

    def received(self, visit: PhaseVisit) -> None:
        pass

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]) -> None:
        self.program.barrier(self.node, nodes, (self.run, visit.k, 2), self.tag, self.slots)

    def done(self, visit: PhaseVisit) -> None:
        self.phase = visit.k + 1

    # -- the node's data -------------------------------------------------------------------

    def locate(self, t: Transfer) -> int:
        """Where the node holds what `t` carries: the block (origin, final) or a copy of equal
        content (a piece: its bytes there), else a piece it received."""
        cid = self.content_id(t.origin, t.final)
        whole = self.held.get((t.origin, t.final))
        if whole is None and self.facts.shared:
            whole = self.copies.get(cid)
        if whole is not None:
            return whole if t.offset == WHOLE else whole + t.offset
        piece = self.pieces.get((cid, t.offset, t.nbytes))  # never a whole block's key
        if piece is not None:
            return piece
        raise VerifyException(f"schedule of collective {self.schedule.collective}: node {self.node} "
                              f"sends {t.block_name}, which it does not hold")

    def send(self, group: tuple[Transfer, ...], offsets: list[int], key: Key) -> int | None:
        """The message's rows (packing, then MPI_Isend; a local copy's copy); its slot, if sent."""
        node, dst = self.node, group[0].dst
        nbytes = sum(t.nbytes for t in group)
        contiguous = all(offsets[i] + group[i].nbytes == offsets[i + 1] for i in range(len(group) - 1))
        if node != dst and contiguous:
            start = offsets[0]
        else:  # pack (or copy locally) the blocks into one fresh region
            start = self.alloc(nbytes)
            at = start
            for t, offset in zip(group, offsets):
                self.plan.emit(node, key, COPY, at, offset, t.nbytes)
                at += t.nbytes
        if node == dst:
            self.arrive(group, start)
            return None
        slot = self.slots.take()
        self.plan.emit(node, key, SEND, dst, start, nbytes, self.tag, slot)
        return slot

    def arrive(self, group: tuple[Transfer, ...], region: int) -> None:
        """The message's transfers are at `region` of the node's heap from the next phase on."""
        for t in group:
            cid = self.content_id(t.origin, t.final)
            if t.offset == WHOLE:
                self.held[(t.origin, t.final)] = region
                self.copies[cid] = region
            else:
                self.pieces[(cid, t.offset, t.nbytes)] = region
            if self.node == t.final:  # the pattern's bytes from the block's or the piece's first on
                self.checks.append((region, t.nbytes, cid, 0 if t.offset == WHOLE else t.offset))
            region += t.nbytes


def world_size(module: ModuleOp) -> int:
    sizes = [1]
    for op in module.walk():
        if isinstance(op, sched.ScheduleOp):
            sizes.append(op.nprocs.value.data)
        elif isinstance(op, sched.ComputeOp):
            sizes.append(op.first.value.data + op.nprocs.value.data)
        elif isinstance(op, dist.ProcessorsOp):
            sizes.append(op.base.value.data + op.nprocs)
    return max(sizes)


def plan_native(module: ModuleOp) -> NativePlan:
    """The interpreter's rows for every rank of the module's program: each node's walk."""
    world = world_size(module)
    try:
        plan = sched.plan_from_module(module, world)
    except ValueError as err:
        raise VerifyException(f"lower-sched-to-mpi: {err}") from None
    replicated = {op.sym_name.data for op in module.walk()
                  if isinstance(op, dist.ArrayOp) and Mapping(op.mapping.data) is Mapping.REPLICATED}
    program = _Program(world, replicated)
    for node in range(world):
        for _ in walk_node(plan.steps, node, _NodeRows(program, node)):
            pass
    runs = program.runs
    assert sorted(runs) == list(range(len(runs))), "every run is some node's"
    program.plan.schedules = [(runs[r].kind, runs[r].algorithm, runs[r].line) for r in range(len(runs))]
    return program.plan
