"""Eager phases (compiler/schedule.py SyncMode.EAGER): a node goes on once its receives are in
and its sends posted, its previous phase's sends streaming meanwhile; its sends are delivered
before it leaves the schedule (the data check at the run's end would fail otherwise); the
native core runs them as the Python engine does (tests/runtime/test_native_eager.py);
SimGrid's and MPI's workers run them too."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import with_schedule
from phalanx.compiler.driver import compile_program
from phalanx.compiler.schedule import Phase, Schedule, SyncMode
from phalanx.runtime.backends import mpi, simgrid
from phalanx.runtime.engine import Engine
from phalanx.runtime.native_run import native_plan
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program


def eager(schedule: Schedule) -> Schedule:
    return dataclasses.replace(schedule, phases=tuple(dataclasses.replace(p, sync=SyncMode.EAGER)
                                                      for p in schedule.phases))


def linear_broadcast(target: str):
    """The root sends the block to each node in turn, one message a phase."""
    return compile_program(kind_program("broadcast", 16, 4096), target=target,
                           algorithm="broadcast=linear", cost="closed-form")


def test_one_send_port_serialises_an_eager_root_as_a_local_one():
    """On ideal the root's send port carries one message whole at a time: eager phases let
    it post the next message sooner, not send it sooner (15 messages of alpha + beta m)."""
    compiled = linear_broadcast("ideal:16")
    local = simulate(compiled).collectives[0]
    early = simulate(with_schedule(compiled, eager(compiled.schedules[0]))).collectives[0]
    assert local.verified and early.verified
    assert early.time_s == pytest.approx(local.time_s, rel=1e-12)
    assert local.time_s == pytest.approx(15 * (10e-6 + 0.01e-6 * 4096), rel=1e-9)


def test_a_torus_root_starts_its_next_message_while_the_last_streams():
    """On torus:4x4 the root's processor is free after a message's overhead: with eager phases
    its next message starts while the last one streams, so the linear broadcast takes less
    than one overhead plus data time a message, the data still checked; and no more than half
    of the local time plus one message's (two messages in flight at most)."""
    compiled = linear_broadcast("torus:4x4")
    local = simulate(compiled).collectives[0]
    early = simulate(with_schedule(compiled, eager(compiled.schedules[0]))).collectives[0]
    assert local.verified and early.verified
    message_s = local.time_s / 15
    assert early.time_s < local.time_s - 14 * 20e-6  # at least the overheads overlap
    assert early.time_s >= local.time_s / 2 and early.time_s >= early.lower_bound_s
    assert early.time_s <= local.time_s / 2 + message_s


def test_the_native_core_takes_eager_schedules():
    """The core runs eager phases (tests/runtime/test_native_eager.py holds it to the Python
    engine), so native_plan no longer leaves them to the Python engine."""
    compiled = linear_broadcast("ideal:16")
    schedule = eager(compiled.schedules[0])
    assert schedule.eager and not compiled.schedules[0].eager
    plan = with_schedule(compiled, schedule).plan
    network = compiled.target.build_network(Engine())
    assert native_plan(plan, network, fast=True) is not None


def test_sync_is_a_typed_mode_and_bad_text_is_refused():
    phase = Phase((), (), "eager")  # the IR's text becomes the enum
    assert phase.sync is SyncMode.EAGER and phase.barriers(4) == ()
    with pytest.raises(ValueError, match="'eventually' is not a valid SyncMode"):
        Phase((), (), "eventually")
    with pytest.raises(ValueError, match="a eager phase has no barrier to scope"):
        Phase((), (), SyncMode.EAGER, ((0, 1),))


@pytest.mark.simgrid
def test_simgrid_runs_eager_phases_and_agrees_where_resources_match():
    """SimGrid's worker runs eager phases as the interpreter does: on ideal (one send port, as
    SimGrid's serial sender) to the same time; the spanning trees on torus:4x4 too."""
    compiled = linear_broadcast("ideal:16")
    run = simgrid.run_simgrid(with_schedule(compiled, eager(compiled.schedules[0])))
    assert run.verified and run.comparisons()[0]["simgrid_over_builtin"] == pytest.approx(1, rel=1e-9)
    spanning = compile_program(kind_program("broadcast", 16, 4096), target="torus:4x4",
                               algorithm="broadcast=eager-spanning-trees", cost="closed-form")
    run = simgrid.run_simgrid(spanning)
    assert run.verified and run.comparisons()[0]["simgrid_over_builtin"] == pytest.approx(1, rel=1e-9)


@pytest.mark.mpi
def test_mpi_ranks_run_eager_phases_with_real_bytes():
    compiled = compile_program(kind_program("broadcast", 16, 4096), target="torus:4x4",
                               algorithm="broadcast=eager-spanning-trees", cost="closed-form")
    run = mpi.run_mpi(compiled)
    assert run.verified
