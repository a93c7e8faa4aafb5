"""Regret of `auto`: every target x collective kind x message size, every algorithm forced.

Writes bench/results_regret.json and docs/regret.md (issue 18, item 4). For each case
(target, kind, size) the sweep's program (runtime/sweep.py `kind_program`; `sparse` is every
node sending to the first eighth of them, the 64-to-8 exchange of issue 18) is compiled with
`auto`, and every algorithm whose preconditions hold is simulated on the built-in simulator
(runtime/timing.py: the payload left out, the time a real run gives). Per case:

- `regret` = simulated time of the algorithm `auto` chose with `--cost target` / the least
  simulated time of any algorithm (1.00: auto chose the best);
- `regret_simulate`: the same for `--cost simulate` (compiler/simcost.py), with the algorithms
  it simulated and those it predicted (past its budget);
- per algorithm: the target's closed form (predict_time_s), what `--cost target` minimised
  (the closed form, or a simulation where the target says its closed form cannot follow the
  simulator: `source`), the simulated time, and the error closed form / simulated.

The summary gives the maximum and geometric-mean regret, the worst cases, and the largest
prediction errors. A reduction's size is its partial's bytes (runtime/sweep.py); the KSR-1 up to
2 KB
(MAX_BYTES: its simulator moves every subpage).

Program rows (issue 29): `--programs` measures every example and programs in groups on every
target instead (bench/regret_programs.py), auto's total against the best total of a baseline
search that does not start from auto's choice, and keeps the collective rows of the results
file (each kind of row keeps the other's); on `--workers N` (default 1 for them).

Every case is one point of runtime/parallel.py, the path `phalanx sweep` and `explore` take:
`--workers N` local processes (default: the machine's cores), `--scheduler tcp://HOST:PORT` a
running Dask cluster; the rows keep the serial order. `--speedup` runs the chosen cases twice in
one run, serially and on `--workers`, checks that both give the same rows and writes the wall
times to bench/results_regret_parallel.json.

Run: .venv/bin/python bench/regret.py [--targets T,T] [--kinds K,K] [--sizes 8,2K,1M] [--programs]
    [--workers N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform as host_platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import regret_programs
from regret_programs import measure_program, program_cases, program_markdown, program_summary

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind, parse_kind
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.parallel import ParallelOptions, Status, Task, default_workers, run_points
from phalanx.runtime.sweep import kind_program, parse_sizes
from phalanx.runtime.timing import simulated_time_s

phalanx.register_all()

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results_regret.json"
PARALLEL_RESULTS = HERE / "results_regret_parallel.json"
TABLE = HERE.parent / "docs" / "regret.md"
TARGETS = ("ideal:16", "ideal:64", "torus:8x8", "iwarp:8x8", "iwarp:4x4", "paragon:8x8", "sp2:16",
           "cs2:32", "hypercube:6", "proteus", "ksr1")
KINDS = (Kind.ALLTOALL, Kind.SPARSE, Kind.CSHIFT, Kind.PERMUTATION, Kind.BROADCAST, Kind.SCATTER, Kind.GATHER,
         Kind.ALLGATHER, Kind.REDUCE, Kind.ALLREDUCE)
SIZES = "8,128,2K,16K,128K,1M"
# The KSR-1's simulator moves every 128-byte subpage through the ring's slots: an all-to-all of
# 2 KB blocks on 32 cells takes ~20 s per algorithm and 128 KB did not finish in 20 minutes,
# so the KSR-1 is measured up to this size (its own seed's experiments are of that scale).
MAX_BYTES = {"ksr1": 2048}


def program(kind: Kind, nnodes: int, size: int) -> str:
    if kind == Kind.SPARSE:  # every node to the first eighth: torus:8x8's 64-to-8 case of issue 18
        receivers = max(nnodes // 8, 1)
        cols = receivers * size
        return (f"processors P({nnodes})\nprocessors Q({receivers})\n"
                f"array A({nnodes}, {cols}) of byte distribute (BLOCK, *) onto P\n"
                f"array B({nnodes}, {cols}) of byte distribute (*, BLOCK) onto Q\nB = A\n")
    return kind_program(kind, nnodes, size)


def measure(target: str, kind: Kind, size: int, *, time_limit_s: float | None = None) -> dict[str, Any]:
    """One case, with the wall time it took (`time_limit_s` is runtime/parallel.py's per-point
    limit; the benchmark sets none)."""
    assert time_limit_s is None
    start = time.perf_counter()
    row = _measure(target, kind, size)
    return row | {"wall_s": round(time.perf_counter() - start, 2)}


def _measure(target: str, kind: Kind, size: int) -> dict[str, Any]:
    nnodes = resolve(target).nnodes
    source = program(kind, nnodes, size)
    row: dict[str, Any] = {"target": target, "kind": kind, "size_bytes": size, "nodes": nnodes}
    try:
        compiled = compile_program(source, target=target, file=f"<regret {kind} {size} B>")
    except PhalanxError as exc:  # e.g. no exchange fits the Paragon's receive buffers
        return row | {"not_runnable": exc.diagnostic.message.splitlines()[0]}
    machine, coll = compiled.target, compiled.collectives[0]
    row |= {"recognized": coll.kind, "auto": compiled.schedules[0].algorithm}
    algorithms = []
    for name, reason in machine.candidates(coll):
        if reason is not None:
            continue
        closed_form = machine.predict_time_s(coll, name)
        # --cost simulate's own runs where it simulated (the same runs), else a run here
        by_sim = machine.predict(coll, name, "simulate")
        simulated = (by_sim if machine.predict_source(coll, name, "simulate") == "simulated"
                     else simulated_time_s(machine, coll, name))
        algorithms.append({"algorithm": name, "closed_form_s": closed_form,
                           "auto_minimised_s": machine.predict(coll, name),
                           "source": machine.predict_source(coll, name),
                           "simulated_s": simulated,
                           "error": closed_form / simulated if simulated > 0 else 1.0})
    times = {a["algorithm"]: a["simulated_s"] for a in algorithms}
    best = min(algorithms, key=lambda a: a["simulated_s"])
    row |= {"algorithms": algorithms, "best": best["algorithm"], "best_s": best["simulated_s"],
            "auto_s": times[row["auto"]],
            "regret": times[row["auto"]] / best["simulated_s"] if best["simulated_s"] > 0 else 1.0}
    choice = machine.choose(coll, "auto", "simulate")  # what compile --cost simulate lowers with
    row |= {"auto_simulate": choice,
            "regret_simulate": times[choice] / best["simulated_s"] if best["simulated_s"] > 0 else 1.0,
            "simulate_sources": {a["algorithm"]: machine.predict_source(coll, a["algorithm"], "simulate")
                                 for a in algorithms}}
    return row


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    regrets = [r[key] for r in rows]
    worst = sorted(rows, key=lambda r: -r[key])[:10]
    return {"cases": len(rows), "max": max(regrets),
            "geomean": math.exp(sum(math.log(x) for x in regrets) / len(regrets)),
            "above_1_10": sum(x > 1.10 for x in regrets),
            "worst": [{"target": r["target"], "kind": r["kind"], "size_bytes": r["size_bytes"],
                       "auto": r["auto" if key == "regret" else "auto_simulate"], "best": r["best"],
                       "regret": r[key]} for r in worst]}


def errors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ten predictions furthest from the simulator (by |log(predicted / simulated)|)."""
    flat = [{"target": r["target"], "kind": r["kind"], "size_bytes": r["size_bytes"], **a}
            for r in rows for a in r["algorithms"]]
    return sorted(flat, key=lambda a: -abs(math.log(a["error"])) if a["error"] > 0 else 0)[:10]


