"""The simulation engine: the Python engine and the native event core side by side, and SMPI (issue 30).

Writes bench/results_engine.json and the measured table of docs/engine.md. For each row (a
target, a collective kind, all-to-all unless the row says otherwise, an algorithm and a block
size), each engine runs in a fresh child process
(`--point`): the program is compiled (`compile_s`), then its plan is run with real payloads,
drawn, moved and checked as `phalanx run` does (`checked`), and once more without payloads, as
`--cost simulate` and the regret benchmark time candidates (`timing`: runtime/timing.py's
TimingData; the engine's own speed). `run_s` is runtime/simulate.py run_plan (and the data
check). The child reports the events, events a second (of `run_s`), the simulated time and
whether the data verified; its peak memory (`maxrss_MB`, compile and run together) is what
/usr/bin/time reports for it, and `compile_maxrss_MB` the peak when the compile was done (the
run's own arrays come on top of what the compile leaves). `over_arrays_and_plan` is issue 30's
memory figure (goal 1.3x): the peak less the interpreter's own resident memory before the
compile (`imported_MB`, read once the modules that the compile and the run import on first use
are imported: their code is the interpreter's, not the program's data; imports only, no call
that makes state; `imported_later` lists any module imported after it), over the program's
arrays (`arrays_MB`, as declared) plus the plan (`plan_MB`, the resident memory the compile
adds). Both engines must give the same simulated time (rel 1e-9); each row says the speed-up
of the run (Python run_s / native run_s) in both modes.

Where a row names an SMPI algorithm and smpirun is installed, SMPI runs MPI_Alltoall with that
algorithm on the target's SimGrid platform (runtime/backends/platforms.py), as
bench/collectives.py does, under /usr/bin/time for its wall time and peak memory.

Rows whose Python run takes minutes (the issue's ideal:1024 job: 109 s, 2.3 GB) run on the
Python engine only with --all; every point has a timeout and a point past it is recorded as such.
(The default SP2, whose adapter spreads a pair's packets over its routes round robin, runs
natively since the native run works out each message's turn from the plan's order,
runtime/round_robin.py.) (The torus's `phased` and
`message-passing` run natively since the core holds the switch's gates and the library's slots
and packing, runtime/engine_core wormhole.rs and gates.rs; the phased rows turn the network's
fast path off, `fast=False`, so that both engines run them event by event.) (torus:64x64's
`direct`, once out of reach at about 37 GB of per-message programs, runs since the core makes a
message's ops from the network's program shape, runtime/engine_core shapes.rs; its `phased`,
once estimated at 13 GB to compile and 20 GB to run, compiles in 3.3 GB and runs in 11 GB
since its construction is built in blocks of phases and a phase's and node's slot arrays
are the core's uint32, docs/engine.md.) Each point
also reports the CPU time of its compile and run (`compile_cpu_s`, `run_cpu_s`): the machine is
shared, and wall times move with its load.

`--only NAME` re-measures the rows whose name contains NAME; they replace their rows of the
last results (each row says when it was measured, `measured_utc`), the others stay.

Run: .venv/bin/python bench/engine.py [--all] [--only NAME] [--timeout S] [--no-smpi] [--no-python]
     [--mode timing|checked]
"""

from __future__ import annotations

import argparse
import json
import platform as host_platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phalanx.compiler.kind import Kind

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results_engine.json"
DOC = HERE.parent / "docs" / "engine.md"
BEGIN, END = "<!-- bench/engine.py: begin -->", "<!-- bench/engine.py: end -->"
TIMEOUT_S = 600.0

@dataclass(frozen=True)
class Row:
    name: str
    target: str
    algorithm: str
    block_bytes: int
    python: bool = True  # run the Python engine without --all
    smpi: str | None = None  # SMPI's MPI_Alltoall algorithm on the same platform
    # the network's vectorized fast path allowed (runtime/fastpath.py; a phased all-to-all on an
    # n x n torus, n a multiple of 8, has one): off, the engines run the plan event by event
    fast: bool = True
    kind: Kind = Kind.ALLTOALL  # the one statement's collective (runtime/sweep.py kind_program)


