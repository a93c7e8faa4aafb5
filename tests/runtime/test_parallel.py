"""runtime/parallel.py and runtime/point_cache.py through `phalanx sweep`: --workers 2 gives
the serial results, the cache resumes, --fresh recomputes, a failing, too big or timed-out
point is reported while the others go on, and bad options are refused with exit code 2."""

from __future__ import annotations

import json

import pytest

import phalanx
from phalanx.runtime.parallel import HOLD_ENV, SERIAL, Status
from phalanx.runtime.point_cache import PointCache, source_fingerprint
from phalanx.runtime.sweep import sweep

SWEEP = ("sweep", "--target", "ideal:4", "--collective", "allgather", "--sizes", "64,1K", "--json")


def test_workers_2_gives_exactly_the_serial_results(cli, tmp_path):
    serial = cli(*SWEEP, "--workers", "1", "--cache", str(tmp_path / "a"))
    parallel = cli(*SWEEP, "--workers", "2", "--cache", str(tmp_path / "b"))
    assert serial.code == parallel.code == 0, parallel.err
    assert parallel.out == serial.out  # every number, in the same order
    data = serial.json()
    assert [(r["algorithm"], r["block_bytes"]) for r in data["results"]] == [
        (a, s) for a in ("direct", "linear", "binomial", "ring", "recursive-doubling",
                         "far-first-doubling", "bruck")
        for s in (64, 1024)]
    assert all(r["verified"] for r in data["results"])
    assert "points: 14 computed, 0 from the cache (14 ok)" in parallel.err


def test_a_rerun_takes_every_point_from_the_cache_and_fresh_recomputes(cli, tmp_path):
    cache = ["--workers", "1", "--cache", str(tmp_path)]
    first = cli(*SWEEP, *cache)
    again = cli(*SWEEP, *cache)
    fresh = cli(*SWEEP, *cache, "--fresh")
    assert "14 computed, 0 from the cache" in first.err
    assert "0 computed, 14 from the cache" in again.err
    assert "14 computed, 0 from the cache" in fresh.err
    assert first.out == again.out == fresh.out
    stored = [json.loads(f.read_text()) for f in tmp_path.glob("*.json")]
    assert len(stored) == 14
    assert {"point": "sweep", "target": "ideal:4", "kind": "allgather", "block_bytes": 64,
            "algorithm": "ring", "seed": 0} in [s["description"] for s in stored]


def test_the_cache_key_holds_the_version_the_source_and_the_whole_point(tmp_path, monkeypatch):
    cache = PointCache(tmp_path)
    point = {"point": "sweep", "target": "torus:2x2,link_MBps=80", "kind": "allgather",
             "block_bytes": 64, "algorithm": "ring", "seed": 0}
    key = cache.key(point)
    assert cache.key(point | {"target": "torus:2x2,link_MBps=160"}) != key
    assert cache.key(point | {"seed": 1}) != key
    assert len(source_fingerprint()) == 16
    monkeypatch.setattr(phalanx, "__version__", "9.9.9")
    assert cache.key(point) != key


def test_a_point_too_big_is_refused_before_it_runs_and_the_others_go_on(cli, tmp_path):
    # 2048M float64 elements per node: 128 GiB of arrays, refused by runtime/limits.py's floor
    r = cli("sweep", "--target", "ideal:4", "--collective", "reduce", "--sizes", "8,2048M",
            "--algorithm", "binomial", "--algorithm", "linear", "--workers", "1", "--cache", str(tmp_path))
    assert r.code == 0
    lines = r.out.splitlines()
    assert [line.split()[:2] for line in lines[2:4]] == [["binomial", "8"], ["linear", "8"]]
    refused = [line for line in lines if line.startswith("refused:")]
    assert len(refused) == 2
    assert refused[0].startswith("refused: binomial at 2147483648 B: <sweep reduce 2147483648 B> on "
                                 "ideal:4 is too big to simulate here: it needs at least ")
    assert "2 failed, 2 ok" in r.err


def test_an_unknown_algorithm_in_a_list_is_reported_and_the_others_run():
    data = sweep("ideal:4", "allgather", [64], ["ring", "nonsense"], parallel=SERIAL)
    assert [r["algorithm"] for r in data["results"]] == ["ring"]
    assert data["failures"] == [{"algorithm": "nonsense", "block_bytes": 64,
                                 "error": "unknown algorithm 'nonsense' for an allgather on target "
                                          "'ideal:4'"}]