def ms(s: float) -> str:
    return f"{s * 1e3:.4g}"


def markdown(report: dict[str, Any]) -> str:
    t, s = report["summary_target"], report["summary_simulate"]
    lines = ["# Regret of `auto` (bench/regret.py)", "",
             "Regret = simulated time of `auto`'s choice / least simulated time of any algorithm "
             "forced with `--algorithm`, on the built-in simulator. Error = the target's closed form / "
             "simulated (where `--cost target` simulates instead, the error is still shown). "
             "Regenerate with `make bench` or `python bench/regret.py` (program rows: `--programs`).", "",
             f"- `--cost target`: {t['cases']} cases, max regret {t['max']:.3f}, geometric mean "
             f"{t['geomean']:.4f}, {t['above_1_10']} cases above 1.10",
             f"- `--cost simulate`: max regret {s['max']:.3f}, geometric mean {s['geomean']:.4f}",
             f"- run time {report['wall_s']} s on {report['machine']['arch']}", "",
             "| target | kind | size B | auto (target) | best | regret | auto (simulate) | "
             "regret | worst error (algorithm) |", "|" + "---|" * 9]
    for r in report["rows"]:
        if "not_runnable" in r:
            lines.append(f"| {r['target']} | {r['kind']} | {r['size_bytes']} | not runnable: "
                         f"{r['not_runnable']} | | | | | |")
            continue
        w = max(r["algorithms"], key=lambda a: abs(math.log(a["error"])) if a["error"] > 0 else 0)
        lines.append(f"| {r['target']} | {r['kind']} | {r['size_bytes']} | {r['auto']} "
                     f"{ms(r['auto_s'])} ms | {r['best']} {ms(r['best_s'])} ms | {r['regret']:.3f} | "
                     f"{r['auto_simulate']} | {r['regret_simulate']:.3f} | {w['error']:.2f} "
                     f"({w['algorithm']}) |")
    return "\n".join(lines) + "\n"


