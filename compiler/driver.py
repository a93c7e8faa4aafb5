"""The compiler driver: source text to a schedule plan, keeping the IR of every stage.

parse -> check -> dist IR -> recognize-collectives -> coll IR
      -> lower-coll-to-sched{target, algorithm} -> verify-schedule -> sched IR -> Plan
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from phalanx.compiler.choice import PER_STATEMENT, ProgramChoice
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.ir.build import module_from_program
from phalanx.compiler.ir.conversion.lower_coll_to_sched import (
    LowerCollToSched,
    parse_algorithm_option,
    requested_algorithm,
)
from phalanx.compiler.ir.dialects import coll, make_context
from phalanx.compiler.ir.dialects.sched import ScheduleOp, plan_from_module
from phalanx.compiler.ir.transforms.recognize_collectives import RecognizeCollectives, collective_from_op
from phalanx.compiler.ir.transforms.verify_schedule import VerifySchedule
from phalanx.compiler.pipelines import PipelinePrediction, predict_pipelines
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Plan, Schedule
from phalanx.compiler.semantics import AssignStmt, CheckedProgram, ReduceStmt, check
from phalanx.compiler.target import CLOSED_FORM, Target, check_cost_model, resolve
from phalanx.grammar import ast
from phalanx.grammar.diagnostics import PhalanxError, error_at, usage_error
from phalanx.grammar.frontend import parse_path, parse_source


@dataclass(frozen=True)
class Candidate:
    algorithm: str
    time_s: float  # what `auto` ranked it by: predicted by a formula, or simulated (`source`)
    source: str = "predicted"  # "predicted" (a formula) or "simulated...", with why (Target.predict_source)

    @property
    def simulated(self) -> bool:
        return self.source.startswith("simulated")

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "time_s": self.time_s,
                "figure": "simulated" if self.simulated else "predicted", "source": self.source}


@dataclass(frozen=True)
class LeftOut:
    """An algorithm `auto` did not consider, and the precondition it failed."""

    algorithm: str
    reason: str


@dataclass
class Compiled:
    """Everything a run or a report needs about one compiled program."""

    ast: ast.Module
    program: CheckedProgram
    target_spec: str
    target: Target
    collectives: list[Collective]
    communications: list[AssignStmt | ReduceStmt]  # by collective index
    candidates: list[list[Candidate]]  # by collective index
    stages: dict[str, ModuleOp]  # "dist", "coll", "sched"
    plan: Plan
    cost_model: str = "target"  # the cost model `auto` minimised
    left_out: list[list[LeftOut]] = field(default_factory=list)  # by collective index
    pipelines: list[PipelinePrediction] = field(default_factory=list)  # whether each pipeline pays
    choice: ProgramChoice = field(default_factory=lambda: ProgramChoice(PER_STATEMENT, "not searched"))
    # by collective index: each assignment's communication set (None for a reduction), the one
    # recognition read; the run's data check takes it (runtime/data.py build_data)
    commsets: list[CommSet | None] = field(default_factory=list)

    @property
    def schedules(self) -> list[Schedule]:
        return self.plan.schedules()

    @property
    def assignments(self) -> list[AssignStmt]:
        return [s for s in self.communications if isinstance(s, AssignStmt)]


def load(source_or_path: str | Path, file: str | None = None, parser: str = "lark") -> ast.Module:
    """Parse a program given as a path or (when it contains a newline) as source text."""
    if isinstance(source_or_path, Path) or "\n" not in source_or_path:
        return parse_path(source_or_path, parser)
    return parse_source(source_or_path, file or "<input>", parser)


def _resolve_target(program: CheckedProgram, spec: str | None) -> tuple[str, Target]:
    if spec is not None:
        return spec, resolve(spec)
    if program.target_spec is None:
        raise usage_error(f"{program.file} declares no target and none was given",
                          "add `target ideal:16` to the program or pass --target SPEC")
    try:
        return program.target_spec, resolve(program.target_spec)
    except PhalanxError as exc:  # a bad spec in the program is a program error, with a place
        d = exc.diagnostic
        raise error_at(program.target_loc, d.message, program.source, d.hint) from None


@dataclass
class _Recognized:
    """The front end's work, which compile_program and recognized_collectives share."""

    module: ast.Module
    program: CheckedProgram
    spec: str
    machine: Target
    ctx: Context
    stages: dict[str, ModuleOp]  # "dist", "coll"
    commsets: list[CommSet | None]
    collectives: list[Collective]  # by index


