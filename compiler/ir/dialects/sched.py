"""The `sched` dialect: a collective lowered to phases of sends and receives.

This is the IR form of compiler/schedule.py. A `sched.schedule` holds one block of
`sched.phase` ops (no terminator: the op only groups them); a phase carries its sends
and receives as i64 tables. The converters below move between the IR and the plain
dataclasses without loss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    I64,
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
from xdsl.ir import Block, Dialect, Operation, Region
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition, region_def, traits_def
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.schedule import (
    SYNC_KINDS,
    ComputeStep,
    Phase,
    PipelineStep,
    Plan,
    Schedule,
    Transfer,
)


@irdl_op_definition
class ScheduleOp(IRDLOperation):
    """One lowered collective: `algorithm` for a `kind` collective on `nprocs` processors."""

    name = "sched.schedule"

    collective = attr_def(IntegerAttr[I64])  # index of the collective within the program
    kind = attr_def(StringAttr)
    algorithm = attr_def(StringAttr)
    src = attr_def(StringAttr)
    dst = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(
        self,
        collective: int,
        kind: str,
        algorithm: str,
        nprocs: int,
        phases: Sequence[PhaseOp] = (),
        src: str = "",
        dst: str = "",
        line: int = 0,
        stage: int = -1,
    ) -> None:
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
            },
            regions=[Region(Block(phases))],
        )

    @property
    def phases(self) -> tuple[PhaseOp, ...]:
        return tuple(op for op in self.body.block.ops if isinstance(op, PhaseOp))

    def verify_(self) -> None:
        n = self.nprocs.value.data
        if n < 1:
            raise VerifyException(f"'{self.name}' nprocs must be >= 1, got {n}")
        for position, op in enumerate(self.body.block.ops):
            if not isinstance(op, PhaseOp):
                raise VerifyException(
                    f"'{self.name}' may only hold 'sched.phase' ops, found '{op.name}'"
                )
            # Phase order is the block order; the index makes it visible and checkable.
            if op.index.value.data != position:
                raise VerifyException(
                    f"'{self.name}' phase at position {position} has index {op.index.value.data}"
                )
            for which, table in (("sends", op.send_table()), ("recvs", op.recv_table())):
                for column in (0, 1, 3, 4):  # src, dst, origin, final
                    bad = table[(table[:, column] < 0) | (table[:, column] >= n)]
                    if len(bad):
                        raise VerifyException(
                            f"'{op.name}' {position} {which}: {TRANSFER_FIELDS[column]} = "
                            f"{int(bad[0, column])} outside 0..{n - 1}"
                        )


TRANSFER_FIELDS = ("src", "dst", "bytes", "origin", "final", "message")


def transfers_to_attr(transfers: Sequence[Transfer]) -> DenseArrayBase:
    """Transfers as one flat i64 table, six entries each (TRANSFER_FIELDS)."""
    table = np.array([(t.src, t.dst, t.nbytes, t.origin, t.final, t.message) for t in transfers],
                     dtype="<i8").reshape(-1, len(TRANSFER_FIELDS))
    return DenseArrayBase(i64, BytesAttr(table.tobytes()))


def transfers_table(attr: DenseArrayBase) -> np.ndarray:
    """The (n, 6) int64 table of a sends/recvs attribute."""
    return np.frombuffer(attr.data.data, dtype="<i8").reshape(-1, len(TRANSFER_FIELDS))


def transfers_from_attr(attr: DenseArrayBase) -> tuple[Transfer, ...]:
    return tuple(Transfer(*map(int, row)) for row in transfers_table(attr))


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """Sends and receives that run together; `sync` is "local" or "barrier".

    `sends` and `recvs` are tables of transfers, six i64 per transfer
    (src, dst, bytes, origin, final, message): one attribute per phase rather than
    one op per message, so a million-message schedule stays a few thousand ops.
    """

    name = "sched.phase"

    index = attr_def(IntegerAttr[I64])
    sync = attr_def(StringAttr)
    sends = attr_def(DenseArrayBase[I64])
    recvs = attr_def(DenseArrayBase[I64])

    traits = traits_def(HasParent(ScheduleOp))

    def __init__(self, index: int, sync: str, sends: Sequence[Transfer] = (),
                 recvs: Sequence[Transfer] = ()) -> None:
        super().__init__(attributes={
            "index": IntegerAttr(index, i64), "sync": StringAttr(sync),
            "sends": transfers_to_attr(sends), "recvs": transfers_to_attr(recvs)})

    def send_table(self) -> np.ndarray:
        return transfers_table(self.sends)

    def recv_table(self) -> np.ndarray:
        return transfers_table(self.recvs)

    def verify_(self) -> None:
        if self.sync.data not in SYNC_KINDS:
            raise VerifyException(
                f"'{self.name}' sync must be one of {', '.join(SYNC_KINDS)}, got '{self.sync.data}'"
            )
        for which in ("sends", "recvs"):
            count = len(getattr(self, which).data.data) // 8
            if count % len(TRANSFER_FIELDS):
                raise VerifyException(f"'{self.name}' {which} has {count} entries, not a multiple "
                                      f"of {len(TRANSFER_FIELDS)} {TRANSFER_FIELDS}")
            table = transfers_table(getattr(self, which))
            if (table[:, 2] < 0).any():
                raise VerifyException(f"'{self.name}' {which}: bytes must be >= 0")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Every one of `nprocs` processors is busy computing for `cost_s` seconds."""

    name = "sched.compute"

    label = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    cost_s = attr_def(FloatAttr[Float64Type])
    line = attr_def(IntegerAttr[I64])
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1

    def __init__(self, label: str, nprocs: int, cost_s: float, line: int = 0,
                 stage: int = -1) -> None:
        super().__init__(
            attributes={
                "label": StringAttr(label),
                "nprocs": IntegerAttr(nprocs, i64),
                "cost_s": FloatAttr(float(cost_s), f64),
                "line": IntegerAttr(line, i64),
                "stage": IntegerAttr(stage, i64),
            }
        )


