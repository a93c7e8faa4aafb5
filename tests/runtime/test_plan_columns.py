"""A schedule's columns (runtime/plan_columns.py) against the interpreter's own walk of it
(runtime/schedule_index.py): the same messages in the same order, one key id per transfer key,
each node's inbox per phase."""

from __future__ import annotations

import numpy as np

from phalanx.compiler.columns import PhaseColumns, known_columns, table
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.cost import combined_bytes
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.runtime import plan_columns
from phalanx.runtime.plan_columns import ScheduleColumns, _dense_ids, slot_index, slot_range
from phalanx.runtime.schedule_index import ScheduleIndex, transfer_key


def schedule() -> Schedule:
    """Three nodes, two phases: combined messages (ids 7 and 9) interleaved with single
    transfers, a copy, a piece, a transfer received twice, a sender outside the schedule."""
    a = Transfer(0, 1, 8, 0, 1, 7)
    b = Transfer(0, 2, 8, 0, 2)
    c = Transfer(0, 1, 8, 0, 2, 7)
    d = Transfer(1, 0, 8, 1, 0, 9)
    e = Transfer(0, 0, 8, 0, 0)
    f = Transfer(1, 2, 4, 1, 2, 0, 4)
    g = Transfer(1, 0, 8, 1, 2, 9)
    outside = Transfer(5, 0, 8, 5, 0)
    h = Transfer(2, 1, 8, 0, 2)
    return Schedule(0, Kind.ALLTOALL, "test", 3, (
        Phase((a, b, d, c, e, f, g, outside), (a, b, c, d, e, f, g, g)),
        Phase((h,), (h,), "barrier")))


def test_the_columns_walk_the_messages_of_the_interpreter_in_order():
    s = schedule()
    index, cols = ScheduleIndex(s), ScheduleColumns.of(s)
    walked = [group for k in range(len(s.phases)) for node in range(s.nprocs)
              for group in index.messages(k, node)]
    assert [cols.group(m) for m in range(cols.nmessages)] == walked
    assert [len(g) for g in walked] == [2, 1, 1, 2, 1, 1]  # the sender outside is not walked
    assert cols.summed_bytes().tolist() == [sum(t.nbytes for t in g) for g in walked]
    nbytes, finals = cols.combined_bytes()
    assert nbytes.tolist() == [combined_bytes(g) for g in walked] == [16, 8, 8, 16, 4, 8]
    assert finals.tolist() == [len({t.final for t in g}) for g in walked] == [2, 1, 1, 2, 1, 1]


def test_combined_bytes_take_each_final_and_piece_s_largest_transfer():
    """Partials of one final combine (the largest counts once), pieces of it count each,
    finals each: as compiler/library/cost.py combined_bytes, message by message."""
    group = (Transfer(0, 1, 8, 0, 3, 1), Transfer(0, 1, 24, 2, 3, 1), Transfer(0, 1, 16, 0, 2, 1),
             Transfer(0, 1, 4, 0, 3, 1, 0), Transfer(0, 1, 6, 2, 3, 1, 0), Transfer(0, 1, 4, 0, 3, 1, 4))
    other = (Transfer(1, 0, 5, 1, 0, 1), Transfer(1, 0, 7, 2, 0, 1))
    s = Schedule(0, Kind.ALLREDUCE, "test", 4, (Phase.of(group + other),))
    cols = ScheduleColumns.of(s)
    walked = [cols.group(m) for m in range(cols.nmessages)]
    nbytes, finals = cols.combined_bytes()
    assert nbytes.tolist() == [combined_bytes(g) for g in walked] == [24 + 16 + 6 + 4, 7]
    assert finals.tolist() == [2, 1]
    empty = ScheduleColumns.of(Schedule(0, Kind.ALLREDUCE, "test", 2, ()))
    assert [a.tolist() for a in empty.combined_bytes()] == [[], []]


