"""One MPI rank of `--backend mpi`: run the plan's schedules with real bytes, verify, time.

Started by phalanx.runtime.backends.mpi as
`mpirun -n N python -m phalanx.runtime.backends.mpi_worker JOB.pickle STATUS_DIR`.
Every rank builds the same seeded arrays (runtime/data.py, as the built-in simulator
does), so each holds its own source blocks and knows the reference result. The rank walks
the plan with compiler/plan_walk.py, as runtime/interpreter.py does: a compute step
busy-waits its cost on the wall clock; a phase posts one MPI Irecv per message due to this
rank and one Isend per message it sends (the schedule's message groups, packed into one
contiguous byte buffer) and ends when they are complete (`local`), then for a `barrier`
phase on a barrier of the schedule's ranks, or, scoped to groups (Phase.barrier_groups), of
the rank's group's communicator; an `eager` phase ends when its receives and the previous
eager phase's Isends are complete, its own Isends completing in the next phase; a pipeline
hands stage i's schedules to the rank's communication agent, which advances them
while the rank computes stage i+1. Received bytes are unpacked into the destination
arrays, which are checked against the reference on every rank. Times are MPI_Wtime from a
barrier before the plan: a schedule lasts from its first rank's start to its last rank's
end. Afterwards the MPI library's own collective (Alltoallv, Bcast, Reduce, Allreduce)
moves each schedule's byte counts, from a barrier, for comparison.

Each rank writes what it is doing to STATUS_DIR/rank-R, so the launcher can say which rank
hung or failed. `--fail-rank R` / `--hang-rank R` inject a failure or a hang (for tests).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
import traceback
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from phalanx.compiler.kind import Kind
from phalanx.compiler.plan_walk import (
    AgentStart,
    AwaitBarrier,
    PhaseIndex,
    PhaseVisit,
    ScheduleRun,
    messages,
    walk_node,
    walk_phases,
)
from phalanx.compiler.schedule import WHOLE, ComputeStep, Phase, Schedule, Transfer
from phalanx.runtime.data import build_data
from phalanx.runtime.data_reduce import ReductionData
from phalanx.runtime.data_values import NUMPY_TYPES

MPI_OPS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
TAG_SPAN = 30000  # MPI guarantees tags up to 32767: phase k uses tag k mod TAG_SPAN


class Status:
    """This rank's line in STATUS_DIR: what it does now, `done`, or `failed: why`."""

    def __init__(self, folder: str, rank: int):
        self.path = Path(folder) / f"rank-{rank}"

    def say(self, text: str) -> None:
        self.path.write_text(text)


class Comms:
    """The communicators a plan needs, made before the clock starts (MPI_Comm_split is
    collective): one of ranks 0..n-1 per schedule size n, and for each way a scoped barrier
    splits ranks into groups, one per group (MPI_COMM_NULL for a rank in none)."""

    def __init__(self, comm: Any, schedules: list[Schedule]):
        rank = comm.Get_rank()
        self.by_size = {n: comm.Split(0 if rank < n else MPI.UNDEFINED, rank)
                        for n in sorted({s.nprocs for s in schedules} | {comm.Get_size()})}
        splits = sorted({p.barrier_groups for s in schedules for p in s.phases if p.barrier_groups})
        self.by_groups = {split: comm.Split(_group_of(rank, split), rank) for split in splits}

    def barrier(self, s: Schedule, phase: Phase) -> Any:
        """The communicator of the barrier this rank takes after `phase` (walk_phases asks
        only a rank of the barrier's set: compiler/plan_walk.py PhaseVisit.barrier)."""
        if not phase.barrier_groups:
            return self.by_size[s.nprocs]
        return self.by_groups[phase.barrier_groups]


def _group_of(rank: int, split: tuple[tuple[int, ...], ...]) -> int:
    """The index of the rank's group in `split` (its colour), MPI.UNDEFINED in none."""
    return next((j for j, nodes in enumerate(split) if rank in nodes), MPI.UNDEFINED)


