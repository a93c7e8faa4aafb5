"""Interpret a Plan (compute steps and schedules from the `sched` IR) on a network model.

Each node is a process that walks the plan in order (compiler/plan_walk.py, the walk the MPI
and SimGrid workers share; _NodeSteps and _Phases below are what the simulator supplies to it:
steps and waits as engine events). In a phase it starts one child
process per send and waits for those and for the receives addressed to it; a
`barrier` phase then waits for every node of the schedule, or, scoped to groups
(Phase.barrier_groups), for the node's own group only. In an `eager` phase it waits for its
receives and for the previous eager phase's sends: its own sends stream on into the next phase
(or until it leaves the schedule; compiler/schedule.py SyncMode). Payloads move through
runtime/data.py so that delivery is checked, not assumed. A network that `sees_payloads`
(runtime/faults.py's) moves messages through `deliver(t, payloads, where)`, which returns
the payloads as they arrived, retransmitting on detected errors. A run stopped by an
engine limit returns a partial Execution that says why (`stopped`).

What the interpreter keeps of a collective (its payloads, runtime/data.py Payloads, and its
bookkeeping: inboxes, arrivals, barriers) lives from the first node's entry to the last
node's exit, so that memory follows the collectives in flight, not the length of the run.

A `repeat` (RepeatStep) runs its compiled body `count` times. Each run of a schedule is known
by its run index (compiler/schedule.py Plan): payloads, timings and in-flight state are per
run, while what depends on the schedule alone (each node's sends and receives per phase, the
phase a transfer is due in, the barrier sets) is worked out once per schedule and shared by
its runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from phalanx.compiler.plan_walk import (
    AgentStart,
    AwaitBarrier,
    PhaseVisit,
    ScheduleRun,
    walk_node,
    walk_phases,
)
from phalanx.compiler.schedule import ComputeStep, Plan, Schedule, Transfer
from phalanx.runtime.data import Payloads, move
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.engine import Engine, Event, Resource, Stopped
from phalanx.runtime.fastpath import FastPlan, move_data, run_fast
from phalanx.runtime.network import Network, play
from phalanx.runtime.schedule_index import ScheduleIndex, transfer_key

MAX_SPANS = 100_000  # spans a run keeps (~150 B each); later ones are counted, not kept


class SpanKind(StrEnum):
    """What a span of a node's timeline is; its value is the trace's and the workers' text."""

    COMPUTE = "compute"
    SEND = "send"
    COPY = "copy"  # a local copy (a node's own block, a pack)
    PHASE = "phase"
    BARRIER = "barrier"


@dataclass(slots=True)
class Span:
    """One interval of a node's timeline (for Gantt charts and traces)."""

    node: int
    kind: SpanKind
    start_s: float
    end_s: float
    label: str
    peer: int | None = None  # the destination of a send or copy


@dataclass
class StepTiming:
    """A schedule in the program: the first node enters at `start_s`, the last leaves at
    `end_s` (inf and 0 until then)."""

    start_s: float = float("inf")
    end_s: float = 0.0

    @property
    def time_s(self) -> float:
        return max(self.end_s - self.start_s, 0.0)


@dataclass
class Execution:
    total_time_s: float
    collectives: dict[int, StepTiming]  # by run index (the collective's index without repeats)
    spans: Sequence[Span] = field(default_factory=list)  # (a native run's: runtime/native_spans.py)
    events: int = 0
    fast_messages: int = 0  # messages run on the fast path (not counted in events)
    stopped: str | None = None  # why the run ended early (an engine limit), None if it finished
    spans_left_out: int = 0  # spans past the MAX_SPANS budget: not kept, so that memory does not
    # grow with the run's length; the kept ones are those that ended first (engine time order)


def sent_twice(t: Transfer) -> ScheduleError:
    """The error of a transfer that arrives a second time (the exactly-once check)."""
    return ScheduleError(f"transfer {t.src}->{t.dst} of {t.block_name} is sent twice")


