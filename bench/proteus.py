"""Proteus in Phalanx (seed 000_df708a39f4a23045.txt): Table 3 on the full machine (4 PPs
per cluster, CC aggregation) and with one PP per cluster, the same with cycles sized per
cycle instead of Sec. 5's fixed cycle, Figs. 9-11, link errors, and proteus-group against
Bokhari's exchanges ("Further Optimization") per size.

Writes bench/results_proteus.json. `--quick` skips the 256-PP full-machine rows.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import phalanx
from phalanx.targets.proteus.experiments import (
    TABLE3_MS,
    alltoall_program,
    butterfly_program,
    exchange_program,
    exchange_time_s,
    measure,
    table3_program,
)

phalanx.register_all()


def table3(quick: bool) -> list[dict]:
    rows = []
    for (procs, links), row in TABLE3_MS.items():
        for m, paper_ms in row.items():
            for pps, cycle in ((4, "sec5"), (1, "sec5"), (1, "auto")):
                if quick and procs == 256 and pps == 4:
                    continue
                t0 = time.perf_counter()
                run = measure(table3_program(procs, links, m, pps, cycle), "proteus-group").run
                got_ms = exchange_time_s(run) * 1e3
                rows.append({"procs": procs, "links": links, "m": m, "pps": pps, "cycle": cycle,
                             "paper_ms": paper_ms, "simulated_ms": round(got_ms, 4),
                             "error": round(got_ms / paper_ms - 1, 4), "verified": run.verified,
                             "wall_s": round(time.perf_counter() - t0, 2)})
                print("table3", json.dumps(rows[-1]), flush=True)
    return rows


def figures() -> dict:
    fig9 = {f"{pps}pp": measure(exchange_program(pps, 6.0, 12, cycle_ms=4.1)) for pps in (1, 4)}
    fig10 = {f"split{s}": measure(exchange_program(4, 16.4, 8, split=s)) for s in (0, 1, 2, 4, 8)}
    fft = {name: measure(butterfly_program(8, opt)).run
           for name, opt in (("optimized", True), ("traditional", False))}

    def ends(run) -> list[float]:
        e = sorted(t.end_s for t in run.execution.collectives.values())
        return [round((b - a) * 1e3, 4) for a, b in zip(e, e[1:])]

    return {
        "fig9": {k: {"link_cycle_utilisation": v.link_cycle_utilisation,
                     "link_time_utilisation": v.link_time_utilisation,
                     "pp_utilisation": v.pp_utilisation} for k, v in fig9.items()},
        "fig10": {k: {"pp_utilisation": v.pp_utilisation, "link_time_utilisation":
                      v.link_time_utilisation, "total_ms": v.total_s * 1e3}
                  for k, v in fig10.items()},
        "fig11": {k: {"grain_interval_ms": ends(r), "bytes": sum(c.total_bytes for c in
                                                                 r.collectives)}
                  for k, r in fft.items()},
    }


def errors() -> list[dict]:
    out = []
    for rate in (0.0, 0.01, 0.05, 0.2):
        src = table3_program(64, 1, 2048).replace("cycle_ms", f"error_rate={rate},cycle_ms")
        run = measure(src, "proteus-group").run
        stats = run.network.stats()
        out.append({"error_rate": rate, "time_ms": exchange_time_s(run) * 1e3,
                    "retransmissions": stats["retransmissions"], "verified": run.verified})
    return out


def versus_bokhari() -> list[dict]:
    out = []
    for procs in (32, 64):
        for block in (64, 256, 1024, 2048, 8192):
            src = alltoall_program(procs, block, f"proteus:groups={procs // 32}")
            chosen = measure(src)
            algs = [c.algorithm for c in chosen.run.compiled.candidates[0]]
            times = {a: measure(src, a).total_s * 1e3 for a in algs
                     if not (a == "direct" and procs > 32)}
            best = min(times, key=times.get)
            out.append({"procs": procs, "block_bytes": block, "times_ms": times, "fastest": best,
                        "auto": chosen.run.compiled.plan.schedules()[0].algorithm})
            print("versus", json.dumps(out[-1]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench/results_proteus.json")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    t0 = time.perf_counter()
    report = {"python": platform.python_version(), "table3": table3(args.quick),
              "figures": figures(), "errors": errors(), "versus_bokhari": versus_bokhari()}
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out} in {report['wall_s']} s")


if __name__ == "__main__":
    main()
