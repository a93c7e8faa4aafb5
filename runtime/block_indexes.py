"""Each block's index into its origin's source array and into its final node's destination
array, with its shape, kept per statement for its runs (AssignmentData._block_index).

Blocks share their parts: an all-to-all's block (o, f) reads the source's section of f at
node o and writes the destination's section of o at node f, so its source index is the same
for every o and its destination index for every f. Each distinct index of runs (slices) and
each shape is kept once, and a block's entry is keyed by one int: a tuple of slices and a
tuple key per block were 355 bytes of Python objects, 355 MB at paragon:32x32's multiphase
(1M blocks moved one by one, in pieces); about 150 now. An open mesh (np.ix_) is kept as it is.
"""

from __future__ import annotations

Index = tuple  # slices, or an open mesh (np.ix_)
BlockIndex = tuple[Index, tuple[int, ...], Index]  # (source index, shape, destination index)


def _runs_key(index: Index) -> tuple | None:
    """An index of slices as hashable bounds (slices are not hashable before Python 3.12);
    None for an open mesh."""
    if not all(isinstance(ix, slice) for ix in index):
        return None
    return tuple((ix.start, ix.stop, ix.step) for ix in index)


class BlockIndexes:
    """The block indices worked out so far for one statement on `nprocs` nodes."""

    def __init__(self, nprocs: int):
        self.nprocs = nprocs
        self.known: dict[int, BlockIndex] = {}  # by origin * nprocs + final
        self.parts: dict[tuple, Index] = {}  # one copy of each index of runs, by its bounds
        self.shapes: dict[tuple[int, ...], tuple[int, ...]] = {}  # one copy of each shape

    def get(self, origin: int, final: int) -> BlockIndex | None:
        return self.known.get(origin * self.nprocs + final)

    def put(self, origin: int, final: int, index: BlockIndex) -> None:
        src, shape, dst = index
        self.known[origin * self.nprocs + final] = (
            self._one(src), self.shapes.setdefault(shape, shape), self._one(dst))

    def _one(self, index: Index) -> Index:
        key = _runs_key(index)
        return index if key is None else self.parts.setdefault(key, index)
