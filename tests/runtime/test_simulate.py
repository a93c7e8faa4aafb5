"""Simulated runs: the engine against the closed form, contention, deadlock, data checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import HEADER, compile_text, crossed, two_node_compiled, with_schedule
from phalanx.compiler.schedule import Phase, Plan, Schedule
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.data import NEVER_STARTED, Payloads, build_data
from phalanx.runtime.simulate import run_plan, simulate

ALPHA, BETA = 10e-6, 0.01e-6


def test_transpose_matches_closed_form(examples):
    result = simulate(compile_text((examples / "transpose.phx").read_text()))
    c = result.collectives[0]
    closed_form = 15 * (ALPHA + BETA * 2048)
    assert result.verified and c.verified and c.kind == "alltoall"
    assert c.time_s == pytest.approx(closed_form, rel=1e-9)
    assert result.total_time_s == pytest.approx(1.5e-3 + closed_form, rel=1e-9)
    assert c.efficiency == pytest.approx(c.lower_bound_s / c.time_s)
    assert c.aggregate_bandwidth_Bps == pytest.approx(16 * 15 * 2048 / c.time_s)


@pytest.mark.parametrize("n", [3, 5, 6, 8])
def test_closed_form_on_other_sizes_and_transposes(n):
    source = (f"target ideal:{n}\nprocessors P({n})\n"
              f"array A({4 * n}, {2 * n}) of complex128 distribute (BLOCK, *) onto P\n"
              f"array B({2 * n}, {4 * n}) of complex128 distribute (BLOCK, *) onto P\n"
              "B = transpose(A)\n")
    result = simulate(compile_text(source, algorithm="direct"), seed=3)  # Bruck's is auto's
    m = 4 * 2 * 16  # a 2x4 (or 4x2) tile of complex128
    assert result.verified
    assert result.collectives[0].time_s == pytest.approx((n - 1) * (ALPHA + BETA * m), rel=1e-9)



def move_transfer(schedule: Schedule, src: int, dst: int, to_phase: int, sync: str) -> Schedule:
    phases = [list(p.sends) for p in schedule.phases]
    for sends in phases:
        for t in list(sends):
            if (t.src, t.dst) == (src, dst):
                sends.remove(t)
                phases[to_phase].append(t)
    return dataclasses.replace(schedule, phases=tuple(Phase.of(s, sync) for s in phases))


@pytest.mark.parametrize("sync", ["barrier", "local"])
def test_two_sends_through_one_port_cost_one_extra_message_time(sync):
    """Moving 2->1 into phase 0 puts 2->3 and 2->1 on node 2's send port (and 0->1, 2->1
    on node 1's receive port): the send port serialises both messages whole, so phase 0
    costs 2(alpha + beta m) and the run one message time more."""
    compiled = compile_text(HEADER + "B = A\n")
    free = move_transfer(compiled.schedules[0], -1, -1, 0, sync)  # same phases, chosen sync
    crowded = move_transfer(compiled.schedules[0], 2, 1, 0, sync)  # 0->1 and 2->1 in phase 0
    t_free = simulate(with_schedule(compiled, free)).collectives[0]
    t_crowded = simulate(with_schedule(compiled, crowded)).collectives[0]
    assert t_free.verified and t_crowded.verified
    assert t_free.time_s == pytest.approx(15 * (ALPHA + BETA * 2048), rel=1e-9)
    assert t_crowded.time_s - t_free.time_s == pytest.approx(ALPHA + BETA * 2048, rel=1e-9)



def test_deadlock_is_reported_with_its_cycle():
    compiled = two_node_compiled()
    with pytest.raises(PhalanxError) as info:
        simulate(with_schedule(compiled, crossed(compiled)))
    message = info.value.diagnostic.message
    assert message.startswith("the schedule deadlocks: node 0 waits on block 1->0 from node 1 "
                               "(phase 0) -> node 1 waits on block 0->1 from node 0 (phase 0) "
                               "-> node 0")


def test_missing_block_fails_verification():
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    phases = list(s.phases)
    phases[3] = Phase.of(tuple(t for t in phases[3].sends if (t.src, t.dst) != (5, 1)))
    result = simulate(with_schedule(compiled, dataclasses.replace(s, phases=tuple(phases))))
    c = result.collectives[0]
    assert not result.verified and not c.verified
    assert c.problems == ["node 1: 256 elements never arrived (blocks from [5])"]


def test_duplicate_send_is_an_invalid_schedule():
    compiled = compile_text(HEADER + "B = A\n")
    s = compiled.schedules[0]
    extra = s.phases[0].sends[-1]
    phases = (Phase.of(s.phases[0].sends + (extra,)),) + s.phases[1:]
    with pytest.raises(PhalanxError, match="does not hold"):
        simulate(with_schedule(compiled, dataclasses.replace(s, phases=phases)))


def test_runs_are_deterministic(examples):
    source = (examples / "transpose.phx").read_text()
    a = simulate(compile_text(source), seed=11).to_json()
    b = simulate(compile_text(source), seed=11).to_json()
    assert a == b


def test_combined_message_and_forwarding():
    """Node 0 sends its blocks for 1 and 2 to node 1 as one message; node 1 forwards 0->2."""
    from phalanx.compiler.schedule import Transfer

    compiled = compile_text("target ideal:3\nprocessors P(3)\narray A(3, 30) of byte distribute "
                            "(BLOCK, *) onto P\narray B(3, 30) of byte distribute (*, BLOCK) "
                            "onto P\nB = A\n")
    s = compiled.schedules[0]
    m = 10
    combined = (Transfer(0, 1, m, 0, 1, message=1), Transfer(0, 1, m, 0, 2, message=1))
    rest = tuple(t for p in s.phases for t in p.sends if t.src != 0 or t.dst == 0)
    forward = (Transfer(1, 2, m, 0, 2),)
    schedule = dataclasses.replace(s, phases=(Phase.of(combined, "barrier"),
                                              Phase.of(forward, "barrier"),
                                              Phase.of(rest, "barrier")))
    result = simulate(with_schedule(compiled, schedule))
    assert result.verified
    spans = [x for x in result.execution.spans if x.kind == "send" and x.node == 0]
    assert spans[0].label == "2 blocks to 1, 20 B"
    assert spans[0].end_s - spans[0].start_s == pytest.approx(ALPHA + BETA * 2 * m)


def test_a_forwarded_piece_leaves_its_forwarder():
    """Without classes a piece, as a whole block, is the one copy that moves: node 1 forwards
    the piece of block 0->2 it received, then cannot send it again (it kept every piece it
    forwarded until mem31, a copy per hop: torus:16x16's rings reduce held 1.9M of them)."""
    from phalanx.compiler.schedule import Transfer

    compiled = compile_text("target ideal:3\nprocessors P(3)\narray A(3, 30) of byte distribute "
                            "(BLOCK, *) onto P\narray B(3, 30) of byte distribute (*, BLOCK) "
                            "onto P\nB = A\n")
    s = compiled.schedules[0]
    rest = tuple(t for p in s.phases for t in p.sends if (t.origin, t.final) != (0, 2))
    cut = (Transfer(0, 1, 5, 0, 2, offset=0), Transfer(0, 2, 5, 0, 2, offset=5))
    once = (Transfer(1, 2, 5, 0, 2, offset=0),)
    ok = dataclasses.replace(s, phases=(Phase.of(rest + cut, "barrier"), Phase.of(once, "barrier")))
    assert simulate(with_schedule(compiled, ok)).verified
    twice = dataclasses.replace(s, phases=(Phase.of(rest + cut, "barrier"),
                                           Phase.of(once + (Transfer(1, 0, 5, 0, 2, offset=0),), "barrier")))
    with pytest.raises(PhalanxError, match=r"node 1 sends .*0->2.*which it does not hold"):
        simulate(with_schedule(compiled, twice))


BCAST = ("target ideal:4\nprocessors P(4)\narray S(8) of float64 on P(0)\n"
         "array R(8) of float64 replicated onto P\nR = S\n")


def test_tree_broadcast_forwards_copies():
    """A binomial tree: node 1 forwards the root's data to node 3 from the copy it received."""
    from phalanx.compiler.schedule import Transfer

    compiled = compile_text(BCAST)
    s = compiled.schedules[0]
    assert s.kind == "broadcast"
    keep = tuple(t for p in s.phases for t in p.sends if t.dst == 0)  # the root's own copy
    tree = (Phase.of(keep + (Transfer(0, 1, 64, 0, 1),)),
            Phase.of((Transfer(0, 2, 64, 0, 2), Transfer(1, 3, 64, 0, 3))))
    result = simulate(with_schedule(compiled, dataclasses.replace(s, phases=tree)))
    assert result.verified
    assert result.collectives[0].time_s == pytest.approx(2 * (ALPHA + BETA * 64))


def test_forwarding_before_receiving_is_invalid():
    from phalanx.compiler.schedule import Transfer

    compiled = compile_text(BCAST)
    s = compiled.schedules[0]
    bad = (Phase.of((Transfer(1, 3, 64, 0, 3),)),)
    with pytest.raises(PhalanxError, match="node 1 sends block 0->3, which it does not hold"):
        simulate(with_schedule(compiled, dataclasses.replace(s, phases=bad)))


def test_allreduce_by_gather_combine_broadcast():
    """Partials gather at node 0, which sends each node one combined element."""
    from phalanx.compiler.schedule import Transfer

    compiled = compile_text("target ideal:4\nprocessors P(4)\narray C(64) of float64 distribute "
                            "BLOCK onto P\narray s(1) of float64 replicated onto P\ns = sum(C)\n")
    s = compiled.schedules[0]
    assert s.kind == "allreduce"
    own = tuple(Transfer(p, p, 8, p, p) for p in range(4))
    gather = tuple(Transfer(p, 0, 8, p, 0) for p in range(1, 4))
    spread = tuple(Transfer(0, q, 8, p, q, message=1) for q in range(1, 4) for p in range(4) if p != q)
    plan = (Phase.of(own + gather, "barrier"), Phase.of(spread, "barrier"))
    result = simulate(with_schedule(compiled, dataclasses.replace(s, phases=plan)))
    assert result.verified
    sends = [x for x in result.execution.spans if x.kind == "send" and x.node == 0]
    assert [x.label.split(", ")[-1] for x in sends] == ["8 B"] * 3  # combined on the way


# Execution identity: stage, iteration, start and end in the program, own duration.

def rooted(n: int, statements: str) -> str:
    """Arrays for a broadcast, a gather and a copy that moves nothing on ideal:n."""
    return (f"target ideal:{n}\nprocessors P({n})\n"
            f"array root(4096) of float64 on P(0)\narray everywhere(4096) of float64 replicated onto P\n"
            f"array spread(4096) of float64 distribute BLOCK onto P\n"
            f"array same(4096) of float64 distribute BLOCK onto P\n"
            f"array back(4096) of float64 on P(0)\n{statements}")


def test_own_time_leaves_out_waiting_for_earlier_statements():
    # The linear broadcast: the root sends every copy itself, so it is busy longest.
    both = simulate(compile_text(rooted(8, "everywhere = root\nback = spread\n"),
                                 algorithm="broadcast=linear"))
    alone = simulate(compile_text(rooted(8, "back = spread\n")))
    bcast, gather = both.collectives
    (gather_alone,) = alone.collectives
    assert (bcast.kind, gather.kind) == ("broadcast", "gather")
    # The root is still broadcasting while the others reach the gather: in the program the
    # gather spans far more than its own time, which is the gather's time on an idle machine.
    assert gather.start_s < bcast.end_s and gather.end_s == pytest.approx(both.total_time_s)
    assert gather.elapsed_s > 3 * gather.time_s
    assert gather.time_s == gather_alone.time_s == pytest.approx(gather_alone.elapsed_s, rel=1e-12)
    assert gather.efficiency == gather_alone.efficiency == pytest.approx(
        gather.lower_bound_s / gather.time_s)
    assert gather.aggregate_bandwidth_Bps == pytest.approx(gather.total_bytes / gather.time_s)


@pytest.mark.parametrize("later", ["direct", "ring"])
def test_first_statement_own_time_does_not_depend_on_a_later_one(later):
    # issue 29 item 1: nodes that leave the gather early start the allgather, whose messages
    # share the network with the gather's last ones; the gather's own time is still its
    # schedule alone on an idle machine, whichever algorithm the allgather runs.
    both = simulate(compile_text(rooted(8, "back = spread\neverywhere = same\n"),
                                 algorithm=f"gather=binomial,allgather={later}"))
    (alone,) = simulate(compile_text(rooted(8, "back = spread\n"), algorithm="binomial")).collectives
    gather, allgather = both.collectives
    assert allgather.algorithm == later and allgather.start_s < gather.end_s  # they overlap
    assert gather.time_s == pytest.approx(alone.time_s, rel=1e-12)
    assert both.verified


# The issue's own case (issue 29 item 1), no target line so that X = V is line 6, Y = X line 7.
BRICKS_TO_PENCILS = """processors R(4, 4, 4)
processors Q(8, 8)
array V({n}, {n}, {n}) of complex64 distribute (BLOCK, BLOCK, BLOCK) onto R
array X({n}, {n}, {n}) of complex64 distribute (*, BLOCK, BLOCK) onto Q
array Y({n}, {n}, {n}) of complex64 distribute (BLOCK, *, BLOCK) onto Q
X = V
"""


def test_bricks_to_pencils_own_time_is_the_same_whatever_the_next_statement_runs():
    # On proteus:groups=2, line 6 (X = V, bricks to pencils) ran `direct` in both runs, yet its
    # own time was 73.9 ms when line 7 (Y = X, an all-to-all in 8 groups) ran `direct` and
    # 130.8 ms when it ran `proteus-group` (72.5 ms alone): nodes that left line 6 early started
    # line 7 while it still ran. Own time is line 6 alone, whatever line 7 runs.
    source = BRICKS_TO_PENCILS.format(n=16)
    algorithms = "{kind}=direct,alltoall={later}"
    alone = compile_text(source, "proteus:groups=2", cost="closed-form")
    kind = alone.collectives[0].kind
    (line6_alone,) = simulate(compile_text(source, "proteus:groups=2", algorithms.format(
        kind=kind, later="direct"), cost="closed-form")).collectives
    runs = {later: simulate(compile_text(source + "Y = X\n", "proteus:groups=2", algorithms.format(
        kind=kind, later=later), cost="closed-form")) for later in ("direct", "proteus-group")}
    for later, run in runs.items():
        line6, line7 = run.collectives
        assert (line6.line, line6.algorithm, line7.line, line7.algorithm) == (6, "direct", 7, later)
        assert line7.start_s < line6.end_s and run.verified  # line 7 began while line 6 ran
        assert line6.time_s == pytest.approx(line6_alone.time_s, rel=1e-12)
    # The old effect is there to be caught: in the program, line 6 lasts longer with one than
    # with the other (its elapsed time, not its own time).
    elapsed = [run.collectives[0].elapsed_s for run in runs.values()]
    assert max(elapsed) > 1.01 * min(elapsed)


def test_a_statement_that_moves_nothing_takes_no_own_time():
    # linear: the root sends every copy, so the others start the next statement before it
    # does (dimension-pipeline, auto's choice here, ends every node at once)
    result = simulate(compile_text(rooted(8, "everywhere = root\nsame = spread\n"),
                                   algorithm="broadcast=linear"))
    nothing = result.collectives[1]
    assert nothing.total_bytes == 0 and nothing.elapsed_s > 0  # it waited for the broadcast
    assert nothing.time_s == 0.0 and nothing.efficiency is None  # no bound to measure against
    assert nothing.lower_bound_binds == "nothing crosses the network"


def test_first_statement_own_time_is_its_time_in_the_program(examples):
    (c,) = simulate(compile_text((examples / "transpose.phx").read_text())).collectives
    assert (c.start_s, c.stage, c.iteration) == (1.5e-3, None, None)
    assert c.time_s == pytest.approx(c.elapsed_s, rel=1e-12)  # same events, shifted by 1.5 ms


def test_pipeline_stages_have_their_own_identity_and_times():
    from conftest import pipeline_source

    result = simulate(compile_text(pipeline_source(0.5)))
    runs = result.collectives
    assert [c.stage for c in runs] == [0, 1, 2, 3] and {c.iteration for c in runs} == {None}
    assert len({c.line for c in runs}) == 1
    starts = [c.start_s for c in runs]
    assert starts == sorted(starts) and len(set(starts)) == 4 and starts[0] >= 0.2e-3 + 0.5e-3 / 4
    assert all(c.start_s < c.end_s <= result.total_time_s for c in runs)
    assert runs[-1].end_s == pytest.approx(result.total_time_s)
    assert all(0 < c.time_s <= c.elapsed_s * (1 + 1e-9) for c in runs)


def test_repeat_iterations_count_runs_of_each_statement():
    source = HEADER + "repeat 3 {\n  B = A\n  A = transpose(B)\n}\n"
    result = simulate(compile_text(source))
    assert [(c.line, c.iteration) for c in result.collectives] == [
        (6, 0), (7, 0), (6, 1), (7, 1), (6, 2), (7, 2)]
    assert {c.stage for c in result.collectives} == {None}
    ends = [c.end_s for c in result.collectives]
    assert all(a.end_s <= b.start_s * (1 + 1e-12) for a, b in zip(result.collectives, result.collectives[1:]))
    assert ends[-1] == pytest.approx(result.total_time_s)
    assert len({c.time_s for c in result.collectives if c.line == 6}) == 1  # replayed once


def test_identity_and_times_in_the_json(examples):
    data = simulate(compile_text(HEADER + "repeat 2 {\n  B = A\n}\n")).to_json()
    for k, c in enumerate(data["collectives"]):
        assert (c["stage"], c["iteration"]) == (None, k)
        assert c["elapsed_s"] == pytest.approx(c["end_s"] - c["start_s"])
        assert c["efficiency"] == pytest.approx(c["lower_bound_s"] / c["time_s"])


def test_a_stopped_run_keeps_in_program_times():
    from phalanx.runtime.simulate import RunLimits

    limits = RunLimits(max_events=1500)  # past the first of three transposes, inside the second
    result = simulate(compile_text(HEADER + "repeat 3 {\n  B = A\n}\n"), limits=limits)
    done, begun, waiting = result.collectives
    assert result.execution.stopped and done.verified and not begun.verified
    assert done.time_s == pytest.approx(done.elapsed_s) and done.end_s == begun.start_s
    assert (begun.end_s, begun.elapsed_s, begun.time_s) == (None, None, 0.0)
    assert (waiting.start_s, waiting.end_s, waiting.time_s) == (None, None, 0.0)
    assert waiting.problems == [NEVER_STARTED]  # its payloads were never built


# Memory that does not grow with the number of repeats (issue 20).

RUN_BYTES = 256 * 256 * 8  # what a run of HEADER's B = A or A = B moves


@pytest.mark.parametrize("engine, preopen_bytes", [("python", None), ("native", 2 * RUN_BYTES),
                                                   ("native", None)])
def test_payloads_live_only_while_their_collective_runs(engine, preopen_bytes, monkeypatch):
    # The Python engine holds the collective in flight and the next one some node entered;
    # the native run also the runs it opened ahead (at most PREOPEN_BYTES of them).
    from phalanx.runtime import native_run

    if preopen_bytes is not None:
        monkeypatch.setattr(native_run, "PREOPEN_BYTES", preopen_bytes)
    ahead = 0 if engine == "python" else min(native_run.PREOPEN_RUNS, native_run.PREOPEN_BYTES // RUN_BYTES)
    compiled = compile_text(HEADER + "repeat 20 {\n  B = A\n  A = B\n}\n")
    rng = np.random.default_rng(0)
    built = []

    runs = compiled.plan.runs()
    assert runs == [0, 1] * 20  # two statements, compiled once each, run 20 times

    def build(r):
        built.append(r)
        return build_data(compiled.communications[runs[r]], rng, {})

    data = Payloads(build, range(40))
    run_plan(compiled.target, compiled.plan, data, engine_choice=engine)
    assert data.checked() == {r: [] for r in range(40)}  # every run checked, each one passes
    assert sorted(built) == list(range(40))
    assert 2 + ahead >= data.peak_open >= 1 + ahead


def test_every_run_is_still_checked_when_one_goes_wrong():
    compiled = compile_text(HEADER + "B = A\n" * 3)
    s = compiled.schedules[1]
    dropped = dataclasses.replace(s, phases=tuple(
        Phase.of(tuple(t for t in p.sends if (t.src, t.dst) != (5, 1)), p.sync) for p in s.phases))
    steps = tuple(dropped if isinstance(x, Schedule) and x.collective == 1 else x
                  for x in compiled.plan.steps)
    result = simulate(dataclasses.replace(compiled, plan=Plan(compiled.plan.nprocs, steps)))
    assert [c.verified for c in result.collectives] == [True, False, True]
    assert result.collectives[1].problems == ["node 1: 256 elements never arrived (blocks from [5])"]


def test_the_timeline_keeps_a_budget_of_spans(monkeypatch):
    from phalanx.runtime import interpreter
    from phalanx.runtime.gantt import gantt_svg

    compiled = compile_text(HEADER + "repeat 2 {\n  B = A\n}\n")
    full = simulate(compiled)
    monkeypatch.setattr(interpreter, "MAX_SPANS", 100)
    cut = simulate(compiled)
    left = len(full.execution.spans) - 100
    assert len(cut.execution.spans) == 100 and cut.execution.spans_left_out == left > 0
    assert cut.verified and cut.total_time_s == full.total_time_s
    assert [c.time_s for c in cut.collectives] == [c.time_s for c in full.collectives]
    svg = gantt_svg(cut.execution.spans, 16, "timeline", cut.execution.spans_left_out)
    assert "the first 100 spans, to " in svg and f"{left} later spans not kept (span budget)" in svg
