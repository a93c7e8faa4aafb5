"""Benchmarks: compile and simulate speed on growing machines. Writes a JSON results file.

Speed goals are checked here, never by timed tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import tracemalloc
from pathlib import Path

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program

phalanx.register_all()


def timed(fn):
    """Wall time of one call, then peak traced memory of a second call (tracemalloc is slow)."""
    start = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, elapsed, peak


def bench_alltoall(nprocs: int, block_bytes: int) -> dict:
    source = alltoall_program(nprocs, block_bytes)
    compiled, compile_s, compile_peak = timed(
        lambda: compile_program(source, target=f"ideal:{nprocs}", file=f"<bench {nprocs}>"))
    result, sim_s, sim_peak = timed(lambda: simulate(compiled))
    events = result.execution.events
    return {"case": f"alltoall ideal:{nprocs} {block_bytes} B", "nprocs": nprocs,
            "block_bytes": block_bytes, "messages": nprocs * (nprocs - 1),
            "compile_s": round(compile_s, 4), "simulate_s": round(sim_s, 4),
            "events": events, "events_per_s": round(events / sim_s),
            "peak_MiB": round(max(compile_peak, sim_peak) / 2**20, 1),
            "verified": result.verified}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results.json")
    args = parser.parse_args()
    cases = [bench_alltoall(n, 1024) for n in (16, 64, 128)]
    report = {"machine": platform.machine(), "python": platform.python_version(), "cases": cases}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    for c in cases:
        print(f"{c['case']:<32} compile {c['compile_s']:>7.3f} s  simulate {c['simulate_s']:>7.3f} s"
              f"  {c['events_per_s']:>9} events/s  peak {c['peak_MiB']} MiB  verified {c['verified']}")


if __name__ == "__main__":
    main()
