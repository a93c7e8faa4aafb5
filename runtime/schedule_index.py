"""What the runs of one schedule share in the interpreter (runtime/interpreter.py): each node's
sends and receives per phase, grouped into network messages, the inbox each transfer is due
in, the barrier sets, and per message its wire and strided bytes, combining work and labels.
Worked out once per schedule, so that the iterations of a `repeat` pay for them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from phalanx.compiler.plan_walk import PhaseIndex
from phalanx.compiler.schedule import WHOLE, Schedule, Transfer
from phalanx.runtime.plan_columns import ScheduleColumns


def transfer_key(t: Transfer) -> tuple:
    """What tells a schedule's transfers apart in a run: (origin, final, src, dst, offset)."""
    return t.origin, t.final, t.src, t.dst, t.offset


def _blocks(group: tuple[Transfer, ...] | list[Transfer]) -> str:
    if len(group) == 1 and group[0].offset == WHOLE:
        return f"{group[0].origin}->{group[0].final}"
    if len(group) == 1:
        t = group[0]
        return f"{t.origin}->{t.final} bytes [{t.offset}, {t.offset + t.nbytes})"
    return f"{len(group)} blocks"


def message_label(group: tuple[Transfer, ...], nbytes: int) -> str:
    """The span label of a message: `0->3 to 3, 128 B`."""
    return f"{_blocks(group)} to {group[0].dst}, {nbytes} B"


def send_name(node: int, group: tuple[Transfer, ...]) -> str:
    """The process name of `node`'s send of `group` (deadlock reports)."""
    return f"node {node} send {_blocks(group)} to {group[0].dst}"


@dataclass(frozen=True, slots=True)
class SendFacts:
    """One network message of a schedule: its bytes on the wire, the bytes its ends gather and
    scatter, the combining operations at its receiver and its span label."""

    message: Transfer
    nbytes: int
    gather: int
    scatter: int
    operations: int
    label: str


class ScheduleIndex(PhaseIndex):
    """What the runs of one schedule share: per phase each node's sends and receives and the
    barrier sets (compiler/plan_walk.py PhaseIndex), the inbox a transfer is due in, and per
    message what its runs share, each built once when first needed."""

    def __init__(self, schedule: Schedule):
        super().__init__(schedule)
        self._columns: ScheduleColumns | None = None
        self._due: dict[tuple, tuple[int, int]] | None = None
        self._names: dict[int, tuple[tuple[Transfer, ...], str]] = {}  # id of a group -> it, its process name
        # id of a group -> the group (kept, so its id is not reused) and what its runs share
        self._sends: dict[int, tuple[tuple[Transfer, ...], SendFacts]] = {}
        self.where: list[str] = [f"phase {k} of the {schedule.kind} at line {schedule.line}"
                                  for k in range(len(schedule.phases))]

    def columns(self) -> ScheduleColumns:
        """The schedule's transfers as columns (runtime/plan_columns.py), for the native core."""
        if self._columns is None:
            self._columns = ScheduleColumns.of(self.schedule)
        return self._columns

    def name(self, node: int, group: tuple[Transfer, ...]) -> str:
        """The process name of `node`'s send of `group`."""
        kept = self._names.get(id(group))  # keeps the group: its id is not reused while kept
        if kept is None:
            kept = self._names[id(group)] = (group, send_name(node, group))
        return kept[1]

    def send_facts(self, group: tuple[Transfer, ...], data) -> SendFacts:
        """What every run of the message `group` shares (its payloads' sizes and layout are the
        statement's, not the run's)."""
        kept = self._sends.get(id(group))  # keeps the group: its id is not reused while kept
        if kept is None:
            first, nbytes = group[0], data.wire_bytes(group)
            gather, scatter = data.strided_bytes(group)
            kept = self._sends[id(group)] = (group, SendFacts(
                first if nbytes == first.nbytes else first._replace(nbytes=nbytes), nbytes,
                gather, scatter, data.combine_operations(group),
                message_label(group, nbytes)))
        return kept[1]

    def due(self) -> dict[tuple, tuple[int, int]]:
        """The inbox (node, phase) in which each transfer is received."""
        if self._due is None:
            self._due = {transfer_key(t): (t.dst, k)
                         for k, phase in enumerate(self.schedule.phases) for t in phase.recvs}
        return self._due