def _recognize(source_or_path: str | Path, target: str | None, file: str | None, parser: str,
               checked: Callable[[CheckedProgram, str], None] | None = None) -> _Recognized:
    """Parse, check and resolve the target; the dist IR and the coll IR with its collectives."""
    module = load(source_or_path, file, parser)
    program = check(module)
    spec, machine = _resolve_target(program, target)
    for procs in program.processors.values():
        if procs.count > machine.nnodes:
            raise error_at(procs.loc, f"processor arrangement '{procs.name}' has {procs.count} "
                           f"processors but target '{spec}' has {machine.nnodes} nodes",
                           program.source, f"use at most {machine.nnodes} processors or a "
                           "larger target")
        if procs.base + procs.count > machine.nnodes:
            raise error_at(procs.loc, f"processor arrangement '{procs.name}' at node {procs.base} "
                           f"needs nodes {procs.base} to {procs.base + procs.count - 1} but target "
                           f"'{spec}' has {machine.nnodes} nodes (0 to {machine.nnodes - 1})",
                           program.source, f"place it at node {machine.nnodes - procs.count} or "
                           "lower, or use a larger target")
    if checked is not None:
        checked(program, spec)
    ctx = make_context()
    stages = {"dist": module_from_program(program, machine.clock_hz, spec)}
    stages["dist"].verify()
    stages["coll"] = stages["dist"].clone()
    # each assignment's communication set, built once: recognition reads it, and so does the
    # run's data check (Compiled.commsets; runtime/data_facts.py)
    commsets = [CommSet(s) if isinstance(s, AssignStmt) else None for s in program.communications()]
    RecognizeCollectives(commsets=tuple(commsets)).apply(ctx, stages["coll"])
    # by index: each coll op carries its statement's (recognize-collectives checks 0..n-1)
    collectives = sorted((collective_from_op(op) for op in stages["coll"].ops
                          if isinstance(op, coll.CollectiveOp)), key=lambda c: c.index)
    return _Recognized(module, program, spec, machine, ctx, stages, commsets, collectives)


def recognized_collectives(source_or_path: str | Path, target: str | None = None,
                           file: str | None = None, parser: str = "lark") -> list[Collective]:
    """The program's collectives as recognition finds them, by index, nothing lowered: what a
    lower bound or a precondition is worked out from. compile_program's are the same, after
    it has lowered them and listed every candidate (each candidate's closed form generates
    its schedule: seconds on a 64-node machine)."""
    return _recognize(source_or_path, target, file, parser).collectives


