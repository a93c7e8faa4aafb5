"""The target interface the compiler and runtime see, and the registry targets/ fills.

A target spec is `name` or `name:args`: a positional size (`16`, `8x8`) and
`key=value` overrides of the machine's parameters (`ideal:16,alpha_us=20`).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler import groups
from phalanx.compiler.columns import PhaseColumns, paused_gc, table
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import KINDS, Collective
from phalanx.compiler.schedule import Phase, Schedule
from phalanx.grammar.diagnostics import Diagnostic, UsageError, usage_error

# A cost model other than the target's own: (target, collective, algorithm) -> seconds.
CostTime = Callable[["Target", Collective, str], float]
# A collective in groups may also run as the sparse exchange it is: `sparse:direct` is the
# target's `direct` for a sparse pattern, once on the whole byte matrix.
AS_PATTERN = "sparse:"


class AlgorithmRefused(UsageError):
    """The algorithm asked for a statement cannot lower it (Target.choose): an unknown name, a
    precondition that fails, or none that can; the compiler reports it at the statement."""


def refused(message: str, hint: str | None = None) -> AlgorithmRefused:
    return AlgorithmRefused(Diagnostic(message, None, None, hint))


def _predicted(target: Target, coll: Collective, algorithm: str) -> str:
    return "predicted"


@dataclass(frozen=True)
class CostModel:
    """What `auto` minimises when it is not the target's own predict_time_s: `time_s`, and
    `source`, which says how a candidate's time was found ("predicted" by a formula, or
    "simulated" on the built-in simulator, with the reason when it was not simulated)."""

    time_s: CostTime
    source: Callable[[Target, Collective, str], str] = _predicted


# A cost model's name -> its maker, given the text after `NAME:` in `--cost NAME:ARGUMENT`
# (None without one); the maker raises a UsageError for an argument it cannot take.
# "target" is each target's predict_time_s; backends and runtime/simcost.py register theirs.
COST_MODELS: dict[str, Callable[[str | None], CostModel]] = {}


def register_cost_model(name: str, make: Callable[[str | None], CostModel]) -> None:
    COST_MODELS[name] = make


def no_argument(name: str, model: CostModel) -> Callable[[str | None], CostModel]:
    """The maker of a cost model that takes no `:ARGUMENT`."""
    def make(argument: str | None) -> CostModel:
        if argument is not None:
            raise usage_error(f"cost model '{name}' takes no argument (got '{name}:{argument}')",
                              f"write --cost {name}")
        return model
    return make


def cost_model(spec: str) -> CostModel:
    """The cost model of `--cost NAME[:ARGUMENT]`; a UsageError naming the known ones otherwise."""
    name, colon, argument = spec.partition(":")
    if name not in COST_MODELS:
        known = ", ".join(["target", *sorted(COST_MODELS)])
        raise usage_error(f"unknown cost model '{name}'", f"choose one of: {known}")
    return COST_MODELS[name](argument if colon else None)


# `--cost closed-form`: every candidate timed by the machine's closed forms, none simulated
# (where `target` would simulate one, closed_form_gap): a compile that simulates nothing, for
# unit tests of recognition, schedules and IR that do not check which algorithm `auto` takes.
CLOSED_FORM = "closed-form"


def _closed_form_time_s(target: Target, coll: Collective, algorithm: str) -> float:
    """The machine's closed form; a `sparse:NAME` candidate in groups, its pattern's."""
    if coll.groups and algorithm.startswith(AS_PATTERN):
        return target.closed_form_s(groups.as_pattern(coll), algorithm[len(AS_PATTERN):])
    return target.closed_form_s(coll, algorithm)


register_cost_model(CLOSED_FORM, no_argument(CLOSED_FORM, CostModel(_closed_form_time_s)))


def check_cost_model(spec: str) -> str:
    """`spec` if it names a cost model `auto` can minimise (with a valid argument); a
    UsageError otherwise."""
    if spec != "target":
        cost_model(spec)
    return spec


@dataclass(frozen=True)
class SchedulePattern:
    """What an algorithm's phases for a collective depend on (schedule_for's memo key), its
    hash worked out once: the byte matrix of a 4096-node collective is 16.8M ints."""

    kind: Kind
    byte_matrix: tuple[tuple[int, ...], ...]
    root: int | None
    groups: tuple[tuple[int, ...], ...]
    element_bytes: int | None
    algorithm: str

    def __hash__(self) -> int:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.kind, self.byte_matrix, self.root, self.groups, self.element_bytes,
                           self.algorithm))
            self.__dict__["_hash"] = cached
        return cached


def _pattern_of(coll: Collective) -> tuple[Any, ...]:
    """What a collective moves, without the statement it comes from (index, arrays, line):
    what its schedules and closed forms depend on."""
    return (coll.kind, coll.nprocs, coll.byte_matrix, coll.root, coll.groups, coll.element_bytes,
            coll.strided, coll.sends_in_rank_order)


class Target(ABC):
    """A machine: its parameters, schedule generators, cost model and network model."""

    name: str
    params: Any  # a frozen dataclass, one field per parameter with its seed citation
    nnodes: int
    clock_hz: float | None = None  # for compute costs given in cycles

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.nnodes}"

    @abstractmethod
    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        """Algorithms this target can lower `kind` with (without `auto`)."""

    @abstractmethod
    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        """The schedule of `coll` by `algorithm`."""

    @abstractmethod
    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """The cost model's time for `coll` by `algorithm` (what `auto` minimises)."""

    def predict(self, coll: Collective, algorithm: str, cost: str = "target") -> float:
        """The time `auto` minimises, by the cost model `cost`: `target` (this machine's own
        predict_time_s) or one a backend registered, e.g. `simgrid` for the flow model of
        SimGrid's network. Remembered per target object: a compile resolves its target once,
        and the pass that chooses and the driver that lists the candidates ask alike."""
        memo = self.__dict__.setdefault("_predictions", {})
        key = (cost, coll, algorithm)
        if key not in memo:
            model = self._model_of(coll, algorithm, cost)
            if model == "target":
                memo[key] = self.closed_form_s(coll, algorithm)
            elif model != cost:  # handed on: share that model's memo
                memo[key] = self.predict(coll, algorithm, model)
            else:  # a model other than the target's runs the whole (merged) schedule
                memo[key] = cost_model(model).time_s(self, coll, algorithm)
        return memo[key]

    def closed_form_s(self, coll: Collective, algorithm: str) -> float:
        """This machine's own formulas (predict_time_s), for a collective in groups too."""
        if coll.groups and algorithm.startswith(AS_PATTERN):
            return self.predict(groups.as_pattern(coll), algorithm[len(AS_PATTERN):])
        if coll.groups:
            return self.grouped_time_s(coll, algorithm)
        return self.predict_time_s(coll, algorithm)

    def _model_of(self, coll: Collective, algorithm: str, cost: str) -> str:
        """The cost model that times this candidate: `cost`, except that `target` hands the
        candidates of a collective to `simulate` when its closed forms cannot follow some of
        them (`closed_form_gap`): then every candidate is simulated, so that `auto` ranks
        simulated times against simulated times (within the simulation budget)."""
        if cost == "target" and self._ranking_gap(coll) is not None:
            return "simulate"
        return cost

    def _ranking_gap(self, coll: Collective) -> str | None:
        """The first runnable candidate of `coll` whose closed form cannot follow the
        simulator, with the reason; None when the closed forms rank them all."""
        memo = self.__dict__.setdefault("_ranking_gaps", {})
        if coll not in memo:
            memo[coll] = next((f"{a}: {gap}" for a, reason in self.candidates(coll)
                               if reason is None and (gap := self._gap(coll, a)) is not None), None)
        return memo[coll]

    def predict_source(self, coll: Collective, algorithm: str, cost: str = "target") -> str:
        """How `predict` found its time: "predicted" (a formula) or "simulated" (the built-in
        simulator, runtime/simcost.py), with the reason a candidate was or was not simulated."""
        model = self._model_of(coll, algorithm, cost)
        if model == "target":
            return "predicted"
        source = cost_model(model).source(self, coll, algorithm)
        if cost != "target":
            return source
        gap = self._gap(coll, algorithm)
        if gap is not None:
            return f"{source}: the closed form does not follow the simulator ({gap})"
        return (f"{source}: ranked with candidates whose closed form does not follow the simulator "
                f"({self._ranking_gap(coll)})")

    def closed_form_gap(self, coll: Collective, algorithm: str) -> str | None:
        """Why this target's predict_time_s cannot follow its simulator for `algorithm` on
        `coll` (then `--cost target` simulates the candidate, within --cost simulate's default
        budget), or None when it can. Measured by bench/regret.py."""
        return None

    def contention_estimate_s(self, coll: Collective, algorithm: str) -> float | None:
        """A prediction of the simulated time that takes in what closed_form_gap says the
        closed form leaves out (the network's links), where the target has one: what
        `--cost simulate` ranks a candidate past its budget by (runtime/simcost.py). None:
        the closed form stands in."""
        return None

    def by_formula(self, coll: Collective, algorithm: str, cost: str) -> bool:
        """Whether `predict` times this candidate by the machine's closed forms (not simulated,
        not by another network's model)."""
        return self._model_of(coll, algorithm, cost) in ("target", CLOSED_FORM)

    def _gap(self, coll: Collective, algorithm: str) -> str | None:
        """closed_form_gap, for a collective in groups too: its groups' formulas cannot follow
        the simulator where one group's cannot (the merged schedule is then simulated); a
        `sparse:NAME` candidate is predicted by the pattern's own model, which asks again."""
        if coll.groups and algorithm.startswith(AS_PATTERN):
            return None
        if coll.groups:
            grouped = self.grouped_gap(coll, algorithm)
            if grouped is not None:
                return grouped
            return next((gap for sub in groups.locals_of(coll)
                         if (gap := self.closed_form_gap(sub, algorithm)) is not None), None)
        return self.closed_form_gap(coll, algorithm)

    def grouped_gap(self, coll: Collective, algorithm: str) -> str | None:
        """Why grouped_time_s cannot follow the simulator for `algorithm` run in the groups of
        `coll` (then the merged schedule is simulated), or None when it can."""
        return None

    def grouped_time_s(self, coll: Collective, algorithm: str) -> float:
        """A collective in groups: every group runs `algorithm` at once, so it takes as long as
        its slowest group (each predicted by this machine's model as a machine of its own size),
        and no less than its phases' busiest links need, one phase after another, where the
        groups' messages share links under the machine's routing. A group's barriers are its
        own (groups.merge scopes them), so its formula's barrier of its own size stands."""
        subs = groups.locals_of(coll)
        slowest = max(self._group_closed_form_s(sub, algorithm) for sub in subs)
        per_group = [self._phase_matrices(sub, algorithm) for sub in subs]
        links_s = 0.0
        for k in range(max(len(matrices) for matrices in per_group)):  # phase k of the merged schedule
            sent = np.zeros((coll.nprocs, coll.nprocs), dtype=np.int64)
            for members, matrices in zip(coll.groups, per_group):
                if k < len(matrices):
                    sent[np.ix_(members, members)] += matrices[k]
            links_s += self.busiest_link_s(sent) if sent.any() else 0.0
        return float(max(slowest, links_s))

    def _group_closed_form_s(self, sub: Collective, algorithm: str) -> float:
        """closed_form_s of one group's collective, remembered by what it moves (not by its
        statement): the groups of a statement, and the statements of a program (SUMMA's 16
        panel broadcasts in 8 groups each), repeat a few local patterns many times."""
        memo = self.__dict__.setdefault("_group_predictions", {})
        key = (_pattern_of(sub), algorithm)
        if key not in memo:
            memo[key] = self.closed_form_s(sub, algorithm)
        return memo[key]

    def _phase_matrices(self, sub: Collective, algorithm: str) -> list[np.ndarray]:
        """Bytes between distinct nodes in each phase of a group's schedule, in the group's own
        numbering: grouped_time_s adds the groups' into the machine's phase by phase, the
        merged schedule's matrices, without merging candidates that are never lowered."""
        memo = self.__dict__.setdefault("_group_phase_matrices", {})
        key = (_pattern_of(sub), algorithm)
        if key not in memo:
            matrices = []
            for phase in self.schedule_for(sub, algorithm).phases:
                sent = np.zeros((sub.nprocs, sub.nprocs), dtype=np.int64)
                for t in phase.sends:
                    if t.src != t.dst:
                        sent[t.src, t.dst] += t.nbytes
                matrices.append(sent)
            memo[key] = matrices
        return memo[key]

    def busiest_link_s(self, matrix: Any) -> float:
        """Seconds the busiest network link needs to carry a byte matrix (bytes p to q) under
        the machine's routing; 0 where links are not modelled apart from the nodes' ports."""
        return 0.0

    @abstractmethod
    def lower_bound_s(self, coll: Collective) -> float:
        """No schedule on this machine can move `coll` faster."""

    @abstractmethod
    def build_network(self, engine: Any) -> Any:
        """The runtime's network model on `engine` (see runtime/network.py)."""

    def route_hops(self, src: int, dst: int) -> int:
        """Links a message from src to dst crosses (the run-size estimate); one by default."""
        return 1

    def message_events(self, src: int, dst: int, nbytes: int) -> int:
        """About how many events the simulator spends on one message (what `--cost simulate`
        budgets): its start-up and one per link it crosses, by default."""
        return self.route_hops(src, dst) + 1

    def transfer_events(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> int:
        """message_events summed over transfers given as columns (a machine that routes in
        closed form sums it in numpy)."""
        return sum(self.message_events(s, d, b)
                   for s, d, b in zip(src.tolist(), dst.tolist(), nbytes.tolist()))

    def schedule_columns(self, coll: Collective, algorithm: str) -> PhaseColumns | None:
        """The transfers of `schedule_for(coll, algorithm)` as columns, phase after phase (empty
        phases aside), where the algorithm's generator builds them so (the all-to-all family,
        compiler/columns.py); None otherwise."""
        return None

    def estimated_events(self, coll: Collective, algorithm: str) -> int:
        """About how many events simulating the candidate takes (what `--cost simulate`
        budgets): message_events over its schedule's network transfers, read from its columns
        where it has them, not from its Transfer objects (remembered: the cost model asks
        whether a candidate fits, then says why)."""
        memo = self.__dict__.setdefault("_estimated_events", {})
        if (coll, algorithm) not in memo:
            columns = None if coll.groups else self.schedule_columns(coll, algorithm)
            if columns is not None:
                rows = columns.rows
            else:
                schedule = self.schedule_for(coll, algorithm)
                rows = table([t for phase in schedule.phases for t in phase.sends])
            net = rows[:, 0] != rows[:, 1]
            memo[(coll, algorithm)] = self.transfer_events(rows[net, 0], rows[net, 1], rows[net, 2])
        return memo[(coll, algorithm)]

    def simgrid_platform(self, pairs: list[tuple[int, int]], routing: str) -> Any:
        """The SimGrid platform of this machine (runtime/backends/platforms.py's Platform)
        declaring the routes of `pairs`; a machine without one says so."""
        raise usage_error(f"target '{self.name}' has no SimGrid platform",
                          "the simgrid backend and the simgrid cost model support ideal, iwarp, "
                          "torus, paragon, sp2, cs2 and hypercube; use --backend sim and --cost target")

    def schedule_problems(self, schedule: Schedule) -> list[str]:
        """Target-specific proofs a schedule must pass (e.g. link-disjoint phases); none by default."""
        return []

    def schedule_for(self, coll: Collective, algorithm: str) -> Schedule:
        """`generate`, remembering the phases of each communication pattern: programs repeat
        the same redistribution many times, and generators are deterministic. The cyclic
        garbage collector is paused while a generator runs (columns.py paused_gc): it builds
        up to millions of Transfers, and the collector's passes over them took half its time
        (torus:8x8 allreduce of 2 KB, the three 1M-transfer candidates: 3.9 -> 2.0 s)."""
        cache = self.__dict__.setdefault("_phase_cache", {})
        key = SchedulePattern(coll.kind, coll.byte_matrix, coll.root, coll.groups, coll.element_bytes,
                              algorithm)
        if key not in cache:
            with paused_gc():
                cache[key] = self._generated_phases(coll, algorithm)
        return Schedule(coll.index, coll.kind, algorithm, coll.nprocs, cache[key], coll.src,
                        coll.dst, coll.line)

    def _generated_phases(self, coll: Collective, algorithm: str) -> tuple[Phase, ...]:
        """The phases of `coll` by `algorithm` (schedule_for's, not remembered)."""
        if coll.groups and algorithm.startswith(AS_PATTERN):
            return self.schedule_for(groups.as_pattern(coll), algorithm[len(AS_PATTERN):]).phases
        if coll.groups:
            return groups.merge(coll, algorithm, [self.schedule_for(sub, algorithm)
                                                  for sub in groups.locals_of(coll)]).phases
        return self.generate(coll, algorithm).phases

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "params": {"nodes": self.nnodes, **dataclasses.asdict(self.params)}}

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        """Why `algorithm` cannot lower `coll` on this machine (a failed precondition), or None.
        `auto` considers only algorithms for which this is None."""
        return None

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        """One line on what `algorithm` does for `kind` (for `phalanx algorithms`)."""
        return ""

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """`lower_bound_s` and the name of the bound that binds (start-up, port bandwidth, cut...)."""
        return self.lower_bound_s(coll), "machine"

    def fixed_routes_bound_s(self, coll: Collective) -> float | None:
        """The busiest link when every pair's bytes take the machine's fixed route: a lower bound
        for schedules of direct messages only (each byte sent once, by its source to its
        destination; compiler/library/bounds.py fixed_routes_bound_s), not for schedules that
        relay. None where the target has no fixed routes to count or the kind's bytes serve
        several destinations."""
        return None

    def candidates(self, coll: Collective) -> list[tuple[str, str | None]]:
        """Every algorithm for the kind, with the failed precondition of those `auto` leaves out.
        In groups an algorithm must be able to run in every group."""
        if coll.groups:
            return self.grouped_candidates(coll)
        return [(a, self.unmet(coll, a)) for a in self.algorithms(coll.kind)]

    def grouped_candidates(self, coll: Collective) -> list[tuple[str, str | None]]:
        """Each algorithm of the kind, run in every group, then each algorithm of the `sparse`
        exchange the statement also is, run once on the whole pattern (named `sparse:NAME`),
        so that finding the groups never takes an option away."""
        per_group = [dict(self.candidates(sub)) for sub in groups.locals_of(coll)]
        out = []
        for a in dict.fromkeys(a for each in per_group for a in each):
            reason = None
            for members, each in zip(coll.groups, per_group):
                why = each[a] if a in each else "it is not an algorithm for a group of this size"
                if why is not None:
                    reason = f"in the group of nodes {_members_text(members)}: {why}"
                    break
            out.append((a, reason))
        return out + [(AS_PATTERN + a, why) for a, why in self.candidates(groups.as_pattern(coll))]

    def choose(self, coll: Collective, algorithm: str = "auto", cost: str = "target") -> str:
        """Resolve `auto` to the runnable algorithm with the least time predicted by the cost
        model `cost`; check a forced one: a known name whose preconditions hold."""
        if coll.groups and algorithm.startswith(AS_PATTERN):  # checked on the whole pattern
            return AS_PATTERN + self.choose(groups.as_pattern(coll), algorithm[len(AS_PATTERN):],
                                            cost)
        if coll.groups and algorithm != "auto":  # checked, and its name normalised, per group
            return [self.choose(sub, algorithm, cost) for sub in groups.locals_of(coll)][0]
        known = self.algorithms(coll.kind)
        article = "an" if coll.kind[0] in "aeiou" else "a"
        if not known:
            kinds = [k for k in KINDS if self.algorithms(k)]
            raise refused(f"target '{self.name}' has no algorithm for {article} {coll.kind} "
                              f"(line {coll.line})", "it can lower: " + ", ".join(kinds))
        if algorithm == "auto":
            able = [a for a, reason in self.candidates(coll) if reason is None]
            if not able:
                why = "; ".join(f"{a}: {r}" for a, r in self.candidates(coll))
                raise refused(f"no algorithm of target '{self.spec}' can lower the {coll.kind} "
                                  f"of line {coll.line}", why)
            order = [a for a, _ in self.candidates(coll)]
            return min(able, key=lambda a: (self.predict(coll, a, cost), order.index(a)))
        if algorithm not in known:
            raise refused(f"unknown algorithm '{algorithm}' for {article} {coll.kind} on "
                              f"target '{self.spec}'", "choose one of: auto, " + ", ".join(known))
        reason = self.unmet(coll, algorithm)
        if reason is not None:
            raise refused(f"algorithm '{algorithm}' cannot lower the {coll.kind} of line "
                              f"{coll.line} on {self.spec}: {reason}",
                              "use algorithm auto, which only picks algorithms that can run")
        return algorithm