ROWS = (
    Row("ideal:256 all-to-all, 128 B blocks", "ideal:256", "direct", 128),
    Row("paragon:16x16 pairwise all-to-all, 1 KB blocks", "paragon:16x16", "direct", 1024, smpi="pair"),
    Row("paragon:16x16 pairwise all-to-all, 16 KB blocks", "paragon:16x16", "direct", 16384,
        python=False, smpi="pair"),
    Row("paragon:8x8 multiphase all-to-all, 1 KB blocks", "paragon:8x8", "multiphase:3,3", 1024),
    Row("cs2:64 all-to-all, 1 KB blocks", "cs2:64", "direct", 1024, smpi="pair"),
    Row("hypercube:6 all-to-all, 1 KB blocks", "hypercube:6", "direct", 1024),
    Row("ideal:1024 all-to-all, 128 B blocks (1M messages)", "ideal:1024", "direct", 128, python=False),
    Row("torus:16x16 pairwise all-to-all, 16 KB blocks", "torus:16x16", "direct", 16384, smpi="pair"),
    Row("torus:16x16 pairwise all-to-all, 1 KB blocks", "torus:16x16", "direct", 1024, smpi="pair"),
    Row("torus:16x16 phased all-to-all, 8 B blocks", "torus:16x16", "phased", 8, fast=False),
    Row("torus:16x16 message-passing all-to-all, 8 B blocks", "torus:16x16", "message-passing", 8),
    # issue 30's scale rows: 4096 nodes, the torus's own all-to-alls, the Paragon's multiphase
    # exchange and the SP2 at its largest configuration (seed 003)
    Row("ideal:4096 all-to-all, 8 B blocks (16.8M messages)", "ideal:4096", "direct", 8, python=False,
        smpi="pair"),
    Row("ideal:2048 all-to-all, 8 B blocks (4.2M messages)", "ideal:2048", "direct", 8, python=False),
    Row("torus:32x32 pairwise all-to-all, 8 B blocks", "torus:32x32", "direct", 8, python=False,
        smpi="pair"),
    Row("torus:32x32 phased all-to-all, 8 B blocks", "torus:32x32", "phased", 8, python=False, fast=False),
    Row("torus:32x32 message-passing all-to-all, 8 B blocks", "torus:32x32", "message-passing", 8,
        python=False),
    Row("torus:64x64 pairwise all-to-all, 8 B blocks", "torus:64x64", "direct", 8, python=False),
    Row("torus:64x64 phased all-to-all, 8 B blocks", "torus:64x64", "phased", 8, python=False, fast=False),
    Row("torus:64x64 message-passing all-to-all, 8 B blocks", "torus:64x64", "message-passing", 8,
        python=False),
    Row("paragon:32x32 multiphase all-to-all, 1 KB blocks", "paragon:32x32", "multiphase:5,5", 1024,
        python=False),
    # the default SP2 adapter spreads a pair's packets over its 4 routes round robin
    Row("sp2:512 all-to-all, 1 KB blocks", "sp2:512", "direct", 1024, smpi="pair"),
    # eager phases (a node's sends stream on into its next phase): issue 27's best reductions on the tori
    Row("torus:8x8 eager-cut-halving allreduce, 16 KB partials", "torus:8x8", "eager-cut-halving", 16384,
        kind=Kind.ALLREDUCE),
    Row("torus:16x16 bidirectional-rings reduce, 16 KB partials", "torus:16x16", "bidirectional-rings",
        16384, kind=Kind.REDUCE),
)


