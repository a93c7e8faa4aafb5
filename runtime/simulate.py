"""Run a compiled program on the built-in simulator and collect the contract's results.

The result's `to_json()` is the `run --json` object of ARCHITECTURE.md. Each collective also
says which execution of its statement it is (`stage` of a pipeline, `iteration` of a repeat),
when it ran in the program (`start_s`, `end_s`: first node in, last node out) and its own
duration `time_s`: its schedule replayed alone on a fresh network, every node starting at 0,
so that waiting for earlier statements is not counted (docs/reports.md).

A statement in a `repeat` is one compiled schedule run once per iteration: every run is
simulated and its data checked, and `collectives` holds one result per run, but `to_json()`
summarises each repeated statement (RepeatSummary: count, min / mean / max own time, first
and last start) and lists its single runs only on request (`each_run`).
"""

from __future__ import annotations

import copy
import gc
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phalanx.compiler.driver import Compiled
from phalanx.compiler.groups import describe as describe_groups
from phalanx.compiler.groups import kind_label
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Plan, Schedule
from phalanx.compiler.target import Target
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.data_store import ScheduleError
from phalanx.runtime.engine import Deadlock, Engine
from phalanx.runtime.faults import FaultSpec, FaultyNetwork
from phalanx.runtime.interpreter import Execution, Interpreter
from phalanx.runtime.native_run import NativeRun, native_plan
from phalanx.runtime.network import Network

# The bound of a statement that moves nothing between nodes (every target alike).
NOTHING_MOVES = "nothing crosses the network"


def efficiency_text(efficiency: float | None) -> str:
    """An efficiency for a table: three decimals, or `-` where there is none (CollectiveResult)."""
    return "-" if efficiency is None else f"{efficiency:.3f}"


def efficiency_note(efficiency: float | None, binds: str) -> str:
    """`efficiency 0.694 (bound: port bandwidth)`, or `no efficiency (nothing crosses the
    network)` for a statement that moves nothing."""
    if efficiency is None:
        return f"no efficiency ({binds})"
    return f"efficiency {efficiency:.3f} (bound: {binds})"


@dataclass
class CollectiveResult:
    line: int
    kind: Kind
    nprocs: int
    block_bytes: int | None
    total_bytes: int
    algorithm: str
    phases: int
    time_s: float
    lower_bound_s: float
    candidates: list[dict[str, Any]]
    verified: bool
    problems: list[str] = field(default_factory=list)
    lower_bound_binds: str = ""  # which bound of the target's lower_bound_s binds
    left_out: list[dict[str, str]] = field(default_factory=list)  # algorithms auto could not use
    stage: int | None = None  # pipeline stage, None outside a pipeline
    iteration: int | None = None  # 0-based run of a statement that runs more than once (repeat)
    start_s: float | None = None  # in the program: the first node enters (None: never started)
    end_s: float | None = None  # in the program: the last node leaves (None: none left yet)
    groups: dict[str, Any] | None = None  # a collective in groups: compiler/groups.py describe

    @property
    def label(self) -> str:
        """The kind, with `in 8 groups of 8` for a collective in groups."""
        return kind_label(self.kind, [len(m) for m in self.groups["members"]] if self.groups else [])

    @property
    def elapsed_s(self) -> float | None:
        """First node in to last node out in the program: waiting for earlier work included."""
        return None if self.start_s is None or self.end_s is None else self.end_s - self.start_s

    @property
    def efficiency(self) -> float | None:
        """Lower bound over own time; None for a statement that moves nothing between nodes:
        its bound is 0 and its time only the target's overhead for local copies, so any number
        (0 or 1) would misstate it, on every target alike."""
        if self.total_bytes == 0:
            return None
        return self.lower_bound_s / self.time_s if self.time_s > 0 else 1.0

    @property
    def aggregate_bandwidth_Bps(self) -> float:
        return self.total_bytes / self.time_s if self.time_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = {"line": self.line, "kind": self.kind, "nprocs": self.nprocs,
               "block_bytes": self.block_bytes, "total_bytes": self.total_bytes,
               "algorithm": self.algorithm, "phases": self.phases, "time_s": self.time_s,
               "lower_bound_s": self.lower_bound_s, "efficiency": self.efficiency,
               "aggregate_bandwidth_Bps": self.aggregate_bandwidth_Bps,
               "candidates": self.candidates, "verified": self.verified,
               "lower_bound_binds": self.lower_bound_binds, "left_out": self.left_out,
               "stage": self.stage, "iteration": self.iteration, "start_s": self.start_s,
               "end_s": self.end_s, "elapsed_s": self.elapsed_s, "groups": self.groups}
        if self.problems:
            out["problems"] = self.problems
        return out


MAX_SUMMARY_PROBLEMS = 5  # problems a repeat summary quotes (every failing run is counted)


