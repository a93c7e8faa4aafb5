"""Independent points (sweeps, explorations, benchmarks) run in parallel on Dask distributed.

`run_points(tasks, options)` runs every Task and returns one Outcome per task, in the tasks'
order, whatever order they finish in: serially in this process (`workers=1`), on N local
worker processes (`distributed.LocalCluster`), or on a running cluster (`Client(address)`).
Every task goes through `run_guarded` on the worker, which turns a Phalanx error into a
`failed` outcome (the other points go on), a stopped simulation into `timeout` and anything
else into `error` with its message; nothing a point does stops the sweep.

Finished points are kept in a cache (runtime/point_cache.py), keyed by the task's full
description and Phalanx's version and source fingerprint: a rerun computes only what is
missing, and a point finished before a worker died or the user pressed Ctrl-C is kept.

A test hook (HOLD_ENV): with PHALANX_HOLD_AFTER_POINTS=k in its environment, a run that has
computed k points waits there, before taking the next, until a signal stops it. Ctrl-C then
always reaches a sweep with exactly k points in its cache, however fast the workers are
(tests/runtime/test_parallel_cluster.py; without it, a warm cluster could finish every point
before Ctrl-C was handled). Nothing else sets it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, UsageError, usage_error
from phalanx.runtime.point_cache import PointCache

CONNECT_TIMEOUT_S = 10  # how long to wait for a --scheduler before saying it cannot be reached
HOLD_ENV = "PHALANX_HOLD_AFTER_POINTS"  # the test hook of the module docstring


class Status(StrEnum):
    OK = "ok"
    FAILED = "failed"  # a Phalanx error: the machine refused the point, or it is too big
    TIMEOUT = "timeout"  # the simulation reached --point-timeout
    ERROR = "error"  # an internal error (a bug), or the worker could not run the task


@dataclass(frozen=True)
class Outcome:
    status: Status
    row: dict[str, Any] | None = None  # the point's result when OK
    error: str = ""  # what went wrong otherwise
    diagnostic: Diagnostic | None = None  # the PhalanxError's, for FAILED
    exit_code: int = 0  # the PhalanxError's exit code, for FAILED

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status.value, "row": self.row, "error": self.error}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Outcome:
        return Outcome(Status(data["status"]), data["row"], data["error"])

    def reraise(self) -> None:
        """Raise the point's PhalanxError again (a sweep of one named algorithm stops at it)."""
        diagnostic = self.diagnostic or Diagnostic(self.error)
        raise (UsageError(diagnostic) if self.exit_code == UsageError.exit_code
               else PhalanxError(diagnostic))


class PointTimeout(Exception):
    """Raised by a point function whose simulation stopped at its time limit."""


@dataclass(frozen=True)
class Task:
    """One point: `func(*args, time_limit_s=...)` returns its row; `description` says what it
    is (every input that decides the row) for the cache and for messages."""

    description: dict[str, Any]
    func: Callable[..., dict[str, Any]]
    args: tuple[Any, ...]
    label: str
    # Larger runs first on a cluster (Dask's priority), so that a long point does not start last
    # and leave the other workers idle at the end: e.g. the point's bytes moved. No effect serially.
    cost_hint: float = 0.0


@dataclass(frozen=True)
class ParallelOptions:
    workers: int = 1  # local processes; 1 runs in this process
    scheduler: str | None = None  # tcp://HOST:PORT of a running Dask scheduler
    cache: PointCache | None = None
    fresh: bool = False  # ignore cached points (and overwrite them)
    point_timeout_s: float | None = None


SERIAL = ParallelOptions()  # one point after another in this process, no cache


@dataclass
class RunStats:
    computed: int = 0
    cached: int = 0
    by_status: dict[str, int] = field(default_factory=dict)


def default_workers() -> int:
    """The machine's cores."""
    return os.cpu_count() or 1


