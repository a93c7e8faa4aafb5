"""How a KSR-1 schedule tells the network model what a transfer reads and how.

The `message` id of a Transfer (compiler/schedule.py) groups the blocks one reader fetches
from one holder in a phase into one read loop. A KSR-1 read loop also says (a `Read`)
whether the data is shared (the same subpages for every reader: a broadcast, one part of
an allgather; `content` > 0) or private to this reader (content 0), and its `ReadMode`, the
read modes of Sec. 3.4 of seed 002_1e1cb805508c9dd7.txt: a plain read, prefetch or
poststore; or a write (Sec. 2.2: the reader takes the subpages exclusively, invalidating
every other copy). `Read.message` numbers the reads by (content, mode) for the message id and
`Read.of` reads it back: the only two places that know the numbering.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class ReadMode(StrEnum):
    """How a read loop fetches its subpages (its value is the suffix of the algorithm's name:
    `gather-seq-prefetch`)."""

    READ = "read"
    PREFETCH = "prefetch"
    POSTSTORE = "poststore"
    WRITE = "write"


MODES = tuple(ReadMode)  # in the order that numbers them within a content


class Read(NamedTuple):
    """What one read loop reads (`content`: 0 private data, else the shared content's number)
    and how (`mode`)."""

    content: int = 0
    mode: ReadMode = ReadMode.READ

    @property
    def message(self) -> int:
        """The Transfer.message id of the loop: the reads numbered from 1, content by content,
        the modes of one content in MODES order (always > 0: the loop's transfers combine)."""
        if self.content < 0:
            raise ValueError(f"a read's content is 0 (private) or a shared content's number, "
                             f"not {self.content}")
        return 1 + MODES.index(self.mode) + len(MODES) * self.content

    @staticmethod
    def of(message: int) -> Read:
        """The read a message id numbers; ids <= 0 (generic schedules) are private plain reads."""
        if message <= 0:
            return Read()
        content, mode = divmod(message - 1, len(MODES))
        return Read(content, MODES[mode])
