"""Plain-data schedules: what a target's generator produces and what the runtime executes.

A schedule is a list of phases; a phase is a set of transfers. Node p in phase k
sends the transfers whose `src` is p and waits for those whose `dst` is p. The
`sched` dialect (compiler/ir/dialects/sched.py) is the IR form of the same data;
`schedule_to_ir` / `schedule_from_ir` convert both ways without loss.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from phalanx.compiler.kind import Kind


class SyncMode(StrEnum):
    """How a node enters the phase after this one (Phase.sync); its value is the IR's text.

    LOCAL: once its own sends of the phase are delivered and its receives have arrived.
    BARRIER: as LOCAL, then every node of the barrier's set waits for the last of them.
    EAGER: once its receives of the phase have arrived and its sends of the phase before, if
    that was eager too, are delivered: the phase's sends are posted (as MPI_Isend) and stream on
    while the node starts the next phase's, which queue behind them for its processor and
    ports. One phase's sends in flight behind the phase the node runs, as double buffering
    allows; every send is delivered before the node leaves the schedule. A node sends in phase
    k + 1 only what it held once its receives of phase k were in, as in a local phase. What a
    pipelined tree needs: a node starts segment j + 1 while segment j still streams
    (docs/language.md, "Phases"; compiler/library/eager.py).
    """

    LOCAL = "local"
    BARRIER = "barrier"
    EAGER = "eager"


SYNC_KINDS = tuple(mode.value for mode in SyncMode)
COMBINED = 1  # Transfer.message id of the transfers of a phase that one src sends its dst as one message
WHOLE = -1  # Transfer.offset of a transfer that carries its whole block
# The columns of a transfer in the IR's int64 tables (compiler/ir/dialects/sched.py), in field order
TRANSFER_FIELDS = ("src", "dst", "bytes", "origin", "final", "message", "offset")


class Transfer(NamedTuple):
    """One message: `nbytes` of block (origin, final) moving from `src` to `dst`.

    `origin` and `final` name the block of the collective's communication set:
    the bytes that processor `origin` holds for processor `final`. Transfers of one
    phase with the same src, dst and a `message` id > 0 travel as one network message
    (one start-up, their bytes summed): how combining schedules such as the standard
    exchange send many blocks at once. A named tuple, not a dataclass: schedules hold
    millions of them, and a tuple is built and hashed in C.

    A segmenting algorithm (a pipelined chain, scatter + allgather) moves a block in pieces:
    `offset` is then the piece's first byte, the transfer carrying bytes
    [offset, offset + nbytes) of block (origin, final); WHOLE (-1): the whole block. Each byte
    of a block must still reach its destination once. `offset` comes last, with a default, so
    that a transfer of a whole block is built from its first six fields. An int rather than
    None, so that a transfer hashes alike in every process (hash(None) does not before Python
    3.12, and runs must be deterministic) and a plan stays columns of int64 (the IR's tables).
    """

    src: int
    dst: int
    nbytes: int
    origin: int
    final: int
    message: int = 0
    offset: int = WHOLE

    @property
    def block_name(self) -> str:
        """What the transfer carries, for messages: `block 0->3` or `piece [64, 128) of block 0->3`."""
        if self.offset == WHOLE:
            return f"block {self.origin}->{self.final}"
        return f"piece [{self.offset}, {self.offset + self.nbytes}) of block {self.origin}->{self.final}"


@dataclass(frozen=True)
class Phase:
    """Sends and receives that run together; `sync` says how nodes enter the next phase.

    local: a node starts the next phase once its own sends and receives are done.
    barrier: every node waits for all nodes to finish the phase (target's barrier cost).
    eager: a node starts the next phase once its receives are in and its sends posted, the
    previous eager phase's delivered (SyncMode).
    `barrier_groups` scopes a barrier: each set of nodes synchronises on its own, at the cost
    of a barrier of its size, and a node in no set goes straight on (a collective in groups,
    compiler/groups.py: each group's barrier, as on the group's communicator). Empty: the
    barrier spans every node of the schedule. `barriers` gives the sets either way.
    A well-formed schedule receives each transfer in the phase that sends it or a later one
    (an eager ring step split by direction waits for its receives a phase on,
    ringreduce.split_step_phases); the two lists are kept apart so that the IR (and a test)
    can express any placement.
    """

    sends: tuple[Transfer, ...]
    recvs: tuple[Transfer, ...]
    sync: SyncMode = SyncMode.LOCAL
    barrier_groups: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if type(self.sync) is not SyncMode:  # text from a caller or the IR: one typed value
            object.__setattr__(self, "sync", SyncMode(self.sync))
        if self.barrier_groups and self.sync != SyncMode.BARRIER:
            raise ValueError(f"a {self.sync} phase has no barrier to scope to barrier_groups")

    def barriers(self, nprocs: int) -> tuple[tuple[int, ...], ...]:
        """The node sets this phase's barrier synchronises, each on its own: none for a local
        phase, all `nprocs` nodes of the schedule for an unscoped barrier."""
        if self.sync != SyncMode.BARRIER:
            return ()
        return self.barrier_groups or (tuple(range(nprocs)),)

    @staticmethod
    def of(transfers: tuple[Transfer, ...] | list[Transfer], sync: SyncMode = SyncMode.LOCAL) -> Phase:
        """A phase that sends and receives the same transfers."""
        transfers = tuple(transfers)
        return Phase(transfers, transfers, sync)


@dataclass(frozen=True)
class Schedule:
    """A lowered collective: which algorithm, on how many nodes, in which phases."""

    collective: int  # index of the collective within the program
    kind: Kind
    algorithm: str
    nprocs: int
    phases: tuple[Phase, ...]
    src: str = ""  # source array name
    dst: str = ""  # destination array name
    line: int = 0
    stage: int = -1  # pipeline stage, else -1

    def runs_on(self, node: int) -> bool:
        return node < self.nprocs

    @cached_property
    def eager(self) -> bool:
        """Some phase lets its nodes go on while their sends stream (SyncMode.EAGER): the fast
        path, which times a phase as a whole, cannot run it (the engines, Python's and the
        native core, run it event by event)."""
        return any(phase.sync == SyncMode.EAGER for phase in self.phases)

    def direct_messages(self) -> bool:
        """Every transfer goes from its block's source to its destination (nothing relayed): the
        schedules the fixed-routes bound holds for (compiler/library/bounds.py)."""
        return all(t.src == t.origin and t.dst == t.final for phase in self.phases for t in phase.sends)


@dataclass(frozen=True)
class ComputeStep:
    """`compute "label" on P cost T`: every node of the arrangement (nodes `first` to
    `first + nprocs - 1`) is busy for `cost_s`."""

    label: str
    nprocs: int
    cost_s: float
    line: int = 0
    stage: int = -1  # pipeline stage, else -1
    first: int = 0  # the arrangement's first node (`processors Q(4) at 4`)

    def runs_on(self, node: int) -> bool:
        return self.first <= node < self.first + self.nprocs


@dataclass(frozen=True)
class PipelineStep:
    """Stages of compute steps and schedules. A node runs stage i's compute, then hands
    stage i's communication to its communication agent and goes on with stage i+1's
    compute; the agent runs the stages' schedules in order."""

    stages: tuple[tuple[ComputeStep | Schedule, ...], ...]
    line: int = 0

    @property
    def nprocs(self) -> int:
        """Nodes 0 to nprocs - 1 include every node that takes part."""
        return max(s.first + s.nprocs if isinstance(s, ComputeStep) else s.nprocs
                   for stage in self.stages for s in stage)

    def runs_on(self, node: int) -> bool:
        return any(s.runs_on(node) for stage in self.stages for s in stage)


@dataclass(frozen=True)
class RepeatStep:
    """`repeat N { ... }`: the body's steps run `count` times in order, from one compiled body
    (each schedule in it is one collective, run `count` times)."""

    count: int
    body: tuple[Step, ...]
    line: int = 0

    @cached_property
    def runs_per_iteration(self) -> int:
        """Schedule runs in one iteration of the body."""
        return sum(schedule_runs(s) for s in self.body)

    def runs_on(self, node: int) -> bool:
        return any(s.runs_on(node) for s in self.body)


Step = ComputeStep | Schedule | PipelineStep | RepeatStep


def schedule_runs(step: Step) -> int:
    """How many times the step runs a schedule."""
    if isinstance(step, Schedule):
        return 1
    if isinstance(step, PipelineStep):
        return sum(isinstance(s, Schedule) for stage in step.stages for s in stage)
    if isinstance(step, RepeatStep):
        return step.count * step.runs_per_iteration
    return 0


def _schedules(steps: tuple[Step, ...]) -> list[Schedule]:
    out: list[Schedule] = []
    for step in steps:
        if isinstance(step, PipelineStep):
            out += [s for stage in step.stages for s in stage if isinstance(s, Schedule)]
        elif isinstance(step, RepeatStep):
            out += _schedules(step.body)
        elif isinstance(step, Schedule):
            out.append(step)
    return out


def _unroll(steps: tuple[Step, ...]) -> list[ComputeStep | Schedule | PipelineStep]:
    out: list[ComputeStep | Schedule | PipelineStep] = []
    for step in steps:
        out += _unroll(step.body) * step.count if isinstance(step, RepeatStep) else [step]
    return out


@dataclass(frozen=True)
class Plan:
    """The executable form of a compiled program: compute steps, schedules, pipelines and
    repeats in order. A schedule is one collective (`collective`, its index in the program);
    in a repeat it runs once per iteration. Each run has a run index: the runs numbered in
    program order, as if the repeats were unrolled (a plan without repeats: the collective's)."""

    nprocs: int
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def schedules(self) -> list[Schedule]:
        """Every schedule once, in order, pipeline stages and repeat bodies included."""
        return _schedules(self.steps)

    @cached_property
    def run_count(self) -> int:
        return sum(schedule_runs(s) for s in self.steps)

    def run_schedules(self) -> list[Schedule]:
        """The schedule of each run, by run index (a repeat's once per iteration)."""
        return _schedules(tuple(_unroll(self.steps)))

    def runs(self) -> list[int]:
        """The collective of each run, by run index."""
        return [s.collective for s in self.run_schedules()]

    @property
    def repeats(self) -> bool:
        return any(isinstance(s, RepeatStep) for s in self.steps)

    def unrolled(self) -> Plan:
        """The plan with its repeats written out and each run's schedule renumbered to its run
        index (one collective per run): for the backends that run a flat plan."""
        run = iter(range(self.run_count))

        def renumber(step):
            if isinstance(step, Schedule):
                return dataclasses.replace(step, collective=next(run))
            if isinstance(step, PipelineStep):
                return dataclasses.replace(step, stages=tuple(tuple(renumber(s) for s in stage)
                                                              for stage in step.stages))
            return step

        return Plan(self.nprocs, tuple(renumber(s) for s in _unroll(self.steps)))
