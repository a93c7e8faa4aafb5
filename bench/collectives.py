"""Broadcast, allgather and allreduce: Phalanx's algorithms beside SMPI's on the same SimGrid platform.

Writes bench/results_collectives.json (issue 17, item 4). For each target x kind x size:

1. Phalanx, built-in simulator: every algorithm the target offers for the kind
   (`Target.algorithms(kind)`) and `auto`, each compiled from the sweep's program
   (runtime/sweep.py `kind_program`) and simulated: time, the target's lower bound, the bound
   that binds (start-up, port bandwidth, cut), efficiency (bound / time), data verified.
2. Phalanx `auto` on SimGrid (`run_simgrid`, `auto` chosen by the `simgrid` cost model, as
   `run --backend simgrid` does) on the target's SimGrid platform.
3. SMPI: each of SimGrid 3.32's algorithms for the collective (`--cfg=smpi/bcast:NAME`, ...,
   the ompi / mpich / mvapich2 selectors included), one timed MPI_Bcast / MPI_Allgather /
   MPI_Allreduce from bench/backends/{bcast,allgather,allreduce}.c (smpicc, smpirun), on the
   platform of `platform_for(target, every pair)`: the same XML Phalanx's SimGrid runs use.
   SMPI pays the target's per-message start-up at the sender (smpi/os, smpi/ois: the
   platform's overhead_s, as bench/backends/run.py does for iWarp) and nothing at the
   receiver (smpi/or 0), as Phalanx's messages do; computation is not simulated. Each run has
   a timeout; a timeout or a failure is recorded as such, never dropped.

What "size" means (the `size_bytes` of a row):
- broadcast: the whole buffer, the root's block of `size` bytes that every node receives
  (MPI_Bcast of `size` bytes);
- allgather: the per-node block: each node contributes `size` bytes and ends with P x size
  (MPI_Allgather with sendcount `size`);
- allreduce: the partial, `size` bytes of float64 (`s = sum(D, dim=1)`, `s` replicated:
  runtime/sweep.py), as MPI_Allreduce of size / 8 doubles.

The built-in simulator's data layer holds real bytes: an allgather of 1 MB blocks on 64 nodes
is 64 x 64 MB, over 4 GB (sp2:32 at 1 MB: 4.4 GB and 52 s per algorithm). Phalanx points whose
nodes together receive more than --max-phalanx-bytes (default 256 MiB) are recorded as skipped
with that reason; SMPI is still run there.

Run: .venv/bin/python bench/collectives.py [--only KIND] [--targets T,T] [--sizes 8,2K,64K,1M]
     [--no-smpi] [--smpi-timeout S] [--table]
"""

from __future__ import annotations

import argparse
import json
import platform as host_platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError, UsageError
from phalanx.runtime.backends.platforms import platform_for
from phalanx.runtime.backends.simgrid import CONFIG, run_simgrid, simgrid_missing
from phalanx.runtime.sweep import kind_program, parse_sizes, sweep_point

phalanx.register_all()

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results_collectives.json"
TARGETS = ("sp2:32", "paragon:8x8", "iwarp:8x8", "hypercube:6")
KINDS = (Kind.BROADCAST, Kind.ALLGATHER, Kind.ALLREDUCE)
SIZES = (8, 2048, 65536, 1 << 20)
MAX_PHALANX_BYTES = 256 << 20
# SimGrid 3.32's algorithms (smpirun --cfg=smpi/bcast:help lists them); the SMP_* and
# *_intra_node / *_inter_node variants need several cores per host and are left out.
SMPI_ALGORITHMS = {
    "alltoall": ("pair", "ring", "bruck", "basic_linear", "rdb", "2dmesh", "ompi", "mpich",
                 "mvapich2"),
    "broadcast": ("binomial_tree", "flattree", "flattree_pipeline", "scatter_LR_allgather",
                  "scatter_rdb_allgather", "NTSL", "NTSB", "arrival_pattern_aware",
                  "ompi_pipeline", "ompi_split_bintree", "ompi", "mpich", "mvapich2"),
    "allgather": ("ring", "rdb", "bruck", "pair", "NTSLR", "NTSLR_NB", "GB", "loosely_lr", "rhv",
                  "spreading_simple", "2dmesh", "ompi_neighborexchange", "ompi", "mpich",
                  "mvapich2"),
    "allreduce": ("lr", "rdb", "rab1", "rab2", "rab_rdb", "rab", "redbcast", "ompi_ring_segmented",
                  "ompi", "mpich", "mvapich2", "mvapich2_rs"),
}
SMPI_PROGRAM = {"alltoall": "alltoall", "broadcast": "bcast", "allgather": "allgather",
                "allreduce": "allreduce"}  # alltoall: bench/efficiency.py's comparison
