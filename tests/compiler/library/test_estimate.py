"""The cost model on columns (compiler/library/estimate.py) gives estimate_s's time float for
float, on every port model, without the schedule's transfers; Bruck's messages from counts are
its columns' messages; and the simulate cost model's event estimate reads the columns."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.algorithms import direct_columns
from phalanx.compiler.kind import Kind
from phalanx.compiler.library import checkerboard, index
from phalanx.compiler.library.cost import estimate_s
from phalanx.compiler.library.estimate import (
    column_messages,
    columns_estimate_s,
    followed_at_once,
    messages_estimate_s,
)
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import recognize
from phalanx.compiler.schedule import Phase, Schedule, SyncMode, Transfer
from phalanx.compiler.target import resolve

PORTS = {
    "one port": PortModel(10e-6, 1e-8, 1e-8),
    "copies and barriers": PortModel(10e-6, 1e-8, 1e-8, copy_s_per_byte=2e-9, barrier_s=3e-6),
    "four streams": PortModel(12e-6, 1e-8, 1e-8, streams=4, latency_s=2e-6),
    "shared engine": PortModel(30e-6, 2e-8, 1e-8, shared_engine=True),
    "shared ports": PortModel(10e-6, 1e-8, 1e-8, port_of=(0, 0, 1, 1, 2, 2, 3, 3)),
}


def patterns(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    uniform = np.full((n, n), 40)
    return [uniform, np.where(np.eye(n, dtype=bool), 0, uniform), rng.integers(0, 4, (n, n)) * 16]


@pytest.mark.parametrize("port", PORTS.values(), ids=PORTS.keys())
@pytest.mark.parametrize("sync", [SyncMode.LOCAL, SyncMode.BARRIER])
def test_the_columns_give_estimate_s_s_time(port, sync):
    for m in patterns(8):
        coll = recognize(0, m, "A", "B", 1)
        for columns in (direct_columns(coll), index.bruck_rounds(coll, (8,)),
                        index.bruck_rounds(coll, (2, 4))):
            columns = type(columns)(columns.rows, columns.offsets, (sync,) * len(columns.syncs))
            walked = estimate_s(Schedule(0, Kind.ALLTOALL, "x", 8, columns.phases()), port)
            assert columns_estimate_s(columns, 8, "alltoall", port) == walked


def test_phases_with_one_message_each_way_arefollowed_at_once():
    coll = recognize(0, patterns(8)[0], "A", "B", 1)
    port = PORTS["one port"]
    assert all(followed_at_once(p.src, p.dst, port) for p in column_messages(direct_columns(coll)))
    two_sends = np.array([0, 0]), np.array([1, 2])
    assert not followed_at_once(*two_sends, port)
    # a copy listed after or before its node's send: either way the copy follows the start-up
    assert followed_at_once(np.array([0, 0]), np.array([1, 0]), port)
    assert not followed_at_once(np.array([0, 0, 0]), np.array([1, 0, 0]), port)  # two copies
    assert not followed_at_once(np.array([0]), np.array([1]), PORTS["shared engine"])


@pytest.mark.parametrize("deposits", [False, True])
@pytest.mark.parametrize("dims", [(8,), (12,), (4, 4), (2, 2, 2, 2), (3, 5), (1, 6)])
def test_bruck_messages_from_counts_are_its_columns_messages(dims, deposits):
    """Counted (complete exchanges from the distances, other patterns block by block) as the
    columns hold them, a relay's packs too (PortModel.deposits: none of received blocks)."""
    n = int(np.prod(dims))
    for m in patterns(n):
        coll = recognize(0, m, "A", "B", 1)
        counted = list(index.bruck_round_messages(coll, dims, deposits))
        grouped = list(column_messages(index.bruck_rounds(coll, dims, deposits)))
        assert len(counted) == len(grouped)
        for a, b in zip(counted, grouped):
            assert a.src.tolist() == b.src.tolist() and a.dst.tolist() == b.dst.tolist()
            assert a.nbytes.tolist() == b.nbytes.tolist() and a.sync == b.sync
        port = PORTS["copies and barriers"]
        assert messages_estimate_s(counted, n, port) == columns_estimate_s(
            index.bruck_rounds(coll, dims, deposits), n, "alltoall", port)


