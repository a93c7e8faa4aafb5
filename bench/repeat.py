"""`repeat` without unrolling (issue 29, item 4): `repeat N { B = A; A = B }` on ideal:4.

Runs `phalanx run PROG --json` end to end (a new process: imports, compile, simulate every
iteration with verified data, own-time replays, JSON) for a few N and records the wall clock,
the process's CPU time (user + system: the machine is shared, so wall clock includes waiting
for a core), the load average when it ran, the compile time alone, and the size of the JSON.
The arrays are 8 x 8 float64 (32-byte blocks), the case of the issue. The child process may
write Python's bytecode caches (PYTHONDONTWRITEBYTECODE is cleared for it) and a one-iteration
run goes first, so that the figures are of a `phalanx run` whose modules are compiled already, as
an installed package's are (compiling the package's ~200 modules from source takes about 1 s).

Writes bench/results_repeat.json; docs/language.md quotes it.
Run: .venv/bin/python bench/repeat.py [N ...]   (default 5000 20000)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import phalanx
from phalanx.compiler.driver import compile_program

ROOT = Path(__file__).resolve().parents[1]
PHALANX = Path(sys.executable).parent / "phalanx"
PROGRAM = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
repeat {n} {{
  B = A
  A = B
}}
"""


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_json(path: Path) -> str:
    return subprocess.run([str(PHALANX), "run", str(path), "--json", "--quiet"], capture_output=True,
                          text=True, check=True, env=CHILD_ENV).stdout


def measure(n: int, folder: Path) -> dict:
    path = folder / f"repeat{n}.phx"
    path.write_text(PROGRAM.format(n=n))
    started = time.perf_counter()
    compile_program(str(path))
    compile_s = time.perf_counter() - started
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = run_json(path)
    wall_s = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = json.loads(out)
    assert data["verified"] and [r["runs"] for r in data["repeated"]] == [n, n]
    return {"iterations": n, "runs": 2 * n, "wall_s": round(wall_s, 2),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
            "load_average_1min": round(load, 1), "compile_s": round(compile_s, 3),
            "json_bytes": len(out), "total_time_s": data["total_time_s"],
            "verified": data["verified"]}


def main(counts: list[int]) -> None:
    phalanx.register_all()
    with tempfile.TemporaryDirectory() as folder:
        warm = Path(folder) / "warm.phx"
        warm.write_text(PROGRAM.format(n=1))
        run_json(warm)  # writes the bytecode caches
        rows = [measure(n, Path(folder)) for n in counts]
    for row in rows:
        print(row)
    (ROOT / "bench" / "results_repeat.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [5000, 20000])