def point(target: str, algorithm: str, block_bytes: int, engine: str, checked: bool,
          fast: bool = True, kind: Kind = Kind.ALLTOALL) -> dict[str, Any]:
    """One run in this process (the child of `--point`); `checked`: with real payloads, else
    without (TimingData); `fast`: the network's fast path allowed (Row.fast); `kind`: Row.kind."""
    import numpy as np

    import phalanx
    from phalanx.compiler.driver import compile_program
    from phalanx.compiler.target import resolve
    from phalanx.runtime.data import Payloads, build_data
    from phalanx.runtime.simulate import run_plan
    from phalanx.runtime.sweep import kind_program
    from phalanx.runtime.timing import REDUCTIONS, TimingData

    phalanx.register_all()
    # Code is not data: the modules the compile and the run import on first use (the checker
    # and the program choice the compile imports, numpy.random for the payloads, numpy.ma that
    # np.unique imports) are imported here, before `imported_MB` is read. Imports only: no
    # call that makes a program's, a plan's or a run's state. `imported_later` lists any
    # module imported after (its code then counts against the figure).
    import numpy.ma  # noqa: F401
    import numpy.random  # noqa: F401

    import phalanx.compiler.checker  # noqa: F401
    import phalanx.runtime.progchoice  # noqa: F401
    started, started_cpu = time.perf_counter(), time.process_time()
    imported_MB = resident_MB()  # the interpreter and the modules
    imported = set(sys.modules)
    source = kind_program(kind, resolve(target).nnodes, block_bytes)
    compiled = compile_program(source, target=target, algorithm=algorithm, cost="closed-form")
    compiled_at, compiled_cpu = time.perf_counter(), time.process_time()
    compile_maxrss_MB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB
    plan_MB = resident_MB() - imported_MB  # what the compile leaves: the plan (and the IR)
    arrays_MB = sum(a.size * a.itemsize for a in compiled.program.arrays.values()) / 2**20
    rng = np.random.default_rng(0)
    stmt, kind = compiled.communications[0], compiled.collectives[0].kind
    commset = compiled.commsets[0]  # (the compile's communication set, as checked_run takes it)
    # without payloads a reduction's partials still combine (runtime/timing.py schedule_time_s)
    data = Payloads(lambda _: build_data(stmt, rng, {}, kind, commset=commset) if checked
                    else TimingData(kind in REDUCTIONS, compiled.collectives[0].element_bytes),
                    range(compiled.plan.run_count))
    execution, _ = run_plan(compiled.target, compiled.plan, data, engine_choice=engine, fast=fast)
    problems = data.checked()
    done, done_cpu = time.perf_counter(), time.process_time()
    run_s = done - compiled_at
    messages = sum(network_transfers(s) for s in compiled.plan.schedules())
    return {"engine": engine, "checked": checked, "compile_s": round(compiled_at - started, 3),
            "run_s": round(run_s, 3),
            "end_to_end_s": round(done - started, 3), "compile_cpu_s": round(compiled_cpu - started_cpu, 3),
            "run_cpu_s": round(done_cpu - compiled_cpu, 3), "compile_maxrss_MB": round(compile_maxrss_MB),
            "imported_MB": round(imported_MB, 3), "plan_MB": round(plan_MB, 3),
            "arrays_MB": round(arrays_MB, 3),
            "events": execution.events,
            "events_per_s": round(execution.events / run_s), "messages": messages,
            "simulated_s": execution.total_time_s, "verified": not any(problems.values()),
            "imported_later": sorted(set(sys.modules) - imported)}


