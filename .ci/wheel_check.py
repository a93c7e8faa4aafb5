"""Run an installed phalanx wheel as a user would (called by .ci/wheel-check, from outside the checkout).

Run it with the wheel's venv: `VENV/bin/python -I .ci/wheel_check.py`. It checks that
- phalanx comes from the venv, and tests/, bench/, docs/, examples/ are not `phalanx.*`;
- every module and package-data file of the checkout is installed, and every installed module
  imports (OPTIONAL lists the ones that need what the wheel does not depend on);
- a transpose runs and verifies on every target `phalanx targets --json` lists (on the target's
  example spec, all of its nodes; by the CLI's main in this process);
- the native event core (runtime/engine_core) is installed and gives the Python engine's times;
- the README's demo writes its report, the ANTLR front end and `phalanx-opt` work, and the
  SimGrid and MPI backends run (each when its software is present).
Exit status 1 when a check fails; the checkout is only read (examples/, pyproject.toml).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import pkgutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
PIPELINE = ("grammar", "compiler", "runtime", "targets")
BIN = Path(sys.executable).parent
# module -> (the module it needs, why the wheel does not provide it)
OPTIONAL = {
    "phalanx.runtime.backends.mpi_worker": (
        "mpi4py", "the MPI backend's rank process; mpi4py is not a dependency (a dev extra, built against "
        "Open MPI)"),
    "phalanx.runtime.backends.simgrid_worker": (
        "simgrid", "run by Debian's /usr/bin/python3, the only interpreter with SimGrid's module; "
        "checked below by --backend simgrid"),
}
failures: list[str] = []


def check(ok: bool, what: str) -> bool:
    if not ok:
        failures.append(what)
        print(f"FAIL {what}")
    return ok


def phalanx_cli(*argv: str, timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "phalanx"), *argv], capture_output=True, text=True, timeout=timeout_s)


def check_location() -> None:
    import phalanx

    where = Path(phalanx.__file__).resolve()
    check(where.is_relative_to(Path(sys.prefix).resolve()) and not where.is_relative_to(CHECKOUT),
          f"phalanx imported from {where}, not from the venv {sys.prefix}")
    for top in ("tests", "bench", "docs", "examples"):
        check(importlib.util.find_spec(f"phalanx.{top}") is None, f"phalanx.{top} is importable")
    print(f"phalanx from {where.parent}")


def check_files_installed() -> None:
    """Every module of the checkout's package, and every file its package-data globs match, is installed."""
    import phalanx

    installed = Path(phalanx.__file__).parent
    setuptools = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]
    wanted = {p.name for p in CHECKOUT.glob("*.py")}
    wanted |= {p.relative_to(CHECKOUT).as_posix() for top in PIPELINE for p in (CHECKOUT / top).rglob("*.py")}
    for package, globs in setuptools["package-data"].items():
        folder = CHECKOUT.joinpath(*package.split(".")[1:])
        wanted |= {p.relative_to(CHECKOUT).as_posix() for glob in globs for p in folder.glob(glob)}
    missing = sorted(rel for rel in wanted if not (installed / rel).is_file())
    check(not missing, f"files of the checkout missing from the installed package: {missing}")
    print(f"{len(wanted) - len(missing)} of {len(wanted)} files of the checkout's package installed")


def check_imports() -> None:
    import phalanx

    errors: list[str] = []
    names = ["phalanx"] + [m.name for m in pkgutil.walk_packages(phalanx.__path__, "phalanx.",
                                                                onerror=errors.append)]
    check(not errors, f"packages that failed to import while walking: {errors}")
    check(set(OPTIONAL) <= set(names), f"OPTIONAL names modules not installed: {set(OPTIONAL) - set(names)}")
    imported, skipped = 0, []
    for name in names:
        try:
            importlib.import_module(name)
            imported += 1
        except ModuleNotFoundError as e:
            need, why = OPTIONAL.get(name, (None, ""))
            if check(e.name == need, f"import {name}: {e!r}"):
                skipped.append(f"{name} (needs {need}: {why})")
        except Exception as e:  # any failure to import is reported
            check(False, f"import {name}: {e!r}")
    print(f"imported {imported} of {len(names)} modules")
    for s in skipped:
        print(f"  not imported: {s}")


def transpose_program(nprocs: int) -> str:
    n = 2 * nprocs
    return (f"processors P({nprocs})\n"
            f"array A({n}, {n}) of float64 distribute (BLOCK, *) onto P\n"
            f"array B({n}, {n}) of float64 distribute (*, BLOCK) onto P\n"
            "B = A\n")


def phalanx_here(*argv: str) -> subprocess.CompletedProcess[str]:
    """The installed package's CLI in this process (what the `phalanx` script calls), without
    the start-up of a process of its own."""
    from phalanx.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return subprocess.CompletedProcess(["phalanx", *argv], code, out.getvalue(), err.getvalue())