def test_equal_transfer_keys_share_one_id_and_each_inbox_waits_once_per_key():
    s = schedule()
    cols = ScheduleColumns.of(s)
    ids = {}
    for t, key in zip(cols.sends, cols.key.tolist()):
        assert ids.setdefault(transfer_key(t), key) == key
    assert len(set(ids.values())) == len(ids)
    fields = [tuple(row) for row in cols.key_fields.tolist()]
    assert all(fields[key] == transfer_key(t) for t, key in zip(cols.sends, cols.key.tolist()))
    inbox = sorted(zip(cols.recv_slot.tolist(), cols.recv_key.tolist()))
    due = ScheduleIndex(s).due()
    expected = sorted({(k * s.nprocs + t.dst, ids[transfer_key(t)])
                       for k, p in enumerate(s.phases) for t in p.recvs})
    assert inbox == expected  # g is received twice in phase 0: waited for once
    for key, (node, k) in due.items():
        assert cols.key_due[ids[key]] == k * s.nprocs + node
    assert np.count_nonzero(cols.key_due >= 0) == len(due)


def _ids_one_row_at_a_time(keys: np.ndarray) -> tuple[list[int], list[tuple]]:
    distinct = sorted({tuple(row) for row in keys.tolist()})
    rank = {row: i for i, row in enumerate(distinct)}
    return [rank[tuple(row)] for row in keys.tolist()], distinct


def test_dense_ids_packed_and_lexsorted_are_the_rows_ranks():
    """One packed sort where the columns' spans fit in an int64, a lexsort where they do not:
    both the rank of each row among the distinct rows, as the rows compare one by one."""
    rng = np.random.default_rng(5)
    small = rng.integers(-1, 6, size=(400, 5))
    wide = small.copy()
    wide[:, 1] *= 1 << 40  # spans past 2**62 together: the lexsort
    wide[:, 3] *= 1 << 30
    for keys in (small, wide):
        ids, first = _dense_ids(list(keys.T))
        expected_ids, expected_rows = _ids_one_row_at_a_time(keys)
        assert ids.tolist() == expected_ids and [tuple(r) for r in keys[first].tolist()] == expected_rows


