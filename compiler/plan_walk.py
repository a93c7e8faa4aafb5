"""The one walk of a Plan (compiler/schedule.py) at one node, shared by the built-in simulator
(runtime/interpreter.py), the MPI and SimGrid workers (runtime/backends/; docs/backends.md) and
the native lowering (compiler/ir/conversion/native_rows.py: each node's walk as the rows of its
MPI program, nonblocking messages). The native event core (runtime/native_run.py) takes the plan's
steps for all nodes at once from `walk_all`.

Two walks, each driving a consumer that supplies only how things happen on its back end
(the built-in simulator's generator events, mpi4py's nonblocking calls, the SimGrid
worker's recorded ops):

- `walk_node(steps, node, consumer)`: which steps the node runs (Step.runs_on), in what order,
  each schedule's run index (a RepeatStep's body once per iteration, compiler/schedule.py Plan),
  and a PipelineStep's double buffering (seed 000 Sec. 4.1): the node computes stage i, hands
  stage i's schedules to a communication agent that starts after the agent of stage i-1, and
  before stage i+2's compute waits for stage i's agent (stage i+2 reuses stage i's buffer);
  after the last stage it waits for the last agent.
- `walk_all(steps, consumer)`: the same walk of every step, for a consumer that runs all nodes at
  once (a step says on which nodes it runs).
- `walk_phases(index, node, consumer)`: a schedule's phases at the node: its messages and the
  transfers due to it in each phase, what the phase waits for by its sync mode
  (compiler/schedule.py SyncMode: `local` its own sends and receives, `barrier` then the barrier
  of its set, `eager` its receives and the previous eager phase's sends, its own streaming on),
  and, on leaving the schedule, the sends still streaming.

Both are generators: `walk_node` yields what the consumer returned for each step (a generator
consumer runs it with `yield from`, a blocking one has already done it), `walk_phases` yields the
waits (AwaitAll, AwaitBarrier) for the consumer to carry out in its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from phalanx.compiler.schedule import (
    ComputeStep,
    Phase,
    PipelineStep,
    RepeatStep,
    Schedule,
    Step,
    SyncMode,
    Transfer,
    schedule_runs,
)

R = TypeVar("R")  # what a node consumer returns for one step
H = TypeVar("H")  # a phase consumer's handle of something to wait for (an event, a request)


@dataclass(frozen=True, slots=True)
class ScheduleRun:
    """One run of a schedule: `run` is its run index (compiler/schedule.py Plan)."""

    schedule: Schedule
    run: int


@dataclass(frozen=True, slots=True)
class AgentStart:
    """Stage `stage` of a pipeline hands `runs` (the stage's schedules the node takes part in,
    in order) to communication agent `agent`, which starts once agent `after` (the previous
    stage's) is done; agents are numbered from 0 in the node's walk."""

    agent: int
    stage: int
    runs: tuple[ScheduleRun, ...]
    after: int | None


class NodeConsumer(Protocol[R]):
    """What a back end supplies to walk_node: how to compute, run a schedule, start an agent
    and wait for one."""

    def compute(self, step: ComputeStep) -> R: ...

    def communicate(self, run: ScheduleRun) -> R:
        """Run a schedule in the node's own flow (it goes on once it has left the schedule)."""
        ...

    def start_agent(self, start: AgentStart) -> R: ...

    def await_agent(self, agent: int) -> R: ...


def walk_node(steps: tuple[Step, ...], node: int, consumer: NodeConsumer[R]) -> Iterator[R]:
    """The node's walk of `steps`, from run index 0 (see the module docstring)."""
    yield from _walk(steps, lambda step: step.runs_on(node), consumer, 0, [0])


def walk_all(steps: tuple[Step, ...], consumer: NodeConsumer[R]) -> Iterator[R]:
    """The walk of every step of `steps`, whichever nodes it runs on, from run index 0."""
    yield from _walk(steps, lambda step: True, consumer, 0, [0])


def _walk(steps: tuple[Step, ...], runs: Callable[[Step], bool], consumer: NodeConsumer[R], run: int,
          agents: list[int]) -> Iterator[R]:
    """`runs` says which steps the walk takes; `run` is the run index of the steps' first schedule
    run; agents[0] counts the agents started so far."""
    for step in steps:
        if runs(step):
            if isinstance(step, PipelineStep):
                yield from _pipeline(step, runs, consumer, run, agents)
            elif isinstance(step, RepeatStep):
                for k in range(step.count):
                    yield from _walk(step.body, runs, consumer, run + k * step.runs_per_iteration,
                                     agents)
            elif isinstance(step, ComputeStep):
                yield consumer.compute(step)
            else:
                yield consumer.communicate(ScheduleRun(step, run))
        run += schedule_runs(step)


def _pipeline(step: PipelineStep, runs: Callable[[Step], bool], consumer: NodeConsumer[R], run: int,
              agents: list[int]) -> Iterator[R]:
    first = agents[0]
    for i, stage in enumerate(step.stages):
        if i >= 2:  # stage i's compute reuses stage i-2's buffer
            yield consumer.await_agent(first + i - 2)
        for s in stage:
            if isinstance(s, ComputeStep) and runs(s):
                yield consumer.compute(s)
        schedules = [s for s in stage if isinstance(s, Schedule)]
        taken = tuple(ScheduleRun(s, run + k) for k, s in enumerate(schedules) if runs(s))
        yield consumer.start_agent(AgentStart(first + i, i, taken, first + i - 1 if i else None))
        run += len(schedules)
    agents[0] = first + len(step.stages)
    if step.stages:
        yield consumer.await_agent(first + len(step.stages) - 1)


def messages(sends: list[Transfer]) -> list[tuple[Transfer, ...]]:
    """Group one node's sends of a phase into network messages (see Transfer.message), its
    local copies after them."""
    groups: dict[tuple[int, int, int], list[Transfer]] = {}
    out: list[tuple[Transfer, ...] | list[Transfer]] = []
    for t in sends:
        if t.message == 0:
            out.append((t,))  # a message of its own, final (tuple() below returns it as is)
        else:
            key = (t.src, t.dst, t.message)
            if key not in groups:
                groups[key] = []
                out.append(groups[key])
            groups[key].append(t)
    grouped = [tuple(g) for g in out]
    # A node starts its messages before its local copies: a copy may hold the processor the
    # start-ups need (the tori's, WormholeNetwork.copy_program), and no message waits for one.
    return [g for g in grouped if g[0].src != g[0].dst] + [g for g in grouped if g[0].src == g[0].dst]


class PhaseIndex:
    """Per phase of one schedule, each node's messages, the transfers due to it and its
    barrier set, each built once when first needed (the runs of a `repeat` share them)."""

    def __init__(self, schedule: Schedule):
        self.schedule = schedule
        self._barrier_of: dict[int, dict[int, tuple[int, ...]]] = {}  # phase -> node -> its set
        self._by_node: list[tuple[dict, dict]] | None = None
        self._messages: dict[tuple[int, int], list[tuple[Transfer, ...]]] = {}  # (phase, node)

    def barrier_of(self, k: int, node: int) -> tuple[int, ...] | None:
        """The nodes phase k's barrier synchronises `node` with; None: it does not wait."""
        if k not in self._barrier_of:
            phase, nprocs = self.schedule.phases[k], self.schedule.nprocs
            self._barrier_of[k] = {p: nodes for nodes in phase.barriers(nprocs) for p in nodes}
        return self._barrier_of[k].get(node)

    def by_node(self) -> list[tuple[dict, dict]]:
        """Per phase, each node's sends and receives."""
        if self._by_node is None:
            self._by_node = []
            for phase in self.schedule.phases:
                sends: dict[int, list[Transfer]] = {}
                recvs: dict[int, list[Transfer]] = {}
                for t in phase.sends:
                    sends.setdefault(t.src, []).append(t)
                for t in phase.recvs:
                    recvs.setdefault(t.dst, []).append(t)
                self._by_node.append((sends, recvs))
        return self._by_node

    def messages(self, k: int, node: int) -> list[tuple[Transfer, ...]]:
        """The network messages (and local copies) `node` sends in phase k."""
        key = (k, node)
        if key not in self._messages:
            self._messages[key] = messages(self.by_node()[k][0].get(node, []))
        return self._messages[key]

    def receives(self, k: int, node: int) -> list[Transfer]:
        """The transfers `node` receives in phase k (local copies too)."""
        return self.by_node()[k][1].get(node, [])


@dataclass(frozen=True, slots=True)
class PhaseVisit:
    """Phase k of a schedule at one node: what it sends (messages, local copies among them),
    what is due to it, and the node set of the barrier it takes after (None: none)."""

    k: int
    phase: Phase
    sends: list[tuple[Transfer, ...]]
    due: list[Transfer]
    barrier: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class AwaitAll(Generic[H]):
    """Wait until every handle is done; `what` names the wait (deadlock reports)."""

    what: str
    handles: list[H]


@dataclass(frozen=True, slots=True)
class AwaitBarrier(Generic[H]):
    """Wait for the barrier after phase `visit`."""

    visit: PhaseVisit
    handle: H


class PhaseConsumer(Protocol[H]):
    """What a back end supplies to walk_phases."""

    def post(self, visit: PhaseVisit) -> tuple[list[H], list[H]]:
        """Start the phase's sends and the waits for its receives: (sends, receives)."""
        ...

    def received(self, visit: PhaseVisit) -> None:
        """The phase's wait is over (its receives are in)."""
        ...

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]) -> H:
        """Enter the barrier of `nodes` (visit.barrier) after the phase."""
        ...

    def done(self, visit: PhaseVisit) -> None:
        """The node is through the phase (and its barrier)."""
        ...


def walk_phases(index: PhaseIndex, node: int,
                consumer: PhaseConsumer[H]) -> Iterator[AwaitAll[H] | AwaitBarrier[H]]:
    """The schedule's phases at `node` (see the module docstring)."""
    streaming: list[H] = []  # the sends of the node's last eager phase, still on their way
    for k, phase in enumerate(index.schedule.phases):
        barrier = index.barrier_of(k, node) if phase.sync == SyncMode.BARRIER else None
        visit = PhaseVisit(k, phase, index.messages(k, node), index.receives(k, node), barrier)
        sends, receives = consumer.post(visit)
        # an eager phase's sends stream on while the node goes to its next phase, which then
        # waits for them: one phase's sends in flight behind the phase it runs
        if phase.sync == SyncMode.EAGER:
            waits, streaming = streaming, sends
        else:
            waits, streaming = streaming + sends, []
        yield AwaitAll(f"phase {k} of node {node}", waits + receives)
        consumer.received(visit)
        if barrier is not None:
            yield AwaitBarrier(visit, consumer.barrier(visit, barrier))
        consumer.done(visit)
    if streaming:  # the node leaves the schedule once its every send is delivered
        yield AwaitAll(f"sends of eager phases of node {node}", streaming)
