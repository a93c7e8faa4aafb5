"""One MPI rank of `--backend mpi`: run the plan's schedules with real bytes, verify, time.

Started by phalanx.runtime.backends.mpi as
`mpirun -n N python -m phalanx.runtime.backends.mpi_worker JOB.pickle STATUS_DIR`.
Every rank builds the same seeded arrays (runtime/data.py, as the built-in simulator
does), so each holds its own source blocks and knows the reference result. A phase posts
one MPI Irecv per message due to this rank and one Isend per message it sends (the
schedule's message groups, packed into one contiguous byte buffer), waits for all, and a
`barrier` phase adds MPI_Barrier. Received bytes are unpacked into the destination
arrays, which are checked against the reference on every rank. Each schedule is timed
with MPI_Wtime after a barrier (the maximum over ranks), then the MPI library's own
collective (Alltoallv, Bcast, Reduce, Allreduce) moves the same byte counts for comparison.
Compute steps are not executed (their cost is a model); pipeline stages run in order.

Each rank writes what it is doing to STATUS_DIR/rank-R, so the launcher can say which rank
hung or failed. `--fail-rank R` / `--hang-rank R` inject a failure or a hang (for tests).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.runtime.data import ReductionData, build_data
from phalanx.runtime.interpreter import messages

MPI_OPS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
TAG_SPAN = 30000  # MPI guarantees tags up to 32767: phase k uses tag k mod TAG_SPAN


class Status:
    """This rank's line in STATUS_DIR: what it does now, `done`, or `failed: why`."""

    def __init__(self, folder: str, rank: int):
        self.path = Path(folder) / f"rank-{rank}"

    def say(self, text: str) -> None:
        self.path.write_text(text)


def as_bytes(payload: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(payload).reshape(-1).view(np.uint8)


def unpack(data, t: Transfer, raw: np.ndarray) -> np.ndarray:
    """The bytes of block (origin, final) as the array the data layer expects."""
    if isinstance(data, ReductionData):
        return raw.view(data.reference.dtype).copy()
    values = raw.view(data.dst_local[t.final].dtype)
    if t.dst != t.final:
        return values.copy()  # forwarded on later as bytes
    shape = tuple(len(ix) for ix in data.commset.section(t.origin, t.final).indices)
    return values.reshape(shape).copy()


def run_phase(comm, rank: int, data, k: int, phase) -> None:
    tag = k % TAG_SPAN
    incoming = messages([t for t in phase.recvs if t.dst == rank and t.src != rank])
    buffers = [np.empty(sum(t.nbytes for t in g), dtype=np.uint8) for g in incoming]
    requests = [comm.Irecv(buf, source=g[0].src, tag=tag) for g, buf in zip(incoming, buffers)]
    for group in messages([t for t in phase.sends if t.src == rank]):
        payloads = [data.take(t) for t in group]
        if group[0].dst == rank:  # a local copy
            for t, payload in zip(group, payloads):
                data.put(t, payload)
            continue
        wire = np.concatenate([as_bytes(p) for p in payloads]) if payloads else np.empty(0, np.uint8)
        requests.append(comm.Isend(wire, dest=group[0].dst, tag=tag))
    MPI.Request.Waitall(requests)
    for group, buf in zip(incoming, buffers):
        offset = 0
        for t in group:
            data.put(t, unpack(data, t, buf[offset:offset + t.nbytes]))
            offset += t.nbytes
    if phase.sync == "barrier":
        comm.Barrier()


def library_collective(comm, rank: int, coll: dict[str, Any], data) -> tuple[str, float]:
    """MPI's own collective on the same byte counts (reductions: the same partial values)."""
    kind, m = coll["kind"], np.asarray(coll["matrix"], dtype=np.int64)
    root = coll["root"] if coll["root"] is not None else 0
    comm.Barrier()
    start = MPI.Wtime()
    if isinstance(data, ReductionData):
        part = data.partials.get(rank, np.zeros(1, data.reference.dtype))
        out = np.empty_like(part)
        if kind == "allreduce":
            name = "MPI_Allreduce"
            comm.Allreduce(part, out, op=MPI_OPS[data.stmt.op])
        else:
            name = "MPI_Reduce"
            comm.Reduce(part, out, op=MPI_OPS[data.stmt.op], root=root)
    elif kind == "broadcast":
        name = "MPI_Bcast"
        comm.Bcast(np.zeros(int(m[root].max(initial=0)), np.uint8), root=root)
    else:
        name = "MPI_Alltoallv"
        send, recv = m[rank], m[:, rank]
        sbuf, rbuf = np.zeros(int(send.sum()), np.uint8), np.empty(int(recv.sum()), np.uint8)
        comm.Alltoallv([sbuf, (send.tolist(), None), MPI.BYTE], [rbuf, (recv.tolist(), None), MPI.BYTE])
    return name, MPI.Wtime() - start


def run_schedule(comm, rank: int, s: Schedule, data, coll: dict[str, Any],
                 status: Status) -> dict[str, Any]:
    status.say(f"at the barrier before schedule {s.collective} (line {s.line})")
    comm.Barrier()
    start = MPI.Wtime()
    for k, phase in enumerate(s.phases):
        status.say(f"in schedule {s.collective} (line {s.line}) phase {k}")
        run_phase(comm, rank, data, k, phase)
    elapsed = MPI.Wtime() - start
    mine = [p for p in data.problems() if p.startswith(f"node {rank}:")]
    library, library_s = library_collective(comm, rank, coll, data)
    return {"time_s": elapsed, "library": library, "library_time_s": library_s, "problems": mine}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("job")
    ap.add_argument("status_dir")
    ap.add_argument("--fail-rank", type=int, default=-1, help="this rank raises (tests)")
    ap.add_argument("--hang-rank", type=int, default=-1, help="this rank never returns (tests)")
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    status = Status(args.status_dir, rank)
    status.say("starting")
    try:
        job = pickle.loads(Path(args.job).read_bytes())
        if rank == args.fail_rank:
            raise RuntimeError("failure injected by --fail-rank")
        status.say("warming up (a one-byte all-to-all between every pair of ranks)")
        comm.Alltoall(np.zeros(comm.Get_size(), np.uint8), np.empty(comm.Get_size(), np.uint8))
        if rank == args.hang_rank:
            status.say("hanging (injected by --hang-rank)")
            while True:
                time.sleep(1)
        rng = np.random.default_rng(job["seed"])
        schedules = job["schedules"]
        data = {s.collective: build_data(job["communications"][s.collective], rng) for s in schedules}
        results = {s.collective: run_schedule(comm, rank, s, data[s.collective],
                                              job["collectives"][s.collective], status)
                   for s in schedules}
    except Exception as exc:  # noqa: BLE001 - any failure must reach the launcher, then abort
        status.say(f"failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        comm.Abort(1)
        return 1
    gathered = comm.gather(results, root=0)
    status.say("done")
    if rank == 0:
        out = {}
        for i in results:
            rows = [g[i] for g in gathered]
            out[str(i)] = {"time_s": max(r["time_s"] for r in rows),
                           "library": rows[0]["library"],
                           "library_time_s": max(r["library_time_s"] for r in rows),
                           "problems": [p for r in rows for p in r["problems"]]}
        print(json.dumps({"nprocs": comm.Get_size(), "mpi": MPI.Get_library_version().splitlines()[0],
                          "collectives": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
