"""The native toolchain: a compiled program to an MPI executable through LLVM, and running it.

lower-sched-to-mpi's MLIR -> `mlir-opt-22 --convert-scf-to-cf --convert-to-llvm
--reconcile-unrealized-casts` -> `mlir-translate-22 --mlir-to-llvmir` -> `clang-22 -O2`
linked with the MPI library's flags (`mpicc --showme:link`, MPICH `mpicc -link_info`).
A missing tool is a usage error naming the Debian package that has it. The executable
prints one JSON line (see lower_sched_to_mpi); `run_executable` starts it under mpirun.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phalanx.compiler.ir.conversion.lower_sched_to_mpi import lower_sched_to_mpi
from phalanx.compiler.ir.conversion.native_rows import world_size
from phalanx.grammar.diagnostics import usage_error

MLIR_OPT_PASSES = ("--convert-scf-to-cf", "--convert-to-llvm", "--reconcile-unrealized-casts")
# Debian package of each tool, for the error that says what to install.
DEBIAN_PACKAGES = {"mlir-opt-22": "mlir-22-tools", "mlir-translate-22": "mlir-22-tools",
                   "clang-22": "clang-22", "mpicc": "libopenmpi-dev", "mpirun": "openmpi-bin"}
LLVM_BIN = Path("/usr/lib/llvm-22/bin")  # where Debian keeps the unsuffixed LLVM 22 tools
TOOL_TIMEOUT_S = 300
RUN_TIMEOUT_S = 300


class NativeToolError(RuntimeError):
    """A tool of the chain rejected its input: a bug in the lowering, reported with the tool's words."""


def find_tool(name: str) -> str:
    """The path of `name`, or a usage error naming its Debian package."""
    found = shutil.which(name)
    if found is None and name.endswith("-22"):
        fallback = LLVM_BIN / name.removesuffix("-22")
        found = str(fallback) if fallback.exists() else None
    if found is None:
        package = DEBIAN_PACKAGES.get(name, name)
        raise usage_error(f"`{name}` is not installed; building native MPI executables needs it",
                          f"install the Debian package {package} (apt-get install -y {package})")
    return found


def missing_tools(names: tuple[str, ...] = tuple(DEBIAN_PACKAGES)) -> list[str]:
    """Which of the tools are not installed (for tests that skip with a reason)."""
    out = []
    for name in names:
        try:
            find_tool(name)
        except Exception:  # noqa: BLE001 - a PhalanxError: the tool is missing
            out.append(f"{name} (Debian package {DEBIAN_PACKAGES[name]})")
    return out


def _run_tool(argv: list[str], what: str, stdin: str | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-12:])
        raise NativeToolError(f"{what} failed ({shlex.join(argv[:3])} ...):\n{tail}")
    return done.stdout


def mpi_link_flags(mpi: str = "OpenMPI") -> list[str]:
    """Linker flags of the installed MPI library, from its compiler wrapper."""
    mpicc = find_tool("mpicc")
    if mpi == "OpenMPI":
        return shlex.split(_run_tool([mpicc, "--showme:link"], "mpicc --showme:link"))
    words = shlex.split(_run_tool([mpicc, "-link_info"], "mpicc -link_info"))
    return [w for w in words[1:] if w.startswith(("-L", "-l", "-Wl"))]


def lower_to_llvm_ir(mlir_text: str) -> str:
    """Upstream MLIR (func/scf/arith/memref/mpi/llvm) to LLVM IR text."""
    llvm_dialect = _run_tool([find_tool("mlir-opt-22"), *MLIR_OPT_PASSES], "mlir-opt-22", mlir_text)
    return _run_tool([find_tool("mlir-translate-22"), "--mlir-to-llvmir"], "mlir-translate-22",
                     llvm_dialect)


def build_executable(mlir_text: str, output: str | Path, mpi: str = "OpenMPI") -> Path:
    """Compile and link the MLIR program of lower-sched-to-mpi to the executable `output`."""
    output = Path(output)
    llvm_ir = lower_to_llvm_ir(mlir_text)
    with tempfile.TemporaryDirectory(prefix="phalanx-native-") as tmp:
        ll = Path(tmp) / "program.ll"
        ll.write_text(llvm_ir)
        _run_tool([find_tool("clang-22"), "-O2", "-Wno-override-module", str(ll), "-o", str(output),
                   *mpi_link_flags(mpi)], "clang-22")
    return output


def build_program(compiled, output: str | Path, mpi: str = "OpenMPI", nranks: int = 0) -> Path:
    """The executable of a compiled program (phalanx.compiler.driver.Compiled) for `nranks`
    MPI ranks (0: one per processor; fewer ranks each run a block of processors)."""
    return build_executable(lower_sched_to_mpi(compiled.stages["sched"], mpi, nranks), output, mpi)


@dataclass(frozen=True)
class NativeRun:
    """What one mpirun of a native executable printed and returned."""

    returncode: int
    result: dict[str, Any] | None  # the executable's JSON line (rank 0), if it printed one
    stdout: str
    stderr: str

    @property
    def verified(self) -> bool:
        return self.returncode == 0 and bool(self.result and self.result.get("verified"))


def mpirun_argv(executable: str | Path, nprocs: int) -> list[str]:
    """mpirun with as many ranks as asked, oversubscribing the cores (and as root, allowed)."""
    argv = [find_tool("mpirun"), "-n", str(nprocs)]
    if "Open MPI" in subprocess.run([argv[0], "--version"], capture_output=True, text=True).stdout:
        argv += ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    return [*argv, str(Path(executable).resolve())]


def _json_line(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith('{"backend": "mpi-native"'):
            return json.loads(line)
    return None


def run_executable(executable: str | Path, nprocs: int) -> NativeRun:
    """Run a native executable on `nprocs` ranks; a hang past RUN_TIMEOUT_S is an error."""
    argv = mpirun_argv(executable, nprocs)
    env = os.environ | {"OMPI_MCA_rmaps_base_oversubscribe": "1"}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise NativeToolError(f"{shlex.join(argv)} did not finish in {RUN_TIMEOUT_S} s "
                              "(a deadlocked schedule?)") from None
    return NativeRun(done.returncode, _json_line(done.stdout), done.stdout, done.stderr)


def run_program(compiled, mpi: str = "OpenMPI", nranks: int = 0,
                workdir: str | Path | None = None) -> NativeRun:
    """Build a compiled program's executable in `workdir` (else a temporary folder) and run
    it on `nranks` MPI ranks (0: one per processor)."""
    nranks = nranks or world_size(compiled.stages["sched"])
    with tempfile.TemporaryDirectory(prefix="phalanx-native-") as tmp:
        exe = build_program(compiled, Path(workdir or tmp) / "program", mpi, nranks)
        return run_executable(exe, nranks)
