"""`phalanx run --backend simgrid|mpi`: run a compiled program on a backend and print the result.

cli.py's `cmd_run` hands non-`sim` backends here; the text output puts each backend's time
beside the built-in simulator's (SimGrid) or beside MPI's own collective (MPI).
"""

from __future__ import annotations

import argparse
import json

from phalanx.compiler.driver import Compiled, unrolled
from phalanx.compiler.groups import kind_label
from phalanx.compiler.pipelines import terminal_notes
from phalanx.grammar.diagnostics import usage_error

BACKENDS = ("sim", "simgrid", "mpi", "mpi-native")


def run_backend(compiled: Compiled, args: argparse.Namespace) -> int:
    """Exit code 0 when verified, 3 when the data did not verify (as `phalanx run`)."""
    nprocs = args.nprocs
    if args.backend == "simgrid":
        if nprocs is not None:
            raise usage_error("-n is for --backend mpi", "drop -n: SimGrid runs every node")
        from phalanx.runtime.backends.simgrid import run_simgrid
        run = run_simgrid(compiled, args.seed)
        result = run.simgrid
    elif args.backend == "mpi":
        from phalanx.runtime.backends.mpi import run_mpi
        run = run_mpi(compiled, nprocs, args.seed)
        result = run.result
    elif args.backend == "mpi-native":
        return _run_native(compiled, args, nprocs)
    else:
        raise usage_error(f"unknown backend '{args.backend}'", "choose one of: " + ", ".join(BACKENDS))
    index = None
    if args.report:
        from phalanx.runtime.report import write_report
        index = write_report(result, args.report)
    out = run.to_json()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(_text(compiled, out))
        if index is not None:
            print(f"report written to {index}")
    return 0 if run.verified else 3


def native_json(compiled: Compiled, run, nranks: int) -> dict:
    """The executable's JSON line in the shape of `run --json` (times are MPI_Wtime, max over ranks)."""
    result = run.result or {}
    times = result.get("collective_time_s", [])
    collectives = []
    for i, c in enumerate(compiled.collectives):
        s = compiled.schedules[i]
        time_s = float(times[i]) if i < len(times) else 0.0
        collectives.append({
            "line": c.line, "kind": c.kind, "nprocs": c.nprocs, "block_bytes": c.block_bytes,
            "total_bytes": c.total_bytes, "algorithm": s.algorithm, "phases": len(s.phases),
            "time_s": time_s, "lower_bound_s": compiled.target.lower_bound_s(c),
            "efficiency": compiled.target.lower_bound_s(c) / time_s if time_s > 0 else 0.0,
            "aggregate_bandwidth_Bps": c.total_bytes / time_s if time_s > 0 else 0.0,
            "candidates": [], "verified": run.verified})
    return {"target": compiled.target.describe() | {"spec": compiled.target_spec},
            "backend": "mpi-native", "program": compiled.program.file, "ranks": nranks,
            "total_time_s": float(result.get("time_s", 0.0)), "verified": run.verified,
            "collectives": collectives, "errors": result.get("errors")}


def _run_native(compiled: Compiled, args: argparse.Namespace, nprocs: int | None) -> int:
    """Build the native executable through MLIR and LLVM, run it under mpirun, report."""
    from phalanx.compiler.native import run_program, world_size

    if args.report:
        raise usage_error("--report is not available for --backend mpi-native",
                          "use --json, or run the built-in simulator for a report")
    nranks = nprocs or world_size(compiled.stages["sched"])
    run = run_program(compiled, args.mpi, nranks)
    if run.result is None:
        raise usage_error(f"the native executable printed no result (exit {run.returncode})",
                          (run.stderr.strip().splitlines() or ["no output"])[-1])
    out = native_json(unrolled(compiled), run, nranks)  # the native program runs every iteration
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(_text(compiled, out))
    return 0 if run.verified else 3


def _text(compiled: Compiled, out: dict) -> str:
    lines = [f"{compiled.program.file} on {compiled.target_spec} ({out['backend']}): total "
             f"{out['total_time_s'] * 1e3:.6f} ms, verified: {out['verified']}"]
    if out["backend"] == "simgrid":
        lines[0] += (f"; built-in simulator {out['builtin_total_time_s'] * 1e3:.6f} ms "
                     f"[{out['platform']['kind']}]")
    for c in out["collectives"]:
        sizes = [len(m) for m in c["groups"]["members"]] if c.get("groups") else []
        line = (f"  line {c['line']}: {kind_label(c['kind'], sizes)} by {c['algorithm']}, "
                f"{c['phases']} phases, "
                f"{c['time_s'] * 1e3:.6f} ms")
        if "builtin_time_s" in c:
            line += (f", built-in {c['builtin_time_s'] * 1e3:.6f} ms "
                     f"(SimGrid/built-in {c['simgrid_over_builtin']:.3f})")
        if "mpi_library" in c:
            line += f", {c['mpi_library']} {c['mpi_library_time_s'] * 1e3:.6f} ms (wall clock)"
        lines.append(line)
        lines += [f"    note: {c['note']}"] if "note" in c else []
        lines += [f"    problem: {p}" for p in c.get("problems", [])]
    return "\n".join(lines + terminal_notes(compiled.pipelines))
