"""The options `sweep` and `explore` share (--workers, --scheduler, --cache, --fresh,
--point-timeout) and the `phalanx explore` command (runtime/explore.py, runtime/explore_report.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime import point_cache
from phalanx.runtime.parallel import ParallelOptions, RunStats, check_options, default_workers


def parallel_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run the points on N local processes (Dask LocalCluster; default: the "
                   "machine's cores; 1 runs them one after another in this process)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the points on a running Dask distributed cluster (docs/sweeps.md)")
    p.add_argument("--cache", metavar="DIR", default=None,
                   help=f"where finished points are kept (default {point_cache.default_cache_dir()})")
    p.add_argument("--fresh", action="store_true", help="compute every point again, ignoring the cache")
    p.add_argument("--point-timeout", type=float, metavar="S", default=None,
                   help="stop a point's simulation after S wall-clock seconds and record it as timed out")


def parallel_options(args: argparse.Namespace) -> ParallelOptions:
    check_options(args.workers, args.point_timeout, args.scheduler)
    workers = args.workers if args.workers is not None else default_workers()
    cache = point_cache.PointCache(args.cache or point_cache.default_cache_dir())
    return ParallelOptions(workers=workers, scheduler=args.scheduler, cache=cache, fresh=args.fresh,
                           point_timeout_s=args.point_timeout)


def stats_line(stats: RunStats) -> str:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(stats.by_status.items()))
    return f"points: {stats.computed} computed, {stats.cached} from the cache ({counts or 'none'})"


def explore_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", action="append", required=True, metavar="SPEC",
                   help="a machine (repeat for several, e.g. machine sizes: torus:4x4, torus:8x8)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                   help="a target parameter and its values, e.g. link_MBps=40,80,160 (repeatable)")
    p.add_argument("--collective", default=None, metavar="KIND,...",
                   help="collective kinds, e.g. allgather,alltoall")
    p.add_argument("--sizes", default=None, help="message sizes, e.g. 64,512,2K,16K")
    p.add_argument("--algorithm", action="append", metavar="ALG",
                   help="all (default for collectives), auto (default for a program) or a name; repeatable")
    p.add_argument("--program", metavar="FILE", help="run this program at every grid point instead "
                   "of synthetic collectives (no --collective or --sizes)")
    p.add_argument("--csv", metavar="FILE", help="write the table here (default DIR/points.csv with "
                   "--report, else stdout)")
    p.add_argument("--report", metavar="DIR", help="write points.csv, index.html and the plots")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def _grid(args: argparse.Namespace):
    from phalanx.runtime.explore import PROGRAM_KIND, Grid, explore_kind, parse_param
    from phalanx.runtime.sweep import parse_sizes

    params = tuple(parse_param(text) for text in args.param)
    if args.program is not None:
        if args.collective or args.sizes:
            raise usage_error("--program replaces --collective and --sizes",
                              "drop --collective and --sizes, or drop --program")
        try:
            source = Path(args.program).read_text()
        except OSError as exc:
            raise usage_error(f"cannot read '{args.program}': {exc}", "give a .phx program") from None
        return Grid(tuple(args.target), params, (PROGRAM_KIND,), (), tuple(args.algorithm or ["auto"]),
                    args.program, source, args.seed)
    if not args.collective or not args.sizes:
        raise usage_error("explore needs --collective and --sizes (or --program)",
                          "e.g. --collective allgather --sizes 64,1K,16K")
    kinds = tuple(explore_kind(k) for k in args.collective.split(",") if k.strip())
    return Grid(tuple(args.target), params, kinds, tuple(parse_sizes(args.sizes)),
                tuple(args.algorithm or ["all"]), seed=args.seed)


def cmd_explore(args: argparse.Namespace) -> int:
    from phalanx.runtime.explore import check_grid, csv_text, grid_points, run_grid, write_csv
    from phalanx.runtime.explore_report import write_explore_report
    from phalanx.runtime.progress import progress_bar, progress_console

    if args.seed < 0:
        raise usage_error(f"--seed {args.seed} is negative; a seed is a whole number from 0 up",
                          "e.g. --seed 1 (the default is 0)")
    grid = _grid(args)
    parallel = parallel_options(args)
    stats = RunStats()
    start = time.perf_counter()
    check_grid(grid)
    points = grid_points(grid)
    with progress_bar(len(points), "explore", progress_console(args.quiet)) as steps:
        rows = run_grid(points, parallel, steps.advance, stats)
    wall_s = time.perf_counter() - start
    if not args.quiet:
        print(stats_line(stats) + f" in {wall_s:.1f} s", file=sys.stderr)
    csv_path = args.csv or (str(Path(args.report) / "points.csv") if args.report else None)
    if csv_path is None:
        sys.stdout.write(csv_text(grid, rows))
    else:
        write_csv(grid, rows, csv_path)
        print(f"table written to {csv_path}")
    if args.report:
        index = write_explore_report(grid, rows, args.report, Path(csv_path).resolve(),
                                     {"wall_s": round(wall_s, 1), "computed": stats.computed,
                                      "cached": stats.cached})
        print(f"report written to {index}")
    unverified = [r for r in rows if r["status"] == "ok" and not r["verified"]]
    if unverified:
        print(f"phalanx: {len(unverified)} points did not verify their data (see the table)",
              file=sys.stderr)
    return 3 if unverified else 0
