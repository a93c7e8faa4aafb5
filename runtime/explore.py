"""`phalanx explore`: a design-space grid of points, one row a point, written as CSV.

The grid is the product of machines (`--target`, repeatable: machine sizes), target
parameters (`--param link_MBps=40,80,160`, each value appended to the spec as a
`key=value` override, compiler/target.py), collective kinds, message sizes and algorithms
(`all`, `auto` or names), or a program (`--program FILE`) in place of the synthetic
collectives. Each point is one `sweep_point` (runtime/sweep.py) or one program run, run by
runtime/parallel.py; the table keeps the grid's order whatever order the points finish in.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.target import parse_spec, resolve
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.limits import check_program_fits
from phalanx.runtime.parallel import SERIAL, Outcome, ParallelOptions, RunStats, Status, Task, run_points
from phalanx.runtime.sweep import SWEEP_KINDS, simulate_bounded, sweep_point

PROGRAM_KIND = "program"  # the kind column of a program's points
RESULT_COLUMNS = ("kind", "block_bytes", "algorithm", "algorithm_run", "status", "time_s",
                  "lower_bound_s", "efficiency", "aggregate_bandwidth_Bps", "verified", "error")


@dataclass(frozen=True)
class Param:
    name: str
    values: tuple[float, ...]


def parse_param(text: str) -> Param:
    """`link_MBps=40,80,160` -> Param('link_MBps', (40.0, 80.0, 160.0))."""
    name, eq, rest = text.partition("=")
    values = [v.strip() for v in rest.split(",") if v.strip()]
    if not eq or not name.strip() or not values:
        raise usage_error(f"bad --param '{text}'", "write NAME=V1,V2,..., e.g. --param link_MBps=40,80,160")
    out = []
    for v in values:
        try:
            out.append(float(v))
        except ValueError:
            raise usage_error(f"bad value '{v}' in --param '{text}': not a number",
                              "write numbers, e.g. --param link_MBps=40,80,160") from None
    return Param(name.strip(), tuple(out))


def with_params(base: str, settings: tuple[tuple[str, float], ...]) -> str:
    """`torus:8x8` + ((link_MBps, 80.0),) -> `torus:8x8,link_MBps=80`."""
    extra = ",".join(f"{k}={v:g}" for k, v in settings)
    if not extra:
        return base
    return base + ("," if ":" in base else ":") + extra


@dataclass(frozen=True)
class Grid:
    targets: tuple[str, ...]
    params: tuple[Param, ...]
    kinds: tuple[Kind | str, ...]  # (PROGRAM_KIND,) for a program
    sizes: tuple[int, ...]  # () for a program
    algorithms: tuple[str, ...]  # "all", "auto" or names
    program_file: str | None = None
    program_source: str = ""
    seed: int = 0

    def settings(self) -> list[tuple[tuple[str, float], ...]]:
        """Every combination of the parameters' values, the first parameter varying slowest."""
        return [tuple(zip([p.name for p in self.params], combo))
                for combo in itertools.product(*(p.values for p in self.params))]

    def describe(self) -> dict[str, Any]:
        return {"targets": list(self.targets), "params": {p.name: list(p.values) for p in self.params},
                "kinds": list(self.kinds), "sizes": list(self.sizes), "algorithms": list(self.algorithms),
                "program": self.program_file, "seed": self.seed}


def explore_kind(text: str) -> Kind:
    """The kind a --collective names, or a usage error naming the kinds explore can sweep."""
    if text.strip() not in SWEEP_KINDS:
        raise usage_error(f"cannot explore collective '{text.strip()}'",
                          "explorable: " + ", ".join(SWEEP_KINDS))
    return Kind(text.strip())


def check_grid(grid: Grid) -> None:
    """Every spec of the grid resolves (a bad --param name or value says so before anything
    runs), every kind is sweepable, and a program compiles on the first machine."""
    names = [p.name for p in grid.params]
    if len(set(names)) != len(names):
        raise usage_error("a --param is given twice", "give each parameter once, with all its values")
    for base in grid.targets:
        given = parse_spec(base)[2]
        for name in names:
            if name in given:
                raise usage_error(f"--param {name} is also set in --target {base}",
                                  f"drop {name}= from the target spec")
        for settings in grid.settings():
            resolve(with_params(base, settings))
    for kind in grid.kinds:
        if kind != PROGRAM_KIND:
            explore_kind(kind)
    if grid.program_file is not None and "all" in grid.algorithms:
        raise usage_error("--algorithm all is for collectives, not a program (its statements differ "
                          "in which algorithms they can take)", "give auto or one algorithm name")
    if grid.program_file is not None:  # its own errors (file:line:col) before any point runs
        compile_program(grid.program_source, target=with_params(grid.targets[0], grid.settings()[0]),
                        file=grid.program_file, checked=check_program_fits)


