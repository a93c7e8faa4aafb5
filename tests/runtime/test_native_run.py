"""The native event core (runtime/native_run.py, runtime/engine_core) against the Python engine:
the same simulated times, events, spans and busy times; the same deadlock reports, data checks
and stops at a limit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import HEADER, compile_text, crossed, two_node_compiled, with_schedule
from phalanx.compiler.schedule import WHOLE, Phase, Plan, Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.engine import Engine
from phalanx.runtime.native_run import NativeRun, native_available, native_plan
from phalanx.runtime.network import Acquire, Hold, Release
from phalanx.runtime.plan_columns import ScheduleColumns
from phalanx.runtime.simulate import RunLimits, RunResult, run_plan, simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import TimingData
from phalanx.targets.bokhari.network import RoutedNetwork
from phalanx.targets.ideal import IdealNetwork
from phalanx.targets.iwarp.wormhole import WormholeNetwork


def test_the_extension_is_installed():
    assert native_available(), "make setup builds phalanx_engine_core (runtime/engine_core)"


def both(compiled, **kwargs) -> tuple[RunResult, RunResult]:
    """The run on the Python engine and on the native core ("native" refuses to fall back)."""
    return (simulate(compiled, engine_choice="python", **kwargs),
            simulate(compiled, engine_choice="native", **kwargs))


def assert_same_run(python: RunResult, native: RunResult) -> None:
    assert native.total_time_s == pytest.approx(python.total_time_s, rel=1e-9, abs=0)
    assert [c.time_s for c in native.collectives] == \
        pytest.approx([c.time_s for c in python.collectives], rel=1e-9, abs=0)
    assert [(c.start_s, c.end_s, c.verified, c.problems) for c in native.collectives] == \
        [(c.start_s, c.end_s, c.verified, c.problems) for c in python.collectives]
    # Event for event: the same count, the same timeline, the same busy resources.
    assert native.execution.events == python.execution.events
    assert native.execution.spans == python.execution.spans
    assert sorted((r.name, r.busy_s) for r in native.network.resources()) == \
        sorted((r.name, r.busy_s) for r in python.network.resources())


# Every network with programs; exchange, library and reduction kinds; a combined-message and a
# segmenting algorithm; two block sizes each.
CASES = [("ideal:8", "alltoall", "direct"), ("ideal:16", "alltoall", "auto"),
         ("ideal:8", "broadcast", "scatter-allgather"), ("ideal:16", "allreduce", "recursive-doubling"),
         ("paragon:4x4", "alltoall", "multiphase:2,2"), ("paragon:2x4", "allgather", "auto"),
         ("sp2:16,routes_per_pair=1", "alltoall", "standard"), ("cs2:16", "alltoall", "auto"),
         ("cs2:16", "reduce", "auto"), ("hypercube:4", "alltoall", "direct"),
         ("hypercube:3", "scatter", "auto"), ("torus:4x4", "alltoall", "direct"),
         ("torus:3x4", "broadcast", "auto")]


@pytest.mark.parametrize("size", [8, 1000])
@pytest.mark.parametrize("target, kind, algorithm", CASES)
def test_native_core_gives_the_python_engines_run(target, kind, algorithm, size):
    source = kind_program(kind, resolve(target).nnodes, size)
    compiled = compile_text(source, target=target, algorithm=algorithm, cost="closed-form")
    python, native = both(compiled)
    assert python.verified and native.verified
    assert_same_run(python, native)


@pytest.mark.parametrize("kind, algorithm", [("reduce", "reduce-scatter-gather"),
                                             ("allreduce", "reduce-scatter-allgather")])
def test_reductions_whose_messages_differ_in_size_run_alike(kind, algorithm):
    """Each message's wire bytes and merges are its own (they were once another message's)."""
    compiled = compile_text(kind_program(kind, 16, 65536), target="ideal:16", algorithm=algorithm,
                            cost="closed-form")
    python, native = both(compiled)
    assert python.verified and native.verified
    assert_same_run(python, native)


def test_messages_alike_share_one_program_and_run_alike():
    """The Paragon's receive buffers cut a 64 KB all-to-all's blocks into pieces, so pairs send
    several messages of the same bytes: they share one program in the core (NativeRun._add_programs)."""
    compiled = compile_text(kind_program("alltoall", 16, 65536), target="paragon:4x4", algorithm="direct",
                            cost="closed-form")
    sends = [(t.src, t.dst, t.nbytes) for s in compiled.plan.schedules() for p in s.phases for t in p.sends
             if t.src != t.dst]
    assert len(set(sends)) < len(sends)
    python, native = both(compiled)
    assert python.verified and native.verified
    assert_same_run(python, native)


@pytest.mark.parametrize("target", ["paragon:4x4", "torus:4x4"])
def test_programs_built_a_few_at_a_time_run_alike(target, monkeypatch):
    """The network's program columns in chunks of 7 programs (NativeRun._add_program_chunk)
    give the run of the whole at once, and the Python engine's."""
    compiled = compile_text(kind_program("alltoall", 16, 64), target=target, algorithm="direct",
                            cost="closed-form")
    whole = simulate(compiled, engine_choice="native")
    monkeypatch.setattr("phalanx.runtime.native_run.PROGRAM_CHUNK", 7)
    python, chunked = both(compiled)
    assert chunked.verified
    assert_same_run(python, chunked)
    assert_same_run(whole, chunked)


