"""The compile side at scale (issue 30 item 4): compile time and peak memory of all-to-alls up to
4096 nodes, and what building the Transfer objects of the schedule costs.

Writes bench/results_compile_scale.json. Each point runs in a fresh child process (`--point`)
under /usr/bin/time (its peak memory, `maxrss_MB`, is the whole process's):

- `compile`: runtime/sweep.py's all-to-all program, source to verified schedules, compiled as
  `phalanx run` and `phalanx compile` compile it (the target's cost model; a forced algorithm's
  alternatives listed by their closed forms); `compile_s` is compiler/driver.py compile_program;
- `transfers`: the chosen schedule of the same collective built apart: its columns in numpy
  (`columns_cpu_s`, compiler/columns.py) and its Transfer objects from them (`transfers_cpu_s`,
  with the one full GC pass that followed a build of a million or more): what every compile
  paid before a schedule's phases kept their rows (compiler/columns.py TransferRows); now
  only what asks for a Transfer (the Python engine, the workers, reports) pays it.

Goals (issue 30): ideal:1024's compile <= 3 s; a 4096-node all-to-all of 8-byte blocks compiles
within 60 s and 8 GB. The machine is shared with other jobs: `compile_s` is wall time,
`compile_cpu_s` the process's CPU time (less disturbed by the others, not free of them).

`--only TEXT` re-measures the rows whose name contains TEXT; they replace their rows of the last
results, the others stay.

Run: .venv/bin/python bench/compile_scale.py [--only TEXT] [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import platform as host_platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results_compile_scale.json"
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Row:
    name: str
    target: str
    algorithm: str
    block_bytes: int
    mode: str = "compile"  # or "transfers"


ROWS = (
    Row("ideal:256 all-to-all, 128 B, auto", "ideal:256", "auto", 128),
    Row("ideal:256 all-to-all, 128 B, direct", "ideal:256", "alltoall=direct", 128),
    Row("torus:16x16 all-to-all, 128 B, message-passing", "torus:16x16",
        "alltoall=message-passing", 128),
    Row("ideal:1024 all-to-all, 128 B, direct", "ideal:1024", "alltoall=direct", 128),
    Row("ideal:1024 Transfers of direct", "ideal:1024", "direct", 128, "transfers"),
    Row("ideal:4096 all-to-all, 8 B, direct", "ideal:4096", "alltoall=direct", 8),
    Row("ideal:4096 Transfers of direct", "ideal:4096", "direct", 8, "transfers"),
    Row("torus:64x64 all-to-all, 8 B, message-passing", "torus:64x64", "alltoall=message-passing", 8),
)


def compile_point(target: str, algorithm: str, block_bytes: int) -> dict[str, Any]:
    import phalanx
    from phalanx.compiler.driver import compile_program
    from phalanx.compiler.target import resolve
    from phalanx.runtime.sweep import alltoall_program

    phalanx.register_all()
    source = alltoall_program(resolve(target).nnodes, block_bytes)
    started, cpu = time.perf_counter(), time.process_time()
    compiled = compile_program(source, target=target, algorithm=algorithm)
    compile_s, compile_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    schedule = compiled.plan.schedules()[0]
    messages = sum(len(p.sends) for p in schedule.phases)
    return {"compile_s": round(compile_s, 3), "compile_cpu_s": round(compile_cpu_s, 3),
            "algorithm": schedule.algorithm,
            "transfers": messages, "phases": len(schedule.phases),
            "candidates": {c.algorithm: c.time_s for c in compiled.candidates[0]}}


def transfers_point(target: str, algorithm: str, block_bytes: int) -> dict[str, Any]:
    import gc

    import numpy as np

    import phalanx
    from phalanx.compiler.columns import transfers_of
    from phalanx.compiler.recognize import recognize
    from phalanx.compiler.target import resolve

    phalanx.register_all()
    machine = resolve(target)
    n = machine.nnodes
    coll = recognize(0, np.full((n, n), block_bytes), "A", "B", 1)
    started = time.process_time()
    columns = machine.schedule_columns(coll, algorithm)
    built = time.process_time()
    # what a compile used to pay for every schedule (its phases now build them when asked:
    # compiler/columns.py TransferRows), with the full collection that followed a big build
    transfers = transfers_of(columns.rows)
    if len(transfers) >= 1 << 20:
        gc.collect()
    done = time.process_time()
    return {"columns_cpu_s": round(built - started, 3), "transfers_cpu_s": round(done - built, 3),
            "transfers": len(transfers)}


def measured(args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The child's result with its peak memory and wall time, or the timeout."""
    cmd = ["/usr/bin/time", "-f", "maxrss_kB=%M", sys.executable, __file__, "--point", json.dumps(args)]
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        return {"timeout_s": timeout_s}
    kb = [ln for ln in done.stderr.splitlines() if ln.startswith("maxrss_kB=")]
    if done.returncode != 0 or not kb:
        raise RuntimeError(f"{args}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]),
            "maxrss_MB": round(int(kb[-1].split("=")[1]) / 1024),
            "process_wall_s": round(time.perf_counter() - started, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--point", help=argparse.SUPPRESS)
    parser.add_argument("--only", help="rows whose name contains this")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per point")
    args = parser.parse_args()
    if args.point:
        p = json.loads(args.point)
        point = compile_point if p.pop("mode") == "compile" else transfers_point
        print(json.dumps(point(**p)))
        return
    rows = [r for r in ROWS if args.only is None or args.only in r.name]
    results = []
    # --only re-measures some rows: they replace their rows of the last results, the others stay
    kept = json.loads(RESULTS.read_text())["rows"] if args.only is not None and RESULTS.exists() else []
    host = f"{host_platform.machine()}, Python {host_platform.python_version()}"
    for row in rows:
        point = {"target": row.target, "algorithm": row.algorithm, "block_bytes": row.block_bytes,
                 "mode": row.mode}
        result = {"name": row.name, **point, **measured(point, args.timeout),
                  "measured_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
        print(json.dumps(result), flush=True)
        results.append(result)
        merged = [next((r for r in results if r["name"] == k["name"]), k) for k in kept]
        merged += [r for r in results if r["name"] not in {k["name"] for k in kept}]  # new rows
        RESULTS.write_text(json.dumps({"host": host, "rows": merged}, indent=1) + "\n")


if __name__ == "__main__":
    main()
