"""The catalog's eager algorithms (compiler/schedule.py SyncMode.EAGER) on the Python engine, then
on the native core, side by side in one process per case: the same compiled plan run twice without
payloads (runtime/timing.py TimingData, as `--cost simulate`, the efficiency grid and regret
time candidates). Prints a markdown table: events, simulated time (the two engines' must be
identical), each engine's run in wall and CPU seconds, and the speed-up in CPU time (the machine
is shared: CPU time is the steadier figure). docs/engine.md "Measurements" quotes it.

Run: .venv/bin/python bench/eager_engines.py [--targets torus:8x8,torus:16x16] [--sizes 2K,16K]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.data import Payloads
from phalanx.runtime.simulate import run_plan
from phalanx.runtime.sweep import kind_program, parse_sizes
from phalanx.runtime.timing import REDUCTIONS, TimingData

phalanx.register_all()

# tests/runtime/test_native_eager.py EAGER: the catalog's algorithms with eager phases
EAGER = [(Kind.BROADCAST, "eager-interleaved-cut-scatter-doubling"), (Kind.BROADCAST, "eager-spanning-trees"),
         (Kind.BROADCAST, "eager-turned-cut-scatter-doubling"), (Kind.SCATTER, "neighbour-scatter"),
         (Kind.GATHER, "neighbour-gather"), (Kind.REDUCE, "eager-halving-fan-in"),
         (Kind.REDUCE, "bidirectional-rings"), (Kind.ALLREDUCE, "eager-cut-halving"),
         (Kind.ALLREDUCE, "eager-interleaved-cut-halving"), (Kind.ALLREDUCE, "eager-quad-cut-halving"),
         (Kind.ALLREDUCE, "eager-classed-quad-cut-halving"), (Kind.ALLREDUCE, "bidirectional-rings")]

# The compile alone is out of reach (issue 30 item 4, the compile side): torus:16x16's cut-halving
# allreduce builds 525,568 transfers at 2 KB in 5.4 GB and 112 s; at 16 KB 8 times as many.
TOO_BIG = {("torus:16x16", 16384, "eager-cut-halving"),
           ("torus:16x16", 16384, "eager-interleaved-cut-halving")}


def timed_run(compiled, engine: str):
    """(execution, wall s, CPU s) of the plan's run without payloads on `engine`, its data as
    runtime/timing.py schedule_time_s makes it (a reduction's partials combined)."""
    coll = compiled.collectives[0]
    data = Payloads(lambda _: TimingData(coll.kind in REDUCTIONS, coll.element_bytes, coll.strided),
                    range(compiled.plan.run_count))
    wall, cpu = time.perf_counter(), time.process_time()
    execution, _ = run_plan(compiled.target, compiled.plan, data, engine_choice=engine)
    return execution, time.perf_counter() - wall, time.process_time() - cpu


def case(target: str, kind: Kind, algorithm: str, size: int) -> dict[str, Any]:
    """One case (the child of `--case`): compile, run on each engine, compare."""
    try:
        compiled = compile_program(kind_program(kind, resolve(target).nnodes, size), target=target,
                                   algorithm=f"{kind}={algorithm}", cost="closed-form")
    except PhalanxError as exc:  # a precondition that fails at this size
        return {"refused": exc.diagnostic.message.splitlines()[0][:80]}
    python, py_wall, py_cpu = timed_run(compiled, "python")
    native, na_wall, na_cpu = timed_run(compiled, "native")
    return {"events": [python.events, native.events],
            "simulated_s": [python.total_time_s, native.total_time_s],
            "wall_s": [py_wall, na_wall], "cpu_s": [py_cpu, na_cpu]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="torus:8x8,torus:16x16")
    parser.add_argument("--sizes", default="2K,16K")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        target, kind, algorithm, size = json.loads(args.case)
        print(json.dumps(case(target, Kind(kind), algorithm, size)))
        return
    print("| target | kind | algorithm | bytes | events | simulated | Python: wall, CPU | native: wall, CPU "
          "| speed-up (CPU) |\n|---|---|---|---|---|---|---|---|---|", flush=True)
    total = {"python": 0.0, "native": 0.0}
    for target in args.targets.split(","):
        for size in parse_sizes(args.sizes):
            for kind, algorithm in EAGER:
                row = f"| {target} | {kind} | {algorithm} | {size} |"
                if (target, size, algorithm) in TOO_BIG:
                    print(f"{row} not run: the compile's memory (TOO_BIG) | | | | |", flush=True)
                    continue
                # a fresh process a case: a target's schedules stay cached in the process
                child = [sys.executable, __file__, "--case", json.dumps([target, kind, algorithm, size])]
                done = subprocess.run(child, capture_output=True, text=True)
                if done.returncode != 0:  # e.g. a MemoryError under the caller's `ulimit -v`
                    why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:80]
                    print(f"{row} failed: {why} | | | | |", flush=True)
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                if "refused" in result:
                    print(f"{row} refused: {result['refused']} | | | | |", flush=True)
                    continue
                (py_events, na_events), (py_s, na_s) = result["events"], result["simulated_s"]
                if (py_events, py_s) != (na_events, na_s):
                    raise SystemExit(f"{row} the engines differ: {py_events} / {na_events} events, "
                                     f"{py_s!r} / {na_s!r} s")
                (py_wall, na_wall), (py_cpu, na_cpu) = result["wall_s"], result["cpu_s"]
                total["python"] += py_cpu
                total["native"] += na_cpu
                print(f"{row} {py_events:,} | {py_s * 1e6:.2f} us | {py_wall:.3f} s, {py_cpu:.3f} s | "
                      f"{na_wall:.3f} s, {na_cpu:.3f} s | {py_cpu / na_cpu:.1f}x |", flush=True)
    print(f"\nCPU seconds in all: Python engine {total['python']:.2f}, native core {total['native']:.2f} "
          f"({total['python'] / max(total['native'], 1e-9):.1f}x)")


if __name__ == "__main__":
    main()