@dataclass
class RepeatSummary:
    """The runs of one repeated statement (and pipeline stage): how many, their own times,
    their in-program elapsed times and when the first and the last started."""

    runs: list[CollectiveResult]

    def to_json(self) -> dict[str, Any]:
        first, runs = self.runs[0], self.runs
        times = [c.time_s for c in runs]
        elapsed = [c.elapsed_s for c in runs if c.elapsed_s is not None]
        starts = [c.start_s for c in runs if c.start_s is not None]
        failing = [c for c in runs if not c.verified]
        mean_s = sum(times) / len(times)
        return {"line": first.line, "stage": first.stage, "kind": first.kind,
                "nprocs": first.nprocs, "block_bytes": first.block_bytes,
                "total_bytes": first.total_bytes, "algorithm": first.algorithm,
                "phases": first.phases, "runs": len(runs),
                "time_s": {"min": min(times), "mean": mean_s, "max": max(times)},
                "elapsed_s": {"min": min(elapsed), "mean": sum(elapsed) / len(elapsed),
                              "max": max(elapsed)} if elapsed else None,
                "first_start_s": starts[0] if starts else None,
                "last_start_s": starts[-1] if starts else None,
                "lower_bound_s": first.lower_bound_s, "lower_bound_binds": first.lower_bound_binds,
                "efficiency": first.lower_bound_s / mean_s if mean_s > 0 else 1.0,
                "candidates": first.candidates, "left_out": first.left_out, "groups": first.groups,
                "verified": not failing, "failed_runs": len(failing),
                **({"problems": [f"iteration {c.iteration}: {p}" for c in failing
                                 for p in c.problems][:MAX_SUMMARY_PROBLEMS]} if failing else {})}


def repeat_summaries(collectives: list[CollectiveResult]) -> list[RepeatSummary]:
    """The runs of each statement that runs more than once (`iteration` set), grouped by line
    and stage, in order of first run."""
    groups: dict[tuple[int, int | None], RepeatSummary] = {}
    for c in collectives:
        if c.iteration is not None:
            groups.setdefault((c.line, c.stage), RepeatSummary([])).runs.append(c)
    return list(groups.values())


@dataclass(frozen=True)
class RunLimits:
    """Where the engine stops a run early with a partial report (runtime/engine.py Stopped)."""

    max_events: int | None = None
    time_limit_s: float | None = None


@dataclass
class RunResult:
    compiled: Compiled
    execution: Execution
    collectives: list[CollectiveResult]
    seed: int
    network: Network | None  # the built-in network after the run (busy times); None on other backends
    backend: str = "sim"
    faults: dict[str, Any] | None = None  # what fault injection did, when it was asked for
    wall_s: dict[str, float] = field(default_factory=dict)  # "data" and "simulate" wall clock

    @property
    def total_time_s(self) -> float:
        return self.execution.total_time_s

    @property
    def verified(self) -> bool:
        return all(c.verified for c in self.collectives)

    def to_json(self, each_run: bool = False) -> dict[str, Any]:
        """The `run --json` object; the runs of repeated statements are summarised in
        `repeated`, and listed in `collectives` only when `each_run`."""
        counters = self.network.stats() if self.network is not None else {}
        repeated = repeat_summaries(self.collectives)
        return {
            "target": self.compiled.target.describe() | {"spec": self.compiled.target_spec,
                                                         "cost_model": self.compiled.cost_model},
            "backend": self.backend,
            "program": self.compiled.program.file,
            "seed": self.seed,
            "total_time_s": self.total_time_s,
            "verified": self.verified,
            "collectives": [c.to_json() for c in self.collectives
                            if each_run or c.iteration is None],
            **({"repeated": [r.to_json() for r in repeated]} if repeated else {}),
            "choice": self.compiled.choice.to_json(),
            **({"pipelines": [p.to_json() for p in self.compiled.pipelines]}
               if self.compiled.pipelines else {}),
            **({"network": counters} if counters else {}),
        }


def collective_result(compiled: Compiled, step: Schedule, time_s: float, problems: list[str],
                      iteration: int | None, start_s: float | None, end_s: float | None
                      ) -> CollectiveResult:
    """What a run reports of one collective (every backend): the compiler's facts, the bound
    and which bound binds (computed once), the candidates and the algorithms left out."""
    i = step.collective
    coll = compiled.collectives[i]
    bound_s, binds = (0.0, NOTHING_MOVES) if coll.total_bytes == 0 else \
        compiled.target.binding_bound(coll)
    return CollectiveResult(
        line=coll.line, kind=coll.kind, nprocs=coll.nprocs, block_bytes=coll.block_bytes,
        total_bytes=coll.total_bytes, algorithm=step.algorithm, phases=len(step.phases),
        time_s=time_s, lower_bound_s=bound_s,
        candidates=[c.to_json() for c in compiled.candidates[i]],
        verified=not problems, problems=problems, lower_bound_binds=binds,
        left_out=[{"algorithm": x.algorithm, "reason": x.reason} for x in compiled.left_out[i]]
        if i < len(compiled.left_out) else [],
        stage=step.stage if step.stage >= 0 else None, iteration=iteration,
        start_s=start_s, end_s=end_s, groups=describe_groups(coll) if coll.groups else None)


