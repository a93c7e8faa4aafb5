"""`--backend mpi -n N`: run the compiled plan on N real MPI processes (mpi4py, Open MPI).

The launcher pickles what the ranks need (the plan's steps, the statements that define the
data, the collectives' byte matrices, the seed) and starts
`mpirun -n N python -m phalanx.runtime.backends.mpi_worker JOB STATUS_DIR` with the venv's
interpreter. Rank 0 prints the measured times as JSON. Every rank writes its current
activity to STATUS_DIR, so a job that outlives `timeout_s` is killed (its whole process
group) and the error names the ranks that had not finished and where they were; a rank
that raises writes why and aborts the job, and the error quotes it.
As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM); they are set for mpirun only.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phalanx.compiler import groups
from phalanx.compiler.driver import Compiled, unrolled
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.interpreter import Execution, Span, SpanKind, StepTiming
from phalanx.runtime.simulate import RunResult, collective_result, iterations

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpi_missing() -> str | None:
    """Why the MPI backend cannot run here, or None when it can."""
    if shutil.which("mpirun") is None:
        return "mpirun not found: apt-get install openmpi-bin libopenmpi-dev"
    probe = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True,
                           text=True, timeout=120)
    if probe.returncode != 0:
        return f"mpi4py cannot be imported by {sys.executable}: pip install mpi4py"
    return None


def mpirun_command(nprocs: int, job: Path, status_dir: Path, extra: list[str]) -> list[str]:
    # --oversubscribe: more ranks than cores (CI machines have 2); vader is the shared-memory
    # transport, and its single-copy mechanism needs ptrace rights that containers often deny.
    return ["mpirun", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none",
            "-n", str(nprocs), sys.executable, "-m", "phalanx.runtime.backends.mpi_worker",
            str(job), str(status_dir), *extra]


def _job(compiled: Compiled, seed: int) -> dict[str, Any]:
    return {"seed": seed, "steps": compiled.plan.steps, "schedules": compiled.plan.schedules(),
            "communications": compiled.communications,
            "collectives": [{"kind": c.kind, "root": c.root, "matrix": c.byte_matrix,
                             "groups": [list(g) for g in c.groups], "roots": groups.roots(c)}
                            for c in compiled.collectives]}


def _statuses(status_dir: Path, nprocs: int) -> dict[int, str]:
    out = {}
    for rank in range(nprocs):
        path = status_dir / f"rank-{rank}"
        out[rank] = path.read_text() if path.exists() else "never started"
    return out


def _failure(statuses: dict[int, str], what: str) -> str:
    failed = {r: s for r, s in statuses.items() if s.startswith("failed")}
    if failed:
        return "; ".join(f"rank {r} {s.splitlines()[0]}" for r, s in failed.items())
    stuck = {r: s for r, s in statuses.items() if s != "done"}
    return what + ": " + "; ".join(f"rank {r} {s}" for r, s in stuck.items())


def launch(compiled: Compiled, nprocs: int, seed: int = 0, timeout_s: float = 300.0,
           extra: list[str] | None = None) -> dict[str, Any]:
    """Run the job under mpirun; rank 0's JSON, or a UsageError that names the failing rank."""
    reason = mpi_missing()
    if reason is not None:
        raise usage_error(f"the MPI backend cannot run: {reason}", "or use --backend sim")
    if nprocs != compiled.plan.nprocs:
        raise usage_error(f"the program runs on {compiled.plan.nprocs} processors but -n {nprocs} "
                          "was given", f"use -n {compiled.plan.nprocs}")
    with tempfile.TemporaryDirectory(prefix="phalanx-mpi-") as tmp:
        job, status_dir = Path(tmp) / "job.pickle", Path(tmp) / "status"
        status_dir.mkdir()
        job.write_bytes(pickle.dumps(_job(compiled, seed)))
        proc = subprocess.Popen(mpirun_command(nprocs, job, status_dir, extra or []),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=os.environ | ROOT_ENV, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise usage_error("the MPI job was killed after " + _failure(
                _statuses(status_dir, nprocs), f"{timeout_s:g} s without finishing"),
                "a rank that never finishes waits for a message that was not sent") from None
        if proc.returncode != 0:
            tail = " | ".join(err.strip().splitlines()[-3:])
            raise usage_error("the MPI job failed: " + _failure(
                _statuses(status_dir, nprocs), f"mpirun exit {proc.returncode} ({tail})"),
                "see the rank's error above")
    return json.loads(out.strip().splitlines()[-1])


@dataclass
class MpiRun:
    """Measured wall times of the schedules and of MPI's own collectives."""

    result: RunResult
    measured: dict[str, Any]

    @property
    def verified(self) -> bool:
        return self.result.verified

    def to_json(self) -> dict[str, Any]:
        out = self.result.to_json()
        out["nprocs"], out["mpi"] = self.measured["nprocs"], self.measured["mpi"]
        out["compute_late_s"] = self.measured["compute_late_s"]
        for c, s in zip(out["collectives"], self.result.compiled.plan.schedules()):
            m = self.measured["collectives"][str(s.collective)]
            c["mpi_library"], c["mpi_library_time_s"] = m["library"], m["library_time_s"]
            c["schedule_over_library"] = (m["time_s"] / m["library_time_s"]
                                          if m["library_time_s"] > 0 else None)
        return out


def run_mpi(compiled: Compiled, nprocs: int | None = None, seed: int = 0,
            timeout_s: float = 300.0, extra: list[str] | None = None) -> MpiRun:
    """Run the plan (compute steps, schedules, pipelines) on real processes; times are wall
    clock (MPI_Wtime from a barrier before the plan). A program with repeats runs unrolled
    (driver.unrolled): one collective per run."""
    compiled = unrolled(compiled)
    measured = launch(compiled, nprocs or compiled.plan.nprocs, seed, timeout_s, extra)
    results, timings, runs = [], {}, iterations(compiled.plan)
    for s in compiled.plan.schedules():
        m = measured["collectives"][str(s.collective)]
        timings[s.collective] = StepTiming(m["start_s"], m["end_s"])
        results.append(collective_result(compiled, s, m["time_s"], m["problems"], runs[s.collective],
                                         m["start_s"], m["end_s"]))
    spans = [Span(rank, SpanKind(kind), a, b, label) for rank, kind, a, b, label in measured["spans"]]
    execution = Execution(measured["total_time_s"], timings, spans)
    return MpiRun(RunResult(compiled, execution, results, seed, None, backend="mpi"), measured)