def test_compute_steps_repeats_and_barriers_run_natively():
    source = HEADER.replace("ideal:16", "paragon:4x4") + \
        'compute "update" on P cost 20 us\nrepeat 2 {\n  B = A\n  A = B\n}\n'
    compiled = compile_text(source, algorithm="multiphase:2,2", cost="closed-form")
    assert any(p.sync == "barrier" for s in compiled.plan.schedules() for p in s.phases)
    python, native = both(compiled)
    assert native.verified and len(native.collectives) == 4
    assert_same_run(python, native)


def test_timeouts_of_many_delays_run_alike():
    """More distinct delays than the core keeps a FIFO queue for (events.rs DELAY_CLASSES: 8,
    no delay among them): the others go through its heap, and the order is still the Python
    engine's, ties and all."""
    computes = "".join(f'compute "step {k}" on P cost {k * 3 % 13 + 1} us\n' for k in range(14))
    compiled = compile_text(HEADER + computes + "B = A\n" + computes, algorithm="direct", cost="closed-form")
    python, native = both(compiled)
    assert native.verified and len({round((s.end_s - s.start_s) * 1e6) for s in native.execution.spans
                                    if s.kind == "compute"}) == 13  # us
    assert_same_run(python, native)


def held_copy(network, node: int, nbytes: int):
    """A copy on the node's processor, in two halves (a program of several ops)."""
    half = network.copy_time_s(nbytes) / 2
    return Acquire(network.cpus[node]), Hold(half), Hold(half), Release(network.cpus[node])


def halved_copy(network, node: int, nbytes: int):
    half = network.copy_time_s(nbytes) / 2
    return Hold(half), Hold(half)


@pytest.mark.parametrize("target, network_class, program", [
    ("torus:4x4", WormholeNetwork, held_copy),  # programs by the wormhole's shape
    ("ideal:16", IdealNetwork, halved_copy),  # by the ports' shape, copies as columns
    ("paragon:4x4", RoutedNetwork, halved_copy),  # programs as columns
])
def test_a_local_copy_runs_the_networks_copy_program_on_both_engines(target, network_class, program,
                                                                     monkeypatch):
    """Network.copy_program is what a local copy holds: both engines play it (the own block's
    copy of an all-to-all), and a copy that holds the processor shows in its busy time."""
    compiled = compile_text(kind_program("alltoall", 16, 1000), target=target, algorithm="direct",
                            cost="closed-form")
    default = simulate(compiled, engine_choice="python")
    monkeypatch.setattr(network_class, "copy_program", program)
    python, native = both(compiled)
    assert python.verified and native.verified
    assert_same_run(python, native)
    # The tori's own copy holds the processor in one piece (WormholeNetwork.copy_program): the
    # same time and the same busy processor; elsewhere a copy is its copy time alone.
    assert python.total_time_s == pytest.approx(default.total_time_s, rel=1e-12)
    if program is held_copy:
        busy = {r.name: r.busy_s for r in python.network.resources()}
        before = {r.name: r.busy_s for r in default.network.resources()}
        assert busy["node 0 processor"] == pytest.approx(before["node 0 processor"], rel=1e-9)


