"""runtime/block_indexes.py: a statement's block indices, each distinct part kept once."""

import numpy as np

from phalanx.runtime.block_indexes import BlockIndexes


def _index(origin: int, final: int) -> tuple:
    """An all-to-all's block (origin, final) of 16 bytes on rows of 4 nodes' blocks."""
    return ((slice(0, 1), slice(16 * final, 16 * final + 16)), (1, 16),
            (slice(origin, origin + 1), slice(0, 16)))


def test_blocks_share_their_parts_and_come_back_as_they_were_put():
    indexes = BlockIndexes(4)
    for origin in range(4):
        for final in range(4):
            indexes.put(origin, final, _index(origin, final))
    assert indexes.get(2, 3) == _index(2, 3) and indexes.get(3, 2) == _index(3, 2)
    assert indexes.get(0, 3)[0] is indexes.get(1, 3)[0]  # the source's section of 3, once
    assert indexes.get(1, 0)[2] is indexes.get(1, 3)[2]  # the destination's section of 1, once
    # (the source's section of 0 and the destination's of 0 are the same slices: one copy)
    assert len(indexes.parts) == 7 and len(indexes.shapes) == 1


def test_an_open_mesh_is_kept_as_it_is_and_an_unknown_block_is_none():
    indexes = BlockIndexes(4)
    mesh = np.ix_([0, 2], [1, 3])
    indexes.put(1, 2, ((slice(0, 2),), (2, 2), mesh))
    assert indexes.get(1, 2)[2] is mesh and indexes.get(2, 1) is None
