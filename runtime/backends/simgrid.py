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

from phalanx.compiler.driver import Compiled, unrolled
from phalanx.compiler.plan_walk import messages
from phalanx.compiler.schedule import ComputeStep, PipelineStep, Schedule
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.backends.platforms import UNGATED, Platform, platform_for
from phalanx.runtime.data import build_data
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.fastpath import move_data
from phalanx.runtime.interpreter import Execution, Span, StepTiming
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


def _schedule_json(schedule: Schedule, platform: Platform, data) -> dict[str, Any]:
    phases = []
    for phase in schedule.phases:
        msgs, copies = [], []
        for group in messages(list(phase.sends)):
            first, nbytes = group[0], data.wire_bytes(group)
            if first.src == first.dst:
                copies.append([first.src, platform.copy_time_s(nbytes)])
            else:
                msgs.append([first.src, first.dst, nbytes, platform.overhead_s(first),
                             platform.switched(first)])
        # groups: [members, barrier seconds] of each scoped barrier; none: every node's
        groups = [[list(nodes), platform.barrier_time_s(len(nodes))]
                  for nodes in phase.barrier_groups]
        phases.append({"sync": phase.sync, "barrier_s": platform.barrier_time_s(schedule.nprocs),
                       "groups": groups, "messages": msgs, "copies": copies})
    return {"type": "schedule", "id": schedule.collective, "nprocs": schedule.nprocs,
            "phases": phases}


def describe(compiled: Compiled, platform: Platform, data: dict[int, Any],
             spans: bool = True) -> dict[str, Any]:
    """The worker's input: platform, configuration and the plan's steps."""

    def step_json(step: ComputeStep | Schedule) -> dict[str, Any]:
        if isinstance(step, ComputeStep):
            return {"type": "compute", "first": step.first, "nprocs": step.nprocs, "cost_s": step.cost_s,
                    "label": step.label}
        return _schedule_json(step, platform, data[step.collective])

    steps = []
    for step in compiled.plan.steps:
        if isinstance(step, PipelineStep):
            steps.append({"type": "pipeline", "nprocs": step.nprocs,
                          "stages": [[step_json(s) for s in stage] for stage in step.stages]})
        else:
            steps.append(step_json(step))
    return {"platform_xml": platform.xml, "hosts": [platform.host(i) for i in range(platform.nnodes)],
            "config": list(CONFIG), "serial_sender": platform.serial_sender,
            "ungated": list(UNGATED), "steps": steps,
            "spans": spans}


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
    spans = [Span(n, kind, a, b, label) for n, kind, a, b, label in worker["spans"]]
    execution = Execution(worker["total_time_s"], timings, spans, worker["messages"])
    results = [CollectiveResult(**{**vars(c), "time_s": timings[i].time_s, "start_s": timings[i].start_s,
                                   "end_s": timings[i].end_s,
                                   "verified": not problems[i], "problems": problems[i]})
               for i, c in zip((s.collective for s in compiled.plan.schedules()),
                               builtin.collectives)]
    result = RunResult(compiled, execution, results, seed, None, backend="simgrid")
    return SimGridRun(result, builtin, platform, worker)
