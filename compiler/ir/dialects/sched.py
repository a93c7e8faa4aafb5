"""The `sched` dialect: a collective lowered to phases of sends and receives.

This is the IR form of compiler/schedule.py. A `sched.schedule` carries its phases'
sends and receives as i64 tables; `sched.pipeline` groups the staged compute steps and
schedules of a pipeline. The converters below move between the IR and the plain
dataclasses without loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Dialect, Operation
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.columns import column_ranges, known_columns, phases_of_rows, transfers_of
from phalanx.compiler.ir.dialects.dist import PipelineHeaderOp, RepeatHeaderOp
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import (
    SYNC_KINDS,
    TRANSFER_FIELDS,
    WHOLE,
    ComputeStep,
    Phase,
    PipelineStep,
    Plan,
    RepeatStep,
    Schedule,
    Step,
    Transfer,
)


def _values(attr: DenseArrayBase) -> np.ndarray:
    return np.frombuffer(attr.data.data, dtype="<i8")


def _phase_tables(phases: tuple[Phase, ...]) -> tuple[bytes, bytes, bytes, bytes]:
    """(sends, send offsets, recvs, recv offsets) of a schedule's phases, as i64 bytes: the
    columns they were built from (compiler/columns.py; sends and recvs one bytes object), else
    walked from their transfers."""
    known = known_columns(phases)
    if known is not None:
        return known[0], known[1], known[0], known[1]
    return _walked_tables(phases)


@lru_cache(maxsize=32)
def _walked_tables(phases: tuple[Phase, ...]) -> tuple[bytes, bytes, bytes, bytes]:
    """Cached: repeated statements lower to the same phases."""
    out = []
    for which in ("sends", "recvs"):
        rows = [(t.src, t.dst, t.nbytes, t.origin, t.final, t.message, t.offset)
                for p in phases for t in getattr(p, which)]
        counts = [len(getattr(p, which)) for p in phases]
        table = np.array(rows, dtype="<i8").reshape(-1, len(TRANSFER_FIELDS))
        out += [table.tobytes(), np.concatenate(([0], np.cumsum(counts))).astype("<i8").tobytes()]
    return tuple(out)


@lru_cache(maxsize=32)
def _transfers(table: bytes) -> tuple[Transfer, ...]:
    return transfers_of(np.frombuffer(table, dtype="<i8").reshape(-1, len(TRANSFER_FIELDS)))


@irdl_op_definition
class ScheduleOp(IRDLOperation):
    """One lowered collective: `algorithm` for a `kind` collective on `nprocs` processors.

    Its phases are tables rather than nested ops, so a schedule of a million messages
    is one op: `sends` and `recvs` hold seven i64 per transfer (TRANSFER_FIELDS: a piece of a
    block has its first byte in `offset`, a whole block -1, Transfer.offset), phase k's
    rows are [send_offsets[k], send_offsets[k+1]), and `phase_sync[k]` is "local",
    "barrier" or "eager" (compiler/schedule.py SyncMode). A barrier scoped to groups
    (Phase.barrier_groups) lists them: phase k's groups are [barrier_offsets[k],
    barrier_offsets[k+1]) of `barrier_sizes`, their members one group after another in
    `barrier_members`; a barrier phase with none spans every node.
    """

    name = "sched.schedule"

    collective = attr_def(IntegerAttr[I64])  # index of the collective within the program
    kind = attr_def(StringAttr)
    algorithm = attr_def(StringAttr)
    src = attr_def(StringAttr)
    dst = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1
    phase_sync = attr_def(ArrayAttr[StringAttr])
    send_offsets = attr_def(DenseArrayBase[I64])
    sends = attr_def(DenseArrayBase[I64])
    recv_offsets = attr_def(DenseArrayBase[I64])
    recvs = attr_def(DenseArrayBase[I64])
    barrier_offsets = attr_def(DenseArrayBase[I64])
    barrier_sizes = attr_def(DenseArrayBase[I64])
    barrier_members = attr_def(DenseArrayBase[I64])

    def __init__(self, collective: int, kind: Kind, algorithm: str, nprocs: int,
                 phases: Sequence[Phase] = (), src: str = "", dst: str = "", line: int = 0,
                 stage: int = -1) -> None:
        sends, send_offsets, recvs, recv_offsets = _phase_tables(tuple(phases))
        super().__init__(
            attributes={
                "collective": IntegerAttr(collective, i64),
                "kind": StringAttr(kind),
                "algorithm": StringAttr(algorithm),
                "src": StringAttr(src),
                "dst": StringAttr(dst),
                "nprocs": IntegerAttr(nprocs, i64),
                "line": IntegerAttr(line, i64),
                "stage": IntegerAttr(stage, i64),
                "phase_sync": ArrayAttr([StringAttr(p.sync) for p in phases]),
                "send_offsets": DenseArrayBase(i64, BytesAttr(send_offsets)),
                "sends": DenseArrayBase(i64, BytesAttr(sends)),
                "recv_offsets": DenseArrayBase(i64, BytesAttr(recv_offsets)),
                "recvs": DenseArrayBase(i64, BytesAttr(recvs)),
                "barrier_offsets": DenseArrayBase.from_list(
                    i64, np.cumsum([0] + [len(p.barrier_groups) for p in phases]).tolist()),
                "barrier_sizes": DenseArrayBase.from_list(
                    i64, [len(g) for p in phases for g in p.barrier_groups]),
                "barrier_members": DenseArrayBase.from_list(
                    i64, [m for p in phases for g in p.barrier_groups for m in g]),
            }
        )

    @property
    def phase_count(self) -> int:
        return len(self.phase_sync.data)

    def table(self, which: str) -> np.ndarray:
        """All sends or recvs as an (n, 7) int64 table (TRANSFER_FIELDS)."""
        return _values(getattr(self, which)).reshape(-1, len(TRANSFER_FIELDS))

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(sends, send_offsets, recvs, recv_offsets) as int64 arrays; recvs is sends (the very
        array) where the op holds one bytes object for both, as a schedule built by
        compiler/columns.py does."""
        sends = self.table("sends")
        recvs = sends if self.recvs.data.data is self.sends.data.data else self.table("recvs")
        return sends, _values(self.send_offsets), recvs, _values(self.recv_offsets)

    def phase_tables(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(sends, recvs) tables of each phase."""
        sends, recvs = self.table("sends"), self.table("recvs")
        so, ro = _values(self.send_offsets), _values(self.recv_offsets)
        return [(sends[so[k]:so[k + 1]], recvs[ro[k]:ro[k + 1]]) for k in range(self.phase_count)]

    def barrier_groups(self) -> list[tuple[tuple[int, ...], ...]]:
        """Each phase's barrier groups (Phase.barrier_groups)."""
        members = iter(_values(self.barrier_members).tolist())
        groups = [tuple(next(members) for _ in range(size))
                  for size in _values(self.barrier_sizes).tolist()]
        bo = _values(self.barrier_offsets).tolist()
        return [tuple(groups[bo[k]:bo[k + 1]]) for k in range(self.phase_count)]

    def phases(self) -> tuple[Phase, ...]:
        syncs = tuple(sync.data for sync in self.phase_sync.data)
        if not self.barrier_sizes.get_values():
            known = phases_of_rows(self.sends.data.data, self.send_offsets.data.data,
                                   self.recvs.data.data, self.recv_offsets.data.data, syncs)
            if known is not None:
                return known
        sends = _transfers(self.sends.data.data)
        recvs = _transfers(self.recvs.data.data)
        so, ro = _values(self.send_offsets).tolist(), _values(self.recv_offsets).tolist()
        return tuple(Phase(sends[so[k]:so[k + 1]], recvs[ro[k]:ro[k + 1]], sync.data, groups)
                     for k, (sync, groups) in enumerate(zip(self.phase_sync.data,
                                                            self.barrier_groups())))

    def verify_(self) -> None:
        n = self.nprocs.value.data
        if n < 1:
            raise VerifyException(f"'{self.name}' nprocs must be >= 1, got {n}")
        if self.kind.data not in tuple(Kind):
            raise VerifyException(f"'{self.name}' kind must be one of {', '.join(Kind)}, "
                                  f"got '{self.kind.data}'")
        for sync in self.phase_sync.data:
            if sync.data not in SYNC_KINDS:
                raise VerifyException(f"'{self.name}' sync must be one of {', '.join(SYNC_KINDS)}, "
                                      f"got '{sync.data}'")
        same = (self.recvs.data.data is self.sends.data.data
                and self.recv_offsets.data.data == self.send_offsets.data.data)
        for which in ("sends",) if same else ("sends", "recvs"):  # one table: checked once
            count = len(getattr(self, which).data.data) // 8
            if count % len(TRANSFER_FIELDS):
                raise VerifyException(f"'{self.name}' {which} has {count} entries, not a multiple "
                                      f"of {len(TRANSFER_FIELDS)} {TRANSFER_FIELDS}")
            offsets = _values(getattr(self, which[:-1] + "_offsets"))
            rows = count // len(TRANSFER_FIELDS)
            if (len(offsets) != self.phase_count + 1 or offsets[0] != 0 or offsets[-1] != rows
                    or (np.diff(offsets) < 0).any()):
                raise VerifyException(f"'{self.name}' {which[:-1]}_offsets must rise from 0 to "
                                      f"{rows} in {self.phase_count + 1} entries")
            self._verify_rows(which, n)
        self._verify_barrier_groups(n)

    def _verify_rows(self, which: str, n: int) -> None:
        """Bytes >= 0, nodes in 0..n-1, offsets >= WHOLE: the table's column ranges say at once
        when every row is well formed; else the first bad row is named."""
        table = self.table(which)
        ranges = column_ranges(table)
        nodes = [0, 1, 3, 4]  # src, dst, origin, final
        if ranges is None or (ranges[0][2] >= 0 and ranges[0][nodes].min() >= 0 and
                              ranges[1][nodes].max() < n and ranges[0][6] >= WHOLE):
            return
        if (table[:, 2] < 0).any():
            raise VerifyException(f"'{self.name}' {which}: bytes must be >= 0")
        for column in nodes:
            bad = table[(table[:, column] < 0) | (table[:, column] >= n)]
            if len(bad):
                raise VerifyException(f"'{self.name}' {which}: {TRANSFER_FIELDS[column]} = "
                                      f"{int(bad[0, column])} outside 0..{n - 1}")
        bad = table[table[:, 6] < WHOLE]
        raise VerifyException(f"'{self.name}' {which}: offset = {int(bad[0, 6])}: a piece's "
                              f"first byte is >= 0, a whole block's offset {WHOLE}")

    def _verify_barrier_groups(self, n: int) -> None:
        """Groups only on barrier phases; sizes >= 1 that split the members; each phase's
        groups disjoint sets of distinct ranks in 0..n-1."""
        bo, sizes = _values(self.barrier_offsets), _values(self.barrier_sizes)
        if (len(bo) != self.phase_count + 1 or bo[0] != 0 or bo[-1] != len(sizes)
                or (np.diff(bo) < 0).any()):
            raise VerifyException(f"'{self.name}' barrier_offsets must rise from 0 to {len(sizes)} "
                                  f"in {self.phase_count + 1} entries")
        if (sizes < 1).any() or sizes.sum() != len(_values(self.barrier_members)):
            raise VerifyException(f"'{self.name}' barrier_sizes {sizes.tolist()} do not split the "
                                  f"{len(_values(self.barrier_members))} barrier_members")
        for k, (sync, groups) in enumerate(zip(self.phase_sync.data, self.barrier_groups())):
            if groups and sync.data != "barrier":
                raise VerifyException(f"'{self.name}' phase {k} is {sync.data} but has barrier "
                                      "groups (only a barrier phase is scoped to groups)")
            ranks = [m for g in groups for m in g]
            if len(set(ranks)) != len(ranks) or any(not 0 <= m < n for m in ranks):
                raise VerifyException(f"'{self.name}' phase {k}: barrier groups must be disjoint "
                                      f"sets of distinct ranks in 0..{n - 1}, got "
                                      f"{[list(g) for g in groups]}")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Every one of `nprocs` processors from node `first` on is busy computing for `cost_s`
    seconds."""

    name = "sched.compute"

    label = attr_def(StringAttr)
    first = attr_def(IntegerAttr[I64])
    nprocs = attr_def(IntegerAttr[I64])
    cost_s = attr_def(FloatAttr[Float64Type])
    line = attr_def(IntegerAttr[I64])
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1

    def __init__(self, label: str, nprocs: int, cost_s: float, line: int = 0,
                 stage: int = -1, first: int = 0) -> None:
        super().__init__(
            attributes={
                "label": StringAttr(label),
                "first": IntegerAttr(first, i64),
                "nprocs": IntegerAttr(nprocs, i64),
                "cost_s": FloatAttr(float(cost_s), f64),
                "line": IntegerAttr(line, i64),
                "stage": IntegerAttr(stage, i64),
            }
        )


@irdl_op_definition
class PipelineOp(PipelineHeaderOp):
    """A pipeline header: the staged compute steps and schedules that follow it (each with
    its `stage` >= 0) are the pipeline's body, as for `dist.pipeline`; see PipelineStep."""

    name = "sched.pipeline"


@irdl_op_definition
class RepeatOp(RepeatHeaderOp):
    """A repeat header: the next `ops` ops (compute steps, schedules, pipelines, nested
    repeats) run `count` times, as for `dist.repeat`; see RepeatStep."""

    name = "sched.repeat"


def schedule_to_ir(s: Schedule) -> ScheduleOp:
    return ScheduleOp(s.collective, s.kind, s.algorithm, s.nprocs, s.phases, s.src, s.dst, s.line,
                      s.stage)


def schedule_from_ir(op: ScheduleOp) -> Schedule:
    phases = op.phases()
    return Schedule(
        collective=op.collective.value.data,
        kind=Kind(op.kind.data),
        algorithm=op.algorithm.data,
        nprocs=op.nprocs.value.data,
        phases=phases,
        src=op.src.data,
        dst=op.dst.data,
        line=op.line.value.data,
        stage=op.stage.value.data,
    )


def compute_to_ir(c: ComputeStep) -> ComputeOp:
    return ComputeOp(c.label, c.nprocs, c.cost_s, c.line, c.stage, c.first)


def compute_from_ir(op: ComputeOp) -> ComputeStep:
    return ComputeStep(
        label=op.label.data,
        nprocs=op.nprocs.value.data,
        cost_s=op.cost_s.value.data,
        line=op.line.value.data,
        stage=op.stage.value.data,
        first=op.first.value.data,
    )


def _step_to_ir(step: ComputeStep | Schedule) -> Operation:
    return compute_to_ir(step) if isinstance(step, ComputeStep) else schedule_to_ir(step)


def _steps_to_ir(steps: tuple[Step, ...]) -> list[Operation]:
    ops: list[Operation] = []
    for step in steps:
        if isinstance(step, PipelineStep):
            ops.append(PipelineOp(len(step.stages), step.line))
            ops += [_step_to_ir(s) for stage in step.stages for s in stage]
        elif isinstance(step, RepeatStep):
            body = _steps_to_ir(step.body)
            ops += [RepeatOp(step.count, len(body), step.line), *body]
        else:
            ops.append(_step_to_ir(step))
    return ops


def plan_to_module(plan: Plan) -> ModuleOp:
    """The inverse of `plan_from_module`: one top-level op per step, in order."""
    return ModuleOp(_steps_to_ir(plan.steps))


def _step_from_ir(op: Operation) -> ComputeStep | Schedule | None:
    if isinstance(op, ComputeOp):
        return compute_from_ir(op)
    if isinstance(op, ScheduleOp):
        return schedule_from_ir(op)
    if not op.name.startswith("dist."):
        raise ValueError(f"cannot execute '{op.name}': lower it to the sched dialect first")
    return None


def _steps_from_ir(ops: list[Operation]) -> list[Step]:
    steps: list[Step] = []
    k = 0
    while k < len(ops):
        op = ops[k]
        if isinstance(op, PipelineOp):
            stages: list[list[ComputeStep | Schedule]] = [[] for _ in range(op.stages.value.data)]
            inner_ops = op.body_ops()
            for inner in inner_ops:
                step = _step_from_ir(inner)
                if step is not None:
                    stages[step.stage].append(step)
            steps.append(PipelineStep(tuple(tuple(s) for s in stages), op.line.value.data))
            k += 1 + len(inner_ops)
            continue
        if isinstance(op, RepeatOp):
            inner_ops = ops[k + 1:k + 1 + op.ops.value.data]
            steps.append(RepeatStep(op.count.value.data, tuple(_steps_from_ir(inner_ops)),
                                    op.line.value.data))
            k += 1 + len(inner_ops)
            continue
        step = _step_from_ir(op)
        if step is not None and step.stage >= 0:
            raise ValueError(f"'{op.name}' of line {step.line} is in stage {step.stage} "
                             "but follows no sched.pipeline")
        if step is not None:
            steps.append(step)
        k += 1
    return steps


def plan_from_module(module: ModuleOp, nprocs: int) -> Plan:
    """Collect the module's compute steps, schedules, pipelines and repeats, in program order.

    `dist.*` ops are declarations and are skipped. Anything else (a `coll.*` op that
    was never lowered, say) would silently drop communication, so it is an error.
    """
    return Plan(nprocs=nprocs, steps=tuple(_steps_from_ir(list(module.ops))))


Sched = Dialect("sched", [ScheduleOp, ComputeOp, PipelineOp, RepeatOp], [])
