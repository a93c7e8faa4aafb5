"""Interpret a Plan (compute steps and schedules from the `sched` IR) on a network model.

Each node is a process that walks the plan in order. In a phase it starts one child
process per send and waits for those and for the receives addressed to it; a
`barrier` phase then waits for every node of the schedule. Payloads move through
runtime/data.py so that delivery is checked, not assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from phalanx.compiler.schedule import ComputeStep, Plan, Schedule, Transfer
from phalanx.runtime.data import AssignmentData
from phalanx.runtime.engine import Engine, Event


@dataclass
class Span:
    """One interval of a node's timeline (for Gantt charts and traces)."""

    node: int
    kind: str  # compute, send, copy, phase, barrier
    start_s: float
    end_s: float
    label: str


@dataclass
class StepTiming:
    start_s: float = float("inf")
    end_s: float = 0.0

    @property
    def time_s(self) -> float:
        return max(self.end_s - self.start_s, 0.0)


@dataclass
class Execution:
    total_time_s: float
    steps: list[StepTiming]
    spans: list[Span] = field(default_factory=list)
    events: int = 0


class Interpreter:
    def __init__(self, plan: Plan, network: Any, engine: Engine,
                 data: dict[int, AssignmentData]):
        self.plan, self.network, self.engine, self.data = plan, network, engine, data
        self.mailbox: dict[tuple, Event] = {}
        self.barriers: dict[tuple[int, int], tuple[Event, set[int]]] = {}
        self.steps = [StepTiming() for _ in plan.steps]
        self.spans: list[Span] = []
        self.finish_s = [0.0] * plan.nprocs

    def run(self) -> Execution:
        for node in range(self.plan.nprocs):
            self.engine.process(self._node(node), f"node {node}")
        self.engine.run()
        return Execution(max(self.finish_s, default=0.0), self.steps, self.spans,
                         self.engine.events_processed)

    def _node(self, node: int):
        for i, step in enumerate(self.plan.steps):
            if node >= step.nprocs:
                continue
            start = self.engine.now
            if isinstance(step, ComputeStep):
                yield self.engine.timeout(step.cost_s, "compute")
                self.spans.append(Span(node, "compute", start, self.engine.now, step.label))
            else:
                yield from self._schedule(node, i, step)
            timing = self.steps[i]
            timing.start_s = min(timing.start_s, start)
            timing.end_s = max(timing.end_s, self.engine.now)
        self.finish_s[node] = self.engine.now

    def _schedule(self, node: int, i: int, schedule: Schedule):
        for k, phase in enumerate(schedule.phases):
            start = self.engine.now
            waits = [self.engine.process(self._send(i, t), f"node {node} send "
                                         f"{t.origin}->{t.final} to {t.dst}")
                     for t in phase.sends if t.src == node]
            waits += [self._letter(i, t, k) for t in phase.recvs if t.dst == node]
            yield self.engine.all_of(waits, f"phase {k} of node {node}")
            if phase.sync == "barrier":
                yield self._barrier(i, k, node, schedule.nprocs)
            self.spans.append(Span(node, "phase", start, self.engine.now, f"phase {k}"))

    def _letter(self, i: int, t: Transfer, k: int) -> Event:
        """The event that fires when transfer `t` has arrived (made by whichever side is first)."""
        key = (i, t.origin, t.final, t.src, t.dst)
        event = self.mailbox.get(key)
        if event is None:
            event = self.engine.event(f"block {t.origin}->{t.final} from node {t.src} (phase {k})")
            event.producer = f"node {t.src}"  # type: ignore[attr-defined]
            self.mailbox[key] = event
        return event

    def _send(self, i: int, t: Transfer):
        start = self.engine.now
        payload = self.data[i].take(t)
        if t.src == t.dst:
            yield self.engine.timeout(self.network.copy_time_s(t.nbytes), "copy")
            kind = "copy"
        else:
            yield from self.network.transfer(t)
            kind = "send"
        self.data[i].put(t, payload)
        self.spans.append(Span(t.src, kind, start, self.engine.now,
                               f"{t.origin}->{t.final} to {t.dst}, {t.nbytes} B"))
        letter = self._letter(i, t, -1)
        if letter.triggered:
            raise RuntimeError(f"transfer {t} delivered twice")
        letter.succeed()

    def _barrier(self, i: int, k: int, node: int, nprocs: int) -> Event:
        if (i, k) not in self.barriers:
            event = self.engine.event(f"barrier after phase {k}")
            self.barriers[(i, k)] = (event, set(range(nprocs)))
        event, missing = self.barriers[(i, k)]
        missing.discard(node)
        event.producer = f"node {min(missing)}" if missing else None  # type: ignore[attr-defined]
        if not missing:
            event.succeed(None, self.network.barrier_time_s(nprocs))
        return event
