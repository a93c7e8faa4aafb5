"""Schedules as columns (compiler/columns.py): the all-to-all family's generators build their
transfers in numpy, in the order the per-transfer loops they replace built them (the loops are
kept here as the reference), and the IR's tables go back to the very same phases."""

from __future__ import annotations

import pickle
from math import prod

import numpy as np
import pytest

from phalanx.compiler.algorithms import direct_partner, direct_phases
from phalanx.compiler.columns import PhaseColumns, TransferRows, known_columns, rows, transfers_of
from phalanx.compiler.ir.dialects.sched import ScheduleOp, schedule_from_ir, schedule_to_ir
from phalanx.compiler.kind import Kind
from phalanx.compiler.library import index
from phalanx.compiler.recognize import recognize
from phalanx.compiler.schedule import COMBINED, Phase, Schedule, Transfer
from phalanx.targets.iwarp.schedules import message_passing_schedule, posting_order
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE


def matrices(n: int) -> list[np.ndarray]:
    """A complete uniform exchange, one with its diagonal empty, and a random one with holes."""
    rng = np.random.default_rng(n)
    uniform = np.full((n, n), 24)
    empty_diagonal = uniform.copy()
    np.fill_diagonal(empty_diagonal, 0)
    return [uniform, empty_diagonal, rng.integers(0, 3, (n, n)) * 8]


def direct_reference(m: np.ndarray) -> list[list[Transfer]]:
    """The per-transfer loop direct_phases replaced (its first phase in the runtime's walk order)."""
    n = len(m)
    local = [Transfer(p, p, int(m[p, p]), p, p) for p in range(n) if m[p, p] > 0]
    phases = []
    for step in range(1, n):
        sends = [Transfer(r, q, int(m[r, q]), r, q)
                 for r in range(n) if m[r, q := direct_partner(r, step, n)] > 0]
        # step 1 with the local copies, each node's copy just before its send (the walk order)
        phases.append(sorted(local + sends, key=lambda t: (t.src, t.src != t.dst)) if step == 1
                      else sends)
    return phases if n > 1 else [local]