class Inbox(Event):
    """The blocks a node still waits for in one phase; fires when none is left. For deadlock
    reports it names one missing block and its sender, as a wait on that block would."""

    def __init__(self, engine: Engine, phase: int, pending: set[tuple]):
        super().__init__(engine)
        self.phase, self.pending = phase, pending

    @property
    def what(self) -> str:
        missing = first_missing(self.pending, self.phase)
        return f"blocks of phase {self.phase}" if missing is None else missing[1]

    @what.setter
    def what(self, _: str) -> None:
        pass

    @property
    def producer(self) -> str | None:
        missing = first_missing(self.pending, self.phase)
        return None if missing is None else missing[0]


def first_missing(pending: set[tuple], phase: int) -> tuple[str, str] | None:
    """(its sender, what it is) of the first block a node still waits for in `phase`, by
    sender, then block: how a deadlock report names an inbox's wait. `pending` holds
    schedule_index.transfer_key tuples (origin, final, src, dst, offset)."""
    if not pending:
        return None
    origin, final, src, _, _ = min(pending, key=lambda key: (key[2], key[0], key[1], key[4]))
    return f"node {src}", f"block {origin}->{final} from node {src} (phase {phase})"


class InFlight:
    """One run of a collective while nodes are in it: who still has to leave, its fast plan
    (if the network proves one) and the bookkeeping of its phases."""

    def __init__(self, index: ScheduleIndex, run: int, fast: FastPlan | None):
        self.index = index
        self.schedule = index.schedule
        self.run = run
        self.fast = fast
        self.fast_events: dict[int, Event] = {}  # node -> its wait for the fast path
        self.fast_starts: dict[int, float] = {}
        self.inside = self.schedule.nprocs  # nodes that have not left it yet
        self.inboxes: dict[tuple[int, int], Inbox] = {}  # (node, phase)
        self.arrived: set[tuple] = set()  # schedule_index.transfer_key of each transfer in
        # (phase, the first node of the barrier's set: sets are disjoint) -> (event, missing)
        self.barriers: dict[tuple[int, int], tuple[Event, set[int]]] = {}


