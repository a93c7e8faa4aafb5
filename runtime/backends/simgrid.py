"""`--backend simgrid`: run a compiled Plan's schedules on SimGrid 3.32, beside the built-in simulator.

SimGrid's Python module (Debian python3-simgrid) is built for Debian's /usr/bin/python3 and
cannot be imported by the project's venv (another interpreter, no numpy there either).
So this module describes the run as JSON (platform XML from platforms.py, SimGrid's
configuration, the plan's phases as messages with byte counts and start-ups) and pipes it
to simgrid_worker.py under /usr/bin/python3, which prints the times.

Network model: CM02 (max-min flow sharing, no TCP factors), crosstraffic off, so a
message's time on a free path is latency + bytes / bandwidth, like the built-in models.
Where they differ is contention: SimGrid shares a link's bandwidth between the flows on
it, the built-in wormhole models hold links whole; `compare` says so for each collective.
Phases keep their synchronisation: a `local` phase ends for a node when its own sends are
done and its receives have arrived, a `barrier` phase on a SimGrid barrier (one per group
for a barrier scoped to groups, Phase.barrier_groups, at the barrier time of the group's
size); iWarp's phased messages also pass the synchronizing switch's per-link gates
(simgrid_worker.Switch).

Data: SimGrid moves sizes, not bytes. Every message carries its (schedule, phase, index),
which the receiver checks, and the payloads are moved by the data layer in phase order
(runtime/fastpath.move_data) and checked as in every run.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phalanx.compiler.columns import paused_gc
from phalanx.compiler.driver import Compiled, unrolled
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
from phalanx.compiler.schedule import ComputeStep, Schedule, Transfer
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime.backends.platforms import UNGATED, Platform, platform_for
from phalanx.runtime.data import build_data
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.fastpath import move_data
from phalanx.runtime.interpreter import Execution, Span, SpanKind, StepTiming
from phalanx.runtime.simulate import CollectiveResult, RunResult, simulate

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's interpreter, the one python3-simgrid is built for
WORKER = Path(__file__).with_name("simgrid_worker.py")
# CM02: max-min sharing without latency or bandwidth correction factors; crosstraffic off:
# acknowledgements do not load the reverse links (the built-in models have none).
CONFIG = ("network/model:CM02", "network/crosstraffic:0")
AGREEMENT = 0.05  # relative difference within which the two simulators "agree"


def simgrid_missing() -> str | None:
    """Why the SimGrid backend cannot run here, or None when it can."""
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} not found (the SimGrid backend runs Debian's python3-simgrid)"
    probe = subprocess.run([SYSTEM_PYTHON, "-I", "-c", "import simgrid"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0:
        return ("SimGrid's Python module is not installed for /usr/bin/python3: "
                "apt-get install python3-simgrid")
    return None


def used_pairs(compiled: Compiled) -> set[tuple[int, int]]:
    return {(t.src, t.dst) for s in compiled.plan.schedules() for ph in s.phases for t in ph.sends}


def _message_key(t: Transfer) -> tuple:
    """What names a network message within a phase, from any of its transfers."""
    return (t.src, t.dst, t.message) if t.message else (t.src, t.dst, t)


class _PhaseRecorder:
    """The worker's side of compiler/plan_walk.py walk_phases, recorded for one node: the walk
    runs here and the worker replays its ops (post, wait, barrier, span). A handle is a token
    the worker maps to its SimGrid comm: ["put", k, j] or ["get", k, j] for message j of phase
    k's `messages`, ["copy", k, i] for the node's i-th local copy of the phase."""

    def __init__(self, schedule: Schedule, numbers: list[dict[tuple, int]], platform: Platform,
                 data):
        self.schedule, self.numbers = schedule, numbers
        self.platform, self.data = platform, data
        self.ops: list[list] = []

    def post(self, visit: PhaseVisit) -> tuple[list[list], list[list]]:
        k, numbers = visit.k, self.numbers[visit.k]
        sends, copies = [], []
        for group in visit.sends:
            if group[0].src == group[0].dst:
                time_s = self.platform.copy_time_s(self.data.wire_bytes(group))
                if time_s > 0:
                    copies.append(time_s)
            else:
                sends.append(numbers[_message_key(group[0])])
        gets = set()
        for t in visit.due:
            if t.src != t.dst:
                j = numbers.get(_message_key(t))
                if j is None:
                    s = self.schedule
                    raise PhalanxError(Diagnostic(
                        f"the schedule of the {s.kind} at line {s.line} cannot run on SimGrid: "
                        f"node {t.dst} receives {t.block_name} from node {t.src} in phase {k}, "
                        "which does not send it",
                        hint="SimGrid's worker receives a message in the phase that sends it; "
                             "run the schedule with --backend sim"))
                gets.add(j)
        ordered = sorted(gets)  # in the phase's message order, as the senders send them
        self.ops.append(["post", k, ordered, copies, sends])
        receives = [["get", k, j] for j in ordered] + [["copy", k, i] for i in range(len(copies))]
        return [["put", k, j] for j in sends], receives

    def received(self, visit: PhaseVisit) -> None:
        pass

    def barrier(self, visit: PhaseVisit, nodes: tuple[int, ...]) -> list:
        """[group (-1: every node of the schedule), its node count, barrier seconds]."""
        groups = visit.phase.barrier_groups
        return [groups.index(nodes) if groups else -1, len(nodes),
                self.platform.barrier_time_s(len(nodes))]

    def done(self, visit: PhaseVisit) -> None:
        self.ops.append(["span", visit.k])


def _schedule_json(schedule: Schedule, platform: Platform, data) -> dict[str, Any]:
    """The schedule's messages per phase (src, dst, bytes, start-up, switched), and per node
    its walk of the phases (_PhaseRecorder's ops)."""
    phases, numbers = [], []
    for phase in schedule.phases:
        msgs, number = [], {}
        for group in messages(list(phase.sends)):
            first, nbytes = group[0], data.wire_bytes(group)
            if first.src != first.dst:
                number[_message_key(first)] = len(msgs)
                msgs.append([first.src, first.dst, nbytes, platform.overhead_s(first),
                             platform.switched(first)])
        phases.append({"messages": msgs})
        numbers.append(number)
    index, walks = PhaseIndex(schedule), []
    for node in range(schedule.nprocs):
        recorder = _PhaseRecorder(schedule, numbers, platform, data)
        for wait in walk_phases(index, node, recorder):
            if isinstance(wait, AwaitBarrier):
                recorder.ops.append(["barrier", wait.visit.k, *wait.handle])
            else:
                recorder.ops.append(["wait", wait.handles])
        walks.append(recorder.ops)
    return {"id": schedule.collective, "nprocs": schedule.nprocs, "phases": phases, "walks": walks}


class _StepRecorder:
    """The worker's side of compiler/plan_walk.py walk_node, recorded for one node: ops
    ["compute", cost s, label], ["schedule", i] (the i-th of the description's schedules),
    ["agent", agent, stage, [i, ...], the agent it starts after or null], ["await", agent]."""

    def __init__(self, position: dict[int, int]):
        self.position = position  # collective -> its place in the description's schedules

    def compute(self, step: ComputeStep) -> list:
        return ["compute", step.cost_s, step.label]

    def communicate(self, run: ScheduleRun) -> list:
        return ["schedule", self.position[run.schedule.collective]]

    def start_agent(self, start: AgentStart) -> list:
        return ["agent", start.agent, start.stage,
                [self.position[r.schedule.collective] for r in start.runs], start.after]

    def await_agent(self, agent: int) -> list:
        return ["await", agent]


def describe(compiled: Compiled, platform: Platform, data: dict[int, Any],
             spans: bool = True) -> dict[str, Any]:
    """The worker's input: platform, configuration, the schedules and each node's walk of the
    plan (compiler/plan_walk.py, recorded here: the worker runs without phalanx). The plan is
    unrolled (driver.unrolled): each schedule runs once. The cyclic garbage collector is
    paused (columns.py paused_gc): the walks build lists of numbers and strings, no cycles,
    beside a schedule's Transfers, over which its passes took half the time (torus:16x16)."""
    schedules = compiled.plan.schedules()
    position = {s.collective: i for i, s in enumerate(schedules)}
    recorder = _StepRecorder(position)
    with paused_gc():
        programs = [list(walk_node(compiled.plan.steps, node, recorder))
                    for node in range(platform.nnodes)]
        described = [_schedule_json(s, platform, data[s.collective]) for s in schedules]
    return {"platform_xml": platform.xml, "hosts": [platform.host(i) for i in range(platform.nnodes)],
            "config": list(CONFIG), "serial_sender": platform.serial_sender,
            "ungated": list(UNGATED), "schedules": described, "programs": programs, "spans": spans}


def run_worker(description: dict[str, Any], timeout_s: float = 600.0) -> dict[str, Any]:
    """Pipe the description to simgrid_worker.py under /usr/bin/python3; its JSON output."""
    reason = simgrid_missing()
    if reason is not None:
        raise usage_error(f"the SimGrid backend cannot run: {reason}", "or use --backend sim")
    # -I: isolated, so the worker's folder (with this module, also named simgrid) is not on
    # sys.path and `import simgrid` finds SimGrid's module; PYTHON* variables are ignored.
    try:
        done = subprocess.run([SYSTEM_PYTHON, "-I", str(WORKER), "--log=root.thres:critical"],
                              input=json.dumps(description), capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise usage_error(f"SimGrid did not finish within {timeout_s:.0f} s",
                          "simulate a smaller program or raise the timeout") from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        raise usage_error(f"SimGrid failed (exit {done.returncode}): {tail}",
                          "the platform or the schedule was refused; see SimGrid's message")
    return json.loads(done.stdout)


@dataclass
class SimGridRun:
    """SimGrid's run beside the built-in simulator's, per collective."""

    simgrid: RunResult
    builtin: RunResult
    platform: Platform
    worker: dict[str, Any] = field(repr=False)

    @property
    def verified(self) -> bool:
        return self.simgrid.verified

    def comparisons(self) -> list[dict[str, Any]]:
        out = []
        schedules = self.simgrid.compiled.plan.schedules()
        for s, sg, bi in zip(schedules, self.simgrid.collectives, self.builtin.collectives):
            ratio = sg.time_s / bi.time_s if bi.time_s > 0 else 1.0
            shared = max((self.platform.shared_links((t.src, t.dst) for t in ph.sends)
                          for ph in s.phases), default=0)
            entry = {"line": sg.line, "algorithm": sg.algorithm, "simgrid_time_s": sg.time_s,
                     "builtin_time_s": bi.time_s, "simgrid_over_builtin": ratio,
                     "agree": abs(ratio - 1.0) <= AGREEMENT, "most_messages_on_a_link": shared}
            if not entry["agree"]:
                entry["note"] = difference_note(ratio, shared)
            out.append(entry)
        return out

    def to_json(self) -> dict[str, Any]:
        out = self.simgrid.to_json()
        out["platform"] = {"kind": self.platform.kind, "note": self.platform.note,
                           "config": list(CONFIG), "simgrid": self.worker.get("simgrid_version")}
        out["builtin_total_time_s"] = self.builtin.total_time_s
        for c, cmp in zip(out["collectives"], self.comparisons()):
            c["builtin_time_s"] = cmp["builtin_time_s"]
            c["simgrid_over_builtin"] = cmp["simgrid_over_builtin"]
            if "note" in cmp:
                c["note"] = cmp["note"]
        out["simgrid_wall_s"] = self.worker["wall_s"]
        out["switch"] = self.worker["switch"]
        return out


def difference_note(ratio: float, shared: int) -> str:
    """Why SimGrid and the built-in model differ on a schedule."""
    how = f"{abs(ratio - 1) * 100:.1f}% {'faster' if ratio < 1 else 'slower'}"
    if shared > 1:
        return (f"SimGrid is {how}: up to {shared} messages of a phase share a link or port, and SimGrid "
                "shares its bandwidth between the flows (max-min, CM02) where the built-in model "
                "holds links and ports whole (wormhole blocking, FIFO ports)")
    if shared == 0:
        return (f"SimGrid is {how}: SimGrid routes this platform itself, so messages may share "
                "links that the target's routes keep apart (flow sharing vs wormhole blocking)")
    return (f"SimGrid is {how} although no link carries two messages of a phase: the built-in "
            "model also serialises on resources SimGrid does not have (processor, memory "
            "streams, injection channels)")


def _verify(compiled: Compiled, seed: int, worker: dict[str, Any]) -> dict[int, list[str]]:
    rng = np.random.default_rng(seed)
    problems: dict[int, list[str]] = {}
    for s in compiled.plan.schedules():
        data = build_data(compiled.communications[s.collective], rng, kind=s.kind)
        try:
            move_data(s, data)
            problems[s.collective] = data.problems()
        except ScheduleError as bad:
            problems[s.collective] = [str(bad)]
    for i in problems:
        problems[i] += [p for p in worker["problems"] if f"schedule {i}" in p]
    return problems


def run_simgrid(compiled: Compiled, seed: int = 0, routing: str = "target",
                timeout_s: float = 600.0) -> SimGridRun:
    """Run the plan on SimGrid and on the built-in simulator; both results side by side. A
    program with repeats runs unrolled (driver.unrolled): one collective per run."""
    compiled = unrolled(compiled)
    platform = platform_for(compiled.target, used_pairs(compiled), routing)
    rng = np.random.default_rng(seed)
    # Built as the built-in run builds them: a reduce's partials combine on the way.
    sizes = {s.collective: build_data(compiled.communications[s.collective], rng, kind=s.kind)
             for s in compiled.plan.schedules()}
    worker = run_worker(describe(compiled, platform, sizes), timeout_s)
    builtin = simulate(compiled, seed)
    problems = _verify(compiled, seed, worker)
    timings = {int(k): StepTiming(*v) for k, v in worker["collectives"].items()}
    spans = [Span(n, SpanKind(kind), a, b, label) for n, kind, a, b, label in worker["spans"]]
    execution = Execution(worker["total_time_s"], timings, spans, worker["messages"])
    results = [CollectiveResult(**{**vars(c), "time_s": timings[i].time_s, "start_s": timings[i].start_s,
                                   "end_s": timings[i].end_s,
                                   "verified": not problems[i], "problems": problems[i]})
               for i, c in zip((s.collective for s in compiled.plan.schedules()),
                               builtin.collectives)]
    result = RunResult(compiled, execution, results, seed, None, backend="simgrid")
    return SimGridRun(result, builtin, platform, worker)