SMPI_TIMEOUT_S = 120.0
SIMGRID_TIMEOUT_S = 300.0


def phalanx_source(kind: str, nnodes: int, size: int) -> str:
    """The sweep's program (an allreduce's partial is `size` bytes of float64)."""
    return kind_program(kind, nnodes, size)


def phalanx_bytes(kind: str, nnodes: int, size: int) -> int:
    """Bytes the data layer delivers in all (what the built-in run holds in memory)."""
    return {"broadcast": nnodes * size, "allgather": nnodes * nnodes * size,
            "allreduce": nnodes * size}[kind]


def builtin_point(target: str, kind: str, size: int, algorithm: str) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        point = sweep_point(target, kind, size, algorithm)
    except PhalanxError as exc:
        return {"algorithm": algorithm, "error": exc.diagnostic.message.splitlines()[0]}
    return {"algorithm": point["algorithm"], "time_s": point["time_s"],
            "lower_bound_s": point["lower_bound_s"], "lower_bound_binds": point["lower_bound_binds"],
            "efficiency": point["efficiency"], "verified": point["verified"],
            "wall_s": round(time.perf_counter() - start, 3)}


def simgrid_auto(target: str, kind: str, size: int) -> dict[str, Any]:
    """`auto` as `run --backend simgrid` chooses it, run on SimGrid."""
    start = time.perf_counter()
    try:
        compiled = compile_program(phalanx_source(kind, resolve(target).nnodes, size), target=target,
                                   algorithm="auto", file=f"<{kind} {size} B>", cost="simgrid")
        run = run_simgrid(compiled, timeout_s=SIMGRID_TIMEOUT_S)
    except (PhalanxError, UsageError) as exc:
        return {"error": exc.diagnostic.message.splitlines()[0]}
    sg, bi = run.simgrid.collectives[0], run.builtin.collectives[0]
    return {"algorithm": sg.algorithm, "time_s": sg.time_s, "builtin_time_s": bi.time_s,
            "lower_bound_s": sg.lower_bound_s, "efficiency": sg.lower_bound_s / sg.time_s,
            "verified": run.verified, "wall_s": round(time.perf_counter() - start, 3)}


class Smpi:
    """smpicc-built programs, one platform XML and hostfile per target, in a scratch folder."""

    def __init__(self, work: Path, timeout_s: float):
        self.work, self.timeout_s = work, timeout_s
        self.exes: dict[str, Path] = {}
        self.platforms: dict[str, tuple[Path, Path, float, int]] = {}

    def exe(self, kind: str) -> Path:
        name = SMPI_PROGRAM[kind]
        if name not in self.exes:
            exe = self.work / name
            subprocess.run(["smpicc", "-O2", "-o", str(exe), str(HERE / "backends" / f"{name}.c")],
                           check=True, capture_output=True)
            self.exes[name] = exe
        return self.exes[name]

    def platform(self, target: str) -> tuple[Path, Path, float, int]:
        if target not in self.platforms:
            machine = resolve(target)
            n = machine.nnodes
            plat = platform_for(machine, [(s, d) for s in range(n) for d in range(n)])
            stem = target.replace(":", "-")
            xml, hosts = self.work / f"{stem}.xml", self.work / f"{stem}.hosts"
            xml.write_text(plat.xml)
            hosts.write_text("".join(f"{plat.host(i)}\n" for i in range(n)))
            # the sender's start-up of an ordinary (not phased) message, as Phalanx's schedules pay it
            overhead = plat.overhead_s(Transfer(0, 1, 1, 0, 1))
            self.platforms[target] = (xml, hosts, overhead, n)
        return self.platforms[target]

    def run(self, target: str, kind: str, algorithm: str, size: int) -> dict[str, Any]:
        xml, hosts, overhead, n = self.platform(target)
        coll = SMPI_PROGRAM[kind]
        cfg = [*CONFIG, f"smpi/{coll}:{algorithm}", "smpi/simulate-computation:no",
               f"smpi/os:0:{overhead}:0", f"smpi/ois:0:{overhead}:0", "smpi/or:0:0:0"]
        cmd = ["smpirun", "-np", str(n), "-platform", str(xml), "-hostfile", str(hosts),
               *[f"--cfg={c}" for c in cfg], "--log=root.thres:critical", str(self.exe(kind)),
               str(size)]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s,
                                  start_new_session=True)
        except subprocess.TimeoutExpired:
            return {"algorithm": algorithm, "timeout_s": self.timeout_s}
        wall = round(time.perf_counter() - start, 3)
        lines = [ln for ln in done.stdout.strip().splitlines() if ln.startswith("{")]
        if done.returncode != 0 or not lines:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
            return {"algorithm": algorithm, "error": f"exit {done.returncode}: {tail}", "wall_s": wall}
        return {"algorithm": algorithm, **json.loads(lines[-1]), "wall_s": wall}


