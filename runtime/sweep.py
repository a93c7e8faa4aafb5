"""`phalanx sweep`: one collective over message sizes and algorithms on one target.

Each point compiles a small real program (so recognition, lowering and the data
check all run) and simulates it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError, usage_error
from phalanx.runtime.simulate import simulate

SWEEP_KINDS = ("alltoall",)
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


def sweep_point(target_spec: str, collective: str, size: int, algorithm: str,
                seed: int = 0) -> dict[str, Any]:
    """One point: compile the exchange of `size`-byte blocks and simulate it."""
    machine = resolve(target_spec)
    source = alltoall_program(machine.nnodes, size)
    compiled = compile_program(source, target=target_spec, algorithm=algorithm,
                               file=f"<sweep {collective} {size} B>")
    c = simulate(compiled, seed).collectives[0]
    return {"algorithm": c.algorithm, "block_bytes": size, "time_s": c.time_s,
            "lower_bound_s": c.lower_bound_s, "efficiency": c.efficiency,
            "aggregate_bandwidth_Bps": c.aggregate_bandwidth_Bps, "verified": c.verified}


def sweep(target_spec: str, collective: str, sizes: list[int], algorithm: str = "all",
          seed: int = 0, on_point: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every (algorithm, size) point. With `all`, a point the machine cannot run (a
    schedule it refuses at that size) is listed under `failures` with the reason."""
    if collective not in SWEEP_KINDS:
        raise usage_error(f"cannot sweep collective '{collective}' yet",
                          "sweepable: " + ", ".join(SWEEP_KINDS))
    machine = resolve(target_spec)
    algorithms = list(machine.algorithms(collective)) if algorithm == "all" else [algorithm]
    results, failures = [], []
    for alg in algorithms:
        for size in sizes:
            try:
                results.append(sweep_point(target_spec, collective, size, alg, seed))
            except PhalanxError as exc:
                if algorithm != "all":
                    raise
                failures.append({"algorithm": alg, "block_bytes": size,
                                 "error": exc.diagnostic.message})
            if on_point is not None:
                on_point(f"{alg} at {size} B")
    out = {"target": machine.describe() | {"spec": target_spec}, "collective": collective,
           "results": results}
    if failures:
        out["failures"] = failures
    return out
