"""Every data object the interpreter runs with declares runtime/data.py's CollectiveData: a
method left out of one of them (as `strided_bytes` once was, breaking a merge) fails here,
not in the middle of a run."""

from __future__ import annotations

import re

import numpy as np
import pytest

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.driver import compile_program
from phalanx.compiler.schedule import Transfer
from phalanx.runtime.data import CollectiveData, build_data, move
from phalanx.runtime.data_assign import AssignmentData
from phalanx.runtime.data_reduce import ReductionData
from phalanx.runtime.data_store import PieceSpans, ScheduleError
from phalanx.runtime.data_values import random_global
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.synthetic import SyntheticData
from phalanx.runtime.timing import TimingData

PROGRAM = """target ideal:4
processors P(4)
array A(16) of float64 distribute BLOCK onto P
array B(16) of float64 distribute CYCLIC onto P
array s(1) of float64 replicated onto P
B = A
s = sum(A)
"""


def _program_data() -> list[object]:
    compiled = compile_program(PROGRAM, file="d.phx")
    rng = np.random.default_rng(0)
    return [build_data(stmt, rng, {}) for stmt in compiled.communications]


def test_every_data_object_declares_the_interface():
    assignment, reduction = _program_data()
    assert isinstance(assignment, AssignmentData) and isinstance(reduction, ReductionData)
    objects = [assignment, reduction, SyntheticData(np.full((4, 4), 8), 1), TimingData(False)]
    for data in objects:
        assert isinstance(data, CollectiveData), type(data).__name__


@pytest.mark.parametrize("missing", ["strided_bytes", "problems", "wire_bytes"])
def test_an_object_without_one_method_is_not_collective_data(missing):
    class Partial(TimingData):
        pass

    setattr(Partial, missing, None)  # a data object that does not offer this method
    assert not isinstance(Partial(False, 4), CollectiveData)


ROWS_TO_COLUMNS = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
B = A
"""


def _moved_in_bulk(program: str, leave_out: tuple[int, int] | None = None) -> AssignmentData:
    """The data of `program`'s one plain statement with every block (but `leave_out`) moved
    origin to final in bulk, not written yet."""
    (stmt,) = compile_program(program, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData)
    blocks = np.argwhere(data.commset.byte_matrix > 0)
    blocks = blocks[[tuple(b) != leave_out for b in blocks.tolist()]]
    nbytes = data.commset.byte_matrix[blocks[:, 0], blocks[:, 1]]
    table = np.column_stack([blocks[:, 0], blocks[:, 1], nbytes, blocks[:, 0], blocks[:, 1],
                             np.zeros(len(blocks), np.int64), np.full(len(blocks), -1)])
    assert data.can_move_in_bulk(table)
    data.move_in_bulk(table)
    return data


def _all_moved_in_bulk() -> AssignmentData:
    """A plain all-to-all's data with every block moved origin to final in bulk, written."""
    data = _moved_in_bulk(ROWS_TO_COLUMNS)
    data.write_delivered()  # every block came: all nodes written at once (DirectMoves.write_all)
    return data


def test_every_node_written_and_checked_at_once_passes():
    assert _all_moved_in_bulk().problems() == []


@pytest.mark.parametrize("spoil, problem", [
    (lambda d: d.dst_local[2].reshape(-1).__setitem__(3, 7.0),
     "node 2: delivered values differ from the reference result"),
    (lambda d: d.block_count.__setitem__((0, 1), 2),  # block 0->1 (2 x 2 elements) came twice
     "node 1: 4 elements arrived more than once or where none were due"),
    (lambda d: d.block_count.__setitem__((3, 1), 0),
     "node 1: 4 elements never arrived (blocks from [3])")])
def test_the_check_of_every_node_at_once_still_finds_a_wrong_element(spoil, problem):
    """The one comparison over every node's flat buffer refuses a wrong value or a second
    write; the node-by-node check then names the node."""
    data = _all_moved_in_bulk()
    spoil(data)
    assert data.problems() == [problem]


# Past FLAT_CHECK_ELEMENTS (runtime/data_facts.py): 8 nodes, 16 KB each (131,072 byte elements)
ALLTOALL_LARGE = "target ideal:8\n" + kind_program("alltoall", 8, 2048)
# a 2 x 4 grid's transpose onto 4 x 2: strided reads
TRANSPOSE_LARGE = "target ideal:8\n" + kind_program("permutation", 8, 16384)


@pytest.mark.parametrize("program", [ALLTOALL_LARGE, TRANSPOSE_LARGE])
def test_a_large_statement_moved_in_bulk_is_checked_where_its_blocks_land(program):
    """Every block moved in bulk once: each node's blocks are compared with the reference where
    they land, and the destination's array is never written (its buffer stays zero)."""
    data = _moved_in_bulk(program)
    assert data.problems() == []
    assert data.dst_flat is not None and not data.dst_flat.any()