def as_bytes(payload: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(payload).reshape(-1).view(np.uint8)


def unpack(data, t: Transfer, raw: np.ndarray) -> np.ndarray:
    """The bytes of block (origin, final) as the array the data layer expects (a piece of a
    block as its bytes, which the data layer assembles)."""
    if isinstance(data, ReductionData):
        return raw.view(data.reference.dtype).copy()
    if t.offset != WHOLE:
        return raw.copy()
    values = raw.view(data.dst_local[t.final].dtype)
    if t.dst != t.final:
        return values.copy()  # forwarded on later as bytes
    shape = tuple(len(ix) for ix in data.commset.section(t.origin, t.final).indices)
    return values.reshape(shape).copy()


class Timeline:
    """This rank's clock (MPI_Wtime since the barrier that starts the plan) and its spans."""

    def __init__(self):
        self.start = MPI.Wtime()
        self.spans: list[list] = []  # [kind, start s, end s, label]
        self.schedules: dict[int, list[float]] = {}  # collective -> [start s, end s]
        self.late_s = 0.0  # the most a compute step ran past its cost (a busy rank sharing a core)
        self.finish_s = 0.0

    def now(self) -> float:
        return MPI.Wtime() - self.start


class RankPhases:
    """This rank's side of compiler/plan_walk.py walk_phases for schedule s: a phase posts one
    Irecv per message due to the rank and one Isend per message it sends (the schedule's
    message groups, packed into one contiguous byte buffer; local copies are done at once),
    unpacks the received bytes once the phase's wait is over, and a barrier is a nonblocking
    barrier of the schedule's ranks (of the rank's group, for a barrier scoped to groups)."""

    def __init__(self, comms: Comms, rank: int, s: Schedule, data, status: Status,
                 clock: Timeline):
        self.comms, self.rank, self.s, self.data = comms, rank, s, data
        self.status, self.clock = status, clock
        self.start_s = 0.0
        self.incoming: list[tuple[Transfer, ...]] = []
        self.buffers: list[np.ndarray] = []

    def post(self, visit: PhaseVisit) -> tuple[list, list]:
        s, rank, data = self.s, self.rank, self.data
        self.status.say(f"in schedule {s.collective} (line {s.line}) phase {visit.k}")
        self.start_s = self.clock.now()
        comm, tag = self.comms.by_size[s.nprocs], visit.k % TAG_SPAN
        self.incoming = messages([t for t in visit.due if t.src != rank])
        self.buffers = [np.empty(sum(t.nbytes for t in g), dtype=np.uint8) for g in self.incoming]
        receives = [comm.Irecv(buf, source=g[0].src, tag=tag)
                    for g, buf in zip(self.incoming, self.buffers)]
        sends: list = []
        for group in visit.sends:
            payloads = [data.take(t) for t in group]
            if group[0].dst == rank:  # a local copy
                for t, payload in zip(group, payloads):
                    data.put(t, payload)
                continue
            wire = (np.concatenate([as_bytes(p) for p in payloads]) if payloads
                    else np.empty(0, np.uint8))
            sends.append(comm.Isend(wire, dest=group[0].dst, tag=tag))
        return sends, receives

    def received(self, visit: PhaseVisit) -> None:
        """Unpack the phase's received bytes into the destination arrays."""
        for group, buf in zip(self.incoming, self.buffers):
            offset = 0
            for t in group:
                self.data.put(t, unpack(self.data, t, buf[offset:offset + t.nbytes]))
                offset += t.nbytes

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]) -> Any:
        return self.comms.barrier(self.s, visit.phase).Ibarrier()

    def done(self, visit: PhaseVisit) -> None:
        self.clock.spans.append(["phase", self.start_s, self.clock.now(), f"phase {visit.k}"])


def schedule_agent(comms: Comms, rank: int, s: Schedule, data, status: Status,
                   clock: Timeline) -> Iterator[list]:
    """Schedule s, phase by phase (compiler/plan_walk.py walk_phases), as a generator that
    yields the requests it waits for, so that a communication agent can advance it while the
    rank computes."""
    start = clock.now()
    for wait in walk_phases(PhaseIndex(s), rank, RankPhases(comms, rank, s, data, status, clock)):
        yield [wait.handle] if isinstance(wait, AwaitBarrier) else wait.handles
    clock.schedules[s.collective] = [start, clock.now()]


class Agent:
    """The rank's communication agent (compiler/plan_walk.py AgentStart): runs its schedules one
    after another, each as far as its requests allow whenever the rank lets it."""

    def __init__(self):
        self.queue: deque[Iterator[list]] = deque()
        self.waiting: list | None = None
        self.added = self.finished = 0

    def add(self, schedules: Iterable[Iterator[list]]) -> int:
        """Queue schedules; a ticket for wait()."""
        for s in schedules:
            self.queue.append(s)
            self.added += 1
        return self.added

    def advance(self, block: bool, until: int | None = None) -> None:
        """Run queued schedules until done (or ticket `until` is), or, without `block`, until
        a request is not complete yet."""
        while self.queue and (until is None or self.finished < until):
            if self.waiting is not None:
                if block:
                    MPI.Request.Waitall(self.waiting)
                elif not MPI.Request.Testall(self.waiting):
                    return
                self.waiting = None
            try:
                self.waiting = next(self.queue[0])
            except StopIteration:
                self.queue.popleft()
                self.finished += 1

    def wait(self, ticket: int) -> None:
        self.advance(block=True, until=ticket)


