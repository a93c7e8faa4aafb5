"""Whether a pipeline pays: its predicted time against the same body run once, unsplit.

Both times come from the target's cost model (the one `auto` minimised), per collective
with the algorithm that runs it: for the stages, the algorithm the compiler chose for each;
for the unsplit statements, the one it would choose for them (`--algorithm` applies to both).
The pipeline's time follows the runtime's overlap (runtime/interpreter.py): a node computes
stage i after stage i-1's compute and, with double buffering, after stage i-2's
communication; its communication agent moves stage i after stage i's compute and stage
i-1's communication. The prediction takes every node to be alike (the compute of a stage
is the sum of its compute statements, which rank 0, in every arrangement, runs).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from phalanx.compiler.ir.conversion.lower_coll_to_sched import parse_algorithm_option, requested_algorithm
from phalanx.compiler.ir.transforms.recognize_collectives import recognize_statement
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import ComputeStep, PipelineStep, RepeatStep, Schedule
from phalanx.compiler.semantics import AssignStmt, PipelineStmt, flat_statements
from phalanx.compiler.target import Target


@dataclass(frozen=True)
class StageCut:
    """Where one assignment of a pipeline is cut (1-based dimension, as in cshift's dim=)."""

    line: int
    dst: str
    dimension: int


@dataclass(frozen=True)
class PipelinePrediction:
    """A pipeline's predicted time and the same body's without the pipeline, in seconds."""

    line: int
    stages: int
    cuts: tuple[StageCut, ...]
    pipelined_s: float
    unpipelined_s: float | None  # None: the target has no algorithm for an unsplit statement

    @property
    def pays(self) -> bool | None:
        return None if self.unpipelined_s is None else bool(self.pipelined_s < self.unpipelined_s)

    def note(self) -> str:
        """What the report says of this pipeline."""
        cuts = ", ".join(f"'{c.dst}' (line {c.line}) along dimension {c.dimension}"
                         for c in self.cuts)
        head = f"pipeline at line {self.line} ({self.stages} stages, cutting {cuts}): predicted "
        if self.unpipelined_s is None:
            return head + f"{self.pipelined_s * 1e3:.6f} ms; no prediction without the pipeline"
        verdict = "pays" if self.pays else "does not pay"
        return (head + f"{self.pipelined_s * 1e3:.6f} ms pipelined, {self.unpipelined_s * 1e3:.6f} "
                f"ms without the pipeline: it {verdict}")

    def to_json(self) -> dict:
        return {"line": self.line, "stages": self.stages,
                "cuts": [dataclasses.asdict(c) for c in self.cuts],
                "predicted_pipelined_s": self.pipelined_s,
                "predicted_unpipelined_s": self.unpipelined_s, "pays": self.pays,
                "note": self.note()}


def terminal_notes(pipelines: list[PipelinePrediction]) -> list[str]:
    """The lines `phalanx run` prints under its summary: pipelines predicted not to pay."""
    return [f"  note: {p.note()}" for p in pipelines if p.pays is False]


def overlapped_time_s(compute_s: list[float], comm_s: list[float]) -> float:
    """Stage i's compute and communication times -> the time the last communication ends."""
    compute_end = 0.0
    comm_end: list[float] = []
    for i, (work, move) in enumerate(zip(compute_s, comm_s)):
        buffer_free = comm_end[i - 2] if i >= 2 else 0.0
        compute_end = max(compute_end, buffer_free) + work
        comm_end.append(max(compute_end, comm_end[-1] if comm_end else 0.0) + move)
    return comm_end[-1] if comm_end else 0.0


def _unsplit_time_s(stmt: AssignStmt, machine: Target, choices: dict[str, str],
                    cost: str) -> float | None:
    # The statement unsplit is timed on its own, as the program's only collective (index 0: the
    # iWarp's switch tags number collectives from 0).
    whole = recognize_statement(0, dataclasses.replace(stmt, window=None, stage=None))
    wanted = requested_algorithm(choices, whole.kind)
    if wanted != "auto" and (wanted not in machine.algorithms(whole.kind)
                             or machine.unmet(whole, wanted) is not None):
        wanted = "auto"  # the requested algorithm cannot move the unsplit statement
    if not any(reason is None for _, reason in machine.candidates(whole)):
        return None
    return machine.predict(whole, machine.choose(whole, wanted, cost), cost)


def predict_pipeline(stmt: PipelineStmt, step: PipelineStep, collectives: list[Collective],
                     machine: Target, algorithm: str, cost: str) -> PipelinePrediction:
    compute_s = [sum(s.cost_s for s in stage if isinstance(s, ComputeStep)) for stage in step.stages]
    comm_s = [sum(machine.predict(collectives[s.collective], s.algorithm, cost)
                  for s in stage if isinstance(s, Schedule)) for stage in step.stages]
    assigns = [s for s in stmt.stages[0] if isinstance(s, AssignStmt)]
    unsplit = [_unsplit_time_s(s, machine, parse_algorithm_option(algorithm), cost) for s in assigns]
    cuts = tuple(StageCut(s.loc.line, s.dst.name, s.window.dim + 1) for s in assigns)
    return PipelinePrediction(stmt.loc.line, len(stmt.stages), cuts,
                              float(overlapped_time_s(compute_s, comm_s)),
                              None if None in unsplit else float(sum(compute_s) + sum(unsplit)))


def _flat_steps(steps) -> list:
    """The steps with every repeat's body in its place, once each."""
    out: list = []
    for step in steps:
        out += _flat_steps(step.body) if isinstance(step, RepeatStep) else [step]
    return out


def predict_pipelines(statements, steps, collectives: list[Collective], machine: Target,
                      algorithm: str, cost: str) -> list[PipelinePrediction]:
    """One prediction per pipeline statement of the program, in order: the checked program's
    pipelines and the plan's pipeline steps correspond one to one, and the runs of a pipeline
    in a `repeat` (one statement, compiled once) share their prediction."""
    stmts = [s for s in flat_statements(statements) if isinstance(s, PipelineStmt)]
    pipes = [s for s in _flat_steps(steps) if isinstance(s, PipelineStep)]
    out, seen = [], set()
    for s, p in zip(stmts, pipes):
        if id(s) not in seen:
            seen.add(id(s))
            out.append(predict_pipeline(s, p, collectives, machine, algorithm, cost))
    return out
