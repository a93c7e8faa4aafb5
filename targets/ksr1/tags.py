"""How a KSR-1 schedule tells the network model what a transfer reads and how.

The `message` id of a Transfer (compiler/schedule.py) groups the blocks one reader fetches
from one holder in a phase into one read loop; the KSR-1 schedules also encode in it
whether the data is shared (the same subpages for every reader: a broadcast, one part of
an allgather; content id > 0) or private to this reader (content 0), and the read mode of
Sec. 3.4 of seed 002_1e1cb805508c9dd7.txt: a plain read, prefetch or poststore; or a write
(Sec. 2.2: the reader takes the subpages exclusively, invalidating every other copy).
"""

from __future__ import annotations

READ, PREFETCH, POSTSTORE, WRITE = "read", "prefetch", "poststore", "write"
MODES = (READ, PREFETCH, POSTSTORE, WRITE)  # four: the id keeps mode in its last two bits


def tag(content: int, mode: str = READ) -> int:
    """The message id of a read of `content` (0: private data) in `mode` (always > 0)."""
    return 1 + MODES.index(mode) + 4 * content


def untag(message: int) -> tuple[int, str]:
    """(content, mode) of a message id; ids <= 0 (generic schedules) are private plain reads."""
    if message <= 0:
        return 0, READ
    content, mode = divmod(message - 1, 4)
    return content, MODES[min(mode, len(MODES) - 1)]