def run_verified(program: Path, *argv: str, in_process: bool = False) -> dict | None:
    started = time.perf_counter()
    done = (phalanx_here if in_process else phalanx_cli)("run", str(program), "--json", "--quiet", *argv)
    wall_s = time.perf_counter() - started
    what = f"phalanx run {program.name} {' '.join(argv)}"
    if not check(done.returncode == 0, f"{what}: exit {done.returncode}\n{done.stderr.strip()}"):
        return None
    data = json.loads(done.stdout)
    check(data["verified"] is True, f"{what}: not verified")
    algorithms = ",".join(c["algorithm"] for c in data["collectives"])
    print(f"  {' '.join(argv):42} {algorithms:18} total {data['total_time_s'] * 1e3:7.3f} ms, "
          f"verified {data['verified']}, {wall_s:5.1f} s wall")
    return data


def check_targets(work: Path) -> None:
    import phalanx
    from phalanx.compiler.target import resolve

    phalanx.register_all()

    done = phalanx_cli("targets", "--json")
    if not check(done.returncode == 0, f"phalanx targets --json: {done.stderr}"):
        return
    entries = json.loads(done.stdout)["targets"]
    print(f"phalanx targets: {len(entries)} targets; a transpose on each one's example spec:")
    for entry in entries:
        nprocs = resolve(entry["example"]).nnodes
        program = work / f"transpose_{entry['name']}.phx"
        program.write_text(transpose_program(nprocs))
        # ranked by the closed forms: the installed package is checked here, auto's choice in the
        # tests; in this process (the `phalanx` script runs above and below)
        run_verified(program, "--target", entry["example"], "--cost", "closed-form", in_process=True)


def check_native_core() -> None:
    """The native event core is installed and runs a transpose as the Python engine does."""
    from phalanx.compiler.driver import compile_program
    from phalanx.runtime.native_run import native_available
    from phalanx.runtime.simulate import simulate

    missing = "phalanx_engine_core is not installed (pip install ./runtime/engine_core)"
    if not check(native_available(), missing):
        return
    compiled = compile_program(transpose_program(8), target="ideal:8")
    native, python = simulate(compiled, engine_choice="native"), simulate(compiled, engine_choice="python")
    check(native.verified and native.total_time_s == python.total_time_s,
          f"native core: {native.total_time_s} s, verified {native.verified}; Python engine: "
          f"{python.total_time_s} s")
    print(f"native event core: a transpose on ideal:8 in {native.total_time_s * 1e3:.3f} ms on both engines")


def check_front_ends_and_report(work: Path) -> None:
    example = CHECKOUT / "examples" / "transpose.phx"
    report = work / "demo"
    done = phalanx_cli("run", str(example), "--report", str(report), "--quiet")
    check(done.returncode == 0 and (report / "index.html").is_file(),
          f"phalanx run --report: exit {done.returncode}\n{done.stderr.strip()}")
    mlir = work / "transpose.mlir"
    done = phalanx_cli("compile", str(example), "--parser", "antlr", "--emit", "mlir", "-o", str(mlir))
    check(done.returncode == 0, f"phalanx compile --parser antlr --emit mlir: {done.stderr.strip()}")
    done = subprocess.run([str(BIN / "phalanx-opt"), str(mlir), "-p",
                           "recognize-collectives,lower-coll-to-sched{target=ideal:16},verify-schedule"],
                          capture_output=True, text=True, timeout=600)
    check(done.returncode == 0 and "sched." in done.stdout, f"phalanx-opt: {done.stderr.strip()}")
    print("report of examples/transpose.phx, the ANTLR front end and phalanx-opt: done")


def check_backends(work: Path) -> None:
    from phalanx.runtime.backends.mpi import mpi_missing
    from phalanx.runtime.backends.simgrid import simgrid_missing

    program = work / "transpose_backends.phx"
    program.write_text(transpose_program(4))
    for backend, missing in (("simgrid", simgrid_missing()), ("mpi", mpi_missing())):
        if missing:
            print(f"  --backend {backend} not run: {missing}")
        else:
            run_verified(program, "--target", "ideal:4", "--backend", backend)


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # in order with the output of the child below
    if sys.argv[1:] == ["imports"]:
        check_imports()
        return 1 if failures else 0
    started = time.perf_counter()
    check_location()
    check_files_installed()
    # In a process of its own: importing mpi_worker initialises MPI (mpi4py), which leaves Open
    # MPI's variables in the environment, and an mpirun started under them fails.
    done = subprocess.run([sys.executable, "-I", __file__, "imports"], timeout=600)
    check(done.returncode == 0, "importing every module")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        check_targets(work)
        check_native_core()
        check_front_ends_and_report(work)
        check_backends(work)
    print(f"wheel check: {len(failures)} failure(s), {time.perf_counter() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