def _members_text(members: tuple[int, ...]) -> str:
    """`8, 16, ..., 56` for a long group, every member for a short one."""
    shown = ", ".join(str(m) for m in members[:3])
    return shown if len(members) <= 4 else f"{shown}, ..., {members[-1]}"


@dataclass(frozen=True)
class TargetEntry:
    name: str
    summary: str
    factory: Callable[[str | None, dict[str, str]], Target]
    example: str


TARGETS: dict[str, TargetEntry] = {}


def register(entry: TargetEntry) -> None:
    TARGETS[entry.name] = entry


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """Split `name:size,key=value,...` into its parts."""
    name, _, rest = spec.strip().partition(":")
    positional: str | None = None
    overrides: dict[str, str] = {}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if eq:
            overrides[key.strip()] = value.strip()
        elif positional is None:
            positional = part.strip()
        else:
            raise usage_error(f"target spec '{spec}' has two sizes ('{positional}', '{part}')",
                              "give one size, then key=value overrides")
    return name, positional, overrides


def resolve(spec: str) -> Target:
    """The Target of a spec; a UsageError that lists the known targets otherwise."""
    name, positional, overrides = parse_spec(spec)
    entry = TARGETS.get(name)
    if entry is None:
        known = ", ".join(sorted(TARGETS)) or "none registered"
        raise usage_error(f"unknown target '{name}' in spec '{spec}'",
                          f"known targets: {known} (see `phalanx targets`)")
    return entry.factory(positional, overrides)


