"""Eager phases (compiler/schedule.py SyncMode.EAGER) on the native core against the Python
engine: a phase's wait counts the previous eager phase's sends, not its own, and a node leaves
the schedule once its last eager phase's sends are delivered (compiler/plan_walk.py
walk_phases). The same simulated times, events, spans, busy times, data checks and deadlock
reports, for every eager algorithm of the catalog, a repeat, a statement in groups and phases
of every sync mixed."""

from __future__ import annotations

import dataclasses

import pytest
from test_native_run import assert_same_run, both

from conftest import HEADER, compile_text, crossed, two_node_compiled, with_schedule
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import KINDS
from phalanx.compiler.schedule import Plan, Schedule, SyncMode
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.engine import Engine
from phalanx.runtime.native_run import native_plan
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

# The catalog's algorithms whose schedules have eager phases: all on the tori (GRID algorithms
# that need several streams a node, compiler/library/turned.py several_streams).
EAGER = [(Kind.BROADCAST, "eager-interleaved-cut-scatter-doubling"), (Kind.BROADCAST, "eager-spanning-trees"),
         (Kind.BROADCAST, "scatter-rings"), (Kind.BROADCAST, "fan-scatter-rings"),
         (Kind.BROADCAST, "eager-turned-cut-scatter-doubling"), (Kind.SCATTER, "neighbour-scatter"),
         (Kind.GATHER, "neighbour-gather"), (Kind.REDUCE, "eager-halving-fan-in"),
         (Kind.REDUCE, "crossed-halving"), (Kind.REDUCE, "grouped-halving"),
         (Kind.REDUCE, "collected-halving"), (Kind.REDUCE, "bidirectional-rings"),
         (Kind.ALLREDUCE, "eager-cut-halving"), (Kind.ALLREDUCE, "eager-interleaved-cut-halving"),
         (Kind.ALLREDUCE, "eager-quad-cut-halving"), (Kind.ALLREDUCE, "eager-classed-quad-cut-halving"),
         (Kind.ALLREDUCE, "bidirectional-rings"), (Kind.ALLREDUCE, "crossed-halving")]
OTHER_TARGETS = ["ideal:16", "paragon:4x4", "sp2:8,routes_per_pair=1", "cs2:8"]
SIZE = 4096  # bytes a block: every precondition of EAGER holds on a 4x4 torus


def compiled_for(target: str, kind: Kind, algorithm: str, size: int = SIZE):
    return compile_text(kind_program(kind, resolve(target).nnodes, size), target=target,
                        algorithm=f"{kind}={algorithm}", cost="closed-form")


def assert_native_same(compiled) -> None:
    """The plan runs on the core (native_plan takes it) and gives the Python engine's run."""
    network = compiled.target.build_network(Engine())
    assert native_plan(compiled.plan, network, fast=True) is not None
    python, native = both(compiled)
    assert python.verified and native.verified, (python.collectives, native.collectives)
    assert_same_run(python, native)


def eager(schedule: Schedule, syncs: tuple[SyncMode, ...] = (SyncMode.EAGER,)) -> Schedule:
    """The schedule with its phases' syncs taken from `syncs` in turn."""
    return dataclasses.replace(schedule, phases=tuple(
        dataclasses.replace(p, sync=syncs[k % len(syncs)]) for k, p in enumerate(schedule.phases)))


def test_the_list_is_every_eager_algorithm_of_the_catalog():
    """On torus:4x4 every runnable algorithm of every kind is built: those with eager phases
    are EAGER's. The other targets offer none of them, refuse them (the Paragon's mesh: its
    nodes do not stream several messages at once) or build them without eager phases (the
    Paragon's bidirectional rings: its nodes stream one message at a time,
    ringreduce.eager_where_streams)."""
    machine = resolve("torus:4x4")
    found = []
    for kind in KINDS:
        if kind in (Kind.ALLTOALLV, Kind.SPARSE):  # no kind_program; the same generators as alltoall
            continue
        coll = compiled_for("torus:4x4", kind, "direct").collectives[0]
        found += [(kind, a) for a, unmet in machine.candidates(coll)
                  if unmet is None and machine.schedule_for(coll, a).eager]
    assert found == EAGER
    for target in OTHER_TARGETS:
        machine = resolve(target)
        for kind, algorithm in EAGER:
            if algorithm in machine.algorithms(kind):
                coll = compiled_for(target, kind, "direct").collectives[0]
                if dict(machine.candidates(coll))[algorithm] is None:
                    assert not machine.schedule_for(coll, algorithm).eager, (target, algorithm)


@pytest.mark.parametrize("target", ["torus:4x4", "iwarp:4x4"])
@pytest.mark.parametrize("kind, algorithm", EAGER)
def test_every_eager_algorithm_runs_natively_as_on_the_python_engine(target, kind, algorithm):
    compiled = compiled_for(target, kind, algorithm)
    assert any(s.eager for s in compiled.plan.schedules())
    assert_native_same(compiled)


def test_a_repeat_of_an_eager_statement_runs_alike():
    """Three runs of an eager reduce between compute steps: each run's streaming sends are
    its own (a node's last wait, then the next run)."""
    source = kind_program(Kind.REDUCE, 16, SIZE)
    lines = source.splitlines()
    statement = lines[-1]
    source = "\n".join(lines[:-1]) + f'\nrepeat 3 {{\n  compute "update" on P cost 7 us\n  {statement}\n}}\n'
    compiled = compile_text(source, target="torus:4x4", algorithm="reduce=eager-halving-fan-in",
                            cost="closed-form")
    assert compiled.plan.run_count == 3 and all(s.eager for s in compiled.plan.schedules())
    assert_native_same(compiled)


