"""Synthetic collectives: a byte matrix built directly, run through the real runtime.

Some experiments cannot be written in the language: Fig. 9 of 001_569dde0e56ec3e6f.txt
(Sec. 4.2) draws every message's size at random from [B - VB, B + VB], or makes it empty with
probability P, and Table 1 (Sec. 4.3) runs sparse patterns (nearest neighbour, hypercube) as
subsets of the all-to-all. A distribution gives every pair a size fixed by the array shapes, so
these collectives are built from their byte matrix (`compiler.recognize.recognize`), lowered by
the target's own generator and executed by the interpreter on the target's network, with
`SyntheticData` in place of runtime/data.py: deterministic bytes per block, checked at the
destination, every block delivered exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.recognize import Collective, recognize
from phalanx.compiler.schedule import WHOLE, Plan, Schedule, Transfer
from phalanx.compiler.target import Target
from phalanx.compiler.verify import schedule_problems
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime.data import Payloads
from phalanx.runtime.data_store import BlockStore, MovesOneByOne
from phalanx.runtime.interpreter import Execution
from phalanx.runtime.network import Network
from phalanx.runtime.plan_columns import ScheduleColumns
from phalanx.runtime.simulate import run_plan


def varied_matrix(nprocs: int, block_bytes: int, variance: float = 0.0,
                  zero_probability: float = 0.0, seed: int = 0) -> np.ndarray:
    """Fig. 9's message sizes: uniform in [B - VB, B + VB] (integers), then 0 with probability P.

    Every pair, the node's message to itself included, draws its own size (Sec. 4.2: "for each
    step and each node"); `seed` makes the draw repeatable.
    """
    if not 0.0 <= variance <= 1.0:
        raise usage_error(f"variance {variance:g} is outside [0, 1]",
                          "V scales the range [B - VB, B + VB] of sizes: write e.g. 0.5")
    if not 0.0 <= zero_probability <= 1.0:
        raise usage_error(f"zero-message probability {zero_probability:g} is outside [0, 1]",
                          "write a probability such as 0.25")
    rng = np.random.default_rng([seed, nprocs, block_bytes])
    low = round(block_bytes * (1 - variance))
    high = round(block_bytes * (1 + variance))
    sizes = rng.integers(low, high + 1, size=(nprocs, nprocs), dtype=np.int64)
    empty = rng.random((nprocs, nprocs)) < zero_probability
    return np.where(empty, 0, sizes)


def block_bytes_of(origin: int, final: int, nbytes: int, seed: int) -> np.ndarray:
    """The content of block (origin, final): bytes from a multiplicative hash, distinct per block."""
    key = np.uint64((origin * 1_000_003 + final) * 40_503 + seed * 7_919)
    i = np.arange(nbytes, dtype=np.uint64)
    return ((i * np.uint64(2_654_435_761) + key) >> np.uint64(11)).astype(np.uint8)


@dataclass
class SyntheticData(MovesOneByOne):
    """The data object of the interpreter (take, put, wire_bytes, problems) for a byte matrix.

    Every pair is a block, an empty one included: a 0-byte transfer of an empty block is Fig.
    5's empty message, allowed, and counted like any other delivery. A block of bytes must
    reach its destination exactly once with its content intact; an empty block at most once.
    """

    matrix: np.ndarray
    seed: int = 0
    delivered: np.ndarray = field(init=False)
    wrong: list[str] = field(init=False, default_factory=list)
    store: BlockStore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = self.matrix.shape[0]
        self.delivered = np.zeros((n, n), dtype=np.int64)
        self.store = BlockStore(n, [(o, f) for o in range(n) for f in range(n)])

    def _pack(self, origin: int, final: int) -> np.ndarray:
        return block_bytes_of(origin, final, int(self.matrix[origin, final]), self.seed)

    def take(self, t: Transfer) -> np.ndarray:
        return self.store.take(t, self._pack)

    def message_bytes(self, cols: ScheduleColumns) -> tuple[np.ndarray, np.ndarray]:
        """wire_bytes and combine_operations below of every message of the columns at once."""
        return cols.summed_bytes(), np.zeros(cols.nmessages, np.int64)

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int:
        return sum(t.nbytes for t in group)

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]:
        """A byte matrix's blocks are buffers of their own, sent and received in place: no
        application buffering (as in the measurements of 001_569dde0e56ec3e6f.txt Sec. 4.1-4.3,
        Table 1's footnote 5)."""
        return 0, 0

    def strided_bits(self) -> None:
        """As strided_bytes: no block is strided."""
        return None

    def combine_operations(self, group: tuple[Transfer, ...]) -> int:
        """Synthetic blocks are exchanged, never combined."""
        return 0

    def put(self, t: Transfer, payload: np.ndarray) -> None:
        if t.offset != WHOLE:  # a piece: forwarded on, or (the last one) completing its block
            block = self.store.arrive_piece(t, payload, int(self.matrix[t.origin, t.final]))
            if block is not None:
                self.put(t._replace(src=t.final, offset=WHOLE), block)
            return
        if t.dst != t.final:
            self.store.keep(t, payload)
            return
        self.delivered[t.origin, t.final] += 1
        self.store.delivered(t, payload)
        if not np.array_equal(payload, self._pack(t.origin, t.final)):
            self.wrong.append(f"block {t.origin}->{t.final} arrived with wrong bytes")

    def problems(self) -> list[str]:
        """Empty when every block of bytes arrived once, intact, and no block twice."""
        due = self.matrix > 0
        missing = np.argwhere(due & (self.delivered == 0))
        twice = np.argwhere(self.delivered > 1)
        out = list(self.wrong[:5])
        if len(missing):
            out.append(f"{len(missing)} blocks never arrived, e.g. {tuple(missing[0].tolist())}")
        if len(twice):
            out.append(f"{len(twice)} blocks arrived more than once, e.g. {tuple(twice[0].tolist())}")
        return out


@dataclass
class SyntheticRun:
    """What one synthetic collective did: the fields of a sweep point, and the execution."""

    collective: Collective
    schedule: Schedule
    execution: Execution
    lower_bound_s: float
    problems: list[str]
    network: Network | None = None

    @property
    def time_s(self) -> float:
        return self.execution.collectives[0].time_s

    @property
    def verified(self) -> bool:
        return not self.problems


def lower(machine: Target, matrix: np.ndarray, algorithm: str) -> tuple[Collective, Schedule]:
    """Recognize the matrix's collective, choose (or check) the algorithm and generate it."""
    coll = recognize(0, np.asarray(matrix, dtype=np.int64), "A", "B", 0)
    schedule = machine.schedule_for(coll, machine.choose(coll, algorithm))
    problems = schedule_problems(schedule) + machine.schedule_problems(schedule)
    if problems:
        raise PhalanxError(Diagnostic(f"the {schedule.algorithm} schedule of this "
                                      f"{coll.kind} is invalid: " + "; ".join(problems[:3])))
    return coll, schedule


def execute(machine: Target, coll: Collective, schedule: Schedule, seed: int = 0,
            fast: bool = True) -> SyntheticRun:
    """Run `schedule` on the machine's network with SyntheticData and check every block."""
    data = Payloads(lambda _: SyntheticData(coll.matrix, seed), [0])  # the plan's only run
    execution, network = run_plan(machine, Plan(coll.nprocs, (schedule,)), data, seed, fast=fast)
    problems = data.checked()[0]
    if execution.stopped:  # an engine limit ended the run early
        problems.insert(0, f"the run stopped early: {execution.stopped}")
    return SyntheticRun(coll, schedule, execution, machine.lower_bound_s(coll), problems, network)


def run_matrix(machine: Target, matrix: np.ndarray, algorithm: str, seed: int = 0,
               fast: bool = True) -> SyntheticRun:
    """Lower and execute the collective of a byte matrix."""
    coll, schedule = lower(machine, matrix, algorithm)
    return execute(machine, coll, schedule, seed, fast)
