"""Pipelines on the simulator (issue 18, items 3 and 5): the torus:8x8 transpose pipeline
whose stages were cut into 8-to-64 exchanges, stages that move exactly their data, and the
note a pipeline predicted not to pay gets in every report."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import compile_text
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.simulate import run_plan, simulate
from phalanx.runtime.timing import simulated_time_s

DECLS = """target torus:8x8
processors P(64)
array A(1024, 1024) of complex64 distribute (BLOCK, *) onto P
array B(1024, 1024) of complex64 distribute (*, BLOCK) onto P
"""
# The case of issue 18: 34.9 ms of stage communication, 35.9 ms in all, when stages were rows
# of B's first dimension (each stage 16 senders to 64 receivers); 27.5 ms without the pipeline.
PIPELINED = DECLS + 'pipeline stages=8 {\n  compute "row FFTs" on P cost 18.5 ms\n  B = A\n}\n'
UNPIPELINED = DECLS + 'compute "row FFTs" on P cost 18.5 ms\nB = A\n'
COMPUTE_S = 18.5e-3


def _run(compiled) -> float:
    """The program's simulated total; every collective (each stage) must deliver exactly its
    data: the runtime checks each destination element against the statement applied to the
    global arrays, and that only the stage's window was written, once."""
    rng, sources = np.random.default_rng(0), {}
    data = Payloads(lambda i: build_data(compiled.communications[i], rng, sources),
                    [s.collective for s in compiled.plan.schedules()])
    execution, _ = run_plan(compiled.target, compiled.plan, data, 0)
    assert not any(data.checked().values())
    return execution.total_time_s


