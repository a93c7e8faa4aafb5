"""Run a compiled program on the built-in simulator and collect the contract's results.

The result's `to_json()` is the `run --json` object of ARCHITECTURE.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phalanx.compiler.driver import Compiled
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError
from phalanx.runtime.data import ScheduleError, build_data
from phalanx.runtime.engine import Deadlock, Engine
from phalanx.runtime.interpreter import Execution, Interpreter


@dataclass
class CollectiveResult:
    line: int
    kind: str
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

    @property
    def efficiency(self) -> float:
        return self.lower_bound_s / self.time_s if self.time_s > 0 else 1.0

    @property
    def aggregate_bandwidth_Bps(self) -> float:
        return self.total_bytes / self.time_s if self.time_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in (
            "line", "kind", "nprocs", "block_bytes", "total_bytes", "algorithm", "phases",
            "time_s", "lower_bound_s", "efficiency", "aggregate_bandwidth_Bps", "candidates",
            "verified")}
        out["lower_bound_binds"] = self.lower_bound_binds
        out["left_out"] = self.left_out
        if self.problems:
            out["problems"] = self.problems
        return out


@dataclass
class RunResult:
    compiled: Compiled
    execution: Execution
    collectives: list[CollectiveResult]
    seed: int
    network: Any = None  # the target's network model after the run (resources' busy times)
    backend: str = "sim"

    def __post_init__(self) -> None:
        """Name each collective's binding bound and the algorithms `auto` left out, and why."""
        steps = self.compiled.plan.schedules()
        for result, step in zip(self.collectives, steps):
            i = step.collective
            result.lower_bound_binds = self.compiled.target.binding_bound(self.compiled.collectives[i])[1]
            if i < len(self.compiled.left_out):
                result.left_out = [{"algorithm": x.algorithm, "reason": x.reason}
                                   for x in self.compiled.left_out[i]]

    @property
    def total_time_s(self) -> float:
        return self.execution.total_time_s

    @property
    def verified(self) -> bool:
        return all(c.verified for c in self.collectives)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.compiled.target.describe() | {"spec": self.compiled.target_spec},
            "backend": self.backend,
            "program": self.compiled.program.file,
            "seed": self.seed,
            "total_time_s": self.total_time_s,
            "verified": self.verified,
            "collectives": [c.to_json() for c in self.collectives],
            **({"network": self.network.stats()} if callable(getattr(self.network, "stats", None))
               else {}),
        }


def simulate(compiled: Compiled, seed: int = 0) -> RunResult:
    """Execute the plan on the target's network model, moving and checking real bytes."""
    rng = np.random.default_rng(seed)
    engine = Engine()
    network = compiled.target.build_network(engine)
    if hasattr(network, "reseed"):  # random network behaviour (link errors) follows the run's seed
        network.reseed(seed)
    sources: dict = {}
    data = {s.collective: build_data(compiled.communications[s.collective], rng, sources)
            for s in compiled.plan.schedules()}
    try:
        execution = Interpreter(compiled.plan, network, engine, data).run()
    except Deadlock as dead:
        raise PhalanxError(Diagnostic(f"the schedule deadlocks: {dead.description}",
                                      hint="blocked: " + "; ".join(dead.blocked[:6]))) from None
    except ScheduleError as bad:
        raise PhalanxError(Diagnostic(f"the schedule is invalid: {bad}")) from None
    results = []
    for step in compiled.plan.schedules():
        i = step.collective
        coll = compiled.collectives[i]
        problems = data[i].problems()
        results.append(CollectiveResult(
            line=coll.line, kind=coll.kind, nprocs=coll.nprocs, block_bytes=coll.block_bytes,
            total_bytes=coll.total_bytes, algorithm=step.algorithm, phases=len(step.phases),
            time_s=execution.collectives[i].time_s,
            lower_bound_s=compiled.target.lower_bound_s(coll),
            candidates=[{"algorithm": c.algorithm, "predicted_time_s": c.predicted_time_s}
                        for c in compiled.candidates[step.collective]],
            verified=not problems, problems=problems))
    return RunResult(compiled, execution, results, seed, network)