def program_point(target_spec: str, source: str, file: str, algorithm: str, seed: int = 0, *,
                  time_limit_s: float | None = None) -> dict[str, Any]:
    """One program run: the program's total time; its bound and efficiency over all its collectives."""
    compiled = compile_program(source, target=target_spec, algorithm=algorithm, file=file,
                               checked=check_program_fits)
    result = simulate_bounded(compiled, seed, time_limit_s)
    bound_s = sum(c.lower_bound_s for c in result.collectives)
    time_s = result.total_time_s
    moved = sum(c.aggregate_bandwidth_Bps * c.time_s for c in result.collectives)
    return {"algorithm": ",".join(sorted({c.algorithm for c in result.collectives})), "block_bytes": None,
            "time_s": time_s, "lower_bound_s": bound_s, "efficiency": bound_s / time_s if time_s > 0 else 1.0,
            "aggregate_bandwidth_Bps": moved / time_s if time_s > 0 else 0.0, "verified": result.verified}


@dataclass(frozen=True)
class GridPoint:
    target: str  # the base spec, as given
    nodes: int
    settings: tuple[tuple[str, float], ...]
    kind: Kind | str  # PROGRAM_KIND for a program
    block_bytes: int | None
    algorithm: str


def grid_points(grid: Grid) -> list[tuple[GridPoint, Task]]:
    """Every point of the grid with its task, in table order."""
    out = []
    program_hash = hashlib.sha256(grid.program_source.encode()).hexdigest()
    for base in grid.targets:
        for settings in grid.settings():
            spec = with_params(base, settings)
            machine = resolve(spec)
            for kind in grid.kinds:
                algorithms = [a for name in grid.algorithms
                              for a in (machine.algorithms(kind) if name == "all" else [name])]
                for size in grid.sizes or (None,):
                    for alg in algorithms:
                        point = GridPoint(base, machine.nnodes, settings, kind, size, alg)
                        out.append((point, _task(point, spec, grid, program_hash)))
    return out


def _task(point: GridPoint, spec: str, grid: Grid, program_hash: str) -> Task:
    where = f"{point.algorithm} on {spec}"
    if point.kind == PROGRAM_KIND:
        return Task({"point": "program", "target": spec, "program_sha256": program_hash,
                     "algorithm": point.algorithm, "seed": grid.seed},
                    program_point, (spec, grid.program_source, grid.program_file, point.algorithm, grid.seed),
                    where)
    assert point.block_bytes is not None
    return Task({"point": "sweep", "target": spec, "kind": point.kind, "block_bytes": point.block_bytes,
                 "algorithm": point.algorithm, "seed": grid.seed},
                sweep_point, (spec, point.kind, point.block_bytes, point.algorithm, grid.seed),
                f"{point.kind} {point.block_bytes} B, {where}", cost_hint=point.block_bytes)


def row_of(point: GridPoint, outcome: Outcome) -> dict[str, Any]:
    """One table row: every parameter of the point, then its result (or why it has none)."""
    r = outcome.row or {}
    return {"target": point.target, "nodes": point.nodes, **dict(point.settings),
            "kind": point.kind, "block_bytes": point.block_bytes, "algorithm": point.algorithm,
            "algorithm_run": r.get("algorithm"), "status": outcome.status.value,
            "time_s": r.get("time_s"), "lower_bound_s": r.get("lower_bound_s"),
            "efficiency": r.get("efficiency"), "aggregate_bandwidth_Bps": r.get("aggregate_bandwidth_Bps"),
            "verified": r.get("verified"), "error": outcome.error}


def run_grid(points: list[tuple[GridPoint, Task]], parallel: ParallelOptions = SERIAL,
             on_point: Callable[[str], None] | None = None,
             stats: RunStats | None = None) -> list[dict[str, Any]]:
    """The row of every point (from `grid_points`), in grid order."""
    outcomes = run_points([t for _, t in points], parallel, on_point, stats)
    return [row_of(p, o) for (p, _), o in zip(points, outcomes)]


def explore(grid: Grid, parallel: ParallelOptions = SERIAL,
            stats: RunStats | None = None) -> list[dict[str, Any]]:
    """Check the grid, then every row of it, in grid order."""
    check_grid(grid)
    return run_grid(grid_points(grid), parallel, None, stats)


def columns(grid: Grid) -> list[str]:
    return ["target", "nodes", *(p.name for p in grid.params), *RESULT_COLUMNS]


def csv_text(grid: Grid, rows: list[dict[str, Any]]) -> str:
    """The table as CSV (floats written exactly, as Python's repr; empty cells for no value)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, columns(grid), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return out.getvalue()


def write_csv(grid: Grid, rows: list[dict[str, Any]], path: str | Path) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(csv_text(grid, rows))
    except OSError as exc:
        raise usage_error(f"cannot write '{path}': {exc}", "choose a writable path for --csv") from None
    return path


def ok_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["status"] == Status.OK.value]
