"""Interpret a Plan (compute steps and schedules from the `sched` IR) on a network model.

Each node is a process that walks the plan in order. In a phase it starts one child
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

from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.schedule import (
    ComputeStep,
    PipelineStep,
    Plan,
    RepeatStep,
    Schedule,
    Step,
    SyncMode,
    Transfer,
    schedule_runs,
)
from phalanx.runtime.data import Payloads, move
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.engine import Engine, Event, Resource, Stopped
from phalanx.runtime.fastpath import FastPlan, move_data, run_fast
from phalanx.runtime.network import Network
from phalanx.runtime.schedule_index import ScheduleIndex, transfer_key

MAX_SPANS = 100_000  # spans a run keeps (~150 B each); later ones are counted, not kept


@dataclass(slots=True)
class Span:
    """One interval of a node's timeline (for Gantt charts and traces)."""

    node: int
    kind: str  # compute, send, copy, phase, barrier
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
    spans: list[Span] = field(default_factory=list)
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

    def _span(self, node: int, kind: str, start_s: float, end_s: float, label: str,
              peer: int | None = None) -> None:
        """Keep a span of the timeline, within the MAX_SPANS budget."""
        if len(self.spans) >= MAX_SPANS:
            self.spans_left_out += 1
            return
        self.spans.append(Span(node, kind, start_s, end_s, self._labels.setdefault(label, label),
                               peer))

    def _node(self, node: int):
        yield from self._steps(node, self.plan.steps, 0)
        self.finish_s[node] = self.engine.now

    def _steps(self, node: int, steps: tuple[Step, ...], run: int):
        """Run `steps` at `node`; `run` is the run index of their first schedule run."""
        for step in steps:
            if step.runs_on(node):
                if isinstance(step, PipelineStep):
                    yield from self._pipeline(node, step, run)
                elif isinstance(step, RepeatStep):
                    for k in range(step.count):
                        yield from self._steps(node, step.body, run + k * step.runs_per_iteration)
                else:
                    yield from self._step(node, step, run)
            run += schedule_runs(step)

    def _step(self, node: int, step: ComputeStep | Schedule, run: int):
        if not step.runs_on(node):
            return
        start = self.engine.now
        if isinstance(step, ComputeStep):
            yield self.engine.timeout(step.cost_s, "compute")
            self._span(node, "compute", start, self.engine.now, step.label)
        else:
            timing = self.timings[run]
            timing.start_s = min(timing.start_s, start)  # on entry: a stopped run shows what began
            flight = self._enter(step, run)
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

    def _pipeline(self, node: int, step: PipelineStep, run: int):
        """Compute of stage i+1 runs while the node's communication agent moves stage i.

        Double buffering (seed 000 Sec. 4.1): stage i+2's compute reuses stage i's buffer,
        so it waits until stage i's communication is done.
        """
        agent: Event | None = None
        agents: list[Event] = []
        for i, stage in enumerate(step.stages):
            if i >= 2:
                yield agents[i - 2]
            for s in stage:
                if isinstance(s, ComputeStep):
                    yield from self._step(node, s, run)
            comms = [s for s in stage if isinstance(s, Schedule)]
            agent = self.engine.process(self._agent(node, comms, agent, run),
                                        f"node {node} agent stage {i}")
            run += len(comms)
            agents.append(agent)
        if agent is not None:
            yield agent

    def _agent(self, node: int, schedules: list[Schedule], previous: Event | None, run: int):
        if previous is not None:
            yield previous
        for k, s in enumerate(schedules):
            yield from self._step(node, s, run + k)

    def _schedule(self, node: int, flight: InFlight):
        schedule, shared = flight.schedule, flight.index
        run = flight.run
        index = shared.by_node()
        streaming: list[Event] = []  # the node's sends of its last eager phase, still on their way
        for k, phase in enumerate(schedule.phases):
            start = self.engine.now
            where = shared.where[k]
            recvs = index[k][1]
            sends = [self.engine.process(self._send(run, flight, group, where),
                                         shared.name(node, group))
                     for group in shared.messages(k, node)]
            # an eager phase's sends stream on while the node goes to its next phase, which
            # then waits for them: one phase's sends in flight behind the phase it runs
            waits, streaming = (streaming, sends) if phase.sync == SyncMode.EAGER else (streaming + sends, [])
            if node in recvs:
                waits.append(self._inbox(flight, node, k, recvs[node]))
            yield self.engine.all_of(waits, f"phase {k} of node {node}")
            nodes = shared.barrier_of(k, node) if phase.sync == SyncMode.BARRIER else None
            if nodes is not None:
                yield self._barrier(flight, k, node, nodes)
            self._span(node, "phase", start, self.engine.now, f"phase {k}")
        if streaming:  # the node leaves the schedule once its every send is delivered
            yield self.engine.all_of(streaming, f"sends of eager phases of node {node}")

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
                self._span(n, "phase", starts[n], end, f"{len(schedule.phases)} phases (fast path)")
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
            yield self.engine.timeout(self.network.copy_time_s(nbytes), "copy")
            kind = "copy"
        elif sees_payloads:
            payloads = yield from self.network.deliver(message, payloads, where)
            kind = "send"
        else:
            yield from self.network.transfer(message)
            kind = "send"
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