def case_key(row: dict[str, Any]) -> tuple[str, str, int]:
    return row["target"], row["kind"], row["size_bytes"]


def case_order(row: dict[str, Any]) -> tuple[int, int, int]:
    """TARGETS' order, then KINDS', then size (a target or kind outside them last)."""
    targets, kinds = {t: i for i, t in enumerate(TARGETS)}, {k: i for i, k in enumerate(KINDS)}
    return (targets.get(row["target"], len(targets)), kinds.get(row["kind"], len(kinds)),
            row["size_bytes"])


def write(out: Path, table: str, rows: list[dict[str, Any]], wall_s: float,
          programs: list[dict[str, Any]] | None = None, programs_wall_s: float = 0.0) -> dict[str, Any]:
    """Rows of this run replace those of the same cases (target, kind, size) in `out`; the
    others are kept (a long run saves after every target, a run of some kinds keeps the other
    kinds' rows, and runs over disjoint cases can be merged).
    `programs`: new program rows (None: keep those in `out`)."""
    old = json.loads(out.read_text()).get("rows", []) if out.exists() else []
    merged = sorted(({case_key(r): r for r in old} | {case_key(r): r for r in rows}).values(),
                    key=case_order)
    ran = [r for r in merged if "not_runnable" not in r]
    old_report = json.loads(out.read_text()) if out.exists() else {}
    program_rows = old_report.get("program_rows", []) if programs is None else programs
    report = {"machine": {"arch": host_platform.machine(), "python": host_platform.python_version()},
              "wall_s": wall_s, "time_unit": "s (simulated)",
              "summary_target": summary(ran, "regret"),
              "summary_simulate": summary(ran, "regret_simulate"),
              "not_runnable": len(merged) - len(ran), "largest_errors": errors(ran), "rows": merged,
              "summary_programs": program_summary(program_rows), "program_rows": program_rows}
    if programs is not None:
        report["programs_wall_s"] = programs_wall_s
    elif "programs_wall_s" in old_report:
        report["programs_wall_s"] = old_report["programs_wall_s"]
    out.write_text(json.dumps(report, indent=1) + "\n")
    if table:
        Path(table).write_text(markdown(report) + "\n".join(
            program_markdown(program_rows, report["summary_programs"], report.get("programs_wall_s")))
            + "\n")
    return report


