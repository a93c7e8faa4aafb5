"""Bokhari's study in Phalanx (seed 003_f18cb429ce0a4177.txt): Figs. 10-12 data, the crossover
sizes of Figs. 10/11 on a fine grid, Table 1 of seed 000 at 2 KB (and what-ifs beside it), and
the speed goal (all partitions of d=6 x 32 sizes on paragon:8x8 in < 60 s, issue 5).

Writes bench/results_bokhari.json. `--quick` runs fewer sizes (a smoke run); `--jobs N` also
times the speed goal's sweep on N processes (its points are independent).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import phalanx
from phalanx.compiler import hypercube
from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program

phalanx.register_all()

# Seed 000 Table 1 (Bokhari's best multiphase times at 2 KB, ms) and our machine shapes.
TABLE1_MS = {"paragon:4x8": 7, "paragon:8x8": 12, "paragon:8x16": 40, "paragon:16x16": 88,
             "sp2:32": 7, "sp2:64": 13, "cs2:32": 11, "cs2:64": 28}
# What-ifs beside Table 1 (not the defaults): the SP2 with other up-route rules (0: the
# destination digit one stage up, the CS-2's; 1: the source digit; 3: source plus destination
# digit, also even over every stage) and with separate send / receive engines, the CS-2 with
# the SP2's rule, and the 128-node Paragon submesh turned the other way.
WHAT_IF_MS = {"sp2:32,up_route=0": 7, "sp2:64,up_route=0": 13,
              "sp2:32,up_route=1": 7, "sp2:64,up_route=1": 13,
              "sp2:32,up_route=3": 7, "sp2:64,up_route=3": 13,
              "sp2:32,shared_engine=0": 7, "sp2:64,shared_engine=0": 13,
              "cs2:32,up_route=2": 11, "cs2:64,up_route=2": 28,
              "cs2:32,shared_engine=0": 11, "cs2:64,shared_engine=0": 28,
              "paragon:16x8": 40}
FIGURES = ("paragon:4x8", "paragon:8x8", "sp2:32", "sp2:64", "cs2:32", "cs2:64")
CROSSOVER_STEP_BYTES = 8  # resolution of the bisection of each crossover


def point(spec: str, algorithm: str, block_bytes: int) -> dict:
    """Compile and simulate one all-to-all; `+` spells the partition (the option parser splits
    on commas)."""
    target = resolve(spec)
    t0 = time.perf_counter()
    try:
        compiled = compile_program(alltoall_program(target.nnodes, block_bytes), target=spec,
                                   algorithm=algorithm.replace(",", "+"), file="<bench>")
    except PhalanxError as exc:
        return {"algorithm": algorithm, "block_bytes": block_bytes, "error": exc.diagnostic.message}
    t1 = time.perf_counter()
    run = simulate(compiled)
    t2 = time.perf_counter()
    c = run.collectives[0]
    return {"algorithm": c.algorithm, "block_bytes": block_bytes, "time_s": c.time_s,
            "predicted_time_s": target.predict_time_s(compiled.collectives[0], c.algorithm),
            "verified": c.verified, "compile_s": t1 - t0, "simulate_s": t2 - t1,
            "events": run.execution.events}


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


def _faster(spec: str, a: str, b: str, size: int) -> bool:
    """Whether b is faster than a at `size` (a refused b is never faster)."""
    pa, pb = point(spec, a, size), point(spec, b, size)
    return "time_s" in pb and ("time_s" not in pa or pb["time_s"] < pa["time_s"])


def crossovers(spec: str, coarse: list[int]) -> list[dict]:
    """Where the fastest equipartition changes: a coarse sweep, then each change bisected to
    CROSSOVER_STEP_BYTES between the two winners (the first size at which the larger-size
    winner is faster)."""
    points = [point(spec, a, m) for a in equipartitions(spec) for m in coarse]
    best = best_by_size(points)
    out = []
    for (lo, a), (hi, b) in zip(best, best[1:]):
        if a == b:
            continue
        while hi - lo > CROSSOVER_STEP_BYTES:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if _faster(spec, a, b, mid) else (mid, hi)
        out.append({"from": a, "to": b, "bytes": hi})
    return out


def best_at_2KB(spec: str, paper_ms: float) -> dict:
    """Every equipartition at 2 KB blocks; the fastest that runs against seed 000 Table 1."""
    points = [point(spec, a, 2048) for a in equipartitions(spec)]
    best = min((p for p in points if "time_s" in p), key=lambda p: p["time_s"])
    return {"paper_ms": paper_ms, "simulated_ms": best["time_s"] * 1e3,
            "algorithm": best["algorithm"], "gap": best["time_s"] * 1e3 / paper_ms - 1,
            "points": points}


def _timed_point(args: tuple[str, str, int]) -> dict:
    return point(*args)


def speed_goal(sizes: list[int], jobs: int) -> dict:
    """Every partition of d=6 over `sizes` on paragon:8x8: wall time, and where it goes."""
    spec = "paragon:8x8"
    work = [(spec, a, m) for a in resolve(spec).algorithms("alltoall") for m in sizes]
    start = time.perf_counter()
    points = [_timed_point(w) for w in work]
    elapsed = time.perf_counter() - start
    ran = [p for p in points if "time_s" in p]
    events = sum(p["events"] for p in ran)
    simulate_s = sum(p["simulate_s"] for p in ran)
    out = {"case": f"{spec}, {len(work) // len(sizes)} partitions x {len(sizes)} sizes",
           "points": len(points), "elapsed_s": round(elapsed, 2),
           "per_point_s": round(elapsed / len(points), 3), "goal_s": 60,
           "compile_s": round(sum(p["compile_s"] for p in ran), 2),
           "simulate_s": round(simulate_s, 2), "events": events,
           "events_per_s": round(events / simulate_s) if simulate_s else 0,
           "load_average": os.getloadavg()[0],
           "verified": all(p.get("verified") for p in ran) and len(ran) == len(points)}
    if jobs > 1:
        start = time.perf_counter()
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_timed_point, work, chunksize=8))
        out[f"elapsed_s_{jobs}_processes"] = round(time.perf_counter() - start, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results_bokhari.json")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the parallel timing")
    parser.add_argument("--only", choices=("figures", "crossovers", "table1", "whatif", "speed"))
    args = parser.parse_args()
    fig_sizes = [16, 256, 1024, 2000] if args.quick else [16, 128, 256, 512, 768, 1024, 1536, 2000]
    report: dict = {"mode": "quick" if args.quick else "full", "machine": platform.machine(),
                    "python": platform.python_version()}
    if args.only in (None, "figures"):
        report["figures"] = {}
        for spec in FIGURES:
            points = [point(spec, a, m) for a in equipartitions(spec) for m in fig_sizes]
            report["figures"][spec] = {"points": points, "best": best_by_size(points)}
            print(spec, report["figures"][spec]["best"], flush=True)
    if args.only in (None, "crossovers"):
        coarse = [16, 512, 1024, 2000] if args.quick else list(range(16, 2001, 128)) + [2000]
        report["crossovers"] = {spec: crossovers(spec, coarse) for spec in FIGURES}
        print("crossovers", json.dumps(report["crossovers"]), flush=True)
    if args.only in (None, "table1"):
        report["table1_2KB"] = {}
        for spec, paper_ms in TABLE1_MS.items():
            if args.quick and spec in ("paragon:8x16", "paragon:16x16"):
                continue
            report["table1_2KB"][spec] = best_at_2KB(spec, paper_ms)
            print(spec, report["table1_2KB"][spec]["simulated_ms"],
                  report["table1_2KB"][spec]["algorithm"], flush=True)
    if args.only in (None, "whatif") and not args.quick:
        report["table1_what_if"] = {}
        for spec, paper_ms in WHAT_IF_MS.items():
            report["table1_what_if"][spec] = best_at_2KB(spec, paper_ms)
            print(spec, report["table1_what_if"][spec]["simulated_ms"], flush=True)
    if args.only in (None, "speed"):
        sizes = [64 * i for i in range(1, 5 if args.quick else 33)]
        report["speed"] = speed_goal(sizes, args.jobs)
        print(report["speed"], flush=True)
    out = Path(args.out)
    if args.only and out.exists():  # one part re-measured: keep the others
        report = json.loads(out.read_text()) | report
    out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
