"""Bokhari's study in Phalanx (seed 003_f18cb429ce0a4177.txt): Figs. 10-12 data, Table 1 of
seed 000 at 2 KB, and the speed goal (all partitions of d=6 x 32 sizes on paragon:8x8 < 60 s).

Writes bench/results_bokhari.json. `--quick` runs fewer sizes (for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import phalanx.targets  # noqa: F401  (fills the target registry)
from phalanx.compiler import hypercube
from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program

# Seed 000 Table 1 (Bokhari's best multiphase times at 2 KB, ms) and our machine shapes.
TABLE1_MS = {"paragon:4x8": 7, "paragon:8x8": 12, "paragon:8x16": 40, "paragon:16x16": 88,
             "sp2:32": 7, "sp2:64": 13, "cs2:32": 11, "cs2:64": 28}
FIGURES = ("paragon:4x8", "paragon:8x8", "sp2:32", "sp2:64", "cs2:32", "cs2:64")


def point(spec: str, algorithm: str, block_bytes: int) -> dict:
    """Compile and simulate one all-to-all; `+` spells the partition (the option parser splits
    on commas)."""
    target = resolve(spec)
    try:
        compiled = compile_program(alltoall_program(target.nnodes, block_bytes), target=spec,
                                   algorithm=algorithm.replace(",", "+"), file="<bench>")
    except PhalanxError as exc:
        return {"algorithm": algorithm, "block_bytes": block_bytes, "error": exc.diagnostic.message}
    run = simulate(compiled)
    c = run.collectives[0]
    return {"algorithm": c.algorithm, "block_bytes": block_bytes, "time_s": c.time_s,
            "predicted_time_s": target.predict_time_s(compiled.collectives[0], c.algorithm),
            "verified": c.verified}


def equipartitions(spec: str) -> list[str]:
    d = hypercube.log2_exact(resolve(spec).nnodes)
    return [hypercube.algorithm_name(p) for p in hypercube.partitions(d)
            if hypercube.is_equipartition(p)]


def best_by_size(points: list[dict]) -> list[tuple[int, str]]:
    best: dict[int, tuple[float, str]] = {}
    for p in points:
        if "time_s" in p:
            best[p["block_bytes"]] = min(best.get(p["block_bytes"], (float("inf"), "")),
                                         (p["time_s"], p["algorithm"]))
    return [(size, alg) for size, (_, alg) in sorted(best.items())]


def speed_goal(sizes: list[int]) -> dict:
    algorithms = resolve("paragon:8x8").algorithms("alltoall")
    start = time.perf_counter()
    points = [point("paragon:8x8", a, m) for a in algorithms for m in sizes]
    elapsed = time.perf_counter() - start
    return {"case": f"paragon:8x8, {len(algorithms)} partitions x {len(sizes)} sizes",
            "points": len(points), "elapsed_s": round(elapsed, 2),
            "per_point_s": round(elapsed / len(points), 3), "goal_s": 60,
            "verified": all(p.get("verified") for p in points)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results_bokhari.json")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    fig_sizes = [16, 256, 1024, 2000] if args.quick else [16, 128, 256, 512, 768, 1024, 1536, 2000]
    report: dict = {"mode": "quick" if args.quick else "full", "figures": {}, "table1_2KB": {}}
    for spec in FIGURES:
        points = [point(spec, a, m) for a in equipartitions(spec) for m in fig_sizes]
        report["figures"][spec] = {"points": points, "best": best_by_size(points)}
        print(spec, report["figures"][spec]["best"], flush=True)
    for spec, paper_ms in TABLE1_MS.items():
        if args.quick and spec in ("paragon:8x16", "paragon:16x16"):
            continue
        points = [point(spec, a, 2048) for a in equipartitions(spec)]
        ok = [p for p in points if "time_s" in p]
        best = min(ok, key=lambda p: p["time_s"])
        report["table1_2KB"][spec] = {"paper_ms": paper_ms, "simulated_ms": best["time_s"] * 1e3,
                                      "algorithm": best["algorithm"],
                                      "gap": best["time_s"] * 1e3 / paper_ms - 1, "points": points}
        print(spec, report["table1_2KB"][spec]["simulated_ms"], best["algorithm"], flush=True)
    sizes = [64 * i for i in range(1, 5 if args.quick else 33)]
    report["speed"] = speed_goal(sizes)
    print(report["speed"], flush=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
