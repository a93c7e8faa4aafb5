"""The `sched` dialect: a collective lowered to phases of sends and receives.

This is the IR form of compiler/schedule.py. A `sched.schedule` holds one block of
`sched.phase` ops; a phase holds one block of `sched.send` / `sched.recv` ops.
The blocks carry no terminator: these ops only group their contents. The
converters below move between the IR and the plain dataclasses without loss.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Block, Dialect, Region
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition, region_def, traits_def
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.schedule import SYNC_KINDS, ComputeStep, Phase, Plan, Schedule, Transfer


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
            for t in op.transfers:
                for field in ("src", "dst", "origin", "final"):
                    p = getattr(t, field).value.data
                    if not 0 <= p < n:
                        raise VerifyException(
                            f"'{t.name}' in phase {position}: {field} = {p} outside 0..{n - 1}"
                        )


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """Sends and receives that run together; `sync` is "local" or "barrier"."""

    name = "sched.phase"

    index = attr_def(IntegerAttr[I64])
    sync = attr_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator(), HasParent(ScheduleOp))

    def __init__(self, index: int, sync: str, transfers: Sequence[TransferOp] = ()) -> None:
        super().__init__(
            attributes={"index": IntegerAttr(index, i64), "sync": StringAttr(sync)},
            regions=[Region(Block(transfers))],
        )

    @property
    def transfers(self) -> tuple[TransferOp, ...]:
        return tuple(op for op in self.body.block.ops if isinstance(op, TransferOp))

    @property
    def sends(self) -> tuple[SendOp, ...]:
        return tuple(op for op in self.body.block.ops if isinstance(op, SendOp))

    @property
    def recvs(self) -> tuple[RecvOp, ...]:
        return tuple(op for op in self.body.block.ops if isinstance(op, RecvOp))

    def verify_(self) -> None:
        if self.sync.data not in SYNC_KINDS:
            raise VerifyException(
                f"'{self.name}' sync must be one of {', '.join(SYNC_KINDS)}, got '{self.sync.data}'"
            )
        for op in self.body.block.ops:
            if not isinstance(op, TransferOp):
                raise VerifyException(
                    f"'{self.name}' may only hold 'sched.send' and 'sched.recv' ops, "
                    f"found '{op.name}'"
                )


class TransferOp(IRDLOperation, ABC):
    """One message of a phase, seen from the sender (send) or the receiver (recv)."""

    src = attr_def(IntegerAttr[I64])
    dst = attr_def(IntegerAttr[I64])
    bytes = attr_def(IntegerAttr[I64])
    origin = attr_def(IntegerAttr[I64])
    final = attr_def(IntegerAttr[I64])
    message = attr_def(IntegerAttr[I64])  # 0: a message of its own; >0: combined, see Transfer

    traits = traits_def(HasParent(PhaseOp))

    def __init__(self, t: Transfer) -> None:
        super().__init__(
            attributes={
                "src": IntegerAttr(t.src, i64),
                "dst": IntegerAttr(t.dst, i64),
                "bytes": IntegerAttr(t.nbytes, i64),
                "origin": IntegerAttr(t.origin, i64),
                "final": IntegerAttr(t.final, i64),
                "message": IntegerAttr(t.message, i64),
            }
        )

    def to_transfer(self) -> Transfer:
        return Transfer(
            src=self.src.value.data,
            dst=self.dst.value.data,
            nbytes=self.bytes.value.data,
            origin=self.origin.value.data,
            final=self.final.value.data,
            message=self.message.value.data,
        )

    def verify_(self) -> None:
        if self.bytes.value.data < 0:
            raise VerifyException(f"'{self.name}' bytes must be >= 0, got {self.bytes.value.data}")


@irdl_op_definition
class SendOp(TransferOp):
    name = "sched.send"


@irdl_op_definition
class RecvOp(TransferOp):
    name = "sched.recv"


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Every one of `nprocs` processors is busy computing for `cost_s` seconds."""

    name = "sched.compute"

    label = attr_def(StringAttr)
    nprocs = attr_def(IntegerAttr[I64])
    cost_s = attr_def(FloatAttr[Float64Type])
    line = attr_def(IntegerAttr[I64])

    def __init__(self, label: str, nprocs: int, cost_s: float, line: int = 0) -> None:
        super().__init__(
            attributes={
                "label": StringAttr(label),
                "nprocs": IntegerAttr(nprocs, i64),
                "cost_s": FloatAttr(float(cost_s), f64),
                "line": IntegerAttr(line, i64),
            }
        )


def schedule_to_ir(s: Schedule) -> ScheduleOp:
    # Sends first, then receives: the two lists come back apart and in order.
    phases = [
        PhaseOp(k, p.sync, [SendOp(t) for t in p.sends] + [RecvOp(t) for t in p.recvs])
        for k, p in enumerate(s.phases)
    ]
    return ScheduleOp(s.collective, s.kind, s.algorithm, s.nprocs, phases, s.src, s.dst, s.line)


def schedule_from_ir(op: ScheduleOp) -> Schedule:
    phases = tuple(
        Phase(
            sends=tuple(t.to_transfer() for t in p.sends),
            recvs=tuple(t.to_transfer() for t in p.recvs),
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
    )


def compute_to_ir(c: ComputeStep) -> ComputeOp:
    return ComputeOp(c.label, c.nprocs, c.cost_s, c.line)


def compute_from_ir(op: ComputeOp) -> ComputeStep:
    return ComputeStep(
        label=op.label.data,
        nprocs=op.nprocs.value.data,
        cost_s=op.cost_s.value.data,
        line=op.line.value.data,
    )


def plan_to_module(plan: Plan) -> ModuleOp:
    """The inverse of `plan_from_module`: one top-level op per step, in order."""
    return ModuleOp(
        [compute_to_ir(s) if isinstance(s, ComputeStep) else schedule_to_ir(s) for s in plan.steps]
    )


def plan_from_module(module: ModuleOp, nprocs: int) -> Plan:
    """Collect the module's top-level compute steps and schedules, in program order.

    `dist.*` ops are declarations and are skipped. Anything else (a `coll.*` op that
    was never lowered, say) would silently drop communication, so it is an error.
    """
    steps: list[ComputeStep | Schedule] = []
    for op in module.ops:
        if isinstance(op, ComputeOp):
            steps.append(compute_from_ir(op))
        elif isinstance(op, ScheduleOp):
            steps.append(schedule_from_ir(op))
        elif not op.name.startswith("dist."):
            raise ValueError(f"cannot execute '{op.name}': lower it to the sched dialect first")
    return Plan(nprocs=nprocs, steps=tuple(steps))


Sched = Dialect("sched", [ScheduleOp, PhaseOp, SendOp, RecvOp, ComputeOp], [])