def compute(step: ComputeStep, agent: Agent, clock: Timeline, status: Status) -> None:
    """Busy for cost_s of wall clock (the plan's compute is a cost, so the time is made real),
    advancing the agent meanwhile; sched_yield lets other ranks run on a shared core."""
    status.say(f"computing '{step.label}' (line {step.line})")
    start = clock.now()
    end = start + step.cost_s
    while True:  # the agent advances at least once: a queued schedule starts during the compute
        agent.advance(block=False)
        if clock.now() >= end:
            break
        os.sched_yield()
    clock.late_s = max(clock.late_s, clock.now() - end)
    clock.spans.append(["compute", start, clock.now(), step.label])


class RankSteps:
    """This rank's side of compiler/plan_walk.py walk_node: a compute step busy-waits (advancing
    the agent), a schedule runs in the agent, which the rank waits for; a pipeline stage's
    schedules are queued in the agent, which runs them in order while the rank goes on."""

    def __init__(self, comms: Comms, rank: int, data, status: Status, clock: Timeline):
        self.comms, self.rank, self.data, self.status, self.clock = comms, rank, data, status, clock
        self.agent = Agent()
        self.tickets: dict[int, int] = {}  # agent number of the walk -> its ticket

    def _schedule(self, run: ScheduleRun) -> Iterator[list]:
        s = run.schedule
        return schedule_agent(self.comms, self.rank, s, self.data[s.collective], self.status,
                              self.clock)

    def compute(self, step: ComputeStep) -> None:
        compute(step, self.agent, self.clock, self.status)

    def communicate(self, run: ScheduleRun) -> None:
        self.agent.wait(self.agent.add([self._schedule(run)]))

    def start_agent(self, start: AgentStart) -> None:
        # the agent's queue runs schedules in order: stage i's after stage i-1's (start.after)
        self.tickets[start.agent] = self.agent.add(self._schedule(r) for r in start.runs)

    def await_agent(self, agent: int) -> None:
        self.agent.wait(self.tickets[agent])


def run_plan(comms: Comms, rank: int, steps, data, status: Status) -> Timeline:
    """Walk the plan (compiler/plan_walk.py walk_node): compute steps, schedules, and pipelines
    in which stage i's schedules run in the agent while the rank computes stage i+1."""
    comms.by_size[max(comms.by_size)].Barrier()
    clock = Timeline()
    for _ in walk_node(steps, rank, RankSteps(comms, rank, data, status, clock)):
        pass  # each step is done when the walk yields it
    clock.finish_s = clock.now()
    return clock


def describe(step) -> str:
    if isinstance(step, Schedule):
        return f"schedule {step.collective} (line {step.line})"
    if isinstance(step, ComputeStep):
        return f"compute '{step.label}' (line {step.line})"
    return f"the pipeline at line {step.line}"


def library_collective(comm, rank: int, coll: dict[str, Any], data) -> tuple[str, float]:
    """MPI's own collective on the same byte counts (reductions: the same partial values); for
    a collective in groups, in a communicator per group (MPI_Comm_split), all at once."""
    kind = Kind(coll["kind"])  # the parent wrote it from a Collective's Kind (backends/mpi.py)
    m = np.asarray(coll["matrix"], dtype=np.int64)
    root = coll["root"] if coll["root"] is not None else 0
    groups = coll["groups"]
    if groups:
        color = next((i for i, g in enumerate(groups) if rank in g), MPI.UNDEFINED)
        sub = comm.Split(color, rank)
        if color != MPI.UNDEFINED:
            members = groups[color]
            m = m[np.ix_(members, members)]
            root = members.index(coll["roots"][color]) if coll["roots"] else 0
    comm.Barrier()
    start = MPI.Wtime()
    if not groups:
        name = _library_call(comm, rank, rank, kind, m, root, data)
    elif sub != MPI.COMM_NULL:
        name = _library_call(sub, sub.Get_rank(), rank, kind, m, root, data) + " in groups"
        sub.Free()
    else:
        name = ""  # a rank outside every group takes no part
    return name, MPI.Wtime() - start