def test_a_network_without_programs_for_every_message_runs_in_python():
    """The KSR-1's ring runs its coherence protocol in Python: no program, so the plan stays
    on the Python engine, and `auto` still runs it."""
    compiled = compile_text(kind_program("alltoall", 16, 64), target="ksr1:16", cost="closed-form")
    network = compiled.target.build_network(Engine())
    assert native_plan(compiled.plan, network, fast=True) is None
    with pytest.raises(ValueError, match="cannot run on the native core"):
        simulate(compiled, engine_choice="native")
    assert simulate(compiled).verified




def errors(compiled) -> list[str]:
    """The error of the run on each engine."""
    out = []
    for choice in ("python", "native"):
        with pytest.raises(PhalanxError) as info:
            simulate(compiled, engine_choice=choice)
        out.append(info.value.diagnostic.message + " | " + (info.value.diagnostic.hint or ""))
    return out


def test_a_deadlock_reports_the_same_cycle():
    compiled = two_node_compiled()
    python, native = errors(with_schedule(compiled, crossed(compiled)))
    assert native == python
    assert native.startswith("the schedule deadlocks: node 0 waits on block 1->0 from node 1 (phase 0) "
                             "-> node 1 waits on block 0->1 from node 0 (phase 0) -> node 0")


def test_a_deadlock_on_a_barrier_names_the_missing_node():
    """Node 1 waits at phase 0's barrier for node 0, which waits for a block node 1 sends in
    phase 1 only."""
    compiled = two_node_compiled()
    s = compiled.schedules[0]
    (phase,) = s.phases
    to_1 = tuple(t for t in phase.sends if t.dst == 1 and t.src == 0)
    to_0 = tuple(t for t in phase.sends if t.dst == 0 and t.src == 1)
    copies = tuple(t for t in phase.sends if t.src == t.dst)
    bad = dataclasses.replace(s, phases=(Phase(copies + to_1, copies + to_1 + to_0, "barrier"),
                                         Phase(to_0, ())))
    python, native = errors(with_schedule(compiled, bad))
    assert native == python and "barrier after phase 0" in native


def test_the_data_check_catches_a_block_sent_twice():
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    extra = s.phases[0].sends[-1]
    phases = (Phase.of(s.phases[0].sends + (extra,)),) + s.phases[1:]
    python, native = errors(with_schedule(compiled, dataclasses.replace(s, phases=phases)))
    assert native == python and "does not hold" in native


def test_the_exactly_once_check_catches_a_block_that_arrives_twice():
    """Without payloads (runtime/timing.py's TimingData, as `--cost simulate` runs candidates)
    only the arrival check can see a transfer sent twice."""
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    extra = s.phases[1].sends[-1]
    schedule = dataclasses.replace(s, phases=(Phase.of(s.phases[0].sends + (extra,)),) + s.phases[1:])
    messages = []
    for choice in ("python", "native"):
        data = Payloads(lambda _: TimingData(False, 16), [0])
        with pytest.raises(PhalanxError) as info:
            run_plan(compiled.target, Plan(16, (schedule,)), data, engine_choice=choice)
        messages.append(info.value.diagnostic.message)
    assert messages[1] == messages[0]
    assert messages[1] == f"the schedule is invalid: transfer {extra.src}->{extra.dst} of block " \
        f"{extra.origin}->{extra.final} is sent twice"


