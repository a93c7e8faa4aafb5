"""`phalanx sweep`: one collective over message sizes and algorithms on one target.

Each point compiles a small real program (so recognition, lowering and the data
check all run) and simulates it. With message-size variation (Fig. 9 of
001_569dde0e56ec3e6f.txt: sizes drawn from [B - VB, B + VB], or empty with probability P),
which no program can express, each point is instead the average over `samples` seeded
random byte matrices run as synthetic collectives (runtime/synthetic.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler.driver import Compiled, compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.target import CLOSED_FORM, Target, resolve
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime.limits import check_fits, check_program_fits
from phalanx.runtime.parallel import SERIAL, ParallelOptions, PointTimeout, RunStats, Status, Task, run_points
from phalanx.runtime.simulate import RunLimits, RunResult, simulate
from phalanx.runtime.synthetic import run_matrix, varied_matrix

SWEEP_KINDS = (Kind.ALLTOALL, Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.ALLGATHER, Kind.REDUCE,
               Kind.ALLREDUCE, Kind.CSHIFT, Kind.PERMUTATION)
_SIZE = re.compile(r"^(\d+)([KkMm]?)$")


def parse_sizes(text: str) -> list[int]:
    """`64,512,2K,16K,1M` -> bytes (K = 1024)."""
    sizes = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = _SIZE.match(part)
        if match is None or int(match.group(1)) == 0:
            raise usage_error(f"bad message size '{part}' in --sizes",
                              "write positive byte counts such as 64,512,2K,16K,1M")
        scale = {"": 1, "k": 1024, "m": 1 << 20}[match.group(2).lower()]
        sizes.append(int(match.group(1)) * scale)
    if not sizes:
        raise usage_error("--sizes is empty", "write e.g. --sizes 64,512,2K")
    return sizes


def alltoall_program(nprocs: int, block_bytes: int) -> str:
    """A transpose of bytes in which every pair of processors exchanges `block_bytes`."""
    cols = nprocs * block_bytes
    return (f"processors P({nprocs})\n"
            f"array A({nprocs}, {cols}) of byte distribute (BLOCK, *) onto P\n"
            f"array B({nprocs}, {cols}) of byte distribute (*, BLOCK) onto P\n"
            "B = A\n")


def reduction_arrays(nprocs: int, partial_bytes: int, result: str) -> str:
    """A reduction along the processors' dimension whose partial is `partial_bytes`: every
    node holds one row of D and `sum(D, dim=1)` combines the rows element by element into s
    (`result`: its mapping). float64 elements where the size is a multiple of 8, else bytes."""
    element, width = ("float64", 8) if partial_bytes % 8 == 0 else ("byte", 1)
    k = partial_bytes // width
    return (f"array D({nprocs}, {k}) of {element} distribute (BLOCK, *) onto P\n"
            f"array s({k}) of {element} {result}\ns = sum(D, dim=1)\n")


def sweep_kind(text: str) -> Kind:
    """The kind a sweep's collective names (text from --collective or the API), or a usage
    error naming the sweepable kinds."""
    if text.strip() not in SWEEP_KINDS:
        raise usage_error(f"cannot sweep collective '{text.strip()}' yet",
                          "sweepable: " + ", ".join(SWEEP_KINDS))
    return Kind(text.strip())


def kind_program(kind: Kind, nprocs: int, block_bytes: int) -> str:
    """A program whose one statement is a `kind` collective of `block_bytes` per block (the
    root's block for broadcast, each node's part for the others, a reduction's partial)."""
    if kind == Kind.ALLTOALL:
        return alltoall_program(nprocs, block_bytes)
    n, b = nprocs, block_bytes
    head = f"processors P({n})\n"
    arrays = {
        Kind.BROADCAST: (f"array S({b}) of byte on P(0)\n"
                         f"array R({b}) of byte replicated onto P\nR = S\n"),
        Kind.SCATTER: (f"array S({n * b}) of byte on P(0)\n"
                       f"array D({n * b}) of byte distribute BLOCK onto P\nD = S\n"),
        Kind.GATHER: (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                      f"array S({n * b}) of byte on P(0)\nS = D\n"),
        Kind.ALLGATHER: (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                         f"array R({n * b}) of byte replicated onto P\nR = D\n"),
        Kind.REDUCE: reduction_arrays(n, b, "on P(0)"),
        Kind.ALLREDUCE: reduction_arrays(n, b, "replicated onto P"),
        Kind.CSHIFT: (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                      f"D = cshift(D, {b})\n"),
    }
    if kind == Kind.PERMUTATION:  # a transpose of r x c blocks onto c x r processors
        r = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
        c = n // r
        return (f"processors Q({r}, {c})\nprocessors Q2({c}, {r})\n"
                f"array A({r * b}, {c}) of byte distribute (BLOCK, BLOCK) onto Q\n"
                f"array B({c}, {r * b}) of byte distribute (BLOCK, BLOCK) onto Q2\n"
                "B = transpose(A)\n")
    return head + arrays[kind]


def simulate_bounded(compiled: Compiled, seed: int, time_limit_s: float | None) -> RunResult:
    """`phalanx run`'s bounds for one point: refused before it runs when the estimate says it
    would not fit this machine (runtime/limits.py), stopped at `time_limit_s` wall-clock seconds
    of simulation (PointTimeout)."""
    check_fits(compiled)
    limits = RunLimits(None, time_limit_s) if time_limit_s is not None else None
    result = simulate(compiled, seed, limits=limits)
    if result.execution.stopped is not None:
        raise PointTimeout(f"stopped at --point-timeout {time_limit_s:g} s: {result.execution.stopped}")
    return result


def sweep_point(target_spec: str, collective: Kind, size: int, algorithm: str,
                seed: int = 0, *, time_limit_s: float | None = None) -> dict[str, Any]:
    """One point: compile the collective of `size`-byte blocks and simulate it. A forced
    algorithm ranks no candidates, so its compile times them by the closed forms alone
    (`--cost closed-form`) rather than simulating each."""
    machine = resolve(target_spec)
    source = kind_program(collective, machine.nnodes, size)
    cost = "target" if algorithm == "auto" else CLOSED_FORM
    compiled = compile_program(source, target=target_spec, algorithm=algorithm, cost=cost,
                               file=f"<sweep {collective} {size} B>", checked=check_program_fits)
    c = simulate_bounded(compiled, seed, time_limit_s).collectives[0]
    if c.kind != collective:
        raise PhalanxError(Diagnostic(f"the sweep's {collective} program was recognized as "
                                      f"{c.kind} on {target_spec}"))
    return {"algorithm": c.algorithm, "block_bytes": size, "time_s": c.time_s,
            "lower_bound_s": c.lower_bound_s, "lower_bound_binds": c.lower_bound_binds,
            "efficiency": c.efficiency,
            "aggregate_bandwidth_Bps": c.aggregate_bandwidth_Bps, "verified": c.verified}


def parse_fractions(text: str, what: str) -> list[float]:
    """`0,0.25,0.5` -> fractions in [0, 1] (variances V or zero-message probabilities P)."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            value = float(part)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            raise usage_error(f"bad {what} '{part}'", "write fractions in [0, 1], e.g. 0,0.25,0.5")
        out.append(value)
    if not out:
        raise usage_error(f"the list of {what}s is empty", "write e.g. 0,0.25,0.5")
    return out


@dataclass(frozen=True)
class Variation:
    """Fig. 9's knobs: size variance V, zero-message probability P, matrices averaged per point."""

    variances: tuple[float, ...] = (0.0,)
    zero_probabilities: tuple[float, ...] = (0.0,)
    samples: int = 1

    @property
    def synthetic(self) -> bool:
        return any(self.variances) or any(self.zero_probabilities) or self.samples > 1

    def cases(self) -> list[tuple[float, float]]:
        return [(v, p) for v in self.variances for p in self.zero_probabilities]


NO_VARIATION = Variation()  # every point compiled from a program


def varied_point(target_spec: str, size: int, algorithm: str, variance: float, zero: float,
                 samples: int, seed: int = 0, *, time_limit_s: float | None = None) -> dict[str, Any]:
    """One Fig. 9 point: the mean over `samples` seeded matrices of B = `size` (Sec. 4.2).
    Synthetic runs take no time limit (`sweep` refuses --point-timeout with variation)."""
    if time_limit_s is not None:
        raise usage_error("--point-timeout does not apply to sweeps with --variance, "
                          "--zero-probability or --samples", "drop --point-timeout")
    machine = resolve(target_spec)
    runs = [run_matrix(machine, varied_matrix(machine.nnodes, size, variance, zero, seed * 1009 + k),
                       algorithm, seed) for k in range(samples)]
    times = np.array([r.time_s for r in runs])
    bounds = np.array([r.lower_bound_s for r in runs])
    moved = np.array([r.collective.total_bytes for r in runs], dtype=np.float64)
    rates = np.divide(moved, times, out=np.zeros_like(times), where=times > 0)
    return {"algorithm": runs[0].schedule.algorithm, "block_bytes": size, "variance": variance,
            "zero_probability": zero, "samples": samples, "time_s": float(times.mean()),
            "lower_bound_s": float(bounds.mean()),
            "efficiency": float(np.mean(np.divide(bounds, times, out=np.ones_like(times),
                                                  where=times > 0))),
            "aggregate_bandwidth_Bps": float(rates.mean()),
            "verified": all(r.verified for r in runs)}


def _algorithms(machine: Target, collective: Kind, algorithm: str | list[str]) -> list[str]:
    if isinstance(algorithm, list):
        return algorithm
    return list(machine.algorithms(collective)) if algorithm == "all" else [algorithm]


def sweep_points(target_spec: str, collective: Kind, sizes: list[int],
                 algorithm: str | list[str] = "all", variation: Variation = NO_VARIATION) -> int:
    """How many points `sweep` will run (for progress bars)."""
    machine = resolve(target_spec)
    cases = len(variation.cases()) if variation.synthetic else 1
    return len(_algorithms(machine, collective, algorithm)) * len(sizes) * cases


def sweep_tasks(target_spec: str, collective: Kind, sizes: list[int], algorithms: list[str],
                seed: int, variation: Variation) -> list[Task]:
    """Every (algorithm, size) point, times every (V, P) case of `variation`, in report order."""
    tasks = []
    for alg in algorithms:
        for size in sizes:
            if not variation.synthetic:
                tasks.append(Task({"point": "sweep", "target": target_spec, "kind": collective,
                                   "block_bytes": size, "algorithm": alg, "seed": seed},
                                  sweep_point, (target_spec, collective, size, alg, seed),
                                  f"{alg} at {size} B", cost_hint=size))
                continue
            for v, p in variation.cases():
                tasks.append(Task({"point": "sweep-varied", "target": target_spec, "kind": collective,
                                   "block_bytes": size, "algorithm": alg, "seed": seed, "variance": v,
                                   "zero_probability": p, "samples": variation.samples},
                                  varied_point, (target_spec, size, alg, v, p, variation.samples, seed),
                                  f"{alg} at {size} B, V={v:g}, P={p:g}", cost_hint=size))
    return tasks


def sweep(target_spec: str, collective: str, sizes: list[int], algorithm: str | list[str] = "all",
          seed: int = 0, on_point: Callable[[str], None] | None = None,
          variation: Variation = NO_VARIATION, parallel: ParallelOptions = SERIAL,
          stats: RunStats | None = None) -> dict[str, Any]:
    """Every (algorithm, size) point, times every (V, P) case of `variation`, run by
    runtime/parallel.py (serially, on local workers or on a cluster: the same results in the
    same order). With `all` (or a list), a point the machine cannot run (a schedule it refuses
    at that size, or too big for this machine) is listed under `failures` with the reason."""
    kind = sweep_kind(collective)
    if parallel.point_timeout_s is not None and variation.synthetic:
        raise usage_error("--point-timeout does not apply to sweeps with --variance, "
                          "--zero-probability or --samples", "drop --point-timeout")
    machine = resolve(target_spec)
    tasks = sweep_tasks(target_spec, kind, sizes, _algorithms(machine, kind, algorithm), seed, variation)
    results, failures = [], []
    for task, outcome in zip(tasks, run_points(tasks, parallel, on_point, stats)):
        if outcome.status == Status.OK and outcome.row is not None:
            results.append(outcome.row)
            continue
        if isinstance(algorithm, str) and algorithm != "all" and outcome.status == Status.FAILED:
            outcome.reraise()
        failures.append({"algorithm": task.description["algorithm"],
                         "block_bytes": task.description["block_bytes"],
                         **({"variance": task.description["variance"],
                             "zero_probability": task.description["zero_probability"]}
                            if variation.synthetic else {}),
                         "error": outcome.error,
                         **({"status": outcome.status.value} if outcome.status != Status.FAILED else {})})
    out = {"target": machine.describe() | {"spec": target_spec}, "collective": kind,
           "results": results}
    if variation.synthetic:
        out["variation"] = {"variances": list(variation.variances),
                            "zero_probabilities": list(variation.zero_probabilities),
                            "samples": variation.samples, "seed": seed}
    if failures:
        out["failures"] = failures
    return out