def check_options(workers: int | None, point_timeout_s: float | None, scheduler: str | None) -> None:
    if workers is not None and workers < 1:
        raise usage_error(f"--workers {workers} must be at least 1", "e.g. --workers 2; 1 runs serially")
    if point_timeout_s is not None and not point_timeout_s > 0:
        raise usage_error(f"--point-timeout {point_timeout_s:g} must be a positive number of seconds",
                          "e.g. --point-timeout 60")
    if scheduler is not None and workers is not None:
        raise usage_error("--workers and --scheduler both given",
                          "the cluster behind --scheduler has its own workers: drop --workers")


def run_guarded(func: Callable[..., dict[str, Any]], args: tuple[Any, ...],
                time_limit_s: float | None) -> Outcome:
    """What a worker runs: the point, with every way it can end as an Outcome."""
    import phalanx

    phalanx.register_all()
    try:
        return Outcome(Status.OK, func(*args, time_limit_s=time_limit_s))
    except PhalanxError as exc:
        return Outcome(Status.FAILED, error=exc.diagnostic.message, diagnostic=exc.diagnostic,
                       exit_code=exc.exit_code)
    except PointTimeout as exc:
        return Outcome(Status.TIMEOUT, error=str(exc))
    except MemoryError:
        return Outcome(Status.FAILED, error="out of memory on the worker", exit_code=2)
    except Exception as exc:  # a bug: report it with the point, go on with the others
        return Outcome(Status.ERROR, error=f"internal error: {type(exc).__name__}: {exc}")


def run_points(tasks: list[Task], options: ParallelOptions = SERIAL,
               on_done: Callable[[str], None] | None = None,
               stats: RunStats | None = None) -> list[Outcome]:
    """Every task's outcome, in the order of `tasks`. `on_done(label)` is called as each
    point finishes (cached points first)."""
    stats = stats if stats is not None else RunStats()
    outcomes: list[Outcome | None] = [None] * len(tasks)
    keys = [options.cache.key(t.description) if options.cache is not None else "" for t in tasks]
    todo = []
    for i, task in enumerate(tasks):
        cached = options.cache.get(keys[i]) if options.cache is not None and not options.fresh else None
        if cached is not None:
            outcomes[i] = cached
            stats.cached += 1
            _done(task, cached, on_done, stats)
        else:
            todo.append(i)

    def finish(i: int, outcome: Outcome) -> None:
        outcomes[i] = outcome
        stats.computed += 1
        if options.cache is not None and outcome.status == Status.OK:
            options.cache.put(keys[i], tasks[i].description, outcome)  # at once: a crash keeps it
        _done(tasks[i], outcome, on_done, stats)
        if stats.computed == hold_after:
            _hold_until_a_signal()

    hold_after = _hold_after_points()

    if todo and options.scheduler is None and options.workers == 1:
        for i in todo:
            finish(i, run_guarded(tasks[i].func, tasks[i].args, options.point_timeout_s))
    elif todo:
        with _client(options, len(todo)) as client:
            _run_on(client, tasks, todo, options.point_timeout_s, finish)
    return [o for o in outcomes if o is not None]


def _hold_after_points() -> int | None:
    """HOLD_ENV's count of points, or None where it is not set."""
    value = os.environ.get(HOLD_ENV)
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise usage_error(f"{HOLD_ENV}={value!r} is not a positive number of points",
                          f"unset {HOLD_ENV} (a test hook, runtime/parallel.py), or give e.g. 3")
    return int(value)


def _hold_until_a_signal() -> None:
    """Wait here (in the main thread, where Python raises a signal's exception, e.g.
    KeyboardInterrupt) until a signal ends the run."""
    while True:
        time.sleep(3600)


def _done(task: Task, outcome: Outcome, on_done: Callable[[str], None] | None, stats: RunStats) -> None:
    stats.by_status[outcome.status.value] = stats.by_status.get(outcome.status.value, 0) + 1
    if on_done is not None:
        on_done(task.label + ("" if outcome.status == Status.OK else f" ({outcome.status.value})"))


