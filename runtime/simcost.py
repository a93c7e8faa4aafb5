"""`--cost simulate`: `auto` simulates every candidate and takes the fastest.

Each candidate's schedule runs alone on the target's built-in simulator with the payload left
out (runtime/timing.py: the same time a run with real data gives). A candidate whose run would
be too big falls back to the target's own model: the run's size is estimated by the target's
events per message (Target.message_events: a start-up and one per link by default), and
candidates past the budget (`--cost simulate:EVENTS`, default DEFAULT_BUDGET) are predicted:
by the target's estimate with the network's contention where it has one
(Target.contention_estimate_s: the Paragon mesh's exchange family, compiler/library/lockstep.py;
the library's schedules on iWarp and the torus, compiler/library/streamflow.py), else by its
closed form.
`Target.predict_source` says which candidates were simulated and which predicted, and why.
"""

from __future__ import annotations

from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import CostModel, Target, register_cost_model
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.timing import simulated_time_s

# About 5 s of simulation per candidate on one core (an 8 x 8 iWarp all-to-all posted at once,
# 4032 worms over ~4 links each, is ~20,000 estimated events and simulates in 0.5 s).
DEFAULT_BUDGET = 200_000


def estimated_events(target: Target, coll: Collective, algorithm: str) -> int:
    """The target's events per message (Target.message_events), over the schedule
    (Target.estimated_events: from the schedule's columns where it has them)."""
    return target.estimated_events(coll, algorithm)


def past_budget_estimated(target: Target, coll: Collective, algorithm: str) -> bool:
    """Whether a candidate past the budget is predicted by the target's contention estimate
    (Target.contention_estimate_s), not by its closed form."""
    return target.contention_estimate_s(coll, algorithm) is not None


def past_budget_s(target: Target, coll: Collective, algorithm: str) -> float:
    """A candidate too big to simulate: the target's estimate with the network's contention
    where it has one (the Paragon mesh's exchange family, the library on the tori), else its
    closed form."""
    estimate = target.contention_estimate_s(coll, algorithm)
    return estimate if estimate is not None else target.closed_form_s(coll, algorithm)


def simulate_cost_model(budget: int) -> CostModel:
    def fits(target: Target, coll: Collective, algorithm: str) -> bool:
        return estimated_events(target, coll, algorithm) <= budget

    def time_s(target: Target, coll: Collective, algorithm: str) -> float:
        if fits(target, coll, algorithm):
            return simulated_time_s(target, coll, algorithm)
        return past_budget_s(target, coll, algorithm)

    def source(target: Target, coll: Collective, algorithm: str) -> str:
        events = estimated_events(target, coll, algorithm)
        if events <= budget:
            return "simulated"
        how = (" with the network's contention" if past_budget_estimated(target, coll, algorithm)
               else "")
        return f"predicted{how} (~{events} events, past the simulation budget of {budget})"

    return CostModel(time_s, source)


def make_simulate(argument: str | None) -> CostModel:
    """`simulate` or `simulate:EVENTS` (a positive whole number of estimated events)."""
    if argument is None:
        return simulate_cost_model(DEFAULT_BUDGET)
    if not argument.isdigit() or int(argument) < 1:
        raise usage_error(f"bad simulation budget '{argument}' in --cost simulate:{argument}",
                          "give a positive number of estimated events per candidate, e.g. "
                          f"--cost simulate:{DEFAULT_BUDGET} (the default), or --cost simulate")
    return simulate_cost_model(int(argument))


def register_simulate_cost_model() -> None:
    """Make `--cost simulate` available (phalanx.register_all calls this)."""
    register_cost_model("simulate", make_simulate)
