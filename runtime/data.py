"""Real payloads: each node's local arrays as numpy, blocks packed, moved and unpacked.

At the end every destination element must have been written exactly once and equal
the reference result of the statement (numpy on the global arrays); reductions must
have received every partial result exactly once and combine to the reference.

The pipeline, one module per step:
- runtime/data_values.py: the values drawn (seeded global arrays) and the reference result;
- runtime/data_facts.py: what a statement's payloads need that does not depend on the values
  (owned indices, blocks, due elements, the exact cover), once per statement;
- runtime/data_store.py: where the blocks are while they move (BlockStore), pieces as byte spans;
- runtime/data_assign.py and runtime/data_reduce.py: an assignment's and a reduction's payloads,
  moved one by one or in bulk (runtime/direct_moves.py writes the blocks moved in bulk);
- runtime/data_check.py: the check of an assignment when its collective closes;
- this module: what the interpreters ask of a collective's data (CollectiveData), and a run's
  collectives opened and closed (Payloads).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import REDUCTIONS as REDUCTION_KINDS
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.semantics import AssignStmt, ReduceStmt
from phalanx.runtime.data_assign import AssignmentData
from phalanx.runtime.data_reduce import ReductionData
from phalanx.runtime.plan_columns import ScheduleColumns


def move(data: CollectiveData, t: Transfer) -> None:
    """Take the block from its sender and put it at its receiver; array to array where the
    data layer can (AssignmentData.move_direct)."""
    if not data.move_direct(t):
        data.put(t, data.take(t))



def build_data(stmt: AssignStmt | ReduceStmt, rng: np.random.Generator,
               sources: dict | None = None, kind: Kind = Kind.SPARSE, shared: dict | None = None,
               commset: CommSet | None = None):
    """The payloads of one statement, recognized as a collective of `kind`; `shared` keeps
    an assignment's StatementFacts for its next run; `commset`: an assignment's communication
    set where the compile built it (Compiled.commsets), else it is built here."""
    if isinstance(stmt, ReduceStmt):
        return ReductionData.build(stmt, rng)
    return AssignmentData.build(stmt, rng, sources, combines=kind in REDUCTION_KINDS, shared=shared,
                                commset=commset)


NEVER_STARTED = "never started: the run stopped before any node reached this collective"


@runtime_checkable
class CollectiveData(Protocol):
    """What the interpreter (runtime/interpreter.py) asks of one collective's data while it
    runs the schedule: AssignmentData and ReductionData here, runtime/synthetic.py's
    SyntheticData and runtime/timing.py's payload-free TimingData. A send of a group of
    transfers asks `wire_bytes`, `strided_bytes` and `combine_operations` to time it (the
    native core asks `message_bytes`, the first and last of every message of a schedule's
    columns at once, and `strided_bits` where the network packs: then it works out the strided
    bytes itself), then
    moves the payloads (`movable`/`take`/`put`, or `move_direct` when no network looks at the
    bytes; the native core's replay moves a batch of transfers at once where `can_move_in_bulk`
    says that `move_in_bulk` does what those calls would, runtime/native_replay.py);
    `problems` is the data check when the collective is closed."""

    def movable(self, t: Transfer) -> bool: ...

    def move_direct(self, t: Transfer) -> bool: ...

    def take(self, t: Transfer) -> object: ...

    def put(self, t: Transfer, payload: object) -> None: ...

    def message_bytes(self, cols: ScheduleColumns) -> tuple[np.ndarray, np.ndarray]: ...

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool: ...

    def move_in_bulk(self, transfers: np.ndarray) -> None: ...

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int: ...

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]: ...

    def strided_bits(self) -> np.ndarray | None: ...

    def combine_operations(self, group: tuple[Transfer, ...]) -> int: ...

    def problems(self) -> list[str]: ...


class Payloads:
    """The payloads of a run's collectives, each built when the first node enters its
    collective and checked and freed when the last node leaves it. A run then holds the
    collectives in flight, not every run of a repeat (500 runs of a 512 KB transpose held
    1.2 GB of arrays before; issue 20); every run is still checked element by element.

    `build(i)` makes collective i's data (AssignmentData, ReductionData, SyntheticData).
    After the run `checked()` gives each collective's problems: those still open (a stopped
    run) are checked as they stand, and those never entered say so."""

    def __init__(self, build: Callable[[int], CollectiveData], collectives):
        self.build = build
        self.expected = list(collectives)  # every collective index of the plan
        self.open_data: dict[int, CollectiveData] = {}
        self.problems: dict[int, list[str]] = {}
        self.build_s = 0.0  # wall clock spent drawing payloads
        self.peak_open = 0  # most collectives open at once

    def open(self, i: int) -> None:
        if i not in self.open_data and i not in self.problems:
            started = time.perf_counter()
            self.open_data[i] = self.build(i)
            self.peak_open = max(self.peak_open, len(self.open_data))
            self.build_s += time.perf_counter() - started

    def __getitem__(self, i: int) -> CollectiveData:
        return self.open_data[i]

    def close(self, i: int) -> None:
        self.problems[i] = self.open_data.pop(i).problems()

    def discard(self, i: int) -> None:
        """Forget collective i's data, opened but never started (a run opened ahead of a
        stopped one, runtime/native_run.py): checked() then says it never started."""
        del self.open_data[i]

    def checked(self) -> dict[int, list[str]]:
        for i in list(self.open_data):
            self.close(i)
        return {i: self.problems.get(i, [NEVER_STARTED]) for i in self.expected}

