"""`repeat` runs from one compiled body: every iteration simulated and checked, results equal
to the statements written out by hand, and a summary per repeated statement in the JSON."""

from __future__ import annotations

import json

import pytest

from conftest import compile_text
from phalanx.compiler.driver import unrolled
from phalanx.runtime.simulate import simulate

DECLS = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
array C(8, 8) of float64 distribute (CYCLIC, *) onto P
"""
BODY = "  B = A\n  compute \"work\" on P cost 5 us\n  C = transpose(B)\n  A = C\n"
REPEATED = DECLS + "repeat 3 {\n" + BODY + "}\n"  # statements at lines 7, 8, 9, 10
BY_HAND = DECLS + BODY * 3


def test_a_repeat_compiles_its_body_once():
    compiled = compile_text(REPEATED)
    assert len(compiled.collectives) == 3 and len(compiled.schedules) == 3
    assert compiled.plan.runs() == [0, 1, 2] * 3
    ops = [op.name for op in compiled.stages["sched"].ops]
    assert ops.count("sched.repeat") == 1 and ops.count("sched.schedule") == 3


def test_a_repeat_runs_as_the_statements_written_out_by_hand():
    loop, hand = simulate(compile_text(REPEATED)), simulate(compile_text(BY_HAND))
    assert loop.verified and hand.verified
    assert len(loop.collectives) == len(hand.collectives) == 9
    assert loop.total_time_s == pytest.approx(hand.total_time_s, rel=1e-12)
    for a, b in zip(loop.collectives, hand.collectives):
        assert (a.kind, a.algorithm, a.time_s) == (b.kind, b.algorithm, b.time_s)
        assert (a.start_s, a.end_s) == pytest.approx((b.start_s, b.end_s), rel=1e-12)
    assert [c.iteration for c in loop.collectives] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [c.line for c in loop.collectives] == [7, 9, 10] * 3


def test_every_iteration_is_checked():
    result = simulate(compile_text(DECLS + "repeat 4 {\n  B = A\n}\n"))
    assert [c.verified for c in result.collectives] == [True] * 4
    starts = [c.start_s for c in result.collectives]
    assert starts == sorted(starts) and len(set(starts)) == 4


def test_nested_repeats_multiply_and_number_runs_in_order():
    compiled = compile_text(DECLS + "repeat 2 {\n  B = A\n  repeat 3 {\n    A = B\n  }\n}\n")
    assert compiled.plan.runs() == [0, 1, 1, 1] * 2
    result = simulate(compiled)
    assert result.verified and [c.iteration for c in result.collectives if c.line == 9] == list(range(6))


def test_the_json_summarises_repeated_statements():
    result = simulate(compile_text(REPEATED))
    data = result.to_json()
    assert data["collectives"] == []
    first = data["repeated"][0]
    runs = [c for c in result.collectives if c.line == 7]
    assert (first["line"], first["runs"], first["verified"]) == (7, 3, True)
    assert first["time_s"] == {"min": min(c.time_s for c in runs), "max": max(c.time_s for c in runs),
                               "mean": pytest.approx(sum(c.time_s for c in runs) / 3)}
    assert (first["first_start_s"], first["last_start_s"]) == (runs[0].start_s, runs[-1].start_s)
    assert first["elapsed_s"]["max"] == max(c.elapsed_s for c in runs)
    assert [r["line"] for r in data["repeated"]] == [7, 9, 10]
    each = result.to_json(each_run=True)["collectives"]
    assert [(c["line"], c["iteration"]) for c in each] == [(line, k) for k in range(3) for line in (7, 9, 10)]


def test_each_run_flag(cli, tmp_path):
    prog = tmp_path / "rep.phx"
    prog.write_text(REPEATED)
    summary = cli("run", str(prog), "--json").json()
    assert summary["collectives"] == [] and [r["runs"] for r in summary["repeated"]] == [3, 3, 3]
    every = cli("run", str(prog), "--json", "--each-run").json()
    assert len(every["collectives"]) == 9 and every["repeated"] == summary["repeated"]
    report = tmp_path / "r"
    assert cli("run", str(prog), "--report", str(report), "--each-run").code == 0
    assert len(json.loads((report / "report.json").read_text())["collectives"]) == 9


def test_a_failing_iteration_is_named_in_the_summary():
    import dataclasses

    from phalanx.compiler.schedule import Phase, Plan, RepeatStep

    # direct: its one message from node 1 to node 0 carries that block (Bruck's would forward it)
    compiled = compile_text(DECLS + "repeat 2 {\n  B = A\n}\n", algorithm="direct")
    loop = compiled.plan.steps[0]
    s = loop.body[0]
    dropped = dataclasses.replace(s, phases=tuple(
        Phase.of(tuple(t for t in p.sends if (t.src, t.dst) != (1, 0)), p.sync) for p in s.phases))
    plan = Plan(compiled.plan.nprocs, (RepeatStep(2, (dropped,), loop.line),))
    summary = simulate(dataclasses.replace(compiled, plan=plan)).to_json()["repeated"][0]
    assert (summary["verified"], summary["failed_runs"]) == (False, 2)
    assert summary["problems"][0].startswith("iteration 0: node 0: ")


def test_the_backends_flat_plan_runs_the_same():
    compiled = compile_text(REPEATED)
    flat = unrolled(compiled)
    assert len(flat.collectives) == 9 and [c.index for c in flat.collectives] == list(range(9))
    assert flat.plan.runs() == list(range(9))
    a, b = simulate(compiled), simulate(flat)
    assert b.verified and a.total_time_s == pytest.approx(b.total_time_s, rel=1e-12)
    assert [c.iteration for c in a.collectives] == [c.iteration for c in b.collectives]


def test_the_native_lowering_runs_every_iteration():
    from phalanx.compiler.ir.conversion.native_rows import plan_native

    plan = plan_native(compile_text(REPEATED).stages["sched"])
    assert [line for _, _, line in plan.schedules] == [7, 9, 10] * 3
