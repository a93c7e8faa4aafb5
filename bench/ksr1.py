"""KSR-1 measurements against seed 002_1e1cb805508c9dd7.txt; writes bench/results_ksr1.json.

Runs the paper's experiments (targets/ksr1/experiments.py), each with the paper's algorithm
named: broadcast per subpage by processors (Sec. 5.2), Table 2, Table 3 with 128 subpages a
cell, the concatenations on 32 and 64 cells (Secs. 5.5-5.6, 8 subpages a cell), Table 5;
each with the paper's value next to the model's, and the simulator's speed. Two models:
`calibrated` (the defaults: bench/calibrate_ksr1.py's reading loop and ARD service time) and
`ring` (no reading loop, an ARD passing one packet per slot time: the ring with Table 1's
latencies alone, the model before the calibration), to show what the calibration changes.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import phalanx
from phalanx.targets.ksr1 import experiments as X
from phalanx.targets.ksr1.cost import paper_fit_ms

phalanx.register_all()

TABLE5 = {"DS1": (28.04, 34.45), "DS2": (96.79, 98.94), "DS3": (183.42, 187.43)}
COMM_SUBPAGES = 995  # tests/targets/ksr1/test_ksr1_paper.py: the reads alone take 30.19 ms
MODELS = {"calibrated": {}, "ring": {"read_loop_us": 0.0, "ard_service_ns": 128.0}}


def timed(source: str, algorithm: str, overrides: dict):
    t0 = time.perf_counter()
    result = X.run(X.with_params(source, **overrides), algorithm)
    return result, time.perf_counter() - t0


def broadcast(extra: dict) -> list[dict]:
    out = []
    for procs in (2, 8, 16, 32, 64):
        result, wall = timed(X.broadcast_program(procs, 64), "broadcast", extra)
        per_subpage = result.collectives[0].time_s * 1e3 / 64
        out.append({"procs": procs, "model_ms_per_subpage": per_subpage,
                    "paper_C1": 0.054 if procs <= 32 else 0.069,
                    "verified": result.verified, "wall_s": round(wall, 2)})
    return out


def table2(extra: dict) -> list[dict]:
    out = []
    for procs, paper_us in X.TABLE2_US.items():
        result, wall = timed(X.distinct_reads_program(procs, 64), "reads", extra)
        out.append({"procs": procs, "model_us_per_subpage": result.collectives[0].time_s * 1e6 / 64,
                    "paper_us_per_subpage": paper_us, "verified": result.verified})
    return out


def table3(extra: dict) -> list[dict]:
    out = []
    for procs, row in X.TABLE3_MS.items():
        for distance, paper_ms in row.items():
            result, wall = timed(X.cshift_program(procs, X.TABLE3_SUBPAGES, distance),
                                 X.TABLE3_ALGORITHM, extra)
            out.append({"procs": procs, "distance": distance, "paper_ms": paper_ms,
                        "model_mean_cell_ms": X.mean_cell_time_s(result) * 1e3,
                        "model_slowest_ms": result.collectives[0].time_s * 1e3,
                        "events": result.execution.events, "wall_s": round(wall, 2),
                        "verified": result.verified})
    return out


def concatenate(extra: dict) -> list[dict]:
    out = []
    for procs in (32, 64):
        subpages = procs * 8  # 8 subpages a cell
        for alg, everywhere in (("gather-seq", False), ("gather-tree", False),
                                ("allgather-seq-bcast", True), ("allgather-tree-bcast", True),
                                ("allgather-cshift", True)):
            result, wall = timed(X.concat_program(procs, 8, everywhere), alg, extra)
            out.append({"procs": procs, "algorithm": alg, "subpages": subpages,
                        "model_ms": result.collectives[0].time_s * 1e3,
                        "paper_fit_ms": paper_fit_ms(alg, procs, subpages),
                        "verified": result.verified, "wall_s": round(wall, 2)})
    return out


def table5(extra: dict) -> list[dict]:
    comm, _ = timed(X.overlap_program(0.0, COMM_SUBPAGES), "cshift", extra)
    out = [{"case": "Comm", "model_ms": comm.total_time_s * 1e3, "paper_ms": 30.19}]
    for name, (compute_ms, paper_ms) in TABLE5.items():
        result, _ = timed(X.overlap_program(compute_ms, COMM_SUBPAGES), "cshift", extra)
        out.append({"case": f"{name} + Comm", "compute_ms": compute_ms,
                    "model_ms": result.total_time_s * 1e3, "paper_ms": paper_ms,
                    "verified": result.verified})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=(*MODELS, "both"), default="both")
    parser.add_argument("-o", default=str(Path(__file__).with_name("results_ksr1.json")))
    args = parser.parse_args()
    runs = MODELS if args.model == "both" else {args.model: MODELS[args.model]}
    results: dict = {"machine": platform.machine(), "python": platform.python_version()}
    for label, extra in runs.items():
        t0 = time.perf_counter()
        results[label] = {"target_overrides": extra, "broadcast": broadcast(extra),
                          "table2": table2(extra), "table3": table3(extra),
                          "concatenate": concatenate(extra), "table5": table5(extra)}
        results[label]["wall_s"] = round(time.perf_counter() - t0, 1)
        print(f"{label}: {results[label]['wall_s']} s")
    Path(args.o).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.o}")


if __name__ == "__main__":
    main()