@pytest.mark.parametrize("program", [ALLTOALL_LARGE, TRANSPOSE_LARGE])
def test_a_check_that_reads_no_value_never_writes_the_payload(program):
    """`B = A` or `B = transpose(A)` of bytes moved in bulk: the blocks land where the reference
    reads the source in place, so the check needs no value and the source's payload words are
    never written (its pages never touched)."""
    data = _moved_in_bulk(program)
    assert data.draw is not None  # (deferred by build: the reference is a view of the source)
    assert data.problems() == []
    assert data.draw is not None  # (still: no value was read)


def test_a_block_packed_writes_the_payload_first():
    """A block packed for a move one by one writes the deferred payload words first: the values
    random_global draws from the same generator."""
    (stmt,) = compile_program(ALLTOALL_LARGE, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData) and data.source is not None and data.draw is not None
    block = data.pack(0, 1)
    assert data.draw is None
    assert np.array_equal(data.source, random_global(stmt.src, np.random.default_rng(0)))
    assert block.any() and np.array_equal(block, data.source[:1, 2048:4096])


def test_a_statement_whose_reference_is_a_copy_draws_its_payload_at_once():
    """A section (the reference a copy, made from the values) is written when built."""
    program = ALLTOALL_LARGE.replace("B = A", "B(0:3, :) = A(4:7, :)")
    (stmt,) = compile_program(program, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData) and data.draw is None and data.source is not None
    assert np.array_equal(data.source, random_global(stmt.src, np.random.default_rng(0)))


def _spoiled_source(data: AssignmentData) -> None:
    """Node 0's bytes at global [0, 5] differ from what the reference was made of: each block
    of node 0 reads them, as a wrong byte on the way would."""
    assert data.source is not None
    data.drawn()  # (its payload words, deferred until a value is read: AssignmentData.build)
    data.source = data.source.copy()
    data.source[0, 5] ^= 0xFF


@pytest.mark.parametrize("leave_out, spoil, problem", [
    (None, _spoiled_source, "node 0: delivered values differ from the reference result"),
    (None, lambda d: d.block_count.__setitem__((2, 5), 2),  # block 2->5 (1 x 2048 bytes) came twice
     "node 5: 2048 elements arrived more than once or where none were due"),
    ((3, 1), lambda d: None, "node 1: 2048 elements never arrived (blocks from [3])")])
def test_the_check_where_blocks_land_still_finds_what_is_wrong(leave_out, spoil, problem):
    """A wrong byte, a block twice or a block missing: the blocks are then written and the
    node-by-node check names the node, as before."""
    data = _moved_in_bulk(ALLTOALL_LARGE, leave_out)
    spoil(data)
    assert data.problems() == [problem]