ROWS_ALLREDUCE = """target torus:4x4
processors P(4, 4)
array A(4, 256) of float64 distribute (BLOCK, BLOCK) onto P
array Y(4, 256) of float64 distribute (BLOCK, BLOCK) onto P
Y = spread(sum(A, dim=2), dim=2, ncopies=256)
"""


@pytest.mark.parametrize("algorithm", ["ring", "recursive-doubling"])
def test_an_eager_statement_in_groups_runs_alike(algorithm):
    """An allreduce in each row of the torus (4 groups), its phases made eager: the rows'
    nodes stream their sends on into the next phase each in its own group."""
    compiled = compile_text(ROWS_ALLREDUCE, algorithm=f"allreduce={algorithm}", cost="closed-form")
    (schedule,) = compiled.schedules
    assert compiled.collectives[0].groups and len(schedule.phases) > 1
    assert_native_same(with_schedule(compiled, eager(schedule)))


@pytest.mark.parametrize("syncs", [
    (SyncMode.EAGER, SyncMode.EAGER, SyncMode.BARRIER),
    (SyncMode.EAGER, SyncMode.LOCAL, SyncMode.EAGER, SyncMode.BARRIER, SyncMode.EAGER),
    (SyncMode.BARRIER, SyncMode.EAGER),
])
@pytest.mark.parametrize("target", ["torus:4x4", "ideal:16"])
def test_eager_phases_mixed_with_barrier_and_local_ones_run_alike(target, syncs):
    """A linear broadcast (one message a phase from the root, 15 phases) with its phases'
    syncs in turn: eager phases before barriers, after local ones, and last. On ideal the
    Python engine takes no fast path for it (Interpreter._enter), nor does the core."""
    compiled = compile_text(kind_program(Kind.BROADCAST, 16, SIZE), target=target,
                            algorithm="broadcast=linear", cost="closed-form")
    (schedule,) = compiled.schedules
    assert_native_same(with_schedule(compiled, eager(schedule, syncs)))


def test_an_eager_halving_fan_in_with_a_barrier_runs_alike():
    compiled = compiled_for("torus:4x4", Kind.REDUCE, "eager-halving-fan-in")
    (schedule,) = compiled.schedules
    phases = list(schedule.phases)
    phases[1] = dataclasses.replace(phases[1], sync=SyncMode.BARRIER)
    assert_native_same(with_schedule(compiled, dataclasses.replace(schedule, phases=tuple(phases))))


def test_a_statement_on_part_of_the_machine_runs_alike():
    """`processors P(16)` on torus:8x8: nodes 16 to 63 skip the statement (and a compute step
    on every node follows)."""
    source = kind_program(Kind.BROADCAST, 16, SIZE) + 'processors Q(64)\ncompute "after" on Q cost 3 us\n'
    compiled = compile_text(source, target="torus:8x8", algorithm="broadcast=linear", cost="closed-form")
    (schedule,) = compiled.schedules
    assert schedule.nprocs == 16 and compiled.plan.nprocs == 64
    assert_native_same(with_schedule(compiled, eager(schedule)))


def test_the_fast_path_leaves_an_eager_schedule_to_the_core():
    """iWarp's phased all-to-all has a fast path (targets/iwarp/wormhole.py fast_plan), which
    times a phase as a whole; made eager it runs event by event on either engine
    (Interpreter._enter, native_plan), the switch's gates and all."""
    compiled = compile_text(kind_program(Kind.ALLTOALL, 64, 64), target="iwarp:8x8",
                            algorithm="alltoall=phased", cost="closed-form")
    (schedule,) = compiled.schedules
    assert compiled.target.build_network(Engine()).fast_plan(schedule) is not None
    made = with_schedule(compiled, eager(schedule))
    assert_native_same(made)
    assert simulate(made, engine_choice="python").execution.fast_messages == 0


def test_an_eager_deadlock_reports_the_same_cycle():
    """Each node waits in eager phase 0 for what the other sends in phase 1 only."""
    compiled = two_node_compiled()
    bad = with_schedule(compiled, eager(crossed(compiled)))
    messages = []
    for choice in ("python", "native"):
        with pytest.raises(PhalanxError) as info:
            simulate(bad, engine_choice=choice)
        messages.append(info.value.diagnostic.message)
    assert messages[1] == messages[0]
    assert messages[1].startswith("the schedule deadlocks: node 0 waits on block 1->0 from node 1 (phase 0)")


def test_two_eager_statements_back_to_back_run_alike():
    """A node goes from one statement's last wait for its streaming sends into the next."""
    source = HEADER.replace("ideal:16", "torus:4x4") + "B = A\nA = B\n"
    compiled = compile_text(source, algorithm="direct", cost="closed-form")
    steps = tuple(eager(s) if isinstance(s, Schedule) else s for s in compiled.plan.steps)
    assert sum(isinstance(s, Schedule) for s in steps) == 2
    assert_native_same(dataclasses.replace(compiled, plan=Plan(compiled.plan.nprocs, steps)))