def test_a_missing_block_fails_verification_alike():
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    phases = list(s.phases)
    phases[3] = Phase.of(tuple(t for t in phases[3].sends if (t.src, t.dst) != (5, 1)))
    python, native = both(with_schedule(compiled, dataclasses.replace(s, phases=tuple(phases))))
    assert native.collectives[0].problems == ["node 1: 256 elements never arrived (blocks from [5])"]
    assert_same_run(python, native)


def test_a_run_stops_at_the_event_limit_alike():
    compiled = compile_text(HEADER + "repeat 3 {\n  B = A\n}\n")
    python, native = both(compiled, limits=RunLimits(max_events=1500))
    assert native.execution.stopped == python.execution.stopped
    assert native.execution.stopped.startswith("stopped at the limit of 1500 events (1500 events")
    assert [c.verified for c in native.collectives] == [True, False, False]
    assert_same_run(python, native)


def test_a_run_stops_at_the_time_limit():
    compiled = compile_text(HEADER + "repeat 3 {\n  B = A\n}\n")
    native = simulate(compiled, engine_choice="native", limits=RunLimits(time_limit_s=0.0))
    assert native.execution.stopped.startswith("stopped at the time limit of 0 s (4096 events")


def test_ideal_gives_its_programs_as_columns_op_for_op():
    """Network.transfer_programs, the columns the native run builds its arrays from, are
    transfer_program's ops, message by message."""
    network = resolve("ideal:4").build_network(Engine())
    src, dst, nbytes = np.array([0, 1, 3]), np.array([2, 0, 1]), np.array([8, 1000, 0])
    columns = network.transfer_programs(src, dst, nbytes, 0 * src)
    for i in range(len(src)):
        assert columns.program(i) == \
            network.transfer_program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0))


def native_run(compiled) -> tuple[NativeRun, list[str]]:
    """The program's one collective run natively, with its payloads: the run and its problems."""
    engine = Engine()
    network = compiled.target.build_network(engine)
    stmt, kind = compiled.communications[0], compiled.collectives[0].kind
    data = Payloads(lambda _: build_data(stmt, np.random.default_rng(0), {}, kind), [0])
    run = NativeRun(native_plan(compiled.plan, network, fast=True), network, engine, data)
    run.run()
    return run, data.checked()[0]


@pytest.mark.parametrize("kind", ["alltoall", "permutation", "cshift"])
def test_direct_moves_replay_in_bulk_and_verify(kind):
    compiled = compile_text(kind_program(kind, 8, 16), target="ideal:8", algorithm="direct",
                            cost="closed-form")
    run, problems = native_run(compiled)
    assert problems == []
    messages = sum(len(p.sends) for p in compiled.schedules[0].phases)
    assert run.replay.bulk_entries == 2 * messages + 1  # every start and end, and the leave
    assert_same_run(*both(compiled))


def test_a_block_missing_from_a_bulk_replay_is_found_alike():
    compiled = compile_text(HEADER + "B = A\n", algorithm="direct", cost="closed-form")
    s = compiled.schedules[0]
    phases = tuple(Phase.of(tuple(t for t in p.sends if (t.src, t.dst) != (5, 1))) for p in s.phases)
    wrong = with_schedule(compiled, dataclasses.replace(s, phases=phases))
    run, problems = native_run(wrong)
    assert run.replay.bulk_entries > 0
    assert problems == ["node 1: 256 elements never arrived (blocks from [5])"]
    assert_same_run(*both(wrong))


def bruck_alltoall():
    return compile_text(kind_program("alltoall", 8, 16), target="ideal:8", algorithm="bruck",
                        cost="closed-form")


def test_forwarded_blocks_replay_in_bulk_and_verify():
    """Bruck's all-to-all forwards blocks through other nodes: each block's hops form one path
    from its origin to its final node, so the whole run moves in bulk (native_replay's
    _forward_in_bulk), with the Python engine's run."""
    compiled = bruck_alltoall()
    assert any(t.src != t.origin for p in compiled.schedules[0].phases for t in p.sends)
    run, problems = native_run(compiled)
    assert problems == []
    messages = ScheduleColumns.of(compiled.schedules[0]).nmessages
    assert run.replay.bulk_entries == 2 * messages + 1
    assert_same_run(*both(compiled))