def parse_count(spec_name: str, positional: str | None, default: int | None = None) -> int:
    """A node count such as `16`; a clear error otherwise."""
    if positional is None:
        if default is not None:
            return default
        raise usage_error(f"target '{spec_name}' needs a node count", f"write e.g. {spec_name}:16")
    if not positional.isdigit() or int(positional) < 1:
        raise usage_error(f"bad node count '{positional}' for target '{spec_name}'",
                          f"write a positive integer, e.g. {spec_name}:16")
    return int(positional)


def with_overrides(params: Any, overrides: dict[str, str], target: str) -> Any:
    """Replace fields of a params dataclass from `key=value` strings (non-negative numbers)."""
    fields = {f.name: f for f in dataclasses.fields(params)}
    changes: dict[str, float] = {}
    for key, text in overrides.items():
        if key not in fields:
            raise usage_error(f"unknown parameter '{key}' for target '{target}'",
                              "known parameters: " + ", ".join(fields))
        try:
            value = float(text)
        except ValueError:
            raise usage_error(f"parameter {key}={text!r} of target '{target}' is not a number",
                              f"write e.g. {key}=1.5") from None
        if not value >= 0 or value == float("inf"):
            raise usage_error(f"parameter {key}={text} of target '{target}' must be a finite "
                              "number >= 0", f"give {key} a value of 0 or more, or leave it out "
                              "for the seed's value")
        changes[key] = value
    return dataclasses.replace(params, **changes)
