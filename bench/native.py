"""Native executables (MLIR -> LLVM) vs the mpi4py backend vs plain MPI_Alltoall, 8 ranks.

This machine has 2 cores, so 8 ranks time-share them: only ratios mean something here.
Writes bench/results_native.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.native import find_tool, mpirun_argv, run_program
from phalanx.runtime.backends.mpi import run_mpi
from phalanx.runtime.sweep import alltoall_program

phalanx.register_all()

RANKS = 8
SIZES = (64, 1024, 16384, 131072)
REPEATS = 3
C_PROGRAM = Path(__file__).parent / "backends" / "alltoall.c"


def plain_alltoall_s(exe: Path, block: int) -> float:
    done = subprocess.run(mpirun_argv(exe, RANKS) + [str(block)], capture_output=True, text=True,
                          timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])["time_s"]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results_native.json")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "alltoall"
        subprocess.run([find_tool("mpicc"), "-O2", str(C_PROGRAM), "-o", str(exe)], check=True)
        for block in SIZES:
            compiled = compile_program(alltoall_program(RANKS, block), target=f"ideal:{RANKS}",
                                       algorithm="direct", file=f"<native {block} B>")
            native = min(run_program(compiled, nranks=RANKS).result["collective_time_s"][0]
                         for _ in range(REPEATS))
            mpi4py = min(run_mpi(compiled, RANKS).to_json()["collectives"][0]["time_s"]
                         for _ in range(REPEATS))
            plain = min(plain_alltoall_s(exe, block) for _ in range(REPEATS))
            rows.append({"block_bytes": block, "native_s": native, "mpi4py_s": mpi4py,
                         "mpi_alltoall_s": plain, "native_over_alltoall": native / plain,
                         "mpi4py_over_alltoall": mpi4py / plain})
            print(f"{block:>8} B  native/MPI_Alltoall {native / plain:6.2f}  "
                  f"mpi4py/MPI_Alltoall {mpi4py / plain:6.2f}")
    out.write_text(json.dumps({"ranks": RANKS, "cores": 2, "note": "ratios only: 8 ranks on 2 "
                               "cores", "repeats_best_of": REPEATS, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
