"""`verify-schedule`: reject a `sched` module whose schedules are malformed.

Input and output: a module with `sched.schedule` ops; unchanged when valid.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.ir.dialects import sched
from phalanx.compiler.target import Target, resolve
from phalanx.compiler.verify import table_problems


@dataclass(frozen=True)
class VerifySchedule(ModulePass):
    """With `target`, also the target's own proofs (Target.schedule_problems)."""

    name = "verify-schedule"

    target: str = ""
    machine: Target | None = None  # the resolved `target`, when the caller has it

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = self.machine or (resolve(self.target) if self.target else None)
        for child in op.walk():
            if isinstance(child, sched.ScheduleOp):
                problems = table_problems(child.nprocs.value.data, *child.tables())
                if machine is not None and not problems:
                    problems = machine.schedule_problems(sched.schedule_from_ir(child))
                if problems:
                    raise VerifyException(f"schedule of collective {child.collective.value.data}: "
                                          + "; ".join(problems[:5]))