def run_plan(target: Target, plan: Plan, data: Payloads, seed: int = 0, *, fast: bool = True,
             limits: RunLimits | None = None, faults: FaultSpec | None = None,
             engine_choice: str = "auto") -> tuple[Execution, Network]:
    """Execute `plan` on a fresh network of `target`, moving the payloads `data` builds
    (runtime/data.py or synthetic ones; `data.checked()` then says what each collective got
    wrong): the one place a simulated run is set up. `fast` lets proven
    contention-free schedules take the vectorized path; `limits` stop the engine early;
    `faults` wrap the network in runtime/faults.py's FaultyNetwork. `engine_choice`: "auto" runs
    the plan on the native core where runtime/native_run.py can (same results, faster), else on
    the Python interpreter; "python" always on the interpreter; "native" on the core or a
    ValueError (tests and bench/engine.py compare the two)."""
    engine = Engine()
    if limits is not None:
        engine.set_limits(limits.max_events, limits.time_limit_s)
    network = target.build_network(engine)
    network.reseed(seed)  # random network behaviour (link errors) follows the run's seed
    if faults is not None:
        network = FaultyNetwork(network, faults, target.spec, seed)
    native = native_plan(plan, network, fast) if engine_choice != "python" else None
    if engine_choice == "native" and native is None:
        raise ValueError("this plan cannot run on the native core (runtime/native_run.py native_plan)")
    try:
        if native is not None:
            execution = NativeRun(native, network, engine, data).run()
        else:
            execution = Interpreter(plan, network, engine, data, fast=fast).run()
    except Deadlock as dead:
        raise PhalanxError(Diagnostic(f"the schedule deadlocks: {dead.description}",
                                      hint="blocked: " + "; ".join(dead.blocked[:6]))) from None
    except ScheduleError as bad:
        raise PhalanxError(Diagnostic(f"the schedule is invalid: {bad}")) from None
    return execution, network


def own_times(compiled: Compiled, seed: int = 0, fast: bool = True,
              measured: dict[int, float] | None = None, engine_choice: str = "auto") -> dict[int, float]:
    """Each collective's own duration: its schedule replayed alone on a fresh network of the
    target with fresh payloads, every node starting at 0, no fault injection. The runs of a
    collective (repeat iterations) share its schedule and payload sizes: it replays once, and
    so do unrolled runs of one statement (a backend's flat plan).
    `measured`: collectives whose run in the program already was such a run (the program's
    first step: every node starts it at 0 on an idle network), not replayed again."""
    replayed: dict[tuple[int, int, str], float] = {}
    out: dict[int, float] = {}
    for step in compiled.plan.schedules():
        i, stmt = step.collective, compiled.communications[step.collective]
        key = (id(stmt), step.stage, step.algorithm)
        if measured and i in measured:
            replayed.setdefault(key, measured[i])
        if key not in replayed:
            kind = compiled.collectives[i].kind
            commset = compiled.commsets[i] if compiled.commsets else None
            data = Payloads(lambda _, s=stmt, k=kind, c=commset: build_data(
                s, np.random.default_rng(seed), {}, k, commset=c), [0])
            execution, _ = run_plan(compiled.target, Plan(compiled.plan.nprocs, (step,)), data, seed,
                                    fast=fast, engine_choice=engine_choice)
            replayed[key] = execution.collectives[0].time_s  # its only run
        out[i] = replayed[key]
    return out


def ran_alone(plan: Plan, execution: Execution) -> dict[int, float]:
    """The program's first collective, if its run in the program was its run alone: every node
    entered it at 0 on an idle network and no node entered a later run before it ended (a node
    that left early and started the next statement's sends would share the network with it).
    Empty otherwise: that collective's own time is then replayed. Runs are keyed by run index;
    the program's first step, when it is a schedule, is run 0."""
    first = plan.steps[0] if plan.steps else None
    if not isinstance(first, Schedule) or 0 not in execution.collectives:
        return {}
    timing = execution.collectives[0]
    later = (t.start_s for r, t in execution.collectives.items() if r != 0)
    if timing.start_s != 0.0 or min(later, default=float("inf")) < timing.end_s:
        return {}
    return {first.collective: timing.time_s}