def test_point_timeout_stops_a_point_and_records_it(cli, tmp_path):
    r = cli("sweep", "--target", "ideal:32", "--collective", "alltoall", "--sizes", "8",
            "--algorithm", "direct", "--point-timeout", "1e-9", "--workers", "1", "--cache", str(tmp_path))
    assert r.code == 0
    assert ("timeout: direct at 8 B: stopped at --point-timeout 1e-09 s: stopped at the time limit of "
            "1e-09 s (4096 events") in r.out
    assert "(1 timeout)" in r.err and not list(tmp_path.glob("*.json"))  # a timeout is not cached
    assert Status.TIMEOUT.value == "timeout"


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "--workers 0 must be at least 1"),
    (["--point-timeout", "0"], "--point-timeout 0 must be a positive number of seconds"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "--workers and --scheduler both given"),
    (["--scheduler", "nonsense"], "cannot reach the Dask scheduler at 'nonsense': missing port number"),
    (["--variance", "0.5", "--point-timeout", "5", "--workers", "1"],
     "--point-timeout does not apply to sweeps with --variance"),
])
def test_bad_parallel_options_are_refused(cli, tmp_path, args, message):
    r = cli("sweep", "--target", "ideal:4", "--collective", "alltoall", "--sizes", "64",
            "--cache", str(tmp_path), *args)
    assert r.code == 2
    assert r.err.startswith("phalanx: error: " + message)
    assert "hint:" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("value", ["0", "three"])
def test_a_bad_hold_count_of_the_test_hook_is_refused(cli, tmp_path, monkeypatch, value):
    """PHALANX_HOLD_AFTER_POINTS (runtime/parallel.py, for the Ctrl-C test of
    test_parallel_cluster.py) must be a positive count: anything else is named, not ignored."""
    monkeypatch.setenv(HOLD_ENV, value)
    r = cli(*SWEEP, "--workers", "1", "--cache", str(tmp_path))
    assert r.code == 2
    assert r.err.startswith(f"phalanx: error: PHALANX_HOLD_AFTER_POINTS='{value}' is not a positive "
                            "number of points")
    assert "hint: unset PHALANX_HOLD_AFTER_POINTS" in r.err and "Traceback" not in r.err


POINT_MODULE = '''
def point(n, time_limit_s=None):
    return {"n": n}
'''

UNLOADABLE_RUN = '''
import importlib.util, json, sys
from phalanx.runtime.parallel import ParallelOptions, Task, run_points

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("point_module_elsewhere", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    tasks = [Task({"n": n}, module.point, (n,), f"point {n}") for n in range(3)]
    print(json.dumps([o.to_json() for o in run_points(tasks, ParallelOptions(workers=2))]))
'''


def test_a_point_function_the_workers_cannot_import_is_an_error_not_a_hang(tmp_path):
    """A module loaded from a file path is sent to the workers by reference; they cannot import
    it. Each point is reported with the reason (before: the sweep waited forever)."""
    import subprocess
    import sys

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "point_module_elsewhere.py").write_text(POINT_MODULE)
    (tmp_path / "run.py").write_text(UNLOADABLE_RUN)
    done = subprocess.run([sys.executable, str(tmp_path / "run.py"),
                           str(tmp_path / "elsewhere" / "point_module_elsewhere.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = json.loads(done.stdout.splitlines()[-1])
    assert [o["status"] for o in outcomes] == ["error"] * 3
    assert all("cannot load the point's function point_module_elsewhere.point: ModuleNotFoundError"
               in o["error"] and "PYTHONPATH" in o["error"] for o in outcomes)


def test_a_local_cluster_runs_with_its_housekeeping_slowed_down():
    """The settings reach the worker processes (their nanny passes the config on), not only the
    process that starts the cluster."""
    import dask

    from phalanx.runtime.parallel import LOCAL_CLUSTER_CONFIG, ParallelOptions, _client

    with _client(ParallelOptions(workers=2), points=2) as client:
        per_worker = client.run(dask.config.get, "distributed.admin.tick.interval")
        profiler = client.run(dask.config.get, "distributed.worker.profile.enabled")
    assert len(per_worker) == 2
    assert set(per_worker.values()) == {LOCAL_CLUSTER_CONFIG["distributed.admin.tick.interval"]} == {"1s"}
    assert set(profiler.values()) == {False}


def test_a_local_clusters_workers_log_nothing_below_critical():
    """A clean `--workers 2` run printed a worker's heartbeat traceback when the scheduler closed
    first: the workers' Dask loggers are set to CRITICAL, in the worker processes themselves."""
    import logging

    from phalanx.runtime.dask_logs import DASK_LOG_LEVEL
    from phalanx.runtime.parallel import ParallelOptions, _client

    with _client(ParallelOptions(workers=2), points=2) as client:
        levels = client.run(lambda: logging.getLogger("distributed.worker").getEffectiveLevel())
    assert DASK_LOG_LEVEL == logging.CRITICAL
    assert set(levels.values()) == {logging.CRITICAL}
