"""Pieces of blocks moved in bulk: byte ranges checked as arrays, not one span at a time.

A transfer may carry a piece of a block (Transfer.offset: bytes [offset, offset + nbytes)); one
by one, runtime/data_store.py's BlockStore cuts each piece from the packed block and assembles
the block at its destination span by span, refusing a piece that overlaps bytes already there
or lies past the block. The native replay (runtime/native_replay.py) moves a run's pieces in
bulk instead where that cannot fail: every piece goes from its block's origin straight to its
destination and, over all the pieces the run's data accepted (`PieceTiling`), each block's
pieces tile it exactly once (sorted by offset: the first at 0, each next one where the previous
ends, the last ending at the block's size, none empty). Then no piece can overlap another or
lie past its block, cutting and assembling hand the block's bytes on unchanged, and a block is
whole, each byte once, when every one of its pieces has come once (the replay sees to once:
each transfer key arrives once). runtime/data_assign.py then writes it as a whole block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phalanx.runtime.plan_columns import FINAL, NBYTES, OFFSET, ORIGIN, all_distinct

MAX_KEY = 1 << 62  # block id x (largest block + 1) must stay below this (int64 sort keys)


@dataclass(frozen=True)
class PieceTiling:
    """Pieces that tile their blocks exactly once: sorted by (block, offset), with each piece's
    block as an index into `blocks` (the distinct block ids, origin * nprocs + final)."""

    nprocs: int
    span: int  # largest block's bytes + 1: a piece's sort key is block id * span + offset
    keys: np.ndarray  # sorted
    nbytes: np.ndarray  # by key
    blocks: np.ndarray  # distinct block ids, ascending
    block_of: np.ndarray  # by key: index into `blocks`
    pieces: np.ndarray  # by block: how many pieces tile it

    @staticmethod
    def of(rows: np.ndarray, byte_matrix: np.ndarray) -> PieceTiling | None:
        """The tiling that the piece transfers `rows` (Transfer's fields; every offset a piece's)
        make of their blocks (of `byte_matrix[origin, final]` bytes), or None where some block's
        pieces do not tile it exactly once."""
        nprocs = len(byte_matrix)
        block = rows[:, ORIGIN] * nprocs + rows[:, FINAL]
        offset, nbytes = rows[:, OFFSET], rows[:, NBYTES]
        span = int(byte_matrix.max(initial=0)) + 1
        if nprocs * nprocs * span >= MAX_KEY or (nbytes <= 0).any() or (offset < 0).any():
            return None
        key = block * span + offset
        order = np.argsort(key, kind="stable")
        key, block, offset, nbytes = key[order], block[order], offset[order], nbytes[order]
        end = offset + nbytes
        first = np.concatenate(([True], block[1:] != block[:-1]))
        last = np.concatenate((first[1:], [True]))
        size = byte_matrix.reshape(-1)[block]
        if not ((offset[first] == 0).all() and (end[last] == size[last]).all()
                and (offset[1:][~first[1:]] == end[:-1][~first[1:]]).all()):
            return None  # a gap, an overlap (a piece twice among them), or a piece past its block
        starts = np.flatnonzero(first)
        pieces = np.diff(np.append(starts, len(key)))
        return PieceTiling(nprocs, span, key, nbytes, block[starts], np.cumsum(first) - 1, pieces)

    def find(self, rows: np.ndarray) -> np.ndarray | None:
        """Each piece transfer of `rows` as its position among the tiling's pieces, or None
        where one of them is not a piece of the tiling (another block, offset or size)."""
        offset = rows[:, OFFSET]
        if not len(rows):
            return np.zeros(0, np.int64)
        if not len(self.keys) or (offset < 0).any() or (offset >= self.span).any():
            return None
        key = (rows[:, ORIGIN] * self.nprocs + rows[:, FINAL]) * self.span + offset
        at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        if not ((self.keys[at] == key) & (self.nbytes[at] == rows[:, NBYTES])).all():
            return None
        return at

    def has_blocks(self, block_ids: np.ndarray) -> np.ndarray:
        """Which of these block ids (origin * nprocs + final) the tiling's pieces cut."""
        if not len(self.blocks):
            return np.zeros(len(block_ids), bool)
        at = np.minimum(np.searchsorted(self.blocks, block_ids), len(self.blocks) - 1)
        return self.blocks[at] == block_ids


class PieceArrivals:
    """The pieces of a tiling that have come (each at most once), counted per block: a block
    is whole when all of its pieces have."""

    def __init__(self, tiling: PieceTiling):
        self.tiling = tiling
        self.came = np.zeros(len(tiling.keys), bool)  # by the tiling's piece
        self.count = np.zeros(len(tiling.blocks), np.int64)  # by the tiling's block

    def fresh(self, positions: np.ndarray) -> bool:
        """None of the pieces at these positions of the tiling has come, and none is named twice."""
        return not self.came[positions].any() and all_distinct(positions)

    def arrive(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pieces at these positions of the tiling come (`fresh` said they may); returns
        the (origin, final) of the blocks they made whole."""
        tiling = self.tiling
        self.came[positions] = True
        came = np.bincount(tiling.block_of[positions], minlength=len(tiling.blocks))
        touched = np.flatnonzero(came)
        self.count[touched] += came[touched]
        whole = touched[self.count[touched] == tiling.pieces[touched]]
        ids = tiling.blocks[whole]
        return ids // tiling.nprocs, ids % tiling.nprocs

    def started(self, origin: int, final: int) -> bool:
        """Some piece of block (origin, final) came in bulk."""
        tiling = self.tiling
        block = np.array([origin * tiling.nprocs + final])
        if not tiling.has_blocks(block)[0]:
            return False
        return bool(self.count[np.searchsorted(tiling.blocks, block)[0]] > 0)