@pytest.mark.parametrize("spec", ["ideal:16", "torus:4x4", "iwarp:8x8", "hypercube:4"])
def test_estimated_events_read_from_the_columns_are_the_schedule_s(spec):
    target = resolve(spec)
    n = target.nnodes
    for m in patterns(n)[1:]:
        coll = recognize(0, m, "A", "B", 1)
        for algorithm, reason in target.candidates(coll):
            if reason is not None:
                continue
            schedule = target.schedule_for(coll, algorithm)
            walked = sum(target.message_events(t.src, t.dst, t.nbytes) for p in schedule.phases
                         for t in p.sends if t.src != t.dst)
            assert target.estimated_events(coll, algorithm) == walked, algorithm


CHECKERBOARD_RECORDS = [
    ("checkerboard-bruck", checkerboard.checkerboard_bruck_columns,
     checkerboard.checkerboard_bruck_messages),
    ("signed-checkerboard-bruck", checkerboard.signed_checkerboard_bruck_columns,
     checkerboard.signed_checkerboard_bruck_messages),
    ("rows-bruck-columns-direct", checkerboard.rows_bruck_columns_direct_columns,
     checkerboard.rows_bruck_columns_direct_messages),
]


@pytest.mark.parametrize("spec", ["torus:4x4", "torus:8x8", "torus:4x8", "torus:16x2", "torus:8x16",
                                  "iwarp:8x8"])
def test_checkerboard_messages_from_sums_are_their_columns_messages(spec):
    """checkerboard-bruck, its signed form and rows-bruck-columns-direct list their candidates'
    messages from sums per holder and step, as their columns group them (the columns' rows
    per block took 0.7 GB a record at 32x32), uneven and sparse patterns too."""
    target = resolve(spec)
    machine, n = target.library.machine, target.nnodes
    converging = np.zeros((n, n), dtype=np.int64)
    converging[:, : max(n // 8, 1)] = 24
    for m in [*patterns(n), converging]:
        coll = recognize(0, m, "A", "B", 1)
        for name, columns_of, messages_of in CHECKERBOARD_RECORDS:
            columns = columns_of(coll, machine)
            counted = list(messages_of(coll, machine))
            grouped = list(column_messages(columns))
            assert len(counted) == len(grouped), name
            for a, b in zip(counted, grouped):
                assert (a.src.tolist(), a.dst.tolist(), a.nbytes.tolist(), a.sync) == \
                    (b.src.tolist(), b.dst.tolist(), b.nbytes.tolist(), b.sync), name
            assert messages_estimate_s(counted, n, machine.port) == columns_estimate_s(
                columns, n, Kind.ALLTOALL, machine.port), name


@pytest.mark.parametrize("copy_first", [True, False])
def test_a_nodes_copy_follows_its_start_up_however_listed(copy_first):
    """As the simulators walk a phase (compiler/plan_walk.py `messages`): node 0's 1000 B copy
    runs after its send's start-up, beside the streaming: the phase ends at the later of the
    message (10 us + 1000 B at 10 ns) and the start-up and copy (10 us + 1000 B at 20 ns)."""
    port = PortModel(10e-6, 1e-8, 1e-8, copy_s_per_byte=2e-8)
    send, copy = Transfer(0, 1, 1000, 0, 1), Transfer(0, 0, 1000, 0, 0)
    phase = Phase.of([copy, send] if copy_first else [send, copy])
    assert estimate_s(Schedule(0, Kind.ALLTOALL, "x", 2, (phase,)), port) == \
        pytest.approx(10e-6 + 1000 * 2e-8, rel=1e-12)
