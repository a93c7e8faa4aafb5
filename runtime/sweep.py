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

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import CLOSED_FORM, Target, resolve
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime.simulate import simulate
from phalanx.runtime.synthetic import run_matrix, varied_matrix

SWEEP_KINDS = ("alltoall", "broadcast", "scatter", "gather", "allgather", "reduce", "allreduce",
               "cshift", "permutation")
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


def kind_program(kind: str, nprocs: int, block_bytes: int) -> str:
    """A program whose one statement is a `kind` collective of `block_bytes` per block (the
    root's block for broadcast, each node's part for the others; a reduction's partial is one
    element, so its `block_bytes` is the element count of each node's share of the array)."""
    if kind == "alltoall":
        return alltoall_program(nprocs, block_bytes)
    n, b = nprocs, block_bytes
    head = f"processors P({n})\n"
    arrays = {
        "broadcast": (f"array S({b}) of byte on P(0)\n"
                      f"array R({b}) of byte replicated onto P\nR = S\n"),
        "scatter": (f"array S({n * b}) of byte on P(0)\n"
                    f"array D({n * b}) of byte distribute BLOCK onto P\nD = S\n"),
        "gather": (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                   f"array S({n * b}) of byte on P(0)\nS = D\n"),
        "allgather": (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                      f"array R({n * b}) of byte replicated onto P\nR = D\n"),
        "reduce": (f"array D({n * b}) of float64 distribute BLOCK onto P\n"
                   "array s(1) of float64 on P(0)\ns = sum(D)\n"),
        "allreduce": (f"array D({n * b}) of float64 distribute BLOCK onto P\n"
                      "array s(1) of float64 replicated onto P\ns = sum(D)\n"),
        "cshift": (f"array D({n * b}) of byte distribute BLOCK onto P\n"
                   f"D = cshift(D, {b})\n"),
    }
    if kind == "permutation":  # a transpose of r x c blocks onto c x r processors
        r = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
        c = n // r
        return (f"processors Q({r}, {c})\nprocessors Q2({c}, {r})\n"
                f"array A({r * b}, {c}) of byte distribute (BLOCK, BLOCK) onto Q\n"
                f"array B({c}, {r * b}) of byte distribute (BLOCK, BLOCK) onto Q2\n"
                "B = transpose(A)\n")
    return head + arrays[kind]


def sweep_point(target_spec: str, collective: str, size: int, algorithm: str,
                seed: int = 0) -> dict[str, Any]:
    """One point: compile the collective of `size`-byte blocks and simulate it. A forced
    algorithm ranks no candidates, so its compile times them by the closed forms alone
    (`--cost closed-form`) rather than simulating each."""
    machine = resolve(target_spec)
    source = kind_program(collective, machine.nnodes, size)
    cost = "target" if algorithm == "auto" else CLOSED_FORM
    compiled = compile_program(source, target=target_spec, algorithm=algorithm, cost=cost,
                               file=f"<sweep {collective} {size} B>")
    c = simulate(compiled, seed).collectives[0]
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


def varied_point(machine: Target, size: int, algorithm: str, variance: float, zero: float,
                 samples: int, seed: int = 0) -> dict[str, Any]:
    """One Fig. 9 point: the mean over `samples` seeded matrices of B = `size` (Sec. 4.2)."""
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


def _algorithms(machine: Target, collective: str, algorithm: str | list[str]) -> list[str]:
    if isinstance(algorithm, list):
        return algorithm
    return list(machine.algorithms(collective)) if algorithm == "all" else [algorithm]


def sweep_points(target_spec: str, collective: str, sizes: list[int],
                 algorithm: str | list[str] = "all", variation: Variation = NO_VARIATION) -> int:
    """How many points `sweep` will run (for progress bars)."""
    machine = resolve(target_spec)
    cases = len(variation.cases()) if variation.synthetic else 1
    return len(_algorithms(machine, collective, algorithm)) * len(sizes) * cases


def sweep(target_spec: str, collective: str, sizes: list[int], algorithm: str | list[str] = "all",
          seed: int = 0, on_point: Callable[[str], None] | None = None,
          variation: Variation = NO_VARIATION) -> dict[str, Any]:
    """Every (algorithm, size) point, times every (V, P) case of `variation`. With `all` (or a
    list), a point the machine cannot run (a schedule it refuses at that size) is listed under
    `failures` with the reason."""
    if collective not in SWEEP_KINDS:
        raise usage_error(f"cannot sweep collective '{collective}' yet",
                          "sweepable: " + ", ".join(SWEEP_KINDS))
    machine = resolve(target_spec)
    algorithms = _algorithms(machine, collective, algorithm)
    results, failures = [], []
    cases = variation.cases() if variation.synthetic else [None]
    for alg in algorithms:
        for size in sizes:
            for case in cases:
                label = f"{alg} at {size} B" + (f", V={case[0]:g}, P={case[1]:g}" if case else "")
                try:
                    if case is None:
                        results.append(sweep_point(target_spec, collective, size, alg, seed))
                    else:
                        results.append(varied_point(machine, size, alg, *case, variation.samples, seed))
                except PhalanxError as exc:
                    if isinstance(algorithm, str) and algorithm != "all":
                        raise
                    failures.append({"algorithm": alg, "block_bytes": size,
                                     **({"variance": case[0], "zero_probability": case[1]}
                                        if case else {}),
                                     "error": exc.diagnostic.message})
                if on_point is not None:
                    on_point(label)
    out = {"target": machine.describe() | {"spec": target_spec}, "collective": collective,
           "results": results}
    if variation.synthetic:
        out["variation"] = {"variances": list(variation.variances),
                            "zero_probabilities": list(variation.zero_probabilities),
                            "samples": variation.samples, "seed": seed}
    if failures:
        out["failures"] = failures
    return out
