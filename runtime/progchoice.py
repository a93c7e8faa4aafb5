"""`auto` for the program: algorithms chosen by the program's simulated total (issue 29 item 2).

Choosing each statement's algorithm by its own time misses what statements do to each other:
nodes that leave one statement early start the next while others are still in it (SUMMA's row
and column broadcasts overlap), and traffic of neighbouring statements shares the network.
This search judges every choice by the whole program's total, simulated on the target's
built-in simulator with the payloads left out (runtime/timing.py TimingData: the same time a
run with real data gives), starting from the statement-by-statement choice:

1. coordinate descent over kinds (every searched statement of one kind, such as all of SUMMA's
   row and column broadcasts), one algorithm for all of them at a time;
2. then over classes of statements (those with the same kind, groups and sizes, such as
   SUMMA's eight row broadcasts);
3. then over single statements;

each pass repeated while it improves the total. Every evaluation is paid from a budget of
estimated simulator events (the schedules' messages by Target.message_events, as --cost
simulate budgets a candidate); the search stops when the next evaluation would not fit and
keeps the best program found. A statement keeps one algorithm for all its runs (repeat
iterations, pipeline stages). Only statements whose algorithm is `auto` are searched.
"""

from __future__ import annotations

import dataclasses

from phalanx.compiler.choice import BY_PROGRAM, PER_STATEMENT, ProgramChoice
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import PipelineStep, Plan, RepeatStep, Schedule, Step
from phalanx.compiler.target import Target
from phalanx.runtime.data import Payloads
from phalanx.runtime.timing import TimingData


def schedule_events(target: Target, schedule: Schedule) -> int:
    """The simulator events a schedule is estimated to cost (as runtime/simcost.py)."""
    return sum(target.message_events(t.src, t.dst, t.nbytes) for phase in schedule.phases
               for t in phase.sends if t.src != t.dst)


class ProgramSearch:
    """The program's plan with each searched statement's algorithm replaced, timed whole."""

    def __init__(self, target: Target, plan: Plan, collectives: list[Collective],
                 budget_events: int):
        self.target, self.plan, self.collectives = target, plan, collectives
        self.budget_events = budget_events
        self.events_spent = 0
        self.evaluations = 0
        self._totals: dict[tuple[tuple[int, str], ...], float] = {}

    def _schedule(self, step: Schedule, choice: dict[int, str]) -> Schedule:
        algorithm = choice.get(step.line, step.algorithm)
        if algorithm == step.algorithm:
            return step
        coll = self.collectives[step.collective]
        return dataclasses.replace(self.target.schedule_for(coll, algorithm), stage=step.stage)

    def _step(self, step: Step, choice: dict[int, str]) -> Step:
        if isinstance(step, Schedule):
            return self._schedule(step, choice)
        if isinstance(step, PipelineStep):
            return PipelineStep(tuple(tuple(self._schedule(s, choice) if isinstance(s, Schedule)
                                            else s for s in stage) for stage in step.stages), step.line)
        if isinstance(step, RepeatStep):
            return RepeatStep(step.count, tuple(self._step(s, choice) for s in step.body), step.line)
        return step

    def plan_with(self, choice: dict[int, str]) -> Plan:
        return Plan(self.plan.nprocs, tuple(self._step(step, choice) for step in self.plan.steps))

    def _step_events(self, step: Step) -> int:
        """A step's estimated events, a repeat's body counted once per iteration."""
        if isinstance(step, Schedule):
            return schedule_events(self.target, step)
        if isinstance(step, PipelineStep):
            return sum(schedule_events(self.target, s) for stage in step.stages for s in stage
                       if isinstance(s, Schedule))
        if isinstance(step, RepeatStep):
            return step.count * sum(self._step_events(s) for s in step.body)
        return 0

    def events(self, plan: Plan) -> int:
        return sum(self._step_events(step) for step in plan.steps)

    def total_s(self, choice: dict[int, str]) -> float | None:
        """The program's simulated total with `choice`; None when the budget has no room left."""
        key = tuple(sorted(choice.items()))
        if key in self._totals:
            return self._totals[key]
        from phalanx.runtime.simulate import run_plan  # simulate imports the compiler's driver

        plan = self.plan_with(choice)
        events = self.events(plan)
        if self.events_spent + events > self.budget_events:
            return None
        colls, runs = self.collectives, plan.runs()  # payloads are keyed by run index
        data = Payloads(lambda r: TimingData(colls[runs[r]].kind in REDUCTIONS,
                                             colls[runs[r]].element_bytes, colls[runs[r]].strided),
                        range(len(runs)))
        execution, _ = run_plan(self.target, plan, data)
        self.events_spent += events
        self.evaluations += 1
        self._totals[key] = execution.total_time_s
        return execution.total_time_s


