"""Run a Plan on the native event core (runtime/engine_core, the `phalanx_engine_core` extension).

The core holds the event heap, the resources and pools, the node walkers and one process per
message, and mirrors runtime/engine.py and runtime/interpreter.py event for event, so that a
run gives the same simulated times, spans, busy times and event count as the Python engine.
A message is the program its network declares (Network.transfer_program), plus the receiver's
combining of reduction partials on its arithmetic resource; a local copy holds its copy time.

The data check stays complete and in Python: the core logs when each message starts and ends
and when a run's last node leaves it, and this module replays runtime/data.py's moves in that
order (the payloads a message takes when it starts, put when it ends, the exactly-once
arrival check, the check of a run's payloads when it closes). The core stops for Python
when a node first enters a run, so that payloads are drawn in the Python engine's order.

`native_plan` says whether a run can go native: the extension is installed, the network shows
no payloads (no fault injection), models no pack / unpack time and offers no fast path for the
plan's schedules, the plan has no pipelines, and every message has a program. Otherwise
runtime/simulate.py runs the Python interpreter, as before.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

from phalanx.compiler.schedule import (
    ComputeStep,
    PipelineStep,
    Plan,
    RepeatStep,
    Schedule,
    Step,
    Transfer,
    schedule_runs,
)
from phalanx.runtime import interpreter
from phalanx.runtime.data import Payloads, move
from phalanx.runtime.engine import Deadlock, Engine, Pool, Resource, Stopped, deadlock_of
from phalanx.runtime.interpreter import Execution, Span, StepTiming, sent_twice
from phalanx.runtime.network import Acquire, Hold, Network, Release, TransferProgram
from phalanx.runtime.schedule_index import ScheduleIndex, transfer_key

try:  # built by `make setup` (pip install runtime/engine_core); without it runs stay in Python
    import phalanx_engine_core as core_module
except ImportError:  # pragma: no cover - every supported set-up builds it
    core_module = None

OP_CODES = {Acquire: 0, Hold: 1, Release: 2}  # the core's op codes (Core.add_programs)
HOLD = OP_CODES[Hold]
SPAN_KINDS = ("compute", "send", "copy", "phase")  # the core's SPAN_* codes, in order
LOG_CHUNK = 1 << 16  # log entries replayed at a time (each a few Python ints while replayed)


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
    if network.packs:  # pack / unpack are process bodies the core cannot run
        return None
    out = NativePlan(plan, {})
    for schedule in plan.schedules():
        if fast and network.fast_plan(schedule) is not None:
            return None
        index = out.indexes.setdefault(schedule.collective, ScheduleIndex(schedule))
        for k in range(len(schedule.phases)):
            for node in index.by_node()[k][0]:
                for group in index.messages(k, node):
                    if group[0].src == group[0].dst:
                        continue
                    if network.transfer_program(group[0]) is None:
                        return None
    return out


def _has_pipeline(steps: tuple[Step, ...]) -> bool:
    return any(isinstance(s, PipelineStep) or isinstance(s, RepeatStep) and _has_pipeline(s.body)
               for s in steps)


@dataclass
class _Items:
    """The plan's steps flattened in order (repeats unrolled), as the core's item arrays."""

    compute: list[bool] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    nprocs: list[int] = field(default_factory=list)
    cost_s: list[float] = field(default_factory=list)
    label: list[int] = field(default_factory=list)
    run: list[int] = field(default_factory=list)

    def add(self, compute: bool, first: int, nprocs: int, cost_s: float, label: int, run: int) -> None:
        self.compute.append(compute)
        self.first.append(first)
        self.nprocs.append(nprocs)
        self.cost_s.append(cost_s)
        self.label.append(label)
        self.run.append(run)


class NativeRun:
    """One run of a plan on the core; `run()` returns the Execution the Interpreter would."""

    def __init__(self, prepared: NativePlan, network: Network, engine: Engine, data: Payloads):
        self.prepared, self.plan, self.network, self.engine = prepared, prepared.plan, network, engine
        self.data = data
        self.core = core_module.Core(self.plan.nprocs, self.plan.run_count, interpreter.MAX_SPANS,
                                     engine.max_events, engine.time_limit_s)
        self.resource_ids: dict[int, int] = {}  # id(Resource or Pool) -> core id
        self.resources: list[Resource | Pool] = []  # by core id
        self.arithmetic: dict[int, Resource] = {}  # node -> its arithmetic resource
        self.labels: list[str] = []
        self.label_ids: dict[str, int] = {}
        self.schedule_ids: dict[int, int] = {}  # collective -> core schedule id
        self.groups: dict[int, list[tuple[Transfer, ...]]] = {}  # collective -> its messages
        self.run_schedules = self.plan.run_schedules()
        self.in_flight: dict[tuple[int, int], list[Any]] = {}  # (run, message) -> payloads taken
        self.arrived: dict[int, set[tuple]] = {}  # run -> (origin, final, src, dst) arrived

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
        while True:
            status, run = core.run()
            while log := core.take_log(LOG_CHUNK):
                self._replay(log)
            if status != core_module.NEED_RUN:
                break
            self._open(run)
        self.engine.now, self.engine.events_processed = core.now, core.events
        for resource, busy_s in zip(self.resources, core.busy()):
            resource.busy_s = busy_s
        if status == core_module.DEADLOCK:
            raise self._deadlock()
        if status == core_module.SENT_TWICE:  # the replay above raised it
            raise AssertionError("the core found a block sent twice that the data replay did not")
        starts, ends = core.timings()
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
        items = _Items()
        self._flatten(self.plan.steps, 0, items)
        self.core.set_items(items.compute, items.first, items.nprocs, items.cost_s, items.label,
                            items.run)

    def _flatten(self, steps: tuple[Step, ...], run: int, items: _Items) -> None:
        for step in steps:
            if isinstance(step, ComputeStep):
                items.add(True, step.first, step.nprocs, step.cost_s, self._label(step.label), 0)
            elif isinstance(step, Schedule):
                items.add(False, 0, step.nprocs, 0.0, 0, run)
            elif isinstance(step, RepeatStep):
                for k in range(step.count):
                    self._flatten(step.body, run + k * step.runs_per_iteration, items)
            run += schedule_runs(step)

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
        """A node enters `run` first: draw its payloads, give the core its schedule."""
        self.data.open(run)
        self.arrived[run] = set()
        schedule = self.run_schedules[run]
        if schedule.collective not in self.schedule_ids:
            self.schedule_ids[schedule.collective] = self._add_schedule(schedule, run)
        self.core.open_run(run, self.schedule_ids[schedule.collective])

    def _add_schedule(self, schedule: Schedule, run: int) -> int:
        """The schedule as the core's arrays: its messages (ends, program, blocks), per phase and
        node the messages sent and the blocks due, the barrier sets."""
        index, data, network = self.prepared.indexes[schedule.collective], self.data[run], self.network
        nprocs, nphases = schedule.nprocs, len(schedule.phases)
        keys: dict[tuple, int] = {}
        groups: list[tuple[Transfer, ...]] = []
        src, dst, label, copy, key_off, key_list = [], [], [], [], [0], []
        offsets: list[int] = [0]  # message i's program: ops offsets[i]..offsets[i + 1]
        codes: list[int] = []
        args: list[int] = []  # the resource of an acquire or release
        holds: list[float] = []  # the seconds of a hold
        resource_ids = self.resource_ids
        slot_msg_off, slot_msgs, has_inbox, inbox_off, inbox_keys = [0], [], [], [0], []
        slot_barrier: list[int] = [-1] * (nphases * nprocs)
        barrier_size: list[int] = []
        barrier_delay_s: list[float] = []
        by_node = index.by_node()
        for k, phase in enumerate(schedule.phases):
            recvs = by_node[k][1]
            for node in range(nprocs):
                for group in index.messages(k, node):
                    facts = index.send_facts(group, data)
                    first = group[0]
                    for op in self._program(group, facts.message, facts.nbytes, facts.operations):
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
                    slot_msgs.append(len(groups))
                    groups.append(group)
                    src.append(first.src)
                    dst.append(first.dst)
                    copy.append(first.src == first.dst)
                    label.append(len(self.labels))
                    self.labels.append(facts.label)
                    key_list += [keys.setdefault(transfer_key(t), len(keys)) for t in group]
                    key_off.append(len(key_list))
                slot_msg_off.append(len(slot_msgs))
                has_inbox.append(node in recvs)
                if node in recvs:
                    due = {keys.setdefault(transfer_key(t), len(keys)): None
                           for t in recvs[node]}
                    inbox_keys += due
                inbox_off.append(len(inbox_keys))
            for nodes in phase.barriers(nprocs):
                for n in nodes:
                    slot_barrier[k * nprocs + n] = len(barrier_size)
                barrier_size.append(len(nodes))
                barrier_delay_s.append(network.barrier_time_s(len(nodes)))
        key_due = [-1] * len(keys)
        for key, (node, k) in index.due().items():
            key_due[keys[key]] = k * nprocs + node
        first_program = self.core.add_programs(offsets, codes, args, holds)
        self.groups[schedule.collective] = groups
        return self.core.add_schedule(nprocs, nphases, src, dst,
                                      list(range(first_program, first_program + len(groups))), label,
                                      copy, key_off, key_list, slot_msg_off, slot_msgs, has_inbox,
                                      inbox_off, inbox_keys, key_due, slot_barrier, barrier_size,
                                      barrier_delay_s)

    def _program(self, group: tuple[Transfer, ...], message: Transfer, nbytes: int,
                 operations: int) -> TransferProgram:
        """What the message's process does (Interpreter._send): the local copy or the network's
        transfer, then the receiver combining reduction partials."""
        first = group[0]
        if first.src == first.dst:
            program: TransferProgram = (Hold(self.network.copy_time_s(nbytes)),)
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

    def _replay(self, log: list[int]) -> None:
        """runtime/data.py's moves and checks in the order the core ran the messages."""
        start, end = core_module.LOG_START, core_module.LOG_END
        for i in range(0, len(log), 3):
            code, run, msg = log[i], log[i + 1], log[i + 2]
            if code == start:
                data = self.data[run]
                group = self.groups[self.run_schedules[run].collective][msg]
                self.in_flight[(run, msg)] = [None if data.movable(t) else data.take(t) for t in group]
            elif code == end:
                data, arrived = self.data[run], self.arrived[run]
                group = self.groups[self.run_schedules[run].collective][msg]
                for t, payload in zip(group, self.in_flight.pop((run, msg))):
                    if payload is not None:
                        data.put(t, payload)
                    else:
                        move(data, t)
                    key = transfer_key(t)
                    if key in arrived:
                        raise sent_twice(t)
                    arrived.add(key)
            else:
                self.data.close(run)
                del self.arrived[run]

    def _spans(self) -> list[Span]:
        nodes, kinds, starts, ends, labels, peers = self.core.spans()
        return [Span(n, SPAN_KINDS[kind], s, e,
                     f"phase {label}" if kind == 3 else self.labels[label], None if peer < 0 else peer)
                for n, kind, s, e, label, peer in zip(nodes, kinds, starts, ends, labels, peers)]

    def _name(self, who: tuple[int, int, int]) -> str:
        kind, a, b = who
        if kind == 0:
            return f"node {a}"
        schedule = self.run_schedules[a]
        group = self.groups[schedule.collective][b]
        return self.prepared.indexes[schedule.collective].name(group[0].src, group)

    def _deadlock(self) -> Deadlock:
        """runtime/engine.py's report from the core's waits (Interpreter's event names)."""
        waits: dict[str, list[tuple[str, str]]] = {}
        for who, kind, info, blockers in self.core.live_waits():
            if kind == "resource":
                holds = f"holds {self.resources[info[0]].name}"
                found = [(self._name(h), holds) for h in blockers]
            elif kind == "allof":
                found = [(self._name(c), f"{self._name(c)} unfinished") for c in blockers]
                if info[2]:
                    found += self._inbox_blockers(*info[:2], who[1])
            else:
                found = self._barrier_blockers(info[0], info[1], {n for _, n, _ in blockers}, who[1])
            waits[self._name(who)] = found
        return deadlock_of(dict(sorted(waits.items())))

    def _inbox_blockers(self, run: int, k: int, node: int) -> list[tuple[str, str]]:
        schedule = self.run_schedules[run]
        due = self.prepared.indexes[schedule.collective].by_node()[k][1][node]
        missing = interpreter.first_missing({transfer_key(t) for t in due} - self.arrived.get(run, set()), k)
        return [] if missing is None else [missing]

    def _barrier_blockers(self, run: int, k: int, arrived: set[int], node: int) -> list[tuple[str, str]]:
        schedule = self.run_schedules[run]
        nodes = self.prepared.indexes[schedule.collective].barrier_of(k, node) or ()
        missing = set(nodes) - arrived
        if not missing:
            return []
        what = "" if len(nodes) == schedule.nprocs else f" in the group of node {nodes[0]}"
        return [(f"node {min(missing)}", f"barrier after phase {k}{what}")]