class Interpreter:
    def __init__(self, plan: Plan, network: Network, engine: Engine, data: Payloads,
                 fast: bool = True):
        """`data` builds, moves and checks the payloads of each collective (runtime/data.py
        Payloads); `fast` lets schedules take runtime/fastpath.py where the network offers it."""
        self.plan, self.network, self.engine, self.data = plan, network, engine, data
        self.fast = fast
        self.live: dict[int, InFlight] = {}  # collectives some node is in
        self.fast_messages = 0
        self.arithmetic: dict[int, Resource] = {}
        self.timings = {run: StepTiming() for run in range(plan.run_count)}
        self.indexes = {s.collective: ScheduleIndex(s) for s in plan.schedules()}
        self.spans: list[Span] = []
        self.spans_left_out = 0
        self._labels: dict[str, str] = {}  # one string per distinct label (repeats share them)
        self.finish_s = [0.0] * plan.nprocs

    def run(self) -> Execution:
        for node in range(self.plan.nprocs):
            self.engine.process(self._node(node), f"node {node}")
        try:
            self.engine.run()
        except Stopped as stop:  # a partial run: what finished is timed, the rest is missing
            return Execution(self.engine.now, self.timings, self.spans,
                             self.engine.events_processed, self.fast_messages, str(stop),
                             self.spans_left_out)
        return Execution(max(self.finish_s, default=0.0), self.timings, self.spans,
                         self.engine.events_processed, self.fast_messages,
                         spans_left_out=self.spans_left_out)

    def _span(self, node: int, kind: SpanKind, start_s: float, end_s: float, label: str,
              peer: int | None = None) -> None:
        """Keep a span of the timeline, within the MAX_SPANS budget."""
        if len(self.spans) >= MAX_SPANS:
            self.spans_left_out += 1
            return
        self.spans.append(Span(node, kind, start_s, end_s, self._labels.setdefault(label, label),
                               peer))

    def _node(self, node: int):
        for step in walk_node(self.plan.steps, node, _NodeSteps(self, node)):
            yield from step
        self.finish_s[node] = self.engine.now

    def _compute(self, node: int, step: ComputeStep):
        start = self.engine.now
        yield self.engine.timeout(step.cost_s, "compute")
        self._span(node, SpanKind.COMPUTE, start, self.engine.now, step.label)

    def _communicate(self, node: int, run: ScheduleRun):
        timing = self.timings[run.run]
        timing.start_s = min(timing.start_s, self.engine.now)  # on entry: a stopped run shows what began
        flight = self._enter(run.schedule, run.run)
        if flight.fast is not None:
            yield self._fast_arrive(node, flight)
        else:
            yield from self._schedule(node, flight)
        timing.end_s = max(timing.end_s, self.engine.now)
        self._leave(flight)

    def _enter(self, schedule: Schedule, run: int) -> InFlight:
        """The run's state; the first node in builds it and the payloads."""
        flight = self.live.get(run)
        if flight is None:
            fast = self.network.fast_plan(schedule) if self.fast and not schedule.eager else None
            if fast is not None:
                fast.book()
            flight = self.live[run] = InFlight(self.indexes[schedule.collective], run, fast)
            self.data.open(run)
        return flight

    def _leave(self, flight: InFlight) -> None:
        """The last node out checks the payloads and frees the run's state."""
        flight.inside -= 1
        if flight.inside == 0:
            del self.live[flight.run]
            self.data.close(flight.run)

    def _agent(self, node: int, runs: tuple[ScheduleRun, ...], previous: Event | None):
        """A pipeline stage's communication agent (compiler/plan_walk.py AgentStart)."""
        if previous is not None:
            yield previous
        for run in runs:
            yield from self._communicate(node, run)

    def _schedule(self, node: int, flight: InFlight):
        phases = _Phases(self, flight, node)
        for wait in walk_phases(flight.index, node, phases):
            if isinstance(wait, AwaitBarrier):
                yield wait.handle
            else:
                yield self.engine.all_of(wait.handles, wait.what)

    def _fast_arrive(self, node: int, flight: InFlight) -> Event:
        """Wait here until every node has arrived, then run the fast path from their start times."""
        schedule, plan = flight.schedule, flight.fast
        i = flight.run
        events, starts = flight.fast_events, flight.fast_starts
        event = self.engine.event(f"fast path of schedule {i} at node {node}")
        event.producer = "the last node to reach the schedule"
        events[node], starts[node] = event, self.engine.now
        if len(events) == schedule.nprocs:
            start_s = np.array([starts[n] for n in range(schedule.nprocs)])
            ends, count = run_fast(plan, start_s)
            move_data(schedule, self.data[i])
            self.fast_messages += count
            for n, end in enumerate(ends.tolist()):
                self._span(n, SpanKind.PHASE, starts[n], end, f"{len(schedule.phases)} phases (fast path)")
                self.engine.at(end, events[n].what).callbacks.append(
                    lambda _, e=events[n]: e.succeed())
        return event

    def _inbox(self, flight: InFlight, node: int, k: int, due: list[Transfer]) -> Event:
        """The event that fires when every transfer due to `node` in phase k has arrived (one
        event per node and phase, not per transfer: a phase may bring hundreds of blocks)."""
        inbox = flight.inboxes.get((node, k))
        if inbox is None:
            pending = {transfer_key(t) for t in due} - flight.arrived
            inbox = flight.inboxes[(node, k)] = Inbox(self.engine, k, pending)
            if not pending:
                inbox.succeed()
        return inbox

    def _arrived(self, flight: InFlight, t: Transfer) -> None:
        key = transfer_key(t)
        if key in flight.arrived:
            raise sent_twice(t)
        flight.arrived.add(key)
        where = flight.index.due().get(key)
        inbox = flight.inboxes.get(where) if where is not None else None
        if inbox is not None and key in inbox.pending:
            inbox.pending.discard(key)
            if not inbox.pending:
                inbox.succeed()

    def _send(self, i: int, flight: InFlight, group: tuple[Transfer, ...], where: str = ""):
        """One network message (or local copy) carrying the blocks of `group`."""
        start, data = self.engine.now, self.data[i]
        sees_payloads = self.network.sees_payloads
        # A block going from its origin straight to its destination moves on arrival, array to
        # array (data.move_direct), unless a faulty network must see (and may spoil) its bytes.
        payloads = [None if not sees_payloads and data.movable(t) else data.take(t) for t in group]
        facts = flight.index.send_facts(group, data)
        first, message, gather, scatter = group[0], facts.message, facts.gather, facts.scatter
        nbytes = facts.nbytes
        if gather:  # the sender's code packs strided blocks into the message
            yield from self.network.pack(message, gather)
        if first.src == first.dst:
            yield from play(self.engine, self.network.copy_program(first.src, nbytes))
            kind = SpanKind.COPY
        elif sees_payloads:
            payloads = yield from self.network.deliver(message, payloads, where)
            kind = SpanKind.SEND
        else:
            yield from self.network.transfer(message)
            kind = SpanKind.SEND
        if scatter:  # the receiver's code unpacks them into its strided array
            yield from self.network.unpack(message, scatter)
        operations = facts.operations
        if operations:  # reduction partials: the receiver's processor merges them, one at a time
            arithmetic = self._arithmetic(first.dst)
            yield arithmetic.request()
            yield self.engine.timeout(self.network.combine_time_s(operations), "combine")
            arithmetic.release()
        for t, payload in zip(group, payloads):
            if payload is not None:
                data.put(t, payload)
            else:  # direct (or, if sent on meanwhile, take refuses it with the reason)
                move(data, t)
            self._arrived(flight, t)
        self._span(first.src, kind, start, self.engine.now, facts.label, first.dst)

    def _arithmetic(self, node: int) -> Resource:
        """The node's processor as it combines reduction partials (one merge at a time)."""
        if node not in self.arithmetic:
            self.arithmetic[node] = Resource(self.engine, f"node {node} arithmetic")
        return self.arithmetic[node]

    def _barrier(self, flight: InFlight, k: int, node: int, nodes: tuple[int, ...]) -> Event:
        """`node` reaches phase k's barrier of `nodes`: it ends a barrier of their number
        (the network's barrier_time_s) after the last of them arrives."""
        key = (k, nodes[0])
        if key not in flight.barriers:
            what = "" if len(nodes) == flight.schedule.nprocs else f" in the group of node {nodes[0]}"
            event = self.engine.event(f"barrier after phase {k}{what}")
            flight.barriers[key] = (event, set(nodes))
        event, missing = flight.barriers[key]
        missing.discard(node)
        event.producer = f"node {min(missing)}" if missing else None
        if not missing:
            event.succeed(None, self.network.barrier_time_s(len(nodes)))
        return event


