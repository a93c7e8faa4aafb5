"""Pieces of blocks moved in bulk (runtime/data_pieces.py, AssignmentData.can_move_in_bulk and
move_in_bulk): accepted only where they tile their blocks exactly once, so that a wrong piece
goes back to the one-by-one path and its error."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.data import build_data
from phalanx.runtime.data_assign import AssignmentData
from phalanx.runtime.data_pieces import PieceTiling

# 4 nodes, every block 2 x 2 float64: 32 bytes
ROWS_TO_COLUMNS = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
B = A
"""


def _data() -> AssignmentData:
    (stmt,) = compile_program(ROWS_TO_COLUMNS, file="t.phx").communications
    data = build_data(stmt, np.random.default_rng(0), {})
    assert isinstance(data, AssignmentData)
    return data


def _table(data: AssignmentData, spans: list[tuple[int, int]]) -> np.ndarray:
    """Every block of the statement, origin to final, each in pieces of (offset, bytes) `spans`."""
    rows = [(p, q, nbytes, p, q, 0, offset) for p, q in np.argwhere(data.commset.byte_matrix > 0).tolist()
            for offset, nbytes in spans]
    return np.array(rows, np.int64)


def test_pieces_that_tile_every_block_move_in_bulk_in_two_chunks_and_verify():
    data = _data()
    table = _table(data, [(16, 8), (0, 16), (24, 8)])
    assert data.can_move_in_bulk(table)
    first, second = table[::2], table[1::2]  # every block has pieces in both chunks
    data.move_in_bulk(first)
    assert not data.delivered.any()  # no block whole yet
    assert data.can_move_in_bulk(second)
    data.move_in_bulk(second)
    assert data.delivered[data.commset.byte_matrix > 0].all()
    assert data.problems() == []


@pytest.mark.parametrize("spans", [
    [(0, 16), (8, 16), (24, 8)],  # a piece shifted: it overlaps its neighbour
    [(0, 16), (24, 8)],  # a piece missing: a gap
    [(0, 16), (16, 24)],  # past the block's 32 bytes
    [(0, 16), (16, 16), (16, 16)],  # a piece twice
    [(0, 16), (16, 0), (16, 16)]])  # an empty piece
def test_pieces_that_do_not_tile_their_block_once_are_refused(spans):
    data = _data()
    table = _table(data, spans)
    assert PieceTiling.of(table, data.commset.byte_matrix) is None
    assert not data.can_move_in_bulk(table)
    assert data.arrivals is None  # nothing accepted: the replay moves them one by one


def test_a_corrupted_piece_of_one_block_is_refused_among_right_ones():
    data = _data()
    table = _table(data, [(0, 16), (16, 16)])
    table[5, 6] = 8  # block 0->2's second piece says bytes [8, 24): overlaps its first
    assert not data.can_move_in_bulk(table)


def test_a_piece_delivered_twice_is_refused_after_it_came_in_bulk():
    data = _data()
    table = _table(data, [(0, 16), (16, 16)])
    assert data.can_move_in_bulk(table)
    data.move_in_bulk(table[:4])
    assert not data.can_move_in_bulk(table[3:5])  # block 0->1's second piece came already
    assert not data.can_move_in_bulk(np.concatenate([table[4:6], table[4:5]]))  # twice in one chunk
    wrong = table[4:5].copy()
    wrong[0, 6] = 8  # an offset the tiling does not have
    assert not data.can_move_in_bulk(wrong)


def test_a_block_both_whole_and_in_pieces_is_refused():
    data = _data()
    table = _table(data, [(0, 16), (16, 16)])
    whole = np.array([[0, 1, 32, 0, 1, 0, -1]], np.int64)
    assert not data.can_move_in_bulk(np.concatenate([table, whole]))


def test_a_block_missing_a_piece_moved_in_bulk_never_arrives():
    data = _data()
    table = _table(data, [(0, 16), (16, 16)])
    assert data.can_move_in_bulk(table)
    keep = ~((table[:, 3] == 0) & (table[:, 4] == 1) & (table[:, 6] == 16))
    data.move_in_bulk(table[keep])
    assert data.problems() == ["node 1: 4 elements never arrived (blocks from [0])"]