def forwarded_hop(compiled) -> Transfer:
    """A hop of Bruck's schedule that forwards a block (not from its origin)."""
    return next(t for p in compiled.schedules[0].phases for t in p.sends if t.src != t.origin)


def test_a_broken_forwarding_path_replays_one_by_one_with_the_python_engines_error():
    """A forwarded block that its sender never received: the bulk path refuses it and the
    replay gives the per-block error, as the Python engine does."""
    compiled = bruck_alltoall()
    s = compiled.schedules[0]
    hop = forwarded_hop(compiled)
    wrong_src = (hop.src + 1) % 8 if (hop.src + 1) % 8 != hop.dst else (hop.src + 2) % 8
    phases = tuple(Phase.of(tuple(t._replace(src=wrong_src) if t == hop else t for t in p.sends))
                   for p in s.phases)
    python, native = errors(with_schedule(compiled, dataclasses.replace(s, phases=phases)))
    assert native == python and "does not hold" in native


def test_a_block_stopped_on_its_way_is_found_alike():
    """A block's last hop dropped: it stays at the node that forwards it; the bulk path refuses
    the run and the check reports the missing elements as the Python engine does."""
    compiled = bruck_alltoall()
    s = compiled.schedules[0]
    last = next(t for p in reversed(s.phases) for t in p.sends if t.src != t.origin and t.dst == t.final)
    phases = tuple(Phase.of(tuple(t for t in p.sends if t != last)) for p in s.phases)
    wrong = with_schedule(compiled, dataclasses.replace(s, phases=phases))
    run, problems = native_run(wrong)
    assert run.replay.bulk_entries == 0
    assert problems and "never arrived" in problems[0]
    assert_same_run(*both(wrong))


REPEATED_BRUCK = ("target ideal:8\nprocessors P(8)\n"
                  "array A(16, 16) of float64 distribute (BLOCK, *) onto P\n"
                  "array B(16, 16) of float64 distribute (*, BLOCK) onto P\n"
                  "repeat 30 {\n  B = A\n  A = B\n}\n")


def test_a_repeat_opens_runs_ahead_and_replays_them_in_bulk():
    """The native run opens the next runs with the one a node enters (PREOPEN_RUNS), so the
    core runs many between stops; each run is still moved and checked, and forwarded blocks
    still move in bulk, run by run, as the Python engine's run."""
    compiled = compile_text(REPEATED_BRUCK, algorithm="bruck", cost="closed-form")
    engine = Engine()
    network = compiled.target.build_network(engine)
    data = Payloads(lambda r: build_data(compiled.communications[r % 2], np.random.default_rng(r), {}),
                    range(60))
    run = NativeRun(native_plan(compiled.plan, network, fast=True), network, engine, data)
    run.run()
    assert data.checked() == {r: [] for r in range(60)}
    assert data.peak_open > 2  # opened ahead
    entries = sum(2 * ScheduleColumns.of(s).nmessages + 1 for s in compiled.schedules)
    assert run.replay.bulk_entries == 30 * entries  # every run in bulk
    python, native = both(compiled)
    assert_same_run(python, native)
    assert native.verified and len(native.collectives) == 60


def test_a_wrong_run_among_runs_in_bulk_replays_one_by_one_with_the_python_engines_error():
    """Runs are independent: the runs that move in bulk go first, the wrong one replays block
    by block and gives the Python engine's error."""
    compiled = compile_text(REPEATED_BRUCK.replace("repeat 30", "repeat 3"), algorithm="bruck",
                            cost="closed-form")
    s = compiled.schedules[1]
    hop = next(t for p in s.phases for t in p.sends if t.src != t.origin)
    wrong_src = (hop.src + 1) % 8 if (hop.src + 1) % 8 != hop.dst else (hop.src + 2) % 8
    phases = tuple(Phase.of(tuple(t._replace(src=wrong_src) if t == hop else t for t in p.sends))
                   for p in s.phases)
    wrong = dataclasses.replace(s, phases=phases)
    (repeat,) = compiled.plan.steps
    body = tuple(wrong if x.collective == 1 else x for x in repeat.body)
    plan = Plan(compiled.plan.nprocs, (dataclasses.replace(repeat, body=body),))
    python, native = errors(dataclasses.replace(compiled, plan=plan))
    assert native == python and "does not hold" in native