class _NodeSteps:
    """The simulator's side of compiler/plan_walk.py walk_node at one node: each step as a
    generator of engine events, which Interpreter._node runs."""

    def __init__(self, interpreter: Interpreter, node: int):
        self.interpreter, self.node = interpreter, node
        self.agents: dict[int, Event] = {}  # agent number -> its process

    def compute(self, step: ComputeStep):
        return self.interpreter._compute(self.node, step)

    def communicate(self, run: ScheduleRun):
        return self.interpreter._communicate(self.node, run)

    def start_agent(self, start: AgentStart):
        engine = self.interpreter.engine
        previous = None if start.after is None else self.agents[start.after]
        self.agents[start.agent] = engine.process(
            self.interpreter._agent(self.node, start.runs, previous),
            f"node {self.node} agent stage {start.stage}")
        return iter(())

    def await_agent(self, agent: int):
        yield self.agents[agent]


class _Phases:
    """The simulator's side of compiler/plan_walk.py walk_phases: a send is a process, the
    receives of a phase one Inbox event, a barrier an event of the phase's barrier set."""

    def __init__(self, interpreter: Interpreter, flight: InFlight, node: int):
        self.interpreter, self.flight, self.node = interpreter, flight, node
        self.start_s = 0.0

    def post(self, visit: PhaseVisit) -> tuple[list[Event], list[Event]]:
        it, flight = self.interpreter, self.flight
        self.start_s = it.engine.now
        where = flight.index.where[visit.k]
        sends = [it.engine.process(it._send(flight.run, flight, group, where),
                                   flight.index.name(self.node, group))
                 for group in visit.sends]
        receives = [it._inbox(flight, self.node, visit.k, visit.due)] if visit.due else []
        return sends, receives

    def received(self, visit: PhaseVisit) -> None:
        pass

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]) -> Event:
        return self.interpreter._barrier(self.flight, visit.k, self.node, nodes)

    def done(self, visit: PhaseVisit) -> None:
        self.interpreter._span(self.node, SpanKind.PHASE, self.start_s, self.interpreter.engine.now,
                               f"phase {visit.k}")