def _grouped_lines(collectives: list[Collective], lines: list[int], key) -> list[list[int]]:
    """The searched statements' lines grouped by `key` of their collective, groups of two or more."""
    first: dict[int, Collective] = {}
    for c in collectives:
        first.setdefault(c.line, c)
    groups: dict[object, list[int]] = {}
    for line in lines:
        groups.setdefault(key(first[line]), []).append(line)
    return [members for members in groups.values() if len(members) > 1]


def statement_classes(collectives: list[Collective], lines: list[int]) -> list[list[int]]:
    """The searched statements' lines, grouped by kind, groups, byte totals and element size."""
    return _grouped_lines(collectives, lines, lambda c: (c.kind, c.nprocs, c.groups, c.total_bytes,
                                                         c.block_bytes, c.element_bytes))


def statement_kinds(collectives: list[Collective], lines: list[int]) -> list[list[int]]:
    """The searched statements' lines, grouped by kind."""
    return _grouped_lines(collectives, lines, lambda c: c.kind)


def search(target: Target, plan: Plan, collectives: list[Collective], start: dict[int, str],
           candidates: dict[int, list[str]], budget_events: int,
           run: ProgramSearch | None = None) -> ProgramChoice:
    """Coordinate descent from `start` (line -> algorithm) over `candidates` (line -> runnable
    algorithms), by kinds, by classes of statements, then by statement, within `budget_events`.
    `run`: a ProgramSearch of this plan whose evaluations (cached totals) and budget the search
    shares (bench/regret_programs.py's baseline descends from several starts); its budget then
    replaces `budget_events`."""
    run = run if run is not None else ProgramSearch(target, plan, collectives, budget_events)
    budget_events = run.budget_events
    best = dict(start)
    first_total = run.total_s(best)
    if first_total is None:
        return ProgramChoice(PER_STATEMENT, f"one simulation of the program (~{run.events(plan)} "
                             f"events) is past the budget of {budget_events} events", start,
                             budget_events=budget_events)
    best_total = first_total
    lines = [line for line in candidates if len(candidates[line]) > 1]
    out_of_budget = False
    for moves in (statement_kinds(collectives, lines), statement_classes(collectives, lines),
                  [[line] for line in lines]):
        improved = True
        while improved and not out_of_budget:
            improved = False
            for members in moves:
                for algorithm in [a for a in candidates[members[0]]
                                  if all(a in candidates[m] for m in members)]:
                    trial = best | {m: algorithm for m in members}
                    if trial == best:
                        continue
                    total = run.total_s(trial)
                    if total is None:
                        out_of_budget = True
                        break
                    if total < best_total * (1 - 1e-9):
                        best, best_total, improved = trial, total, True
                if out_of_budget:
                    break
    reason = ("stopped at the budget; the best program found is kept" if out_of_budget
              else "no single change of a statement or class of statements shortens the program")
    return ProgramChoice(BY_PROGRAM, reason, best, run.evaluations, run.events_spent, budget_events,
                         first_total, best_total)


# Budgets of the search, in estimated simulator events over all its evaluations. SUMMA on
# paragon:8x8 (examples/summa.phx) is ~4,200 estimated events and ~0.8 s of simulation per
# program on one core, so the default cost model's budget is about a dozen programs (~10 s) and
# --cost simulate's about two dozen.
BUDGET_TARGET_EVENTS = 50_000
BUDGET_SIMULATE_EVENTS = 100_000


def choose_for_program(target: Target, plan: Plan, collectives: list[Collective],
                       candidates: dict[int, list[str]], cost: str) -> ProgramChoice:
    """Search the program under `--cost target` (the default) and `--cost simulate`, where at
    least two statements have a choice (one statement alone is ranked by its own time);
    per statement under other cost models. `candidates`: line -> runnable algorithms of the
    statements whose algorithm is `auto`."""
    start = {s.line: s.algorithm for s in plan.schedules()}
    model = cost.partition(":")[0]
    if model not in ("target", "simulate"):
        return ProgramChoice(PER_STATEMENT, f"the `{model}` cost model ranks each statement alone", start)
    if sum(len(names) > 1 for names in candidates.values()) < 2:
        return ProgramChoice(PER_STATEMENT, "fewer than two statements have a choice of algorithm",
                             start)
    budget = BUDGET_SIMULATE_EVENTS if model == "simulate" else BUDGET_TARGET_EVENTS
    return search(target, plan, collectives, start, candidates, budget)