def pieces_alltoall():
    """Every 2 KB block of a 4-node all-to-all in two pieces (the Paragon's receive buffers)."""
    compiled = compile_text(kind_program("alltoall", 4, 2048), target="paragon:2x2,recv_buffer_bytes=4096",
                            algorithm="direct", cost="closed-form")
    assert all(t.offset != WHOLE for p in compiled.schedules[0].phases for t in p.sends)
    return compiled


def test_pieces_replay_in_bulk_and_verify():
    compiled = pieces_alltoall()
    run, problems = native_run(compiled)
    assert problems == []
    messages = sum(len(p.sends) for p in compiled.schedules[0].phases)
    assert run.replay.bulk_entries == 2 * messages + 1
    assert_same_run(*both(compiled))


def _respoiled(compiled, spoil):
    """The schedule with its phases' sends changed by `spoil(k, sends)`."""
    s = compiled.schedules[0]
    phases = tuple(Phase.of(spoil(k, p.sends)) for k, p in enumerate(s.phases))
    return with_schedule(compiled, dataclasses.replace(s, phases=phases))


def _second_piece_at(offset: int):
    return lambda k, sends: tuple(t._replace(offset=offset) if (t.origin, t.final, t.offset) == (0, 1, 1024)
                                  else t for t in sends)


@pytest.mark.parametrize("spoil, error", [
    (_second_piece_at(512), "piece [512, 1536) of block 0->1 overlaps bytes that already arrived"),
    (_second_piece_at(1536), "sends piece [1536, 2560) of block 0->1, past the block's 2048 bytes")])
def test_a_wrong_piece_replays_one_by_one_with_the_python_engines_error(spoil, error):
    """A corrupted piece (at a wrong offset: its bytes overlap another's, or lie past the block):
    the pieces no longer tile their block once, so the replay refuses to move them in bulk and
    the one-by-one path gives the Python engine's error, naming the piece and its block. (A
    piece sent twice under one transfer key deadlocks both engines first: the receiver's inbox
    waits for it once; tests/runtime/test_data_pieces.py refuses it at the data layer.)"""
    python, native = errors(_respoiled(pieces_alltoall(), spoil))
    assert native == python and error in native


def test_a_log_replayed_in_parts_gives_the_run_of_the_whole(monkeypatch):
    """The core stops every few log entries (LOG_FULL) and the replay takes them in parts: the
    same run, data verified, as with the log taken whole, and as the Python engine's."""
    compiled = compile_text(kind_program("alltoall", 16, 64), target="ideal:16", algorithm="direct",
                            cost="closed-form")
    whole = simulate(compiled, engine_choice="native")
    monkeypatch.setattr("phalanx.runtime.native_run.LOG_CHUNK", 16)
    monkeypatch.setattr("phalanx.runtime.native_run.LOG_PART", 5)
    python, parts = both(compiled)
    assert parts.verified
    assert_same_run(whole, parts)
    assert_same_run(python, parts)


def test_a_block_sent_twice_is_caught_in_a_log_replayed_in_parts(monkeypatch):
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    extra = s.phases[1].sends[-1]
    schedule = dataclasses.replace(s, phases=(Phase.of(s.phases[0].sends + (extra,)),) + s.phases[1:])
    monkeypatch.setattr("phalanx.runtime.native_run.LOG_CHUNK", 4)
    monkeypatch.setattr("phalanx.runtime.native_run.LOG_PART", 3)
    data = Payloads(lambda _: TimingData(False, 16), [0])
    with pytest.raises(PhalanxError) as info:
        run_plan(compiled.target, Plan(16, (schedule,)), data, engine_choice="native")
    assert info.value.diagnostic.message == f"the schedule is invalid: transfer {extra.src}->{extra.dst} " \
        f"of block {extra.origin}->{extra.final} is sent twice"