@irdl_op_definition
class PipelineOp(IRDLOperation):
    """Staged compute and schedules (each op inside carries its `stage`); see PipelineStep."""

    name = "sched.pipeline"

    stages = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, stages: int, ops: Sequence[Operation] = (), line: int = 0) -> None:
        super().__init__(attributes={"stages": IntegerAttr(stages, i64),
                                     "line": IntegerAttr(line, i64)},
                         regions=[Region(Block(ops))])


def schedule_to_ir(s: Schedule) -> ScheduleOp:
    # Sends first, then receives: the two lists come back apart and in order.
    phases = [PhaseOp(k, p.sync, p.sends, p.recvs) for k, p in enumerate(s.phases)]
    return ScheduleOp(s.collective, s.kind, s.algorithm, s.nprocs, phases, s.src, s.dst, s.line,
                      s.stage)


def schedule_from_ir(op: ScheduleOp) -> Schedule:
    phases = tuple(
        Phase(
            sends=transfers_from_attr(p.sends),
            recvs=transfers_from_attr(p.recvs),
            sync=p.sync.data,
        )
        for p in op.phases
    )
    return Schedule(
        collective=op.collective.value.data,
        kind=op.kind.data,
        algorithm=op.algorithm.data,
        nprocs=op.nprocs.value.data,
        phases=phases,
        src=op.src.data,
        dst=op.dst.data,
        line=op.line.value.data,
        stage=op.stage.value.data,
    )


def compute_to_ir(c: ComputeStep) -> ComputeOp:
    return ComputeOp(c.label, c.nprocs, c.cost_s, c.line, c.stage)


def compute_from_ir(op: ComputeOp) -> ComputeStep:
    return ComputeStep(
        label=op.label.data,
        nprocs=op.nprocs.value.data,
        cost_s=op.cost_s.value.data,
        line=op.line.value.data,
        stage=op.stage.value.data,
    )


def _step_to_ir(step: ComputeStep | Schedule) -> Operation:
    return compute_to_ir(step) if isinstance(step, ComputeStep) else schedule_to_ir(step)


def plan_to_module(plan: Plan) -> ModuleOp:
    """The inverse of `plan_from_module`: one top-level op per step, in order."""
    ops: list[Operation] = []
    for step in plan.steps:
        if isinstance(step, PipelineStep):
            inner = [_step_to_ir(s) for stage in step.stages for s in stage]
            ops.append(PipelineOp(len(step.stages), inner, step.line))
        else:
            ops.append(_step_to_ir(step))
    return ModuleOp(ops)


def _step_from_ir(op: Operation) -> ComputeStep | Schedule | None:
    if isinstance(op, ComputeOp):
        return compute_from_ir(op)
    if isinstance(op, ScheduleOp):
        return schedule_from_ir(op)
    if not op.name.startswith("dist."):
        raise ValueError(f"cannot execute '{op.name}': lower it to the sched dialect first")
    return None


def plan_from_module(module: ModuleOp, nprocs: int) -> Plan:
    """Collect the module's compute steps, schedules and pipelines, in program order.

    `dist.*` ops are declarations and are skipped. Anything else (a `coll.*` op that
    was never lowered, say) would silently drop communication, so it is an error.
    """
    steps: list[ComputeStep | Schedule | PipelineStep] = []
    for op in module.ops:
        if isinstance(op, PipelineOp):
            stages: list[list[ComputeStep | Schedule]] = [[] for _ in range(op.stages.value.data)]
            for inner in op.body.block.ops:
                step = _step_from_ir(inner)
                if step is not None:
                    stages[step.stage].append(step)
            steps.append(PipelineStep(tuple(tuple(s) for s in stages), op.line.value.data))
        else:
            step = _step_from_ir(op)
            if step is not None:
                steps.append(step)
    return Plan(nprocs=nprocs, steps=tuple(steps))


Sched = Dialect("sched", [ScheduleOp, PhaseOp, ComputeOp, PipelineOp], [])
