"""A native run's timeline (Execution.spans): the core's span columns, a Span made when read.

The Python engine keeps up to MAX_SPANS Span objects (runtime/interpreter.py). A native run
keeps the core's columns (33 bytes a span) and, for the messages whose spans are kept, the few
values their labels are made of; a Span, with its label's text, is made when it is read (in
chunks when iterated). 100,000 spans made at once as objects with their texts, and the lists
and dict that made them, took about 20 MB: most of what a small run added (ideal:256's
all-to-all, 65,280 messages: 30 of the 60 MB its run added). The spans read are the ones the
Python engine keeps, span for span (tests/runtime/test_native_run.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from phalanx.runtime.interpreter import Span

SPAN_KINDS = ("compute", "send", "copy", "phase")  # the core's SPAN_* codes, in order
PHASE = SPAN_KINDS.index("phase")
CHUNK = 1 << 12  # spans made at a time when iterated
# the core's span columns (Core.spans, little-endian bytes each), in order
COLUMN_TYPES = ("<u4", "u1", "<f8", "<f8", "<u4", "<i8")


@dataclass(frozen=True)
class SpanLabels:
    """What the labels of a run's kept spans are made of. A phase span's label id is its phase
    (`phase {k}`); `fixed` holds the other texts known as text (compute steps' labels, a piece
    of a block's message_label); a message of whole blocks is `ids[i]`: one block,
    `{origin}->{final} to {dst}, {nbytes} B`, several, `{blocks} blocks to {dst}, {nbytes} B`."""

    fixed: dict[int, str]
    ids: np.ndarray  # sorted label ids
    blocks: np.ndarray
    origin: np.ndarray
    final: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray

    def texts(self, kinds: np.ndarray, labels: np.ndarray) -> list[str]:
        """The texts of spans of these kinds and label ids."""
        at = np.searchsorted(self.ids, labels)
        found = (kinds != PHASE) & (at < len(self.ids))
        found[found] = self.ids[at[found]] == labels[found]
        hits = at[found]
        fields = (self.blocks, self.origin, self.final, self.dst, self.nbytes)
        messages = zip(*(field[hits].tolist() for field in fields))
        out = []
        for kind, label, hit in zip(kinds.tolist(), labels.tolist(), found.tolist()):
            if kind == PHASE:
                out.append(f"phase {label}")
            elif not hit:
                out.append(self.fixed[label])
            else:
                blocks, origin, final, dst, nbytes = next(messages)
                out.append(f"{origin}->{final} to {dst}, {nbytes} B" if blocks == 1 else
                           f"{blocks} blocks to {dst}, {nbytes} B")
        return out


class NativeSpans(Sequence[Span]):
    """The spans of a native run, in the core's order; equal to any sequence of the same spans."""

    def __init__(self, columns: tuple[bytes, ...], labels: SpanLabels):
        self.node, self.kind, self.start_s, self.end_s, self.label, self.peer = (
            np.frombuffer(c, t) for c, t in zip(columns, COLUMN_TYPES, strict=True))
        self.labels = labels

    def __len__(self) -> int:
        return len(self.node)

    @overload
    def __getitem__(self, at: int) -> Span: ...

    @overload
    def __getitem__(self, at: slice) -> list[Span]: ...

    def __getitem__(self, at: int | slice) -> Span | list[Span]:
        if isinstance(at, slice):
            return self._made(at)
        i = range(len(self))[at]  # (an IndexError past the end, as a list's)
        return self._made(slice(i, i + 1))[0]

    def __iter__(self) -> Iterator[Span]:
        for first in range(0, len(self), CHUNK):
            yield from self._made(slice(first, first + CHUNK))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"NativeSpans({len(self)} spans)"

    def _made(self, at: slice) -> list[Span]:
        kinds, labels = self.kind[at], self.label[at]
        return [Span(node, SPAN_KINDS[kind], start_s, end_s, text, None if peer < 0 else peer)
                for node, kind, start_s, end_s, text, peer in zip(
                    self.node[at].tolist(), kinds.tolist(), self.start_s[at].tolist(),
                    self.end_s[at].tolist(), self.labels.texts(kinds, labels), self.peer[at].tolist())]