def test_torus_transpose_pipeline_stays_alltoall_and_beats_every_forced_schedule():
    piped = compile_text(PIPELINED)
    whole = compile_text(UNPIPELINED, cost="closed-form")  # its candidates, not auto's choice
    (whole_coll,) = whole.collectives
    assert whole_coll.kind == "alltoall" and whole_coll.block_bytes == 16 * 16 * 8
    assert [c.kind for c in piped.collectives] == ["alltoall"] * 8
    assert {c.block_bytes for c in piped.collectives} == {whole_coll.block_bytes // 8}
    (prediction,) = piped.pipelines
    assert [c.dimension for c in prediction.cuts] == [1] and prediction.pays

    pipelined_s = _run(piped)
    algorithms = [a for a, unmet in whole.target.candidates(whole_coll) if unmet is None]
    assert len(algorithms) > 1
    # The forced schedules are timed without their payload (runtime/timing.py, the times of
    # runs with data: tests/runtime/test_timing.py): the program without the pipeline is its
    # compute, then the transpose on the idle torus.
    best_unpipelined_s = COMPUTE_S + min(simulated_time_s(whole.target, whole_coll, a)
                                         for a in algorithms)
    # What a pipeline by any algorithm comes to at best: all the compute, then its last
    # stage by the fastest algorithm, alone on an idle machine (an estimate, not a bound).
    last = piped.collectives[piped.plan.schedules()[-1].collective]
    best_pipelined_s = COMPUTE_S + min(simulated_time_s(piped.target, last, a) for a in algorithms)
    # Issue 18 item 5: `auto`'s pipeline within 5% of the best forced schedule, with or
    # without the pipeline. Cut by rows, the pipeline took 35.9 ms against 25.5 ms for the
    # unpipelined `phased` schedule (1.41x); cut as now, 19.9 ms.
    assert pipelined_s <= 1.05 * min(best_unpipelined_s, best_pipelined_s)
    assert pipelined_s < best_unpipelined_s  # here the pipeline pays, as predicted
    # The prediction is the cost model's, checked against the simulator.
    assert prediction.pipelined_s == pytest.approx(pipelined_s, rel=0.05)


NO_PAY = """target ideal:16
processors P(16)
array A(64, 64) of float64 distribute (BLOCK, *) onto P
array B(64, 64) of float64 distribute (*, BLOCK) onto P
"""


def _program(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_pipeline_that_does_not_pay_says_so_with_both_predictions(cli, tmp_path):
    """Four stages of 2.5 us of compute each: the stages' start-ups cost more than the overlap
    saves. On `ideal` the cost model is the simulator's, so both predictions are exact."""
    piped = _program(tmp_path, "piped.phx", NO_PAY + 'pipeline stages=4 {\n'
                     '  compute "work" on P cost 10 us\n  B = A\n}\n')
    flat = _program(tmp_path, "flat.phx", NO_PAY + 'compute "work" on P cost 10 us\nB = A\n')
    data = cli("run", piped, "--json").json()
    (pipeline,) = data["pipelines"]
    assert pipeline["pays"] is False and pipeline["line"] == 5 and pipeline["stages"] == 4
    assert pipeline["cuts"] == [{"line": 7, "dst": "B", "dimension": 1}]
    assert pipeline["predicted_pipelined_s"] == pytest.approx(data["total_time_s"], rel=1e-6)
    flat_s = cli("run", flat, "--json").json()["total_time_s"]
    assert pipeline["predicted_unpipelined_s"] == pytest.approx(flat_s, rel=1e-6)
    assert data["total_time_s"] > flat_s  # the simulator agrees: it does not pay
    note = (f"pipeline at line 5 (4 stages, cutting 'B' (line 7) along dimension 1): predicted "
            f"{pipeline['predicted_pipelined_s'] * 1e3:.6f} ms pipelined, "
            f"{pipeline['predicted_unpipelined_s'] * 1e3:.6f} ms without the pipeline: it does "
            "not pay")
    assert pipeline["note"] == note
    assert f"  note: {note}" in cli("run", piped).out.splitlines()
    assert cli("compile", piped, "--emit", "json").json()["pipelines"] == data["pipelines"]
    report = tmp_path / "report"
    cli("run", piped, "--report", str(report))
    assert note in (report / "report.md").read_text()
    assert note.replace("'", "&#x27;") in (report / "index.html").read_text()


def test_a_pipeline_that_pays_has_no_note_on_the_terminal(cli, tmp_path):
    piped = _program(tmp_path, "piped.phx", NO_PAY + 'pipeline stages=4 {\n'
                     '  compute "work" on P cost 2 ms\n  B = A\n}\n')
    result = cli("run", piped)
    assert result.code == 0 and "note:" not in result.out
    (pipeline,) = cli("run", piped, "--json").json()["pipelines"]
    assert pipeline["pays"] is True and pipeline["note"].endswith("it pays")
    assert pipeline["predicted_pipelined_s"] < pipeline["predicted_unpipelined_s"]


def test_a_program_without_pipelines_has_no_pipelines_key(cli, tmp_path):
    flat = _program(tmp_path, "flat.phx", NO_PAY + "B = A\n")
    assert "pipelines" not in cli("run", flat, "--json").json()


# Stage comm sets on the simulator: uneven, cyclic, transposed, shifted and 3-D cuts, each
# stage verified element by element against its window.
STAGED = [
    ("array A(100, 30) of float64 distribute (BLOCK, *) onto P\n"
     "array B(100, 30) of float64 distribute (*, CYCLIC(3)) onto P", "B = A", 7),
    ("array A(37, 41) of int32 distribute (CYCLIC(2), *) onto P\n"
     "array B(41, 37) of int32 distribute (BLOCK(7), *) onto P", "B = transpose(A)", 5),
    ("array A(50, 20) of float32 distribute (BLOCK, *) onto P\n"
     "array B(50, 20) of float32 distribute (*, BLOCK) onto P", "B = cshift(A, 7, dim=1)", 6),
    ("array A(12, 10, 14) of float64 distribute (*, BLOCK, *) onto P\n"
     "array B(12, 10, 14) of float64 distribute (*, *, CYCLIC) onto P", "B = A", 11),
    ("array A(40, 24) of float64 distribute (BLOCK, *) onto P\n"  # sections: what is written
     "array B(40, 24) of float64 distribute (*, BLOCK) onto P", "B(0:38:2, :) = A(20:39, :)", 5),
    ("array A(32, 32) of float64 distribute (BLOCK, *) onto P\n"  # boundary rows in the stages
     "array B(32, 32) of float64 distribute (BLOCK, *) onto P", "B = eoshift(A, 3, dim=1)", 8),
]


@pytest.mark.parametrize("decls, assign, stages", STAGED)
def test_every_stage_moves_exactly_its_window(decls, assign, stages):
    compiled = compile_text(f"target ideal:8\nprocessors P(8)\n{decls}\npipeline stages={stages} {{\n"
                            f'  compute "w" on P cost 1 us\n  {assign}\n}}\n')
    result = simulate(compiled)
    assert result.verified and len(result.collectives) == stages
    assert sum(c.total_bytes for c in result.collectives) == \
        compile_text(f"target ideal:8\nprocessors P(8)\n{decls}\n{assign}\n").collectives[0].total_bytes


def test_a_pipeline_in_a_repeat_is_predicted_once(cli, tmp_path):
    piped = _program(tmp_path, "piped.phx", NO_PAY + 'repeat 3 {\npipeline stages=4 {\n'
                     '  compute "work" on P cost 10 us\n  B = A\n}\n}\n')
    result = cli("run", piped)
    assert sum(line.startswith("  note: pipeline at line 6") for line in result.out.splitlines()) == 1
    assert [p["line"] for p in cli("run", piped, "--json").json()["pipelines"]] == [6]