def bruck_reference(m: np.ndarray, dims: tuple[int, ...]) -> list[list[Transfer]]:
    """The per-block loop bruck_rounds replaced (each block followed in a dict)."""
    n = len(m)
    strides = [prod(dims[i + 1:]) for i in range(len(dims))]
    where = {(o, f): o for o in range(n) for f in range(n) if o != f and m[o, f]}
    phases = [[Transfer(p, p, int(m[p, p]), p, p) for p in range(n) if m[p, p] > 0]]
    for axis in reversed(range(len(dims))):
        size, stride = dims[axis], strides[axis]
        for k in range(index.rounds(size)):
            sends = []
            for (o, f), at in where.items():
                if (f // stride - o // stride) % size >> k & 1:
                    coord = at // stride % size
                    ahead = at + ((coord + (1 << k)) % size - coord) * stride
                    sends.append(Transfer(at, ahead, int(m[o, f]), o, f, COMBINED))
            sends.sort(key=lambda t: (t.src, t.origin, t.final))
            phases.append([Transfer(t.src, t.src, t.nbytes, t.origin, t.final, COMBINED)
                           for t in sends])
            phases.append(sends)
            for t in sends:
                where[(t.origin, t.final)] = t.dst
    return [p for p in phases if p] or [[]]


def sends_of(phases) -> list[list[Transfer]]:
    assert all(p.sends is p.recvs for p in phases)
    return [list(p.sends) for p in phases]


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_direct_builds_the_transfers_of_the_per_pair_loop(n):
    for m in matrices(n):
        assert sends_of(direct_phases(recognize(0, m, "A", "B", 1))) == direct_reference(m)


@pytest.mark.parametrize("n", [2, 5, 8])
def test_direct_written_a_few_steps_at_a_time_builds_the_same_transfers(n, monkeypatch):
    import phalanx.compiler.algorithms as algorithms

    monkeypatch.setattr(algorithms, "PART_ROWS", 2 * n)  # two steps a part, the last one alone
    for m in matrices(n):
        columns = algorithms.direct_columns(recognize(0, m, "A", "B", 1))
        assert columns.stored is not None and not columns.rows.flags.writeable
        phases = columns.phases()
        assert sends_of(phases) == direct_reference(m)
        assert known_columns(phases)[0] is columns.stored  # the IR keeps the very bytes


@pytest.mark.parametrize("dims", [(6,), (8,), (4, 4), (2, 2, 2), (3, 5)])
def test_bruck_builds_the_transfers_of_the_per_block_loop(dims):
    for m in matrices(prod(dims)):
        columns = index.bruck_rounds(recognize(0, m, "A", "B", 1), dims)
        assert sends_of(columns.phases()) == bruck_reference(m, dims)


@pytest.mark.parametrize("seed", [None, 1])
def test_message_passing_posts_in_the_loop_s_order(seed):
    m = matrices(6)[2]
    expected = [Transfer(s, d, int(m[s, d]), s, d, LIBRARY_MESSAGE)
                for s in range(6) for d in posting_order(s, 6, seed) if m[s, d] > 0]
    schedule = message_passing_schedule(recognize(0, m, "A", "B", 1), seed)
    assert sends_of(schedule.phases) == [expected]


def test_transfers_of_a_table_are_its_rows():
    table = np.array([[0, 70000, 8, 3, 1, 1 << 40, -1], [2, 1, 0, 2, 1, 0, 64]], dtype=np.int64)
    built = transfers_of(table)
    assert built == (Transfer(0, 70000, 8, 3, 1, 1 << 40, -1), Transfer(2, 1, 0, 2, 1, 0, 64))
    assert all(type(t) is Transfer for t in built) and transfers_of(table[:0]) == ()


def test_a_phase_s_rows_are_the_tuple_of_its_transfers_built_when_first_asked_for():
    table = rows(np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([8, 16, 8]), np.array([0, 1, 2]),
                 np.array([1, 2, 0]))
    lazy, expected = TransferRows(table), transfers_of(table)
    assert len(lazy) == 3 and lazy._built is None  # its length needs no Transfer
    assert lazy == expected and expected == lazy and hash(lazy) == hash(expected)
    assert lazy[1] == expected[1] and lazy[1:] == expected[1:] and list(lazy) == list(expected)
    assert lazy + (expected[0],) == expected + (expected[0],) and () + lazy == expected
    assert lazy == TransferRows(table.copy()) and lazy != TransferRows(table[:2]) and lazy != list(expected)
    assert pickle.loads(pickle.dumps(lazy)) == expected and repr(lazy) == repr(expected)
    phases = PhaseColumns.of([table, table[:1]]).phases()
    assert all(p.sends is p.recvs and isinstance(p.sends, TransferRows) for p in phases)
    assert phases == (Phase.of(expected), Phase.of(expected[:1]))


def test_the_ir_gives_back_the_phases_it_was_built_from():
    m = matrices(8)[2]
    phases = direct_phases(recognize(0, m, "A", "B", 1))
    op = schedule_to_ir(Schedule(0, Kind.ALLTOALL, "direct", 8, phases))
    assert schedule_from_ir(op).phases is phases
    # The same tables built afresh (not from the columns) give equal phases, rebuilt.
    walked = tuple(Phase.of(list(p.sends)) for p in phases)
    fresh = ScheduleOp(0, Kind.ALLTOALL, "direct", 8, walked)
    assert fresh.sends.data.data == op.sends.data.data
    assert schedule_from_ir(fresh).phases == phases


def test_empty_phases_are_left_out_as_the_schedule_leaves_them():
    empty = np.zeros((0, 7), dtype=np.int64)
    one = rows(np.array([1]), np.array([0]), np.array([8]), np.array([1]), np.array([0]))
    columns = PhaseColumns.of([empty, one, empty, one], "barrier").nonempty()
    assert columns.syncs == ("barrier", "barrier") and columns.offsets.tolist() == [0, 1, 2]
    assert [p.sends for p in columns.phases()] == [(Transfer(1, 0, 8, 1, 0),)] * 2