def resident_MB() -> float:
    """The process's resident memory now (Linux: /proc/self/status VmRSS, kB)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def network_transfers(schedule: Any) -> int:
    """The schedule's transfers between two nodes, from its table where the compiler built it
    from one (no Transfer objects made after the run; 16.8M of them at 4096 nodes)."""
    import numpy as np

    from phalanx.compiler.columns import FIELDS, known_columns

    known = known_columns(schedule.phases)
    if known is None:
        return sum(1 for p in schedule.phases for t in p.sends if t.src != t.dst)
    rows = np.frombuffer(known[0], "<i8").reshape(-1, FIELDS)
    return int(np.count_nonzero(rows[:, 0] != rows[:, 1]))


def measured(cmd: list[str], timeout_s: float) -> tuple[str, float | None, float]:
    """(stdout, peak memory in MB, wall seconds) of `cmd` under /usr/bin/time; memory None on a timeout."""
    started = time.perf_counter()
    try:
        done = subprocess.run(["/usr/bin/time", "-f", "maxrss_kB=%M", *cmd], capture_output=True,
                              text=True, timeout=timeout_s, start_new_session=True)
    except subprocess.TimeoutExpired:
        return "", None, timeout_s
    wall_s = time.perf_counter() - started
    kb = [ln for ln in done.stderr.splitlines() if ln.startswith("maxrss_kB=")]
    if done.returncode != 0 or not kb:
        raise RuntimeError(f"{' '.join(cmd[:4])}...: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return done.stdout, int(kb[-1].split("=")[1]) / 1024, wall_s


def phalanx_point(row: Row, engine: str, checked: bool, timeout_s: float) -> dict[str, Any]:
    args = json.dumps({"target": row.target, "algorithm": row.algorithm, "block_bytes": row.block_bytes,
                       "engine": engine, "checked": checked, "fast": row.fast, "kind": row.kind.value})
    out, maxrss_MB, _ = measured([sys.executable, __file__, "--point", args], timeout_s)
    if maxrss_MB is None:
        return {"engine": engine, "checked": checked, "timeout_s": timeout_s}
    result = {**json.loads(out.strip().splitlines()[-1]), "maxrss_MB": round(maxrss_MB)}
    if checked and result["arrays_MB"] + result["plan_MB"] > 0:  # issue 30 item 3: the peak over
        # the interpreter's own, against the program's arrays plus the plan (the compile's growth)
        result["over_arrays_and_plan"] = round((maxrss_MB - result["imported_MB"])
                                               / (result["arrays_MB"] + result["plan_MB"]), 3)
    return result


def smpi_point(row: Row, work: Path, timeout_s: float) -> dict[str, Any]:
    """SMPI's MPI_Alltoall (`row.smpi`) on the target's platform, with bench/collectives.py's
    executable, platform and configuration."""
    from collectives import Smpi

    from phalanx.runtime.backends.simgrid import CONFIG

    smpi = Smpi(work, timeout_s)
    xml, hosts, overhead, n = smpi.platform(row.target)
    cfg = [*CONFIG, f"smpi/alltoall:{row.smpi}", "smpi/simulate-computation:no",
           f"smpi/os:0:{overhead}:0", f"smpi/ois:0:{overhead}:0", "smpi/or:0:0:0"]
    cmd = ["smpirun", "-np", str(n), "-platform", str(xml), "-hostfile", str(hosts),
           *[f"--cfg={c}" for c in cfg], "--log=root.thres:critical", str(smpi.exe("alltoall")),
           str(row.block_bytes)]
    out, maxrss_MB, wall_s = measured(cmd, timeout_s)
    if maxrss_MB is None:
        return {"algorithm": row.smpi, "timeout_s": timeout_s}
    result = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
    return {"algorithm": row.smpi, "simulated_s": result["time_s"], "verified": result["verified"],
            "wall_s": round(wall_s, 3), "maxrss_MB": round(maxrss_MB)}


def measure(row: Row, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"name": row.name, "target": row.target, "algorithm": row.algorithm,
                           "block_bytes": row.block_bytes}
    for mode, checked in (("timing", False), ("checked", True)):
        if args.mode not in (None, mode):
            out[f"native_{mode}"] = out[f"python_{mode}"] = {"skipped": f"--mode {args.mode}: not measured"}
            continue
        nat = out[f"native_{mode}"] = phalanx_point(row, "native", checked, args.timeout)
        if (row.python or args.all) and not args.no_python:
            py = out[f"python_{mode}"] = phalanx_point(row, "python", checked, args.timeout)
        elif args.no_python:
            py = out[f"python_{mode}"] = {"engine": "python", "skipped": "--no-python"}
        else:
            py = out[f"python_{mode}"] = {"engine": "python", "skipped": "minutes in Python: --all"}
        if "run_s" in py and "run_s" in nat:
            out[f"{mode}_speedup"] = round(py["run_s"] / nat["run_s"], 2)
            out[f"{mode}_same_simulated_time"] = \
                abs(py["simulated_s"] - nat["simulated_s"]) <= 1e-9 * py["simulated_s"]
    nat = out["native_checked"]
    if row.smpi and not args.no_smpi:
        from phalanx.runtime.backends.simgrid import simgrid_missing

        missing = simgrid_missing()
        out["smpi"] = {"skipped": missing} if missing else smpi_point(row, work, args.timeout)
        if "wall_s" in out["smpi"] and "end_to_end_s" in nat:
            out["native_over_smpi_wall"] = round(nat["end_to_end_s"] / out["smpi"]["wall_s"], 3)
    return out


def engine_cell(p: dict[str, Any]) -> str:
    if "skipped" in p:
        return f"not run: {p['skipped']}"
    if "timeout_s" in p:
        return f"timeout {p['timeout_s']:g} s"
    if "run_s" not in p:
        return "-"
    ratio = f" ({p['over_arrays_and_plan']}x arrays + plan)" if "over_arrays_and_plan" in p else ""
    return f"{p['run_s']} s, {p['events_per_s']:,} ev/s, {p['maxrss_MB']} MB{ratio}"


def end_to_end_cell(p: dict[str, Any]) -> str:
    """The point's compile and run in one process: `end to end (compile; the CPU time of
    both)`, the engine named where it is the Python engine (a row the native core cannot
    run). On a shared machine the CPU time is the steadier figure."""
    if "end_to_end_s" not in p:
        return "-"
    engine = " (Python engine)" if p["engine"] == "python" else ""
    cpu = f"; CPU {p['compile_cpu_s'] + p['run_cpu_s']:.3g} s" if "run_cpu_s" in p else ""
    return f"{p['end_to_end_s']} s (compile {p['compile_s']} s{cpu}){engine}"


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| job | messages, events | mode | Python engine: run, events/s, peak | native core: run, "
             "events/s, peak | speed-up | end to end (compile) | SMPI: wall, peak |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = r["name"] + (f" (measured {r['measured_utc']} UTC)" if "measured_utc" in r else "")
        if "out_of_reach" in r:
            lines.append(f"| {name} | | | not run: {r['out_of_reach']} | | | | |")
            continue
        ran = next((r[k] for k in ("native_checked", "native_timing", "python_checked", "python_timing")
                    if "events" in r[k]), {})
        counts = f"{ran['messages']:,}, {ran['events']:,}" if "events" in ran else "-"
        sm = r.get("smpi", {})
        smpi = f"{sm['wall_s']} s, {sm['maxrss_MB']} MB (`{sm['algorithm']}`)" if "wall_s" in sm else \
            f"timeout {sm['timeout_s']:g} s (`{sm['algorithm']}`)" if "timeout_s" in sm else "-"
        for mode in ("timing", "checked"):
            nat = r[f"native_{mode}"]
            end = end_to_end_cell(nat if "end_to_end_s" in nat else r[f"python_{mode}"])
            speedup = f"{r[f'{mode}_speedup']}x" if f"{mode}_speedup" in r else "-"
            when = f" (measured {r[f'{mode}_measured_utc']} UTC)" if f"{mode}_measured_utc" in r else ""
            lines.append(f"| {name if mode == 'timing' else ''} | {counts if mode == 'timing' else ''} "
                         f"| {mode}{when} | {engine_cell(r[f'python_{mode}'])} | {engine_cell(nat)} | "
                         f"{speedup} | {end} | {smpi if mode == 'checked' else ''} |")
    return "\n".join(lines)


def write_doc(rows: list[dict[str, Any]], host: str) -> None:
    text = DOC.read_text()
    body = (f"{BEGIN}\nMeasured by `bench/engine.py` on {host} (bench/results_engine.json); "
            "`run` is the plan's run, compile excluded: `timing` without payloads (the engine alone, as "
            "`--cost simulate` runs candidates), `checked` with its payloads moved and checked; peak is the "
            "process's (compile and run), in parentheses where measured (peak - the interpreter's) / "
            "(the program's arrays + the plan), issue 30's memory figure; speed-up is Python run / "
            "native run.\n\n"
            + table(rows) + f"\n{END}")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    DOC.write_text(text[:start] + body + text[end:])


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's options (tests parse theirs here too, so a new option reaches them)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--point", help=argparse.SUPPRESS)
    parser.add_argument("--all", action="store_true", help="also the Python engine on the big rows")
    parser.add_argument("--only", help="rows whose name contains this")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per point")
    parser.add_argument("--no-smpi", action="store_true")
    parser.add_argument("--no-python", action="store_true", help="the native core and SMPI only")
    parser.add_argument("--mode", choices=("timing", "checked"), help="only this mode")
    return parser.parse_args(argv)


def with_other_mode(result: dict[str, Any], kept: list[dict[str, Any]], mode: str | None) -> dict[str, Any]:
    """A row re-measured in one mode (`--only NAME --mode M`) keeps the other mode's cells of its
    last results, with when they were measured (`<mode>_measured_utc`), so that a long row can
    be measured a mode at a time."""
    last = next((k for k in kept if k["name"] == result["name"]), None)
    if mode is None or last is None:
        return result
    other = "checked" if mode == "timing" else "timing"
    out = dict(result)
    for key in (f"native_{other}", f"python_{other}", f"{other}_speedup", f"{other}_same_simulated_time"):
        if key in last:
            out[key] = last[key]
        else:
            out.pop(key, None)
    out[f"{other}_measured_utc"] = last.get(f"{other}_measured_utc", last.get("measured_utc", "-"))
    out[f"{mode}_measured_utc"] = result["measured_utc"]
    return out


def main() -> None:
    args = arguments()
    if args.point:
        p = json.loads(args.point)
        print(json.dumps(point(p["target"], p["algorithm"], p["block_bytes"], p["engine"], p["checked"],
                               p["fast"], Kind(p["kind"]))))
        return
    rows = [r for r in ROWS if args.only is None or args.only in r.name]
    results = []
    host = f"{host_platform.machine()}, Python {host_platform.python_version()}"
    # --only re-measures some rows: they replace their rows of the last results, the others stay
    kept = json.loads(RESULTS.read_text())["rows"] if args.only is not None and RESULTS.exists() else []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            result = {**measure(row, args, Path(tmp)),
                      "measured_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
            result = with_other_mode(result, kept, args.mode)
            print(json.dumps(result), flush=True)
            results.append(result)
            # after each row: a long run stopped later keeps what it measured
            merged = [next((r for r in results if r["name"] == k["name"]), k) for k in kept]
            merged += [r for r in results if r["name"] not in {k["name"] for k in kept}]  # new rows
            RESULTS.write_text(json.dumps({"host": host, "rows": merged}, indent=1) + "\n")
            write_doc(merged, host)
    print(table(results))


if __name__ == "__main__":
    main()
