"""Efficiency: the best algorithm of every kind on every target against the lower bound (issue 27).

Writes bench/results_efficiency.json and the generated part of docs/efficiency.md (between its
two marker lines, GENERATED; the hand-written analysis around them is kept). Two parts:

1. The grid: every built-in target at 64 nodes (ksr1 and proteus at their natural 32) x every
   kind x sizes from 8 B to 1 MB. Each case's collective is the sweep's program
   (runtime/sweep.py `kind_program`: the block, the root's buffer for a broadcast, the
   partial for a reduction; `sparse` is every node to the first eighth, as bench/regret.py;
   `alltoallv` Fig. 9's sizes in [B/2, 3B/2], runtime/synthetic.py), compiled with the first
   algorithm that lowers it (no `auto` search), and every algorithm whose preconditions hold
   is timed on the built-in simulator without payload (runtime/timing.py). Per case: the best
   algorithm, its efficiency (the target's lower bound / its time; docs/bounds.md), the bound
   that binds, and the previous best: the best among PREVIOUS, the algorithm names main had
   per kind before issue 27 (Bokhari's `multiphase:` family included). Where the target has
   fixed routes (torus, mesh, hypercube), also the best schedule of direct messages against
   the larger of the bound and the busiest link under those routes, a bound for direct
   messages only (`direct_bound_s`, docs/bounds.md "Fixed routes").
2. Beside it, on the SimGrid platforms of bench/collectives.py: Phalanx's `auto` (chosen by the
   `simgrid` cost model and run on SimGrid) against the best of SMPI's algorithms for
   alltoall (8 B to 256 B included), broadcast, allgather and allreduce, on the same platform.

`measure(point)` times one case and depends on nothing else: `measure_grid` maps it over the
points through runtime/parallel.py, the path `phalanx sweep` and bench/regret.py take
(`--workers N` local processes, default 1; `--scheduler tcp://HOST:PORT` a running Dask
cluster); the rows keep the grid's order. The results file accumulates:
a case measured again replaces its row, so parts of the grid can be run one after another;
each run's command, date, commit and wall time are kept, and the table says how many of the
planned cases are measured. A run that measures nothing (`--no-grid --no-smpi`) regenerates
the table from the file. The KSR-1's simulator moves
every subpage, so it is measured up to 2 KB (as bench/regret.py); larger cases are recorded
as skipped with that reason.

Run: .venv/bin/python bench/efficiency.py [--targets T,T] [--kinds K,K] [--sizes 8,2K,1M]
     [--quick] [--no-smpi] [--smpi-targets T,T] [--smpi-sizes 8,256,64K] [--workers N]
     [--out FILE.json] [--table FILE.md, '' for none]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform as host_platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective, recognize
from phalanx.compiler.target import Target, resolve
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError
from phalanx.runtime.backends.simgrid import simgrid_missing
from phalanx.runtime.parallel import ParallelOptions, Status, Task, run_points
from phalanx.runtime.sweep import kind_program, parse_sizes
from phalanx.runtime.synthetic import varied_matrix
from phalanx.runtime.timing import simulated_time_s

phalanx.register_all()

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results_efficiency.json"
TABLE = HERE.parent / "docs" / "efficiency.md"
TARGETS = ("ideal:64", "torus:8x8", "iwarp:8x8", "paragon:8x8", "sp2:64", "cs2:64", "hypercube:6",
           "ksr1", "proteus")
ASIDE = ("ksr1", "proteus")  # the issue's goals leave these two machines aside
KINDS = (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE, Kind.CSHIFT, Kind.PERMUTATION, Kind.BROADCAST,
         Kind.SCATTER, Kind.GATHER, Kind.ALLGATHER, Kind.REDUCE, Kind.ALLREDUCE)
SIZES = "8,128,2K,16K,128K,1M"
QUICK = {"targets": "ideal:64,torus:8x8,paragon:8x8,hypercube:6", "sizes": "8,2K,64K",
         "smpi_targets": "hypercube:6", "smpi_sizes": "8,256,64K"}
MAX_BYTES = {"ksr1": 2048}  # bench/regret.py: the KSR-1's simulator moves every subpage
SMPI_TARGETS = ("sp2:32", "paragon:8x8", "iwarp:8x8", "hypercube:6")  # bench/collectives.py's
SMPI_KINDS = (Kind.ALLTOALL, Kind.BROADCAST, Kind.ALLGATHER, Kind.ALLREDUCE)
SMPI_SIZES = {"alltoall": "8,64,256,2K,64K", "other": "8,2K,64K,1M"}
LOW = 0.5  # the issue's floor for every case (ksr1 and proteus aside)

# The algorithm names per kind on main before issue 27 (every built-in target's, by
# `Target.algorithms(kind)`), with Bokhari's `multiphase:` partitions: "previous best" is the
# best of these, so the grid shows what the algorithms added since then gain.
PREVIOUS = {
    "alltoall": ("direct", "message-passing", "message-passing-random", "phased", "phased-global",
                 "proteus-group", "reads", "reads-prefetch", "standard", "store-forward", "two-stage"),
    "alltoallv": ("direct", "message-passing", "message-passing-random", "phased", "phased-global",
                  "proteus-group", "reads", "reads-prefetch", "store-forward", "two-stage"),
    "sparse": ("direct", "message-passing", "message-passing-random", "phased", "phased-global",
               "proteus-group", "reads", "reads-prefetch", "store-forward", "two-stage"),
    "cshift": ("cshift", "cshift-prefetch", "direct", "message-passing", "message-passing-random",
               "phased", "phased-global", "store-forward", "two-stage"),
    "permutation": ("direct", "message-passing", "message-passing-random", "phased", "phased-global",
                    "reads", "reads-prefetch", "store-forward", "two-stage"),
    "broadcast": ("binomial", "broadcast", "broadcast-poststore", "broadcast-prefetch", "chain",
                  "dim-ordered", "direct", "linear", "scatter-allgather"),
    "scatter": ("binomial", "direct", "linear", "reads", "reads-prefetch"),
    "gather": ("binomial", "direct", "gather-seq", "gather-seq-prefetch", "gather-tree",
               "gather-tree-prefetch", "linear"),
    "allgather": ("allgather-cshift", "allgather-cshift-prefetch", "allgather-seq-bcast",
                  "allgather-seq-bcast-prefetch", "allgather-tree-bcast",
                  "allgather-tree-bcast-prefetch", "binomial", "bruck", "dim-ordered", "direct",
                  "linear", "recursive-doubling", "ring"),
    "reduce": ("binomial", "chain", "direct", "gather-seq", "gather-seq-prefetch", "gather-tree",
               "gather-tree-prefetch", "linear", "reduce-scatter-gather"),
    # Not "ring": main's passed whole partials round the ring; the name is now the textbook
    # reduce-scatter + allgather ring (compiler/library/allreduce.py), an algorithm main lacked.
    "allreduce": ("binomial", "bruck", "dim-ordered", "direct", "gather-seq-bcast",
                  "gather-seq-bcast-prefetch", "gather-tree-bcast", "gather-tree-bcast-prefetch",
                  "linear", "recursive-doubling"),
}


def previous(kind: str, algorithm: str) -> bool:
    return algorithm in PREVIOUS[kind] or algorithm.startswith("multiphase:")


@dataclass(frozen=True)
class Point:
    """One case of the grid."""

    target: str
    kind: str
    size_bytes: int


def points(targets: list[str], kinds: list[Kind], sizes: list[int]) -> list[Point]:
    return [Point(t, k, s) for t in targets for k in kinds for s in sizes]


def collective(machine: Target, kind: Kind, size: int) -> Collective:
    """The case's collective, compiled with the first algorithm that lowers it."""
    n = machine.nnodes
    if kind == Kind.ALLTOALLV:
        return recognize(0, varied_matrix(n, size, variance=0.5), "A", "B", 1)
    if kind == Kind.SPARSE:  # every node to the first eighth (bench/regret.py)
        receivers = max(n // 8, 1)
        source = (f"processors P({n})\nprocessors Q({receivers})\n"
                  f"array A({n}, {receivers * size}) of byte distribute (BLOCK, *) onto P\n"
                  f"array B({n}, {receivers * size}) of byte distribute (*, BLOCK) onto Q\nB = A\n")
    else:
        source = kind_program(kind, n, size)
    failure = PhalanxError(Diagnostic(f"no algorithm lowers a {kind} on {machine.spec}"))
    for algorithm in machine.algorithms(kind):
        try:
            return compile_program(source, target=machine.spec, algorithm=f"{kind}={algorithm}",
                                   file=f"<{kind} {size} B>").collectives[0]
        except PhalanxError as exc:
            failure = exc
    raise failure


def measure(point: Point, *, time_limit_s: float | None = None) -> dict[str, Any]:
    """Every algorithm of one case, timed; the best, the previous best, the bound
    (`time_limit_s` is runtime/parallel.py's per-point limit; the benchmark sets none)."""
    assert time_limit_s is None
    start = time.perf_counter()
    machine = resolve(point.target)
    row: dict[str, Any] = {"target": point.target, "kind": point.kind, "size_bytes": point.size_bytes,
                           "nodes": machine.nnodes}
    cap = MAX_BYTES.get(point.target.partition(":")[0])
    if cap is not None and point.size_bytes > cap:
        return row | {"skipped": f"above {cap} B: the KSR-1's simulator moves every subpage"}
    try:
        coll = collective(machine, point.kind, point.size_bytes)
    except PhalanxError as exc:
        return row | {"not_runnable": exc.diagnostic.message.splitlines()[0]}
    bound_s, binds = machine.binding_bound(coll)
    bound_s = float(bound_s)  # a target may compute it in numpy
    times: dict[str, float] = {}
    refused: dict[str, str] = {}
    for algorithm, unmet in machine.candidates(coll):
        if unmet is not None:
            refused[algorithm] = unmet
            continue
        try:
            times[algorithm] = float(simulated_time_s(machine, coll, algorithm))
        except PhalanxError as exc:
            refused[algorithm] = exc.diagnostic.message.splitlines()[0]
    row |= {"recognized": coll.kind, "bound_s": bound_s, "binds": binds, "times_s": times,
            "refused": refused}
    if times:
        best = min(times, key=times.get)
        row |= {"best": best, "best_s": times[best], "efficiency": bound_s / times[best]}
    fixed_s = machine.fixed_routes_bound_s(coll)
    direct = {a: t for a, t in times.items()
              if fixed_s and machine.schedule_for(coll, a).direct_messages()}
    if fixed_s and direct:  # schedules of direct messages against their own, larger bound
        was = min(direct, key=direct.get)
        direct_bound_s = max(bound_s, float(fixed_s))
        row |= {"direct_bound_s": direct_bound_s, "direct_best": was,
                "direct_efficiency": direct_bound_s / direct[was]}
    earlier = {a: t for a, t in times.items() if previous(point.kind, a)}
    if earlier:
        was = min(earlier, key=earlier.get)
        row |= {"previous_best": was, "previous_s": earlier[was],
                "previous_efficiency": bound_s / earlier[was]}
    return row | {"wall_s": round(time.perf_counter() - start, 2)}


def measure_grid(grid: list[Point], options: ParallelOptions,
                 on_done: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """`measure` over the points, in the grid's order, on runtime/parallel.py's path."""
    tasks = [Task({"point": "efficiency", "target": p.target, "kind": p.kind, "size_bytes": p.size_bytes},
                  measure, (p,), f"{p.target} {p.kind} {p.size_bytes} B", cost_hint=p.size_bytes)
             for p in grid]
    outcomes = run_points(tasks, options, on_done=on_done)
    bad = [(task.label, o.error) for task, o in zip(tasks, outcomes) if o.status != Status.OK]
    if bad:
        raise SystemExit(f"efficiency: {len(bad)} cases did not run, e.g. {bad[0][0]}: {bad[0][1]}")
    return [o.row for o in outcomes if o.row is not None]


def summary(rows: list[dict[str, Any]], smpi: list[dict[str, Any]]) -> dict[str, Any]:
    """Cases below LOW, the geometric mean and the binding bounds: all cases, and without
    the KSR-1 and Proteus (the issue's goals); the SimGrid cases where `auto` is slower than
    SMPI's best."""
    def of(chosen: list[dict[str, Any]], key: str) -> dict[str, Any]:
        effs = [r[key] for r in chosen if key in r]
        if not effs:
            return {"cases": 0}
        return {"cases": len(effs), "below_half": sum(e < LOW for e in effs),
                "above_one": sum(e > 1 + 1e-9 for e in effs),
                "geomean": math.exp(sum(math.log(e) for e in effs) / len(effs)), "min": min(effs)}

    def low(chosen: list[dict[str, Any]]) -> list[str]:
        return [f"{r['target']} {r['kind']} {r['size_bytes']} B: {r['best']} {r['efficiency']:.2f} "
                f"({r['binds']})" for r in sorted(chosen, key=order) if r["efficiency"] < LOW]

    timed = [r for r in rows if "efficiency" in r]
    main = [r for r in timed if r["target"].partition(":")[0] not in ASIDE]
    return {"all": of(timed, "efficiency"), "without_ksr1_proteus": of(main, "efficiency"),
            "previous_without_ksr1_proteus": of(main, "previous_efficiency"),
            "binds": dict(Counter(r["binds"] for r in timed).most_common()),
            "below_half": low(main), "below_half_ksr1_proteus": low([r for r in timed if r not in main]),
            "smpi_above_one": [f"{r['target']} {r['kind']} {r['size_bytes']} B: auto "
                               f"{r['auto_simgrid']['algorithm']} {r['auto_over_smpi_best']:.3f}x "
                               f"SMPI's {r['smpi_best']['algorithm']}"
                               for r in sorted(smpi, key=order) if r.get("auto_over_smpi_best", 0) > 1]}


def planned() -> dict[str, set[tuple[str, str, int]]]:
    """The cases the issue asks for: the grid, and the SimGrid comparison's defaults."""
    sizes = {k: parse_sizes(v) for k, v in SMPI_SIZES.items()}
    return {"grid": {(p.target, p.kind, p.size_bytes)
                     for p in points(list(TARGETS), list(KINDS), parse_sizes(SIZES))},
            "smpi": {(t, k, s) for t in SMPI_TARGETS for k in SMPI_KINDS
                     for s in sizes["alltoall" if k == "alltoall" else "other"]}}


def load_collectives_bench() -> Any:
    """bench/collectives.py (SMPI's runs and `auto` on SimGrid), a script beside this one."""
    spec = importlib.util.spec_from_file_location("bench_collectives", HERE / "collectives.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def delivered_bytes(kind: str, nnodes: int, size: int) -> int:
    """Bytes the nodes together receive (the built-in run beside SimGrid's holds them all)."""
    return nnodes * nnodes * size if kind in (Kind.ALLTOALL, Kind.ALLGATHER) else nnodes * size


def smpi_row(bench: Any, smpi: Any, target: str, kind: str, size: int) -> dict[str, Any]:
    """`auto` on SimGrid and every SMPI algorithm of one case; a case whose data would not fit
    bench/collectives.py's memory cap is recorded as skipped, neither run."""
    row: dict[str, Any] = {"target": target, "kind": kind, "size_bytes": size}
    total = delivered_bytes(kind, resolve(target).nnodes, size)
    if total > bench.MAX_PHALANX_BYTES:
        return row | {"skipped": f"{total} bytes delivered in all > {bench.MAX_PHALANX_BYTES} "
                                 "(bench/collectives.py's cap: the run beside SimGrid's holds every byte)"}
    auto = bench.simgrid_auto(target, kind, size)
    runs = [smpi.run(target, kind, a, size) for a in bench.SMPI_ALGORITHMS[kind]]
    row |= {"auto_simgrid": auto, "smpi": runs, "smpi_best": bench.best(runs)}
    if row["smpi_best"] and "time_s" in auto:
        row["auto_over_smpi_best"] = auto["time_s"] / row["smpi_best"]["time_s"]
    return row


def smpi_rows(targets: list[str], sizes: dict[str, list[int]], kinds: list[str], timeout_s: float,
              on_row: Callable[[list[dict[str, Any]]], None] | None = None) -> list[dict[str, Any]]:
    """`auto` on SimGrid against SMPI's best, per target x kind x size; `on_row(rows so far)`
    after each."""
    bench = load_collectives_bench()
    rows = []
    with tempfile.TemporaryDirectory(prefix="phalanx-bench-efficiency-") as tmp:
        smpi = bench.Smpi(Path(tmp), timeout_s)
        for target in targets:
            for kind in kinds:
                for size in sizes["alltoall" if kind == Kind.ALLTOALL else "other"]:
                    t0 = time.perf_counter()
                    row = smpi_row(bench, smpi, target, kind, size)
                    row["wall_s"] = round(time.perf_counter() - t0, 2)
                    print(f"simgrid {target} {kind} {size} B: auto "
                          f"{row.get('auto_simgrid', {}).get('algorithm')}, SMPI best "
                          f"{(row.get('smpi_best') or {}).get('algorithm')}, ratio "
                          f"{row.get('auto_over_smpi_best')} {row.get('skipped', '')}", flush=True)
                    rows.append(row)
                    if on_row is not None:
                        on_row(rows)
    return rows


GENERATED = ("<!-- generated by bench/efficiency.py from bench/results_efficiency.json: begin -->",
             "<!-- generated by bench/efficiency.py: end (the hand-written part follows) -->")


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}"


def completeness(report: dict[str, Any]) -> dict[str, int]:
    """Cases of the planned grid measured, skipped (the KSR-1 above its cap), not runnable and
    not yet measured; SimGrid cases measured of those planned."""
    plan = planned()
    rows = [r for r in report["rows"] if key(r) in plan["grid"]]
    smpi = [r for r in report["smpi"] if key(r) in plan["smpi"]]
    return {"planned": len(plan["grid"]), "timed": sum("efficiency" in r for r in rows),
            "skipped": sum("skipped" in r for r in rows),
            "not_runnable": sum("not_runnable" in r for r in rows),
            "not_measured": len(plan["grid"]) - len(rows), "outside_plan": len(report["rows"]) - len(rows),
            "smpi_planned": len(plan["smpi"]), "smpi_measured": sum("skipped" not in r for r in smpi),
            "smpi_skipped": sum("skipped" in r for r in smpi),
            "smpi_outside_plan": len(report["smpi"]) - len(smpi)}


def markdown(report: dict[str, Any]) -> str:
    """The generated part of docs/efficiency.md: completeness, summary, the cases below LOW,
    the SimGrid cases above 1.0x, the SimGrid table and the grid table."""
    s, run, c = report["summary"], report["run"], completeness(report)
    lines = [GENERATED[0], "",
             f"Measured on main at {', '.join(run['commits']) or 'an unrecorded commit'}, "
             f"{run['dates']}, in {len(report['runs'])} runs of bench/efficiency.py "
             f"({run['wall_s']} s wall in all; each run's command and wall time are in "
             "bench/results_efficiency.json `runs`). efficiency = lower bound (docs/bounds.md) / "
             "simulated time of the best algorithm; `previous` is the best of the algorithm names "
             "main had before issue 27. Times in ms.", "",
             f"**Grid: {c['timed']} of {c['planned']} planned cases timed** (every target x every "
             f"kind x {SIZES} B), {c['skipped']} skipped by design (the KSR-1 above "
             f"{MAX_BYTES['ksr1']} B), {c['not_runnable']} not runnable, {c['not_measured']} not "
             f"measured yet" + (f"; {c['outside_plan']} more outside the plan" if c["outside_plan"]
                                else "") + ". "
             f"**SimGrid: {c['smpi_measured']} of {c['smpi_planned']} planned cases measured**, "
             f"{c['smpi_skipped']} skipped (memory)"
             + (f" ({c['smpi_outside_plan']} more outside the plan)" if c["smpi_outside_plan"] else "")
             + ".", "", "| | cases | below 0.5 | above 1 | geometric mean | min |",
             "|---|---|---|---|---|---|"]
    for name in ("without_ksr1_proteus", "previous_without_ksr1_proteus", "all"):
        g = s[name]
        if g["cases"]:
            lines.append(f"| {name.replace('_', ' ')} | {g['cases']} | {g['below_half']} | "
                         f"{g['above_one']} | {g['geomean']:.3f} | {g['min']:.3f} |")
    lines += ["", "Binding bounds: " + (", ".join(f"{k} {v}" for k, v in s["binds"].items()) or "none yet")
              + ".", "",
              f"### Every case below {LOW} ({len(s['below_half'])}, ksr1 and proteus aside)", ""]
    lines += [f"- {case}" for case in s["below_half"]] or ["None."]
    lines += ["", f"KSR-1 and Proteus below {LOW} ({len(s['below_half_ksr1_proteus'])}): "
              + ("; ".join(s["below_half_ksr1_proteus"]) or "none") + ".", ""]
    if report["smpi"]:
        lines += [f"### `auto` on SimGrid above 1.0x SMPI's best ({len(s['smpi_above_one'])})", ""]
        lines += [f"- {case}" for case in s["smpi_above_one"]] or ["None."]
        lines += ["", "### `auto` on SimGrid against SMPI's best, same platform", "",
                  "| target | kind | size B | auto on SimGrid | SMPI best | auto / SMPI best |",
                  "|---|---|---|---|---|---|"]
        for r in report["smpi"]:
            if "skipped" in r:
                lines.append(f"| {r['target']} | {r['kind']} | {r['size_bytes']} | {r['skipped']} | | |")
                continue
            a, b = r["auto_simgrid"], r.get("smpi_best") or {}
            ratio = r.get("auto_over_smpi_best")
            lines.append(f"| {r['target']} | {r['kind']} | {r['size_bytes']} | "
                         f"{a.get('algorithm', a.get('error', '-'))} "
                         f"{ms(a['time_s']) if 'time_s' in a else ''} | {b.get('algorithm', '-')} "
                         f"{ms(b['time_s']) if 'time_s' in b else ''} | "
                         f"{f'{ratio:.3f}' if ratio else '-'} |")
    lines += ["", "### The grid", "", "`direct` (where the target has fixed routes): the best schedule "
              "of direct messages against max(bound, busiest link under the fixed routes), a bound "
              "for direct messages only (docs/bounds.md, \"Fixed routes\")."]
    for target in dict.fromkeys(r["target"] for r in report["rows"]):
        lines += ["", f"#### {target}", "", "| kind | size B | best | time | bound (binds) | "
                  "efficiency | previous best | previous eff. | direct: best, bound, eff. |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in (r for r in report["rows"] if r["target"] == target):
            head = f"| {r['kind']} | {r['size_bytes']} |"
            if "efficiency" not in r:
                why = r.get("skipped") or r.get("not_runnable") or "no algorithm ran"
                lines.append(f"{head} {why} | | | | | | |")
                continue
            direct = (f"{r['direct_best']}, {ms(r['direct_bound_s'])}, {r['direct_efficiency']:.3f}"
                      if "direct_bound_s" in r else "-")
            was = (f"{r['previous_best']} | {r['previous_efficiency']:.3f}" if "previous_best" in r
                   else "- | -")
            lines.append(f"{head} {r['best']} | {ms(r['best_s'])} | {ms(r['bound_s'])} ({r['binds']}) | "
                         f"{r['efficiency']:.3f} | {was} | {direct} |")
    return "\n".join([*lines, "", GENERATED[1]]) + "\n"


def write_generated(path: Path, generated: str) -> None:
    """Replace the generated part of `path`, keeping what is around it; a new file is the
    generated part alone. A file without the markers is refused (it would be overwritten)."""
    if not path.exists():
        path.write_text(generated)
        return
    text = path.read_text()
    head, begin, rest = text.partition(GENERATED[0])
    _, end, tail = rest.partition(GENERATED[1])
    if not (begin and end):
        raise SystemExit(f"efficiency: {path} has no generated part (the lines '{GENERATED[0]}' and "
                         f"'{GENERATED[1]}'); add them where the tables go, or give --table '' "
                         "(no table) or a new file")
    path.write_text(head + generated.rstrip("\n") + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--sizes", default=SIZES, help="bytes, K = 1024, M = 1024^2")
    ap.add_argument("--quick", action="store_true",
                    help=f"targets {QUICK['targets']}, sizes {QUICK['sizes']}; SimGrid on "
                         f"{QUICK['smpi_targets']} at {QUICK['smpi_sizes']}")
    ap.add_argument("--no-smpi", action="store_true", help="the grid only")
    ap.add_argument("--no-grid", action="store_true", help="the SimGrid comparison only")
    ap.add_argument("--smpi-targets", default=",".join(SMPI_TARGETS))
    ap.add_argument("--smpi-sizes", default=None, help="sizes of every SimGrid kind "
                    f"(default: alltoall {SMPI_SIZES['alltoall']}, others {SMPI_SIZES['other']})")
    ap.add_argument("--smpi-timeout", type=float, default=120.0, help="seconds per smpirun")
    ap.add_argument("--out", default=str(RESULTS), help="the results file (merged into)")
    ap.add_argument("--table", default=str(TABLE),
                    help="the markdown file whose generated part is written from it ('': none)")
    ap.add_argument("--workers", type=int, default=1, help="local processes (1: in this one)")
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask cluster")
    args = ap.parse_args(argv)
    paths = (Path(args.out), Path(args.table) if args.table else None)
    if args.quick:
        args.targets, args.sizes = QUICK["targets"], QUICK["sizes"]
        args.smpi_targets, args.smpi_sizes = QUICK["smpi_targets"], QUICK["smpi_sizes"]
    targets = [t for t in args.targets.split(",") if t]
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    kinds = [Kind(k) for k in kinds]
    start = time.perf_counter()
    command = "bench/efficiency.py " + " ".join(sys.argv[1:] if argv is None else argv)
    grid = points(targets, kinds, parse_sizes(args.sizes)) if not args.no_grid else []
    rows: list[dict[str, Any]] = []
    options = ParallelOptions(workers=args.workers, scheduler=args.scheduler)
    for target in dict.fromkeys(p.target for p in grid):  # a target at a time: a long run keeps it
        rows += measure_grid([p for p in grid if p.target == target], options)
        for row in rows[-sum(p.target == target for p in grid):]:
            print(f"{row['target']} {row['kind']} {row['size_bytes']} B: {row.get('best')} "
                  f"eff {row.get('efficiency', float('nan')):.3f} ({row.get('binds')}), previous "
                  f"{row.get('previous_best')} {row.get('previous_efficiency', float('nan')):.3f}, "
                  f"direct {row.get('direct_best')} {row.get('direct_efficiency', float('nan')):.3f} "
                  f"[{row.get('wall_s')} s]", flush=True)
        save(rows, [], command, start, *paths)
    smpi: list[dict[str, Any]] = []
    missing = None if args.no_smpi else simgrid_missing()
    if missing:
        print(f"SimGrid unavailable, no SMPI comparison: {missing}", file=sys.stderr)
    elif not args.no_smpi:
        sizes = ({"alltoall": parse_sizes(args.smpi_sizes), "other": parse_sizes(args.smpi_sizes)}
                 if args.smpi_sizes else {k: parse_sizes(v) for k, v in SMPI_SIZES.items()})
        smpi = smpi_rows([t for t in args.smpi_targets.split(",") if t], sizes,
                         [k for k in SMPI_KINDS if k in kinds], args.smpi_timeout,
                         lambda done: save(rows, done, command, start, *paths))
    report = save(rows, smpi, command, start, *paths)
    s = report["summary"]["without_ksr1_proteus"]
    print(f"wrote {paths[0]}" + (f" and {paths[1]}" if paths[1] else "")
          + f": {s.get('cases')} cases (ksr1, proteus aside), "
          f"{s.get('below_half')} below {LOW}, geometric mean {s.get('geomean', float('nan')):.3f}")
    return 0


def key(row: dict[str, Any]) -> tuple[str, str, int]:
    return row["target"], row["kind"], row["size_bytes"]


def commit() -> str | None:
    """The commit of the checkout this script runs from (None outside a git checkout)."""
    done = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def save(rows: list[dict[str, Any]], smpi: list[dict[str, Any]], command: str, start: float,
         results: Path = RESULTS, table: Path | None = TABLE) -> dict[str, Any]:
    """Merge into the results file (a case measured again replaces its row; runs of parts of
    the grid add up) and write the table's generated part from everything it holds. A call
    that measured nothing adds no run: it regenerates the table."""
    old = json.loads(results.read_text()) if results.exists() else {}
    merged = {key(r): r for r in old.get("rows", [])} | {key(r): r for r in rows}
    merged_smpi = {key(r): r for r in old.get("smpi", [])} | {key(r): r for r in smpi}
    runs = [r for r in old.get("runs", []) if r["command"] != command]
    if rows or smpi:
        runs.append({"command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "commit": commit(), "wall_s": round(time.perf_counter() - start, 1)})
    dates = sorted({r["date"][:10] for r in runs})
    report = {"run": {"commits": sorted({r["commit"] for r in runs if r["commit"]}),
                      "dates": " to ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "-",
                      "wall_s": round(sum(r["wall_s"] for r in runs), 1),
                      "machine": {"arch": host_platform.machine(),
                                  "python": host_platform.python_version()}},
              "runs": runs, "previous_algorithms": PREVIOUS,
              "summary": summary(list(merged.values()), list(merged_smpi.values())),
              "rows": sorted(merged.values(), key=order), "smpi": sorted(merged_smpi.values(), key=order)}
    report["complete"] = completeness(report)
    results.write_text(json.dumps(report, indent=1) + "\n")
    if table is not None:
        write_generated(table, markdown(report))
    return report


def order(row: dict[str, Any]) -> tuple[int, int, int]:
    rank = {t: i for i, t in enumerate((*TARGETS, *SMPI_TARGETS))} | {k: i for i, k in enumerate(KINDS)}
    return rank.get(row["target"], 99), rank.get(row["kind"], 99), row["size_bytes"]


if __name__ == "__main__":
    sys.exit(main())