def compile_program(source_or_path: str | Path, target: str | None = None,
                    algorithm: str = "auto", file: str | None = None,
                    parser: str = "lark", cost: str = "target",
                    checked: Callable[[CheckedProgram, str], None] | None = None) -> Compiled:
    """Compile a program; `algorithm` is `auto`, one name, or `KIND=ALG,...`;
    `parser` is the front end, `lark` or `antlr`; `cost` the cost model `auto` minimises
    (`target`, or one a backend registered, e.g. `simgrid`). `checked(program, spec)` is
    called once the program is checked and its target resolved, before communication sets
    and schedules are worked out (the expensive part): `phalanx run` refuses there a program
    too big to simulate (runtime/limits.py)."""
    parse_algorithm_option(algorithm)  # a bad --algorithm or --cost is refused before any work
    check_cost_model(cost)
    found = _recognize(source_or_path, target, file, parser, checked)
    module, program, spec, machine, ctx = found.module, found.program, found.spec, found.machine, found.ctx
    stages, commsets, collectives = found.stages, found.commsets, found.collectives
    stages["sched"] = _lower(ctx, stages["coll"], spec, machine, algorithm, cost, program=program)
    listed = [machine.candidates(c) for c in collectives]
    # A statement whose algorithm is forced ranks nothing: its alternatives are listed by the
    # closed forms (their source says so), not simulated, so `--algorithm X` costs no candidate runs.
    choices = parse_algorithm_option(algorithm)
    listing = [cost if requested_algorithm(choices, c.kind) == "auto" else CLOSED_FORM for c in collectives]
    candidates = [[Candidate(a, machine.predict(c, a, model), machine.predict_source(c, a, model))
                   for a, reason in each if reason is None]
                  for c, each, model in zip(collectives, listed, listing)]
    left_out = [[LeftOut(a, reason) for a, reason in each if reason is not None] for each in listed]
    plan = plan_from_module(stages["sched"], max(program.nprocs, 1))
    choice = _choose_for_program(machine, plan, collectives, candidates, algorithm, cost)
    if choice.algorithms != {s.line: s.algorithm for s in plan.schedules()}:
        stages["sched"] = _lower(ctx, stages["coll"], spec, machine, algorithm, cost,
                                 tuple(choice.algorithms.items()), program)
        plan = plan_from_module(stages["sched"], max(program.nprocs, 1))
    pipelines = predict_pipelines(program.statements, plan.steps, collectives, machine, algorithm, cost)
    return Compiled(module, program, spec, machine, collectives, program.communications(),
                    candidates, stages, plan, cost, left_out, pipelines, choice, commsets)


def _lower(ctx: Context, coll_module: ModuleOp, spec: str, machine: Target, algorithm: str, cost: str,
           per_line: tuple[tuple[int, str], ...] = (), program: CheckedProgram | None = None) -> ModuleOp:
    """The sched IR of the coll IR, verified (per_line: algorithms chosen for the program;
    `program`: where a refused algorithm is reported)."""
    module = coll_module.clone()
    LowerCollToSched(target=spec, algorithm=algorithm, cost=cost, machine=machine, per_line=per_line,
                     file=program.file if program else None,
                     source=program.source if program else None).apply(ctx, module)
    VerifySchedule(target=spec, machine=machine).apply(ctx, module)
    module.verify()
    return module


def _choose_for_program(machine: Target, plan: Plan, collectives: list[Collective],
                        candidates: list[list[Candidate]], algorithm: str, cost: str) -> ProgramChoice:
    """runtime/progchoice.py's choice over the statements whose algorithm is `auto`."""
    from phalanx.runtime.progchoice import choose_for_program  # the runtime imports the driver

    choices = parse_algorithm_option(algorithm)
    searched: dict[int, list[str]] = {}
    for c, each in zip(collectives, candidates):
        if requested_algorithm(choices, c.kind) == "auto":
            searched.setdefault(c.line, [x.algorithm for x in each])
    return choose_for_program(machine, plan, collectives, searched, cost)


def chosen_algorithms(compiled: Compiled) -> list[str]:
    return [op.algorithm.data for op in compiled.stages["sched"].walk() if isinstance(op, ScheduleOp)]


def unrolled(compiled: Compiled) -> Compiled:
    """The program with its repeats written out: the plan flat (compiler/schedule.py
    Plan.unrolled) and one collective per run, numbered by run index, sharing its statement's
    facts. For the backends that run a flat plan (SimGrid, MPI, the native program's report);
    the program itself unchanged when it has no repeat."""
    if not compiled.plan.repeats:
        return compiled
    runs = compiled.plan.runs()
    return dataclasses.replace(
        compiled, plan=compiled.plan.unrolled(),
        collectives=[dataclasses.replace(compiled.collectives[i], index=r) for r, i in enumerate(runs)],
        communications=[compiled.communications[i] for i in runs],
        commsets=[compiled.commsets[i] for i in runs] if compiled.commsets else [],
        candidates=[compiled.candidates[i] for i in runs],
        left_out=[compiled.left_out[i] for i in runs] if compiled.left_out else [])