def _run_on(client: Any, tasks: list[Task], todo: list[int], time_limit_s: float | None,
            finish: Callable[[int, Outcome], None]) -> None:
    from distributed import as_completed

    unloadable = _unloadable_functions(client, {tasks[i].func for i in todo})
    for i in [i for i in todo if tasks[i].func in unloadable]:
        finish(i, Outcome(Status.ERROR, error=unloadable[tasks[i].func]))
    todo = [i for i in todo if tasks[i].func not in unloadable]
    futures = {client.submit(run_guarded, tasks[i].func, tasks[i].args, time_limit_s,
                             key=f"phalanx-point-{i}", pure=False, priority=tasks[i].cost_hint): i
               for i in todo}
    try:
        for future in as_completed(futures):
            i = futures[future]
            if future.status == "finished":
                finish(i, future.result())
            else:  # the task itself could not run (e.g. phalanx missing on the worker)
                exc = future.exception()
                finish(i, Outcome(Status.ERROR, error=f"the worker could not run the point: "
                                                      f"{type(exc).__name__}: {exc}"))
    except BaseException:  # Ctrl-C or a lost scheduler: cancel what is left, then stop
        client.cancel(list(futures))
        raise


def _unloadable_functions(client: Any, funcs: set[Callable[..., Any]]) -> dict[Callable[..., Any], str]:
    """Why each point function that some worker cannot import fails there. Dask sends a module's
    function by reference; a worker that cannot import it fails to read the task and never reports
    it (the sweep would wait forever), so every worker is asked first. A function of `__main__` or
    a nested one travels by value and needs no check."""
    by_reference = {f: (f.__module__, f.__qualname__) for f in funcs
                    if f.__module__ != "__main__" and "<locals>" not in f.__qualname__}
    if not by_reference:
        return {}
    names = sorted(set(by_reference.values()))
    per_worker = client.run(_import_errors, names)  # {worker address: {name: error}}
    reasons: dict[Callable[..., Any], str] = {}
    for worker, errors in sorted(per_worker.items()):
        for func, (module, qualname) in by_reference.items():
            error = errors.get(f"{module}.{qualname}")
            if error and func not in reasons:
                reasons[func] = (f"the worker {worker} cannot load the point's function {module}.{qualname}: "
                                 f"{error}; make the module importable there (install it, or put its "
                                 f"folder on the workers' PYTHONPATH)")
    return reasons


def _import_errors(names: list[tuple[str, str]]) -> dict[str, str]:
    """Run on a worker: each `module.qualname` that cannot be imported here, with the error."""
    import importlib

    errors = {}
    for module, qualname in names:
        try:
            target: Any = importlib.import_module(module)
            for part in qualname.split("."):
                target = getattr(target, part)  # the function's own dotted name, part by part
        except Exception as exc:  # any failure to import is the answer, not a crash
            errors[f"{module}.{qualname}"] = f"{type(exc).__name__}: {exc}"
    return errors


# A local cluster's housekeeping, at Dask's defaults, wakes every process's event loop every
# 20-500 ms: an idle 2-worker cluster spent 11% of a core on it (main process 1.8 CPU-s, each
# worker 0.7 CPU-s in 30 s; 0.6 CPU-s in all with these settings), taken from the points on a
# machine with as many workers as cores. The sampling profiler walks the task's stack every 10 ms
# and nobody reads it here (no dashboard). Points are independent and queued on the scheduler
# largest first, so there is nothing to steal; the memory monitor still runs, once a second.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,
}


@contextmanager
def _client(options: ParallelOptions, points: int) -> Iterator[Any]:
    """A Dask client on the given scheduler, or on a LocalCluster of `workers` processes."""
    from distributed import Client, LocalCluster

    from phalanx.runtime.dask_logs import QuietDaskLogs

    if options.scheduler is not None:
        try:
            client = Client(options.scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError, TypeError) as exc:
            raise usage_error(f"cannot reach the Dask scheduler at '{options.scheduler}': {exc}",
                              "start one with `dask scheduler` and give its address, e.g. "
                              "--scheduler tcp://127.0.0.1:8786 (docs/sweeps.md)") from None
        with client:
            yield client
        return
    import dask

    workers = min(options.workers, points)
    with dask.config.set(LOCAL_CLUSTER_CONFIG), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.register_plugin(QuietDaskLogs())
        yield client
