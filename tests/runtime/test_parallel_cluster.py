"""A real Dask cluster on 127.0.0.1: `dask scheduler` and two `dask worker` processes (random
free ports, bounded waits, always torn down). `phalanx sweep` and `phalanx explore` on it give
exactly the serial results; Ctrl-C stops the client cleanly and a rerun computes only the
missing points; killing a worker mid-sweep loses no finished point."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from phalanx.runtime.explore import Grid, csv_text, explore, parse_param
from phalanx.runtime.parallel import HOLD_ENV, SERIAL
from phalanx.runtime.sweep import sweep

BIN = Path(sys.executable).parent
START_TIMEOUT_S = 120  # the cluster comes up in seconds; CI's two cores are shared
RUN_TIMEOUT_S = 300
SIZES = [64, 1024, 16384]
SWEEP = ["sweep", "--target", "ideal:4", "--collective", "allgather", "--sizes", "64,1K,16K", "--json"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, address: str, scheduler: subprocess.Popen, workers: list[subprocess.Popen]):
        self.address, self.scheduler, self.workers = address, scheduler, workers

    def stop(self) -> None:
        """The workers first, then the scheduler: a worker that has run points and loses its
        scheduler while closing hangs until killed (20 s of each test run's teardown); told
        first, it closes in about a second."""
        _stop(self.workers)
        _stop([self.scheduler])


def _stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=20)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.STDOUT}
    scheduler = subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                  address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)
    workers = [subprocess.Popen([BIN / "dask", "worker", address, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}",
                                 "--local-directory", str(logs)], **quiet) for i in range(2)]
    running = Cluster(address, scheduler, workers)
    try:
        with Client(address, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT_S)
        yield running
    finally:
        running.stop()


def _phalanx(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`phalanx *args` in a process of its own, with `env` added to this one's environment."""
    # Ctrl-C's default action restored in the child: a test run started in the background of a
    # non-interactive shell (as CI may be) inherits SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler, so the sweep would never see the test's Ctrl-C
    return subprocess.Popen([BIN / "phalanx", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ | (env or {}),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _finish(p: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = p.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    return p.returncode, out, err


def _wait_for_points(cache: Path, count: int, p: subprocess.Popen) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline and p.poll() is None:
        if len(list(cache.glob("*.json"))) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the sweep ended or stalled before {count} points were cached")


@pytest.fixture(scope="module")
def serial() -> dict:
    return sweep("ideal:4", "allgather", SIZES, "all", parallel=SERIAL)


def test_sweep_on_the_cluster_gives_exactly_the_serial_results(cluster, serial, tmp_path):
    code, out, err = _finish(_phalanx(*SWEEP, "--scheduler", cluster.address, "--cache", str(tmp_path)))
    assert code == 0, err
    assert json.loads(out)["results"] == serial["results"]
    assert "points: 21 computed, 0 from the cache (21 ok)" in err


def test_explore_on_the_cluster_gives_exactly_the_serial_table(cluster, tmp_path):
    grid = Grid(("ideal:4",), (parse_param("alpha_us=5,20"),), ("allgather",), (64, 1024),
                ("ring", "bruck"))
    table = tmp_path / "points.csv"
    code, _, err = _finish(_phalanx("explore", "--target", "ideal:4", "--param", "alpha_us=5,20",
                                    "--collective", "allgather", "--sizes", "64,1K", "--algorithm", "ring",
                                    "--algorithm", "bruck", "--scheduler", cluster.address,
                                    "--cache", str(tmp_path / "cache"), "--csv", str(table)))
    assert code == 0, err
    expected = csv_text(grid, explore(grid, SERIAL))
    assert table.read_text() == expected
    assert expected.count("\n") == 9 and ",ok," in expected


def test_ctrl_c_stops_cleanly_and_a_rerun_computes_only_the_missing_points(cluster, serial, tmp_path):
    """The sweep holds after its third computed point until a signal (the test hook
    PHALANX_HOLD_AFTER_POINTS, runtime/parallel.py), so Ctrl-C always finds exactly three points
    cached and 18 to go, however fast the warm cluster is."""
    args = [*SWEEP, "--scheduler", cluster.address, "--cache", str(tmp_path)]
    p = _phalanx(*args, env={HOLD_ENV: "3"})
    _wait_for_points(tmp_path, 3, p)
    p.send_signal(signal.SIGINT)
    code, _, err = _finish(p)
    assert code == 130 and err.strip().endswith("phalanx: interrupted"), err
    assert "Traceback" not in err and len(list(tmp_path.glob("*.json"))) == 3
    code, out, err = _finish(_phalanx(*args))
    assert code == 0, err
    assert "points: 18 computed, 3 from the cache" in err
    assert json.loads(out)["results"] == serial["results"]


def test_killing_a_worker_mid_sweep_loses_no_finished_point(cluster, serial, tmp_path):
    args = [*SWEEP, "--scheduler", cluster.address, "--cache", str(tmp_path), "--fresh"]
    p = _phalanx(*args)
    _wait_for_points(tmp_path, 2, p)
    before = {f.name for f in tmp_path.glob("*.json")}
    os.kill(cluster.workers[0].pid, signal.SIGKILL)  # the last test: the cluster is torn down next
    code, out, err = _finish(p)
    assert code == 0, err
    assert json.loads(out)["results"] == serial["results"]  # the other worker ran the rest
    assert before <= {f.name for f in tmp_path.glob("*.json")}
    assert len(list(tmp_path.glob("*.json"))) == 21
    code, out, err = _finish(_phalanx(*args[:-1]))  # a rerun finds every point in the cache
    assert code == 0 and "points: 0 computed, 21 from the cache" in err
    assert json.loads(out)["results"] == serial["results"]
