"""`lower-coll-to-sched{target=...,algorithm=...,cost=...}`: schedule every collective for a target.

Input: a module whose communication is `coll` ops (after recognize-collectives).
Output: each `coll` op replaced by a `sched.schedule` from the target's generator for
the chosen algorithm (`auto`: least time predicted by the cost model `cost`, the target's
own by default, or one a backend registered such as `simgrid`); each `dist.compute` replaced by a
`sched.compute`; each `dist.pipeline` header by a `sched.pipeline` (the staged ops that
follow it stay its body) and each `dist.repeat` header by a `sched.repeat` (the loop is kept:
its body's collectives are scheduled once). The target resolves through the registry, never an import; the
compiler driver hands in the target it resolved (`machine`), so a compile resolves it once.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from phalanx.compiler.ir.build import processors_from_module
from phalanx.compiler.ir.dialects import coll, dist, sched
from phalanx.compiler.ir.transforms.recognize_collectives import collective_from_op
from phalanx.compiler.kind import Kind, parse_kind
from phalanx.compiler.schedule import ComputeStep
from phalanx.compiler.target import AlgorithmRefused, Target, check_cost_model, resolve
from phalanx.grammar.diagnostics import SourceLoc, usage_error


def parse_algorithm_option(text: str) -> dict[Kind | str, str]:
    """`direct` (every kind) or `alltoall=direct,sparse=direct` -> {kind: algorithm}; the
    algorithm for every kind is keyed "*".

    Commas split only before `kind=`, so names with commas (`multiphase:2,3`) survive. A kind
    that is not a collective kind (`allgater=ring`) is an error naming the kinds.
    """
    choices: dict[Kind | str, str] = {}
    for part in filter(None, re.split(r",(?=\s*[A-Za-z_]\w*\s*=)", text)):
        kind, eq, alg = part.partition("=")
        if eq:
            if not kind.strip() or not alg.strip():
                raise usage_error(f"bad algorithm choice '{part}'", "write KIND=ALG, e.g. alltoall=direct")
            choices[parse_kind(kind, f"the algorithm choice '{part.strip()}'")] = alg.strip()
        else:
            choices["*"] = part.strip()
    return choices


def requested_algorithm(choices: dict[Kind | str, str], kind: Kind) -> str:
    """The algorithm the parsed --algorithm asks for a `kind` statement (`auto` unless named)."""
    return choices.get(kind, choices.get("*", "auto"))


@dataclass(frozen=True)
class LowerCollToSched(ModulePass):
    name = "lower-coll-to-sched"

    target: str = "ideal:16"
    algorithm: str = "auto"
    cost: str = "target"
    machine: Target | None = None  # the resolved `target`, when the caller has it
    # (line, algorithm): statements whose algorithm was chosen for the whole program
    # (runtime/progchoice.py), which `algorithm` does not override
    per_line: tuple[tuple[int, str], ...] = ()
    # the program's file and text, when the caller has them: a statement's algorithm refused
    # (target.AlgorithmRefused) is reported at the statement
    file: str | None = None
    source: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = self.machine or resolve(self.target)
        check_cost_model(self.cost)
        choices = parse_algorithm_option(self.algorithm)
        procs = processors_from_module(op)
        chosen = dict(self.per_line)
        for child in list(op.walk()):
            if isinstance(child, coll.CollectiveOp):
                c = collective_from_op(child)
                requested = requested_algorithm(choices, c.kind)
                try:
                    algorithm = chosen.get(c.line) or target.choose(c, requested, self.cost)
                except AlgorithmRefused as refused:
                    raise self._at_statement(refused, c.line) from None
                schedule = dataclasses.replace(target.schedule_for(c, algorithm),
                                               stage=child.stage.value.data)
                new = sched.schedule_to_ir(schedule)
            elif isinstance(child, dist.ComputeOp):
                onto = procs[child.onto.data]
                step = ComputeStep(child.label.data, onto.count, child.cost_s.value.data,
                                   child.line.value.data, child.stage.value.data, onto.base)
                new = sched.compute_to_ir(step)
            elif isinstance(child, dist.PipelineOp):
                new = sched.PipelineOp(child.stages.value.data, child.line.value.data)
            elif isinstance(child, dist.RepeatOp):
                new = sched.RepeatOp(child.count.value.data, child.ops.value.data,
                                     child.line.value.data)
            else:
                continue
            child.parent_block().insert_op_before(new, child)
            child.detach()
            child.erase()

    def _at_statement(self, refused: AlgorithmRefused, line: int) -> AlgorithmRefused:
        """`refused` located at the statement of `line` (its first character), where the
        caller gave the program's file."""
        if self.file is None:
            return refused
        lines = (self.source or "").splitlines()
        text = lines[line - 1] if 1 <= line <= len(lines) else None
        col = len(text) - len(text.lstrip()) + 1 if text is not None else 1
        located = dataclasses.replace(refused.diagnostic, loc=SourceLoc(self.file, line, col),
                                      source_line=text)
        return AlgorithmRefused(located)