def program_point(name: str, source: str, target: str | None, *,
                  time_limit_s: float | None = None) -> dict[str, Any]:
    """One program row (bench/regret_programs.py), as runtime/parallel.py calls a point."""
    assert time_limit_s is None
    return measure_program(name, source, target)


def run_programs(out: Path, table: str, options: ParallelOptions) -> int:
    """The program rows, written with the collective rows already in `out`; on
    `options.workers` local processes (rows in the serial order)."""
    if options.workers > 1 or options.scheduler is not None:
        import cloudpickle  # the workers do not have bench/ on their path: send the module itself

        cloudpickle.register_pickle_by_value(regret_programs)
    examples = [(p.name, p.read_text()) for p in sorted((HERE.parent / "examples").glob("*.phx"))]
    cases = program_cases(examples)
    tasks = [Task({"point": "regret-program", "program": n, "source": s, "target": t}, program_point,
                  (n, s, t), f"{n} on {t or 'its own target'}") for n, s, t in cases]
    start = time.perf_counter()
    outcomes = run_points(tasks, options, on_done=lambda label: print(label, flush=True))
    bad = [(task.label, o.error) for task, o in zip(tasks, outcomes) if o.status != Status.OK]
    if bad:
        raise SystemExit(f"regret: {len(bad)} programs did not run, e.g. {bad[0][0]}: {bad[0][1]}")
    rows = [o.row for o in outcomes if o.row is not None]
    for row in rows:
        if "regret" in row:
            print(f"{row['program']:<48} {row['target']:<24} auto {row['auto_s'] * 1e3:.4g} ms "
                  f"({row['auto_choice']}) baseline {row['baseline']['search']} ({row['baseline']['best']}) "
                  f"regret {row['regret']:.3f} [{row['wall_s']} s]")
        else:
            print(f"{row['program']:<48} {row['target']}: not measured: {row['not_measured']}")
    old = json.loads(out.read_text())
    report = write(out, table, old["rows"], old["wall_s"], rows, round(time.perf_counter() - start, 1))
    p = report["summary_programs"]
    print(f"wrote {out}: {p['cases']} programs, max regret {p['max']:.3f}, geomean {p['geomean']:.4f}")
    return 0