def _library_call(comm, rank: int, node: int, kind: Kind, m: np.ndarray, root: int, data) -> str:
    """One MPI collective on `comm`, where this process is `rank` (node `node` of the machine)."""
    if isinstance(data, ReductionData):
        part = data.partials.get(node, np.zeros(1, data.reference.dtype))
        out = np.empty_like(part)
        if kind == Kind.ALLREDUCE:
            comm.Allreduce(part, out, op=MPI_OPS[data.stmt.op])
            return "MPI_Allreduce"
        comm.Reduce(part, out, op=MPI_OPS[data.stmt.op], root=root)
        return "MPI_Reduce"
    if kind in (Kind.REDUCE, Kind.ALLREDUCE):
        # A reduction along a dimension: each member's partial block of the statement's element
        # type, reduced element-wise (as the schedules combine them).
        stmt = data.stmt
        part = np.zeros(int(m[:, root].max(initial=0)) // stmt.dst.itemsize,
                        NUMPY_TYPES[stmt.dst.elem_type])
        out = np.empty_like(part)
        if kind == Kind.ALLREDUCE:
            comm.Allreduce(part, out, op=MPI_OPS[stmt.op])
            return "MPI_Allreduce"
        comm.Reduce(part, out, op=MPI_OPS[stmt.op], root=root)
        return "MPI_Reduce"
    if kind == Kind.BROADCAST:
        comm.Bcast(np.zeros(int(m[root].max(initial=0)), np.uint8), root=root)
        return "MPI_Bcast"
    send, recv = m[rank], m[:, rank]
    sbuf, rbuf = np.zeros(int(send.sum()), np.uint8), np.empty(int(recv.sum()), np.uint8)
    comm.Alltoallv([sbuf, (send.tolist(), None), MPI.BYTE], [rbuf, (recv.tolist(), None), MPI.BYTE])
    return "MPI_Alltoallv"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("job")
    ap.add_argument("status_dir")
    ap.add_argument("--fail-rank", type=int, default=-1, help="this rank raises (tests)")
    ap.add_argument("--hang-rank", type=int, default=-1, help="this rank never returns (tests)")
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    status = Status(args.status_dir, rank)
    status.say("starting")
    try:
        job = pickle.loads(Path(args.job).read_bytes())
        if rank == args.fail_rank:
            raise RuntimeError("failure injected by --fail-rank")
        status.say("warming up (a one-byte all-to-all between every pair of ranks)")
        comm.Alltoall(np.zeros(comm.Get_size(), np.uint8), np.empty(comm.Get_size(), np.uint8))
        if rank == args.hang_rank:
            status.say("hanging (injected by --hang-rank)")
            while True:
                time.sleep(1)
        rng = np.random.default_rng(job["seed"])
        schedules = job["schedules"]
        data = {s.collective: build_data(job["communications"][s.collective], rng, kind=s.kind)
                for s in schedules}
        steps = job["steps"]
        status.say(f"at the barrier before {describe(steps[0]) if steps else 'the plan'}")
        # a barrier phase synchronises the schedule's ranks only, or each group's
        comms = Comms(comm, schedules)
        clock = run_plan(comms, rank, steps, data, status)
        results = {}
        for s in schedules:  # then MPI's own collective on the same bytes, one at a time
            status.say(f"running MPI's collective for schedule {s.collective} (line {s.line})")
            mine = [p for p in data[s.collective].problems() if p.startswith(f"node {rank}:")]
            library, library_s = (library_collective(comms.by_size[s.nprocs], rank,
                                                     job["collectives"][s.collective],
                                                     data[s.collective])
                                  if rank < s.nprocs else ("", 0.0))
            results[s.collective] = {"span": clock.schedules.get(s.collective), "library": library,
                                     "library_time_s": library_s, "problems": mine}
    except Exception as exc:  # noqa: BLE001 - any failure must reach the launcher, then abort
        status.say(f"failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        comm.Abort(1)
        return 1
    gathered = comm.gather((results, clock.spans, clock.finish_s, clock.late_s), root=0)
    status.say("done")
    if rank == 0:
        out = {}
        for i in results:
            rows = [g[0][i] for g in gathered]
            spans = [r["span"] for r in rows if r["span"] is not None]
            # the schedule's time: first rank in to last rank out (the built-in's StepTiming)
            start, end = min(a for a, _ in spans), max(b for _, b in spans)
            out[str(i)] = {"start_s": start, "end_s": end, "time_s": end - start,
                           "library": rows[0]["library"],
                           "library_time_s": max(r["library_time_s"] for r in rows),
                           "problems": [p for r in rows for p in r["problems"]]}
        print(json.dumps({"nprocs": comm.Get_size(), "mpi": MPI.Get_library_version().splitlines()[0],
                          "total_time_s": max(g[2] for g in gathered),
                          "compute_late_s": max(g[3] for g in gathered),
                          "spans": [[r, *span] for r, g in enumerate(gathered) for span in g[1]],
                          "schedule_spans": [[r, i, *row["span"]] for r, g in enumerate(gathered)
                                             for i, row in g[0].items() if row["span"]],
                          "collectives": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
