"""A collective's simulated time without its payload: what `--cost simulate` and the regret
benchmark (bench/regret.py) measure for every candidate algorithm.

The built-in networks time a message from its wire bytes and a reduction's combining from
its element count, never from the bytes themselves (only a fault-injecting network looks at
them, and candidates run without faults). So `TimingData` stands in for runtime/data.py's
payloads: it puts on the wire what the real data layer would (an assignment's blocks summed,
a reduction's partials combined to one partial per destination), has the sender's and the
receiver's code pack the blocks the compiler found strided (`Collective.strided`,
compiler/layout.py: iWarp's pack_cycles_per_word) and moves nothing. The time
is the one a run with real payloads gives (tests/runtime/test_timing.py checks that on every
target); the data check is left to the run of the algorithm that is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phalanx.compiler.layout import strided_bytes
from phalanx.compiler.library.cost import combine_operations, combined_bytes
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Plan, Schedule, Transfer
from phalanx.compiler.target import Target
from phalanx.runtime.data import Payloads
from phalanx.runtime.plan_columns import ScheduleColumns


@dataclass
class TimingData:
    """The interpreter's data object (runtime/data.py's interface) with the payload left out."""

    reduction: bool
    element_bytes: int | None = None  # a reduction's partials are blocks of such elements
    # The collective's GATHERED | SCATTERED bits per block (compiler/layout.py); empty: none.
    strided: tuple[tuple[int, ...], ...] = ()

    def movable(self, t: Transfer) -> bool:
        return True  # every block "moves direct": there is nothing to pack

    def move_direct(self, t: Transfer) -> bool:
        return True

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        return True  # nothing moves, nothing can be refused

    def move_in_bulk(self, transfers: np.ndarray) -> None:
        return None

    def take(self, t: Transfer) -> None:  # only a network that sees payloads asks
        raise AssertionError("timing runs have no payloads; run without fault injection")

    def put(self, t: Transfer, payload: object) -> None:
        raise AssertionError("timing runs have no payloads")

    def message_bytes(self, cols: ScheduleColumns) -> tuple[np.ndarray, np.ndarray]:
        """wire_bytes and combine_operations below of every message of the columns at once."""
        if not self.reduction:
            return cols.summed_bytes(), cols.no_operations()
        nbytes, finals = cols.combined_bytes()
        return nbytes, combine_operations(nbytes, finals, self.element_bytes)

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int:
        """As runtime/data.py: blocks summed, or a reduction's partials bound for one
        destination combined by the sender (one partial's bytes per destination)."""
        if self.reduction:
            return combined_bytes(group)
        return sum(t.nbytes for t in group)

    def combine_operations(self, group: tuple[Transfer, ...]) -> int:
        if not self.reduction:
            return 0
        return combine_operations(combined_bytes(group), len({t.final for t in group}),
                                  self.element_bytes)

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]:
        """As AssignmentData: the blocks the compiler found strided are gathered by the sender's
        code and scattered by the receiver's (compiler/layout.py)."""
        if not self.strided:
            return 0, 0
        return strided_bytes(group, self._bits)

    def strided_bits(self) -> np.ndarray | None:
        """As AssignmentData.strided_bits."""
        return np.array(self.strided, np.uint8) if self.strided else None

    def _bits(self, origin: int, final: int) -> int:
        return self.strided[origin][final]

    def problems(self) -> list[str]:
        return []


def schedule_time_s(target: Target, schedule: Schedule, seed: int = 0,
                    element_bytes: int | None = None,
                    strided: tuple[tuple[int, ...], ...] = ()) -> float:
    """`schedule` alone on a fresh network of `target`, every node starting at 0 (the
    collective's own time, as runtime/simulate.py `own_times` measures it). `element_bytes`:
    a reduction's partials are blocks of such elements; `strided`: the collective's strided
    blocks (Collective)."""
    from phalanx.runtime.simulate import run_plan  # simulate imports the compiler's driver

    data = Payloads(lambda _: TimingData(schedule.kind in REDUCTIONS, element_bytes, strided),
                    [0])
    execution, _ = run_plan(target, Plan(schedule.nprocs, (schedule,)), data, seed)
    return execution.collectives[0].time_s  # the plan's only run


def simulated_time_s(target: Target, coll: Collective, algorithm: str, seed: int = 0) -> float:
    """The simulated time of `coll` lowered by `algorithm` on `target`, payload left out."""
    return schedule_time_s(target, target.schedule_for(coll, algorithm), seed,
                           coll.element_bytes, coll.strided)