def measured_kinds(text: str) -> list[Kind]:
    """The kinds `--kinds` names, each one this benchmark has a program of (`program`), or an
    exit naming the one it has none of (alltoallv is a byte matrix, not a program)."""
    kinds = [parse_kind(k, "--kinds") for k in filter(None, text.split(","))]
    for kind in kinds:
        if kind not in KINDS:
            raise SystemExit(f"regret: --kinds {kind} is not measured here (no program of it); "
                             f"the kinds: {', '.join(KINDS)}")
    return kinds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--sizes", default=SIZES, help="bytes, K = 1024, M = 1024^2")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--table", default=str(TABLE), help="markdown table ('' for none)")
    ap.add_argument("--programs", action="store_true", help="measure the program rows only "
                    "(every example, programs in groups on every target)")
    ap.add_argument("--workers", type=int, default=None, help="local processes (default: the cores)")
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask cluster")
    ap.add_argument("--speedup", action="store_true", help="run the cases serially and on --workers, "
                    "one after the other; write the wall times to " + PARALLEL_RESULTS.name)
    ap.add_argument("--merge", metavar="FILE", help="merge another run's results file into --out, "
                    "run nothing (wall_s: the sum)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.merge:
        other = json.loads(Path(args.merge).read_text())
        mine = json.loads(out.read_text())
        write(out, "", mine["rows"], mine["wall_s"])
        report = write(out, args.table, other["rows"], round(mine["wall_s"] + other["wall_s"], 1))
        print(f"merged {args.merge} into {out}: max regret {report['summary_target']['max']:.3f}")
        return 0
    if args.programs:
        return run_programs(out, args.table, ParallelOptions(workers=args.workers or 1,
                                                             scheduler=args.scheduler))
    sizes = parse_sizes(args.sizes)
    kinds = measured_kinds(args.kinds)
    cases = [(target, kind, size) for target in filter(None, args.targets.split(","))
             for kind in kinds
             for size in [s for s in sizes if s <= MAX_BYTES.get(target.partition(":")[0], s)]]
    workers = args.workers if args.workers is not None else default_workers()
    if args.speedup:
        case_args = ["--targets", args.targets, "--kinds", args.kinds, "--sizes", args.sizes]
        return speedup(cases, workers, case_args)
    start = time.perf_counter()
    rows = run_cases(cases, ParallelOptions(workers=workers, scheduler=args.scheduler), show=True)
    report = write(out, args.table, rows, round(time.perf_counter() - start, 1))
    t = report["summary_target"]
    print(f"wrote {out}: {t['cases']} cases, max regret {t['max']:.3f}, geomean "
          f"{t['geomean']:.4f} ({report['wall_s']} s)")
    return 0


def run_cases(cases: list[tuple[str, str, int]], options: ParallelOptions, show: bool = False
              ) -> list[dict[str, Any]]:
    """Every case's row, in the order of `cases`, each printed as it finishes when `show`."""
    tasks = [Task({"point": "regret", "target": t, "kind": k, "size_bytes": s}, measure, (t, k, s),
                  f"{t:<12} {k:<11} {s:>8}", cost_hint=s) for t, k, s in cases]
    outcomes = run_points(tasks, options, on_done=(lambda label: print(label, flush=True)) if show else None)
    bad = [(task.label, o.error) for task, o in zip(tasks, outcomes) if o.status != Status.OK]
    if bad:
        raise SystemExit(f"regret: {len(bad)} cases did not run, e.g. {bad[0][0]}: {bad[0][1]}")
    return [o.row for o in outcomes if o.row is not None]


def speedup(cases: list[tuple[str, str, int]], workers: int, case_args: list[str]) -> int:
    """The same cases serially and on `workers` local processes, one after the other, each a run
    of this script in a fresh process as a user makes it (imports, the cluster's start and the
    results file included), so neither run inherits the other's memory or caches."""
    walls, results, load = {}, {}, os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for name, count in (("serial", 1), (f"workers_{workers}", workers)):
            out = Path(tmp) / f"{name}.json"
            start = time.perf_counter()
            subprocess.run([sys.executable, __file__, *case_args, "--workers", str(count), "--out", str(out),
                            "--table", ""], check=True, stdout=subprocess.DEVNULL)
            walls[name] = round(time.perf_counter() - start, 1)
            results[name] = json.loads(out.read_text())["rows"]
            print(f"{name}: {len(cases)} cases in {walls[name]} s", flush=True)
    without_wall = [[{k: v for k, v in r.items() if k != "wall_s"} for r in rows]
                    for rows in results.values()]
    report = {"machine": {"arch": host_platform.machine(), "python": host_platform.python_version(),
                          "cores": default_workers(), "load_average_1_min_at_start": round(load, 1)},
              "cases": [list(c) for c in cases], "workers": workers,
              "serial_wall_s": walls["serial"], "parallel_wall_s": walls[f"workers_{workers}"],
              "ratio": round(walls[f"workers_{workers}"] / walls["serial"], 3),
              "identical_rows": without_wall[0] == without_wall[1],
              "process_s_per_case": round(sum(r["wall_s"] for r in results["serial"]) / len(cases), 2)}
    PARALLEL_RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {PARALLEL_RESULTS}: parallel / serial = {report['ratio']}, "
          f"identical rows: {report['identical_rows']}")
    return 0 if report["identical_rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