def iterations(plan: Plan) -> list[int | None]:
    """Per run index, which run of its statement (and stage) it is, 0-based; None for a
    statement that runs once. A statement has a line of its own, so the runs of a statement
    are the runs of schedules with its line and stage: a repeat's iterations, or the unrolled
    copies of a backend's flat plan."""
    schedules = {s.collective: s for s in plan.schedules()}
    keys = [(schedules[i].line, schedules[i].stage) for i in plan.runs()]
    counts: dict[tuple[int, int], int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    seen: dict[tuple[int, int], int] = {}
    out: list[int | None] = []
    for key in keys:
        k = seen[key] = seen.get(key, -1) + 1
        out.append(k if counts[key] > 1 else None)
    return out


def simulate(compiled: Compiled, seed: int = 0, *, fast: bool = True, limits: RunLimits | None = None,
             faults: FaultSpec | None = None, engine_choice: str = "auto") -> RunResult:
    """Execute the plan on the target's network model, moving and checking real bytes. Each
    run's payloads are drawn (from one generator, in the order nodes first reach the runs;
    runtime/native_run.py opens small runs ahead, in run order) when the first node enters it
    and checked when the last leaves it. `engine_choice`: as run_plan's. Python's cyclic
    garbage collector is paused meanwhile (as NativeRun.run does): a long repeat makes
    hundreds of thousands of small objects (spans, results), none in a cycle, and its passes
    over them cost more than the results."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _simulate(compiled, seed, fast, limits, faults, engine_choice)
    finally:
        if collecting:
            gc.enable()


@dataclass
class CheckedRun:
    """The program run once with every collective's payloads drawn and checked: what simulate()
    builds its results from, before the replays that give them their own times."""
    execution: Execution
    network: Network
    problems: dict[int, list[str]]  # per run of the plan: what its delivered data got wrong
    build_s: float  # wall seconds drawing the payloads and the reference results
    run_s: float  # wall seconds of the run itself, without build_s


def checked_run(compiled: Compiled, seed: int = 0, *, fast: bool = True, limits: RunLimits | None = None,
                faults: FaultSpec | None = None, engine_choice: str = "auto") -> CheckedRun:
    """Run the plan once, moving real bytes, and check each run's delivered data (payloads drawn
    from one generator of `seed`, in the order nodes first reach the runs)."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    sources: dict = {}
    shared: dict = {}  # per statement, what its runs share (runtime/data.py StatementFacts)
    runs = compiled.plan.runs()  # the collective of each run
    commsets = compiled.commsets or [None] * len(compiled.communications)  # (the compile's)
    data = Payloads(lambda r: build_data(compiled.communications[runs[r]], rng, sources,
                                         compiled.collectives[runs[r]].kind, shared, commsets[runs[r]]),
                    range(len(runs)))
    execution, network = run_plan(compiled.target, compiled.plan, data, seed, fast=fast,
                                  limits=limits, faults=faults, engine_choice=engine_choice)
    problems, build_s = data.checked(), data.build_s
    return CheckedRun(execution, network, problems, build_s, time.perf_counter() - started - build_s)


def _simulate(compiled: Compiled, seed: int, fast: bool, limits: RunLimits | None,
              faults: FaultSpec | None, engine_choice: str) -> RunResult:
    checked = checked_run(compiled, seed, fast=fast, limits=limits, faults=faults,
                          engine_choice=engine_choice)
    simulated = time.perf_counter()
    execution, network, problems = checked.execution, checked.network, checked.problems
    build_s, run_s = checked.build_s, checked.run_s
    runs = compiled.plan.runs()
    # A stopped run does not replay (its limits would not hold): own time is then in-program.
    alone = ran_alone(compiled.plan, execution) if faults is None else {}
    own = own_times(compiled, seed, fast, alone, engine_choice) if not execution.stopped else {}
    wall_s = {"data": build_s, "simulate": run_s, "own_times": time.perf_counter() - simulated}
    which = iterations(compiled.plan)
    facts = {s.collective: collective_result(compiled, s, own.get(s.collective, 0.0), [], None,
                                             None, None) for s in compiled.plan.schedules()}
    results = []
    for r, i in enumerate(runs):  # its statement's facts, copied (cheaper than dataclasses.replace
        timing = execution.collectives[r]  # for a repeat's tens of thousands of runs)
        started_in = timing.start_s != float("inf")
        result = copy.copy(facts[i])
        result.time_s = timing.time_s if execution.stopped else own[i]
        result.verified, result.problems, result.iteration = not problems[r], problems[r], which[r]
        result.start_s = timing.start_s if started_in else None
        result.end_s = timing.end_s if started_in and timing.end_s >= timing.start_s else None
        results.append(result)
    summary = network.summary() if isinstance(network, FaultyNetwork) else None
    return RunResult(compiled, execution, results, seed, network, faults=summary, wall_s=wall_s)
