"""compiler/plan_walk.py: the one walk of a plan at a node, checked on a recording consumer."""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.plan_walk import (
    AgentStart,
    AwaitAll,
    AwaitBarrier,
    PhaseIndex,
    PhaseVisit,
    ScheduleRun,
    walk_all,
    walk_node,
    walk_phases,
)
from phalanx.compiler.schedule import (
    ComputeStep,
    Phase,
    PipelineStep,
    RepeatStep,
    Schedule,
    SyncMode,
    Transfer,
)


def schedule(collective: int, nprocs: int, phases: tuple[Phase, ...] = ()) -> Schedule:
    return Schedule(collective, Kind.ALLTOALL, "direct", nprocs, phases)


class Steps:
    """Records the walk: what a back end would be asked to do, in order."""

    def compute(self, step: ComputeStep):
        return ("compute", step.label)

    def communicate(self, run: ScheduleRun):
        return ("schedule", run.schedule.collective, run.run)

    def start_agent(self, start: AgentStart):
        return ("agent", start.agent, start.stage,
                tuple((r.schedule.collective, r.run) for r in start.runs), start.after)

    def await_agent(self, agent: int):
        return ("await", agent)


def test_repeats_number_their_runs_and_pipelines_double_buffer():
    """A repeat's body runs once per iteration, its schedules' run indexes counting on; a
    pipeline's stage i+2 compute waits for stage i's agent, each agent starts after the
    previous one, and a node skips the steps it does not run (compute on nodes 2..3)."""
    pipeline = PipelineStep(tuple((ComputeStep(f"c{i}", 4, 1e-6), schedule(10 + i, 2))
                                  for i in range(3)))
    steps = (RepeatStep(2, (schedule(0, 4), ComputeStep("far", 2, 1e-6, first=2))), pipeline,
             schedule(20, 4))
    assert list(walk_node(steps, 0, Steps())) == [
        ("schedule", 0, 0), ("schedule", 0, 1),
        ("compute", "c0"), ("agent", 0, 0, ((10, 2),), None),
        ("compute", "c1"), ("agent", 1, 1, ((11, 3),), 0),
        ("await", 0), ("compute", "c2"), ("agent", 2, 2, ((12, 4),), 1),
        ("await", 2),
        ("schedule", 20, 5)]
    walk = list(walk_node(steps, 3, Steps()))  # node 3: not in the pipeline's schedules
    assert walk[:4] == [("schedule", 0, 0), ("compute", "far"), ("schedule", 0, 1),
                        ("compute", "far")]
    assert ("agent", 1, 1, (), 0) in walk and walk[-1] == ("schedule", 20, 5)


def test_walk_all_takes_every_step_whichever_nodes_run_it():
    """The native core's item list: node 0's walk plus the compute steps it does not run."""
    steps = (RepeatStep(2, (schedule(0, 4), ComputeStep("far", 2, 1e-6, first=2))), schedule(20, 2))
    assert list(walk_all(steps, Steps())) == [
        ("schedule", 0, 0), ("compute", "far"), ("schedule", 0, 1), ("compute", "far"),
        ("schedule", 20, 2)]
    assert list(walk_node(steps, 0, Steps())) == [("schedule", 0, 0), ("schedule", 0, 1),
                                                  ("schedule", 20, 2)]


class Phases:
    """Handles are names; records the callbacks."""

    def __init__(self):
        self.calls: list[tuple] = []

    def post(self, visit: PhaseVisit):
        self.calls.append(("post", visit.k))
        return ([f"send{visit.k}:{g[0].dst}" for g in visit.sends],
                [f"recv{visit.k}:{t.src}" for t in visit.due])

    def received(self, visit: PhaseVisit) -> None:
        self.calls.append(("received", visit.k))

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]):
        return f"barrier{visit.k}:{nodes}"

    def done(self, visit: PhaseVisit) -> None:
        self.calls.append(("done", visit.k))


def test_phases_wait_by_their_sync_mode():
    """Eager phases wait for the previous eager phase's sends, their own stream on; a local
    phase waits for its own and the streaming ones; a barrier scoped to groups is the node's
    group's; the node leaves once its last eager sends are in."""
    def swap(a: int, b: int) -> tuple[Transfer, ...]:
        return Transfer(a, b, 8, a, b), Transfer(b, a, 8, b, a)

    phases = (Phase.of(swap(0, 1), SyncMode.EAGER), Phase.of(swap(0, 2), SyncMode.EAGER),
              Phase(swap(0, 3), swap(0, 3), SyncMode.BARRIER, ((0, 3), (1, 2))),
              Phase.of(swap(0, 1), SyncMode.EAGER))
    consumer = Phases()
    waits = list(walk_phases(PhaseIndex(schedule(0, 4, phases)), 0, consumer))
    assert [(w.what, w.handles) if isinstance(w, AwaitAll) else w.handle for w in waits] == [
        ("phase 0 of node 0", ["recv0:1"]),
        ("phase 1 of node 0", ["send0:1", "recv1:2"]),
        ("phase 2 of node 0", ["send1:2", "send2:3", "recv2:3"]),
        "barrier2:(0, 3)",
        ("phase 3 of node 0", ["recv3:1"]),
        ("sends of eager phases of node 0", ["send3:1"])]
    assert isinstance(waits[3], AwaitBarrier) and waits[3].visit.k == 2
    assert consumer.calls[:4] == [("post", 0), ("received", 0), ("done", 0), ("post", 1)]
    # node 1 takes part in phases 0 and 3 only, and in phase 2's barrier of its group
    waits = list(walk_phases(PhaseIndex(schedule(0, 4, phases)), 1, Phases()))
    assert [w.handle for w in waits if isinstance(w, AwaitBarrier)] == ["barrier2:(1, 2)"]
    assert [w.handles for w in waits if isinstance(w, AwaitAll)][1:3] == [["send0:0"], []]
