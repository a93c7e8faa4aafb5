"""A native run's timeline (Execution.spans): the core's span columns, a Span made when read.

The Python engine keeps up to MAX_SPANS Span objects (runtime/interpreter.py). A native run
keeps the core's columns (25 bytes a span, read in place) and its schedules' columns, from which
a message's label and peer (its receiver) are made; a Span, with its label's text, is made when
it is read (in chunks when iterated). 100,000 spans made at once as objects with their texts, and the lists
and dict that made them, took about 20 MB: most of what a small run added (ideal:256's
all-to-all, 65,280 messages: 30 of the 60 MB its run added). The spans read are the ones the
Python engine keeps, span for span (tests/runtime/test_native_run.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from phalanx.compiler.schedule import WHOLE
from phalanx.runtime.interpreter import Span, SpanKind
from phalanx.runtime.plan_columns import DST, FINAL, OFFSET, ORIGIN, ScheduleColumns
from phalanx.runtime.schedule_index import message_label

# the core's SPAN_* codes, in order
SPAN_KINDS = (SpanKind.COMPUTE, SpanKind.SEND, SpanKind.COPY, SpanKind.PHASE)
PHASE = SPAN_KINDS.index(SpanKind.PHASE)
CHUNK = 1 << 12  # spans made at a time when iterated
# the core's span columns (Core.take_spans: buffers of these types), in order
COLUMN_TYPES = (np.uint32, np.uint8, np.float64, np.float64, np.uint32)


@dataclass(frozen=True)
class MessageLabels:
    """The span labels of one schedule's messages, made from its columns when read: message m's
    label id is `first + m`; a piece of a block is labelled as schedule_index.message_label
    says, a whole block `{origin}->{final} to {dst}, {nbytes} B`, several `{blocks} blocks to
    {dst}, {nbytes} B`, `nbytes` the message's wire bytes."""

    first: int
    columns: ScheduleColumns
    nbytes: np.ndarray

    def made(self, messages: np.ndarray) -> tuple[list[str], list[int]]:
        """The labels and the receivers (their spans' peers) of these messages (ids within the
        schedule), from their first rows, read once."""
        cols = self.columns
        rows = cols.msg_start[messages]
        count = cols.msg_start[messages + 1] - rows
        piece = (count == 1) & (cols.table[rows, OFFSET] != WHOLE)
        dst = cols.table[rows, DST].tolist()
        fields = (count, cols.table[rows, ORIGIN], cols.table[rows, FINAL], self.nbytes[messages], piece)
        texts = [message_label(cols.group(m), nbytes) if is_piece else
                 f"{origin}->{final} to {to}, {nbytes} B" if blocks == 1 else
                 f"{blocks} blocks to {to}, {nbytes} B"
                 for m, to, (blocks, origin, final, nbytes, is_piece) in
                 zip(messages.tolist(), dst, zip(*(f.tolist() for f in fields)))]
        return texts, dst


@dataclass(frozen=True)
class SpanLabels:
    """What the labels of a run's spans are made of: a phase span's label id is its phase
    (`phase {k}`), a compute step's is its index in `steps` (their texts), a message's lies in
    one of `messages` (ascending by first id, each after the steps'), its text made when read."""

    steps: Sequence[str]
    messages: Sequence[MessageLabels]

    def made(self, kinds: np.ndarray, labels: np.ndarray) -> tuple[list[str], list[int | None]]:
        """The texts and peers of spans of these kinds and label ids (a message's peer is its
        receiver, the others' none)."""
        texts = [f"phase {label}" if kind == PHASE else ""
                 for kind, label in zip(kinds.tolist(), labels.tolist())]
        peers: list[int | None] = [None] * len(texts)
        message = (kinds != PHASE) & (labels >= len(self.steps))
        for at in np.flatnonzero((kinds != PHASE) & ~message).tolist():
            texts[at] = self.steps[int(labels[at])]
        at = np.flatnonzero(message)
        which = np.searchsorted([m.first for m in self.messages], labels[at], side="right") - 1
        for k in np.unique(which).tolist():  # (a chunk of spans: CHUNK at most)
            mine = at[which == k]
            schedule = self.messages[k]
            ids = labels[mine].astype(np.int64) - schedule.first
            for i, text, peer in zip(mine.tolist(), *schedule.made(ids)):
                texts[i], peers[i] = text, peer
        return texts, peers


def _typed(column: object, dtype: type) -> np.ndarray:
    """A column of the core as a read-only array over its memory, of the type it must have."""
    values = np.asarray(column)
    if values.dtype != dtype or values.ndim != 1:
        raise TypeError(f"a span column of the core is {values.dtype}[{values.ndim}], not {np.dtype(dtype)}")
    return values


class NativeSpans(Sequence[Span]):
    """The spans of a native run, in the core's order; equal to any sequence of the same spans."""

    def __init__(self, columns: tuple[object, ...], labels: SpanLabels):
        """`columns`: the core's (Core.take_spans), read in place, each of its COLUMN_TYPES."""
        self.node, self.kind, self.start_s, self.end_s, self.label = (
            _typed(c, t) for c, t in zip(columns, COLUMN_TYPES, strict=True))
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
        texts, peers = self.labels.made(self.kind[at], self.label[at])
        return [Span(node, SPAN_KINDS[kind], start_s, end_s, text, peer)
                for node, kind, start_s, end_s, text, peer in zip(
                    self.node[at].tolist(), self.kind[at].tolist(), self.start_s[at].tolist(),
                    self.end_s[at].tolist(), texts, peers)]
