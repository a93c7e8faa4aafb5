"""iWarp benchmarks (issue 4's speed goals); writes bench/results_iwarp.json.

  message passing, full wormhole contention, 8x8 and 16x16 (goals: <= 1 s and <= 20 s at 16 KB);
  phased 32x32 on the fast path (goal <= 30 s); fast path vs event path on 16x16 (exact agreement).
Simulated events do not depend on the block size, so 16x16 runs 1 KB blocks to keep the payload
arrays (runtime/data.py) at 64 MB; the network simulation is the same as at 16 KB.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

import phalanx.targets  # noqa: F401  (fills the target registry)
from phalanx.compiler.driver import compile_program
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.runtime.fastpath import run_fast
from phalanx.runtime.interpreter import Interpreter
from phalanx.runtime.simulate import build_data
from phalanx.runtime.sweep import alltoall_program


def run(n: int, block: int, algorithm: str, fast: bool) -> dict:
    t0 = time.perf_counter()
    compiled = compile_program(alltoall_program(n * n, block), target=f"iwarp:{n}x{n}",
                               algorithm=algorithm, file="<bench>")
    t1 = time.perf_counter()
    engine = Engine()
    network = compiled.target.build_network(engine)
    rng = np.random.default_rng(0)
    data = {s.collective: build_data(compiled.communications[s.collective], rng)
            for s in compiled.plan.schedules()}
    t2 = time.perf_counter()
    execution = Interpreter(compiled.plan, network, engine, data, fast=fast).run()
    t3 = time.perf_counter()
    verified = all(not d.problems() for d in data.values())
    return {"case": f"{algorithm} iwarp:{n}x{n} {block} B fast={fast}",
            "messages": (n * n) * (n * n - 1), "compile_s": round(t1 - t0, 3),
            "data_setup_s": round(t2 - t1, 3), "simulate_s": round(t3 - t2, 3),
            "events": execution.events, "events_per_s": round(execution.events / (t3 - t2)),
            "fast_messages": execution.fast_messages, "simulated_time_s": execution.total_time_s,
            "aggregate_MBps": (n * n) * (n * n - 1) * block / execution.total_time_s / 1e6,
            "verified": verified}


def phased_fast_only(n: int, block: int) -> dict:
    """32x32: schedule from the construction, network on the fast path; no compile, no payloads
    (the comm-set pipeline does not scale to 1024 processors yet)."""
    target = resolve(f"iwarp:{n}x{n}")
    p = n * n
    coll = recognize(0, np.full((p, p), block, dtype=np.int64), "A", "B", 1)
    t0 = time.perf_counter()
    schedule = target.generate(coll, "phased")
    t1 = time.perf_counter()
    plan = target.build_network(Engine()).fast_plan(schedule)
    t2 = time.perf_counter()
    ends, messages = run_fast(plan, np.zeros(p))
    t3 = time.perf_counter()
    return {"case": f"phased iwarp:{n}x{n} {block} B fast path only", "messages": p * p,
            "phases": len(schedule.phases), "generate_s": round(t1 - t0, 3),
            "plan_s": round(t2 - t1, 3), "simulate_s": round(t3 - t2, 3),
            "network_messages": messages, "messages_per_s": round(messages / (t3 - t2)),
            "simulated_time_s": float(ends.max()),
            "aggregate_MBps": p * (p - 1) * block / float(ends.max()) / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results_iwarp.json")
    args = parser.parse_args()
    cases = [run(8, 16384, "message-passing", False), run(16, 1024, "message-passing", False),
             phased_fast_only(32, 64)]
    slow, fast = run(16, 64, "phased", False), run(16, 64, "phased", True)
    cases += [slow, fast, {"case": "16x16 phased: fast path == event path",
                           "agree_exactly": slow["simulated_time_s"] == fast["simulated_time_s"]}]
    report = {"machine": platform.machine(), "python": platform.python_version(), "cases": cases}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    for c in cases:
        print(json.dumps(c))


if __name__ == "__main__":
    main()