def best(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The fastest verified point (SMPI's unverified or failed runs do not count)."""
    timed = [p for p in points if "time_s" in p and p.get("verified", True)]
    return min(timed, key=lambda p: p["time_s"]) if timed else None


def measure(target: str, kind: str, size: int, smpi: Smpi | None, max_bytes: int,
            on_simgrid: bool) -> dict[str, Any]:
    machine = resolve(target)
    row: dict[str, Any] = {"target": target, "kind": kind, "size_bytes": size, "nodes": machine.nnodes}
    if phalanx_bytes(kind, machine.nnodes, size) > max_bytes:
        row["phalanx"] = {"skipped": f"{phalanx_bytes(kind, machine.nnodes, size)} bytes delivered "
                                     f"in all > --max-phalanx-bytes {max_bytes} (the built-in data "
                                     "layer holds every byte)"}
    else:
        algorithms = [builtin_point(target, kind, size, a) for a in machine.algorithms(kind)]
        auto = builtin_point(target, kind, size, "auto")
        top = best(algorithms)
        row["phalanx"] = {"algorithms": algorithms, "auto": auto, "best": top}
        if on_simgrid:
            row["phalanx"]["auto_simgrid"] = simgrid_auto(target, kind, size)
    if smpi is not None:
        points = [smpi.run(target, kind, a, size) for a in SMPI_ALGORITHMS[kind]]
        row["smpi"] = {"overhead_s": smpi.platform(target)[2], "algorithms": points,
                       "best": best(points)}
        ph = row["phalanx"]
        if ph.get("best") and row["smpi"]["best"]:
            ph["best_over_smpi_best"] = ph["best"]["time_s"] / row["smpi"]["best"]["time_s"]
            sg = ph.get("auto_simgrid", {})
            if "time_s" in sg:
                sg["over_smpi_best"] = sg["time_s"] / row["smpi"]["best"]["time_s"]
    return row


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.4g}"


def summary(row: dict[str, Any]) -> str:
    ph, sm = row["phalanx"], row.get("smpi", {})
    head = f"{row['target']:<12} {row['kind']:<9} {row['size_bytes']:>8}"
    if "best" not in ph:
        text = next(iter(ph.values()))[:40]
    else:
        b, a, sg = ph["best"] or {}, ph["auto"], ph.get("auto_simgrid", {})
        text = (f"best {b.get('algorithm')} {ms(b.get('time_s'))} ms, bound {ms(b.get('lower_bound_s'))} "
                f"({b.get('lower_bound_binds')}), eff {b.get('efficiency', 0):.2f}; auto "
                f"{a.get('algorithm')} {ms(a.get('time_s'))}; auto@simgrid {sg.get('algorithm')} "
                f"{ms(sg.get('time_s'))}")
    sb = sm.get("best") or {}
    ratio = ph.get("best_over_smpi_best")
    return (f"{head}  {text}  | smpi {sb.get('algorithm')} {ms(sb.get('time_s'))} ms"
            + (f"  ratio {ratio:.3f}" if ratio else ""))


def markdown(rows: list[dict[str, Any]]) -> str:
    """The results as a markdown table (times in ms): `--table`."""
    lines = ["| target | kind | size B | Phalanx best | bound (binds) | eff. | auto (built-in) | "
             "auto on SimGrid | SMPI best | best / SMPI best | auto on SimGrid / SMPI best |",
             "|" + "---|" * 11]
    for row in rows:
        ph, sb = row["phalanx"], (row.get("smpi") or {}).get("best") or {}
        smpi = f"{sb['algorithm']} {ms(sb['time_s'])}" if sb else "-"
        head = f"| {row['target']} | {row['kind']} | {row['size_bytes']} |"
        if "best" not in ph:
            lines.append(f"{head} skipped (memory) | | | | | {smpi} | | |")
            continue
        b, a, sg = ph["best"], ph["auto"], ph.get("auto_simgrid", {})
        ratio, same = ph.get("best_over_smpi_best"), sg.get("over_smpi_best")
        lines.append(f"{head} {b['algorithm']} {ms(b['time_s'])} | {ms(b['lower_bound_s'])} "
                     f"({b['lower_bound_binds']}) | {b['efficiency']:.2f} | {a.get('algorithm')} "
                     f"{ms(a.get('time_s'))} | {sg.get('algorithm', '-')} {ms(sg.get('time_s'))} | "
                     f"{smpi} | {f'{ratio:.3f}' if ratio else '-'} | {f'{same:.3f}' if same else '-'} |")
    return "\n".join(lines)


def save(out: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Merge: rows of the same (target, kind, size) are replaced, the others kept."""
    old = json.loads(out.read_text()) if out.exists() else {}
    key = lambda r: (r["target"], r["kind"], r["size_bytes"])  # noqa: E731
    fresh = {key(r) for r in rows}
    kept = [r for r in old.get("rows", []) if key(r) not in fresh]
    order = {t: i for i, t in enumerate(TARGETS)} | {k: i for i, k in enumerate(KINDS)}
    merged = sorted(kept + rows, key=lambda r: (order.get(r["target"], 99), order.get(r["kind"], 99),
                                                r["size_bytes"]))
    out.write_text(json.dumps(old | meta | {"rows": merged}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=KINDS, help="one collective kind")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated target specs")
    ap.add_argument("--sizes", default="8,2K,64K,1M", help="bytes, K = 1024, M = 1024^2")
    ap.add_argument("--no-smpi", action="store_true", help="Phalanx only (no SMPI, no SimGrid)")
    ap.add_argument("--smpi-timeout", type=float, default=SMPI_TIMEOUT_S, help="seconds per smpirun")
    ap.add_argument("--max-phalanx-bytes", type=int, default=MAX_PHALANX_BYTES)
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--table", action="store_true", help="print the results file as markdown, run nothing")
    args = ap.parse_args(argv)
    if args.table:
        print(markdown(json.loads(Path(args.out).read_text())["rows"]))
        return 0
    targets = [t for t in args.targets.split(",") if t]
    kinds = [args.only] if args.only else list(KINDS)
    sizes = parse_sizes(args.sizes)
    missing = None if args.no_smpi else simgrid_missing()
    if missing:
        print(f"SimGrid unavailable, Phalanx only: {missing}", file=sys.stderr)
    use_simgrid = not args.no_smpi and missing is None
    meta = {"machine": {"arch": host_platform.machine(), "python": host_platform.python_version(),
                        "system": host_platform.platform()},
            "simgrid_config": list(CONFIG),
            "size_meaning": {"broadcast": "the whole buffer (the root's block every node receives)",
                             "allgather": "the per-node block (each node ends with nodes x size)",
                             "allreduce": "the partial: size / 8 float64 (Phalanx sum(D, dim=1), "
                                          "MPI_Allreduce of size / 8 doubles)"},
            "time_unit": "s (simulated)", "smpi_timeout_s": args.smpi_timeout,
            "max_phalanx_bytes": args.max_phalanx_bytes}
    out, rows, start = Path(args.out), [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="phalanx-bench-collectives-") as tmp:
        smpi = Smpi(Path(tmp), args.smpi_timeout) if use_simgrid else None
        for target in targets:
            for kind in kinds:
                for size in sizes:
                    t0 = time.perf_counter()
                    row = measure(target, kind, size, smpi, args.max_phalanx_bytes, use_simgrid)
                    row["wall_s"] = round(time.perf_counter() - t0, 2)
                    print(summary(row), f"[{row['wall_s']} s]", flush=True)
                    rows.append(row)
            save(out, rows, meta)  # after every target: a long run keeps what it measured
    meta["last_run_wall_s"] = round(time.perf_counter() - start, 1)
    save(out, rows, meta)
    print(f"wrote {out} ({meta['last_run_wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