COLUMNS_TO_ROWS = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (*, BLOCK) onto P
array B(8, 8) of float64 distribute (BLOCK, *) onto P
B = A
"""


def _pieces(spans: list[tuple[int, int]], program: str = ROWS_TO_COLUMNS) -> AssignmentData:
    """`program`'s data (ROWS_TO_COLUMNS's by default) with every block moved whole but block
    0->1 (2 x 2 float64, 32 bytes), which node 0 sends to node 1 in pieces of (offset, bytes)
    `spans`, in that order."""
    (stmt,) = compile_program(program, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData)
    for origin, final in np.argwhere(data.commset.byte_matrix > 0).tolist():
        if (origin, final) != (0, 1):
            move(data, Transfer(origin, final, int(data.commset.byte_matrix[origin, final]), origin, final))
    for offset, nbytes in spans:
        move(data, Transfer(0, 1, nbytes, 0, 1, offset=offset))
    return data


@pytest.mark.parametrize("spans", [[(0, 16), (16, 16)], [(16, 8), (0, 16), (24, 8)], [(0, 32)]])
def test_a_block_whose_pieces_tile_it_once_in_any_order_passes(spans):
    data = _pieces(spans)
    assert data.store.spans.under_way() == [] and data.problems() == []
    # Nothing of the block is kept: its packed copy once every byte was cut from it, its pieces
    # at their destination, which does not forward them
    assert data.store.copies[0] == {} and data.store.cut == {} and data.store.pieces[1] == {}


@pytest.mark.parametrize("spans, error", [
    ([(0, 16), (0, 16)], "piece [0, 16) of block 0->1 overlaps bytes that already arrived"),  # twice
    ([(0, 16), (8, 16)], "piece [8, 24) of block 0->1 overlaps bytes that already arrived"),  # wrong offset
    ([(16, 16), (8, 8), (0, 16)], "piece [0, 16) of block 0->1 overlaps bytes that already arrived"),
    ([(0, 16), (24, 16)], "sends piece [24, 40) of block 0->1, past the block's 32 bytes")])
def test_a_piece_twice_or_at_a_wrong_offset_is_refused(spans, error):
    with pytest.raises(ScheduleError, match=re.escape(error)):
        _pieces(spans)


def test_pieces_are_written_where_their_block_lands():
    """Block 0->1 is rows 0-1 of node 1's columns 2-3 (a run of its array): its pieces are
    written there as they come, no buffer of its own; node 0 packed it as a copy (columns 2-3
    of its rows), kept until every byte is cut."""
    data = _pieces([(0, 16)])
    assert data.store.assembling == {} and data.store.spans.under_way() == [(0, 1)]
    assert data.dst_local[1][0, :].tobytes() == data.pack(0, 1)[0, :].tobytes()
    assert list(data.store.copies[0]) == [(0, 1)] and data.store.cut == {(0, 1): 16}


def test_pieces_are_assembled_apart_where_their_block_is_no_run_of_the_array():
    """COLUMNS_TO_ROWS's block 0->1 is 2 x 2 of node 1's rows of 8 (no run): its pieces are
    assembled in a buffer and the block written whole once complete."""
    data = _pieces([(0, 16)], COLUMNS_TO_ROWS)
    assert list(data.store.assembling) == [(0, 1)] and not data.dst_local[1][0:2, 0:2].any()
    data = _pieces([(16, 16), (0, 16)], COLUMNS_TO_ROWS)
    assert data.store.assembling == {} and data.problems() == []


ROW_PER_NODE = """target ideal:4
processors P(4)
array A(4, 16) of float64 distribute (BLOCK, *) onto P
array B(4, 16) of float64 distribute (*, BLOCK) onto P
B = A
"""


def test_a_block_packed_as_a_view_of_the_source_is_not_kept_at_its_origin():
    """ROW_PER_NODE's block 0->1 is 4 float64 of A's row 0, a run of the source: each piece is
    cut from it packed again (a view), no copy kept; its pieces land in place at node 1."""
    data = _pieces([(0, 8)], ROW_PER_NODE)
    assert data.store.copies[0] == {} and data.store.cut == {} and data.store.assembling == {}
    assert data.dst_local[1][0, 0] == data.source[0, 4]
    data = _pieces([(8, 24), (0, 8)], ROW_PER_NODE)
    assert data.store.spans.under_way() == [] and data.problems() == []


def test_piece_spans_join_out_of_order_and_a_whole_block_starts_over():
    """Pieces past the prefix wait in `later` until the prefix reaches them; a whole block
    leaves no record, so its bytes coming again make it whole a second time (counted twice
    by the data, as before)."""
    spans = PieceSpans(4)
    assert not spans.add(0, 1, 24, 32, 32, "c") and not spans.add(0, 1, 8, 16, 32, "b")
    assert spans.later == {(0, 1): [(8, 16), (24, 32)]} and spans.under_way() == [(0, 1)]
    assert not spans.add(0, 1, 0, 8, 32, "a") and spans.later == {(0, 1): [(24, 32)]}
    with pytest.raises(ScheduleError, match=re.escape("d overlaps bytes that already arrived")):
        spans.add(0, 1, 12, 20, 32, "d")
    assert spans.add(0, 1, 16, 24, 32, "e") and spans.later == {} and spans.under_way() == []
    assert spans.add(0, 1, 0, 32, 32, "f")


def test_a_missing_piece_leaves_its_block_unwritten():
    data = _pieces([(0, 16)])  # bytes [16, 32) never come: the block is never whole
    assert data.problems() == ["node 1: 4 elements never arrived (blocks from [0])"]
    assert data.store.spans.under_way() == [(0, 1)]


def test_a_block_delivered_twice_is_counted_per_block():
    """A block put a second time (whole, or completed again from pieces) counts twice."""
    data = _pieces([(0, 32)])
    data.put(Transfer(0, 1, 32, 0, 1), data.pack(0, 1))
    assert data.block_count[0, 1] == 2
    assert data.problems() == ["node 1: 4 elements arrived more than once or where none were due"]


def _bulk_table(data: AssignmentData) -> np.ndarray:
    """Every block of `data` origin to final, whole, as transfer rows (Transfer's fields)."""
    blocks = np.argwhere(data.commset.byte_matrix > 0)
    nbytes = data.commset.byte_matrix[blocks[:, 0], blocks[:, 1]]
    return np.column_stack([blocks[:, 0], blocks[:, 1], nbytes, blocks[:, 0], blocks[:, 1],
                            np.zeros(len(blocks), np.int64), np.full(len(blocks), -1)])


def _twice(table: np.ndarray) -> np.ndarray:
    return np.concatenate((table, table[5:6]))  # block of row 5 again, in the last chunk


def _wrong_size(table: np.ndarray) -> np.ndarray:
    table[9, 2] += 8
    return table


def _forwarded(table: np.ndarray) -> np.ndarray:
    table[9, 1] = (table[9, 1] + 1) % 4  # to a node that is not the block's final one
    return table


def _outside(table: np.ndarray) -> np.ndarray:
    table[9, [0, 3]] = 4  # from node 4 of ideal:4's 0..3
    return table


@pytest.mark.parametrize("rows_at_a_time", [4, 1 << 16])
@pytest.mark.parametrize("spoil", [_twice, _wrong_size, _forwarded, _outside])
def test_the_bulk_check_refuses_a_block_twice_a_wrong_size_or_a_forward(monkeypatch, rows_at_a_time, spoil):
    """can_move_in_bulk reads the table a chunk of rows at a time (BULK_CHECK_ROWS) and the
    blocks by flat id: a block twice (in another chunk), a size that is not the block's, a
    transfer that does not go origin to final or a node outside the machine is refused
    (then the moves replay one by one and the Python engine's error comes)."""
    monkeypatch.setattr("phalanx.runtime.data_assign.BULK_CHECK_ROWS", rows_at_a_time)
    (stmt,) = compile_program(ROWS_TO_COLUMNS, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData)
    table = _bulk_table(data)
    assert data.can_move_in_bulk(table.copy())
    assert not data.can_move_in_bulk(spoil(table))


@pytest.mark.parametrize("rows_at_a_time", [4, 1 << 16])
def test_blocks_moved_in_bulk_a_chunk_at_a_time_are_each_counted_once(monkeypatch, rows_at_a_time):
    """move_in_bulk marks and counts every block, chunk by chunk; a second bulk move of one
    of them is refused (it is no longer unsent)."""
    monkeypatch.setattr("phalanx.runtime.data_assign.BULK_CHECK_ROWS", rows_at_a_time)
    (stmt,) = compile_program(ROWS_TO_COLUMNS, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData)
    table = _bulk_table(data)
    assert data.can_move_in_bulk(table)
    data.move_in_bulk(table)
    due = data.commset.byte_matrix > 0
    assert (data.block_count == due).all() and (data.delivered == due).all() and not data.store.fresh.any()
    assert not data.can_move_in_bulk(table[:1])
    assert data.problems() == []


def test_the_run_takes_the_compiles_communication_set():
    """The compile builds each assignment's communication set once (Compiled.commsets, read by
    recognition) and the run's data takes that one; it is the statement's."""
    compiled = compile_program(PROGRAM, file="d.phx")
    commset = compiled.commsets[0]
    assert commset is not None and compiled.commsets[1] is None  # (an assignment, a reduction)
    data = build_data(compiled.communications[0], np.random.default_rng(0), {}, commset=commset)
    assert isinstance(data, AssignmentData) and data.commset is commset
    assert np.array_equal(commset.byte_matrix, CommSet(compiled.communications[0]).byte_matrix)
    assert np.array_equal(commset.byte_matrix, compiled.collectives[0].matrix)


def test_a_byte_matrix_block_in_pieces_is_assembled_and_checked_once():
    """SyntheticData (sweeps of byte matrices) takes a block's pieces as AssignmentData does: the
    block is checked when its pieces tile it, each byte once; a missing piece leaves the block
    undelivered, a wrong byte in a piece is found, and a piece twice is refused."""
    matrix = np.array([[0, 10], [6, 0]])

    def run(spans, spoil_first=False):
        data = SyntheticData(matrix)
        for k, (offset, nbytes) in enumerate(spans):
            t = Transfer(0, 1, nbytes, 0, 1, 0, offset)
            payload = data.take(t).copy()
            if spoil_first and k == 0:
                payload[0] ^= 1
            data.put(t, payload)
        return data.problems()

    assert run([(4, 6), (0, 4)]) == ["1 blocks never arrived, e.g. (1, 0)"]  # (0, 1) whole: only (1, 0) left
    assert run([(0, 4)]) == ["2 blocks never arrived, e.g. (0, 1)"]
    assert run([(4, 6), (0, 4)], spoil_first=True)[0] == "block 0->1 arrived with wrong bytes"
    with pytest.raises(ScheduleError, match="overlaps bytes that already arrived"):
        run([(0, 4), (2, 4)])