def _columns_equal(a: ScheduleColumns, b: ScheduleColumns) -> None:
    for name in ("sent", "phase_start", "table", "phase", "msg_start", "key", "recv_slot", "recv_key",
                 "key_due", "key_fields"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.sends == b.sends and [a.group(m) for m in range(a.nmessages)] == \
        [b.group(m) for m in range(b.nmessages)]


def test_columns_from_the_compiler_s_table_are_those_from_the_transfers():
    """A schedule whose phases the compiler built from a table (known_columns: no Transfer
    read) gives the columns a schedule of the same Transfer tuples gives; senders out of order
    and combined messages, so the walk order is sorted, not taken as it comes."""
    s = schedule()
    phases = [p.sends[:-1] if k == 0 else p.sends for k, p in enumerate(s.phases)]  # drop `outside`
    tables = [table(list(reversed(p))) for p in phases]
    built = Schedule(0, Kind.ALLTOALL, "test", 3, PhaseColumns.of(tables).phases())
    assert known_columns(built.phases) is not None
    plain = Schedule(0, Kind.ALLTOALL, "test", 3, tuple(Phase.of(tuple(reversed(p))) for p in phases))
    assert known_columns(plain.phases) is None
    from_table = ScheduleColumns.of(built)
    assert all(p.sends._built is None for p in built.phases)  # no Transfer made
    _columns_equal(from_table, ScheduleColumns.of(plain))


def test_key_fields_come_from_the_sends_unless_a_key_is_only_received():
    """Where every key is a send's, the sends' table gives the keys' fields (no second copy of
    the transfers kept: 205 MB at torus:16x16's bidirectional-rings reduce); a key only
    received keeps the receives' rows too."""
    sent_all = ScheduleColumns.of(schedule())  # its receives differ from its sends, keys do not
    assert sent_all.key_table is sent_all.table and sent_all.rows_of_keys is None
    a, only = Transfer(0, 1, 8, 0, 1), Transfer(2, 1, 8, 2, 1)
    cols = ScheduleColumns.of(Schedule(0, Kind.ALLTOALL, "test", 3, (Phase((a,), (a, only)),)))
    assert len(cols.key_table) == 3
    assert sorted(tuple(r) for r in cols.key_fields.tolist()) == sorted([transfer_key(a), transfer_key(only)])
    assert cols.key_due.tolist() == [1, 1]


def test_slot_index_is_the_smaller_form_and_finds_every_slot_s_entries():
    """Offsets per slot where there are as many entries as slots, else each entry's slot; either
    way each slot's entries (empty slots, a slot of several, the last slot)."""
    few = np.array([1, 1, 4, 9], np.int32)  # 4 entries in 10 slots: their slots
    many = np.array([0, 0, 0, 2, 2, 3], np.int32)  # 6 entries in 4 slots: offsets
    for slots, nslots in ((few, 10), (many, 4)):
        of = slot_index(slots, nslots, np.int32)
        assert len(of) == (nslots + 1 if len(slots) >= nslots else len(slots))
        for slot in range(nslots):
            lo, hi = slot_range(of, nslots, slot)
            assert np.flatnonzero(slots == slot).tolist() == list(range(lo, hi)), slot


def test_combined_messages_in_walk_order_keep_the_compiler_s_table_in_place():
    """A table whose messages (ids shared by several transfers) come by sender, each message's
    transfers together and its local copies after its messages (message-passing's one phase),
    is in walk order already: the columns
    take it as it is (`rows` None, no copy); the same messages interleaved are sorted. Both walk
    the interpreter's messages."""
    s = schedule()
    sends = [t for t in s.phases[0].sends if t.src < 3]  # drop `outside`
    walk = sorted(sends, key=lambda t: (t.src, t.src == t.dst,  # a sender's copies last
                                        (t.dst, t.message) if t.message else (-1, 0)))
    for order, in_place in ((walk, True), (sends, False)):
        built = Schedule(0, Kind.ALLTOALL, "test", 3, PhaseColumns.of([table(order)]).phases())
        cols, index = ScheduleColumns.of(built), ScheduleIndex(built)
        assert (cols.rows is None) == in_place
        assert [cols.group(m) for m in range(cols.nmessages)] == \
            [group for node in range(3) for group in index.messages(0, node)]


def test_messages_found_together_by_receiver_are_in_walk_order_as_the_grouping_finds(monkeypatch):
    """`_message_order` takes rows by sender whose receivers and message ids ascend (each
    message's transfers adjacent) as in walk order without grouping every transfer by message
    (`_messages_together`, a chunk at a time: here 5 rows); on seeded tables, some so ordered
    and some not, its answer is the grouping's, and a message's transfers apart are regrouped."""
    rng = np.random.default_rng(3)
    monkeypatch.setattr(plan_columns, "CHUNK", 5)
    found = []
    for trial in range(60):
        n = int(rng.integers(2, 40))
        rows = np.zeros((n, plan_columns.NFIELDS), np.int64)
        rows[:, plan_columns.SRC] = np.sort(rng.integers(0, 3, n))
        rows[:, plan_columns.DST] = rng.integers(0, 3, n)
        rows[:, plan_columns.MESSAGE] = rng.choice([0, 7, 9], n)
        if trial % 3 == 1:  # by receiver and message id within a sender
            rows = rows[np.lexsort((rows[:, plan_columns.MESSAGE], rows[:, plan_columns.DST],
                                    rows[:, plan_columns.SRC]))]
        elif trial % 3 == 2:  # by receiver only
            rows = rows[np.lexsort((rows[:, plan_columns.DST], rows[:, plan_columns.SRC]))]
        phase = np.zeros(n, np.int64)
        together = plan_columns._messages_together(rows, phase)
        answer = plan_columns._message_order(rows, phase)
        with monkeypatch.context() as m:
            m.setattr(plan_columns, "_messages_together", lambda table, phase: False)
            grouped = plan_columns._message_order(rows, phase)
        assert (answer is None and grouped is None) or np.array_equal(answer, grouped)
        assert not together or grouped is None
        found.append(together)
    assert any(found) and not all(found)
    apart = np.zeros((3, plan_columns.NFIELDS), np.int64)
    for dst in ([1, 2, 1], [1, 1, 1]):  # message 7's transfers apart: another receiver, message 0
        apart[:, plan_columns.DST], apart[:, plan_columns.MESSAGE] = dst, [7, 0, 7]
        assert not plan_columns._messages_together(apart, np.zeros(3, np.int64))
        assert plan_columns._message_order(apart, np.zeros(3, np.int64)).tolist() == [0, 2, 1]