def records_when_run_ends(compiled, monkeypatch) -> int:
    """The core's message records when its run ends (read as the spans are made), the run verified."""
    held = []
    spans = NativeRun._spans

    def counted(self):
        held.append(self.core.proc_records)
        return spans(self)

    monkeypatch.setattr(NativeRun, "_spans", counted)
    assert simulate(compiled, engine_choice="native").verified
    return held[0]


def test_message_records_are_reused_once_their_node_is_past_them(monkeypatch):
    """ideal:16's direct all-to-all sends 256 messages over 15 phases; the core holds records
    for the node walkers and the messages of a node's phase and the one before, not one per
    message (16.8M records of 48 bytes at 4096 nodes)."""
    compiled = compile_text(kind_program("alltoall", 16, 64), target="ideal:16", algorithm="direct",
                            cost="closed-form")
    held = records_when_run_ends(compiled, monkeypatch)
    assert 16 < held <= 16 + 2 * 16


def test_a_phase_s_queued_sends_wait_without_records(monkeypatch):
    """torus:8x8's message-passing all-to-all starts each node's 64 sends at once: they queue at
    the node's processor, then at its send slot, as groups of consecutive sends without records
    (engine_core model.rs Waiting), so the core holds records for the sends in flight, not one
    for each of the 4096 (1M records of 48 bytes at torus:32x32)."""
    compiled = compile_text(kind_program("alltoall", 64, 8), target="torus:8x8", algorithm="message-passing",
                            cost="closed-form")
    held = records_when_run_ends(compiled, monkeypatch)
    assert 64 < held < 4096 // 8


def test_the_core_holds_a_schedule_s_arrays_only_read_only():
    """Core.add_schedule holds the arrays in place: a writable one is refused by name."""
    import phalanx_engine_core

    core = phalanx_engine_core.Core(2, 1, 10)
    def held(values, dtype=np.uint32):
        out = np.array(values, dtype)
        out.flags.writeable = False
        return out

    with pytest.raises(ValueError, match="schedule array msg_dst: the core holds it in place, so it must be "
                                         "C-contiguous and read-only"):
        core.add_schedule(2, 1, np.zeros(1, np.uint8), np.array([1], np.uint32), held([0]), 0, held([0, 1]),
                          held([0]), held([0]), held([1]), held([0]), held([1], np.int32),
                          held([], np.int32), held([]), np.zeros(0))


@pytest.mark.parametrize("kind, algorithm", [("alltoall", "direct"), ("broadcast", "binomial")])
def test_message_offsets_counted_by_chunk_are_the_slot_index_of_the_messages_slots(monkeypatch, kind,
                                                                                   algorithm):
    """Where a schedule has as many messages as slots (ideal:16's direct all-to-all) the core's
    offsets are counted a chunk of messages at a time; with fewer (a binomial broadcast) it gets
    each message's slot: either way plan_columns.slot_index of the messages' slots."""
    from phalanx.runtime import native_run
    from phalanx.runtime.plan_columns import slot_index

    monkeypatch.setattr(native_run, "COLUMN_CHUNK", 7)  # chunks that split slots
    compiled = compile_text(kind_program(kind, 16, 64), target="ideal:16", algorithm=algorithm,
                            cost="closed-form")
    schedule = compiled.plan.schedules()[0]
    cols = ScheduleColumns.of(schedule)
    nslots = len(schedule.phases) * 16
    src, _ = native_run._message_ends(cols, 16)
    index = native_run._message_slot_index(cols, src, 16, nslots)
    assert (len(index) == nslots + 1) == (len(src) >= nslots)
    assert index.tolist() == slot_index(native_run._message_slots(cols, src, 16), nslots, np.uint32).tolist()
