"""Benchmark: wall time and peak memory of `phalanx run` on long and big programs, with and
without `--report` (issue 20). Writes bench/results_report.json.

Each case runs `phalanx run` in a fresh process, so that its peak resident memory
(ru_maxrss of the child) is its own: the interpreter, numpy and matplotlib included. The
repeat cases check that memory does not grow with the number of repeats (the payloads of a
run are built and freed per collective, the timeline keeps a budget of spans); the 64- and
256-node cases that a report of a big machine finishes. Speed goals are checked here, never
by timed tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPEAT = """target ideal:16
processors P(16)
array A(256, 256) of float64 distribute (BLOCK, *) onto P
array B(256, 256) of float64 distribute (*, BLOCK) onto P
repeat {count} {{
  B = A
  A = B
}}
"""
TRANSPOSE = """target {target}
processors P({n})
array A(512, 512) of float64 distribute (BLOCK, *) onto P
array B(512, 512) of float64 distribute (*, BLOCK) onto P
B = A
"""
CASES = [  # (name, program, extra arguments)
    ("repeat 50, 512 KB array, ideal:16", REPEAT.format(count=50), []),
    ("repeat 500, 512 KB array, ideal:16", REPEAT.format(count=500), []),
    ("all-to-all iwarp:8x8, 2 MB array", TRANSPOSE.format(target="iwarp:8x8", n=64), []),
    ("all-to-all torus:16x16 direct, 2 MB array", TRANSPOSE.format(target="torus:16x16", n=256),
     ["--algorithm", "alltoall=direct"]),
    ("all-to-all ideal:256, 2 MB array", TRANSPOSE.format(target="ideal:256", n=256), []),
]


def run_case(program: str, extra: list[str], report: bool) -> dict:
    """One `phalanx run` in a child process: its wall time and peak resident memory (the
    caller runs one case per process: the children's ru_maxrss is a running maximum)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.phx"
        path.write_text(program)
        args = [sys.executable, "-m", "phalanx.cli", "run", str(path), *extra]
        if report:
            args += ["--report", str(Path(tmp) / "report")]
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True)
        wall_s = time.perf_counter() - start
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise SystemExit(f"phalanx run failed ({done.returncode}): {done.stderr[-2000:]}")
    return {"wall_s": round(wall_s, 2), "peak_MiB": round(peak_kib / 1024, 1),
            "verified": "verified: True" in done.stdout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results_report.json")
    parser.add_argument("--case", type=int, help="run only this case (its index) and print it")
    parser.add_argument("--report", action="store_true", help="with --case: with --report")
    args = parser.parse_args()
    if args.case is not None:
        _, program, extra = CASES[args.case]
        print(json.dumps(run_case(program, extra, args.report)))
        return
    cases = []
    for index, (name, _, extra) in enumerate(CASES):
        for report in (False, True):
            # One process per case: the children's peak memory is a running maximum.
            child = [sys.executable, __file__, "--case", str(index)] + (["--report"] if report else [])
            measured = json.loads(subprocess.run(child, capture_output=True, text=True,
                                                 check=True).stdout)
            cases.append({"case": name, "arguments": " ".join(extra), "report": report, **measured})
            print(f"{name:<44} report {str(report):<5} wall {measured['wall_s']:>7.2f} s  "
                  f"peak {measured['peak_MiB']:>7.1f} MiB  verified {measured['verified']}")
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    out = {"machine": platform.machine(), "python": platform.python_version(),
           "load_average_at_end": load, "cases": cases}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
