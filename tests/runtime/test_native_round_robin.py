"""The default SP2 on the native core: its adapter spreads a message's packets over the pair's
routes round robin (targets/bokhari/network.py), each message from its pair's counter on; the
native run works out every message's turn from the plan's order (runtime/round_robin.py). Held
to the Python engine: the same simulated times, events, spans, busy times, data checks, and the
counters the run leaves in the network."""

from __future__ import annotations

import numpy as np
import pytest
from test_native_run import assert_same_run, both

from conftest import compile_text
from phalanx.compiler.target import resolve
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.engine import Engine
from phalanx.runtime.interpreter import Interpreter
from phalanx.runtime.native_run import NativeRun, native_plan
from phalanx.runtime.simulate import RunLimits, simulate
from phalanx.runtime.sweep import kind_program

# All-to-all direct and by other schedules (pieces of blocks: `standard`; forwarding: `bruck`;
# phases: multiphase), a broadcast, a pipelined one in pieces (`chain`), reductions, messages
# shorter than a packet (8 and 100 bytes) and of several packets with a short last one.
CASES = [("alltoall", "direct", 8), ("alltoall", "direct", 600), ("alltoall", "standard", 1000),
         ("alltoall", "bruck", 100), ("alltoall", "multiphase:1,1,2", 300), ("broadcast", "auto", 2000),
         ("broadcast", "chain", 5000), ("allreduce", "ring", 700), ("reduce", "binomial", 100)]


# A transpose of 600-byte blocks (3 packets each) and back, three times.
TRANSPOSES = ("processors P(16)\narray A(320, 480) of byte distribute (BLOCK, *) onto P\n"
              "array B(320, 480) of byte distribute (*, BLOCK) onto P\nrepeat 3 {\n  B = A\n  A = B\n}\n")


@pytest.mark.parametrize("nodes", [8, 16, 32])
@pytest.mark.parametrize("kind, algorithm, size", CASES)
def test_the_default_sp2_runs_natively_as_on_the_python_engine(nodes, kind, algorithm, size):
    target = f"sp2:{nodes}"
    if algorithm.startswith("multiphase") and nodes != 16:
        algorithm = "multiphase:1,2" if nodes == 8 else "multiphase:1,1,3"
    compiled = compile_text(kind_program(kind, nodes, size), target=target, algorithm=algorithm,
                            cost="closed-form")
    python, native = both(compiled)
    assert python.verified and native.verified
    assert_same_run(python, native)


def test_a_repeat_of_two_statements_carries_the_counters_from_run_to_run():
    """A transpose of 600-byte blocks (3 packets) and back: each run leaves every pair's
    counter 3 further on (mod 4), so the six runs start their messages at turns 0, 3, 2, 1,
    0, 3, and runs of a statement with the same turns share one schedule in the core (4)."""
    compiled = compile_text(TRANSPOSES, target="sp2:16", algorithm="direct", cost="closed-form")
    python, native = both(compiled)
    assert native.verified and len(native.collectives) == 6
    assert_same_run(python, native)
    run, network = run_natively(compiled)
    assert len(run.schedule_ids) == 4
    # the turn of the pairs of four routes (those of one route have turn 0): each once
    assert {int(np.frombuffer(turn, np.int64).max()) for _, turn in run.schedule_ids} == {0, 1, 2, 3}
    assert network.next_route == python.network.next_route == native.network.next_route


def run_natively(compiled):
    engine = Engine()
    network = compiled.target.build_network(engine)
    run = NativeRun(native_plan(compiled.plan, network, fast=True), network, engine, payloads(compiled))
    run.run()
    return run, network


def payloads(compiled) -> Payloads:
    """The payloads of every run, as runtime/simulate.py draws them (seeded per run here)."""
    runs = compiled.plan.runs()
    return Payloads(lambda r: build_data(compiled.communications[runs[r]], np.random.default_rng(r), {},
                                         compiled.collectives[runs[r]].kind), range(len(runs)))


def test_a_network_carries_its_counters_into_the_native_run():
    """Counters left by earlier messages (as a network reused would have them) give the
    native run's messages their turns, as they give the Python engine's."""
    compiled = compile_text(kind_program("alltoall", 16, 600), target="sp2:16", algorithm="direct",
                            cost="closed-form")
    times = []
    for choice in ("python", "native"):
        engine = Engine()
        network = compiled.target.build_network(engine)
        network.next_route.update({(0, 5): 1, (3, 12): 2, (15, 4): 3})
        data = payloads(compiled)
        if choice == "native":
            NativeRun(native_plan(compiled.plan, network, fast=True), network, engine, data).run()
        else:
            Interpreter(compiled.plan, network, engine, data).run()
        times.append((engine.now, engine.events_processed, dict(network.next_route),
                      sorted((r.name, r.busy_s) for r in network.resources())))
    assert times[0] == times[1]


def test_every_pairs_turn_follows_the_plan_order():
    """The turns the native run gives a schedule's messages: each pair's counter plus the
    packets of its earlier messages, modulo its routes."""
    compiled = compile_text(kind_program("broadcast", 16, 5000), target="sp2:16", algorithm="chain",
                            cost="closed-form")
    run, network = run_natively(compiled)
    steps = run.turns.steps[compiled.plan.run_schedules()[0].collective]
    robin = network.round_robin()
    routes = resolve("sp2:16").route
    for pair in np.unique(steps.pair).tolist():
        mine = steps.pair == pair
        src, dst = divmod(pair, 16)
        assert steps.modulus[mine].tolist() == [len(routes.all(src, dst))] * int(mine.sum())
        assert steps.before[mine][0] == 0 and (np.diff(steps.before[mine]) > 0).all()
    assert robin.counters == simulate(compiled, engine_choice="python").network.next_route


def test_a_run_stopped_at_the_event_limit_stops_alike():
    """Stopped in its second run: the same events, spans and busy times up to the limit, the
    later runs unchecked on both engines."""
    compiled = compile_text(TRANSPOSES, target="sp2:16", algorithm="direct", cost="closed-form")
    python, native = both(compiled, limits=RunLimits(max_events=3000))
    assert native.execution.stopped == python.execution.stopped
    assert native.execution.stopped.startswith("stopped at the limit of 3000 events")
    assert [c.verified for c in native.collectives] == [True, False, False, False, False, False]
    assert_same_run(python, native)
