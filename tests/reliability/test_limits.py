"""Limits: the estimate before a run, refusing what would not fit, and clean partial stops."""

from __future__ import annotations

import tracemalloc

import pytest

from conftest import EXAMPLES, HEADER, compile_text
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.limits import BYTES_PER_TRANSFER, check_fits, check_program_fits, estimate, memory_floor
from phalanx.runtime.simulate import RunLimits, simulate

FFT = (EXAMPLES / "fft2d_iwarp.phx").read_text()
HUGE = ("target ideal:16\nprocessors P(16)\n"
        "array A(3000000, 3000000) of float64 distribute (CYCLIC, *) onto P\n"
        "array B(3000000, 3000000) of float64 distribute (*, CYCLIC) onto P\nB = A\n")
PARAGON = ("target paragon:8x8\nprocessors P(64)\narray A(512, 512) of float64 distribute "
           "(BLOCK, *) onto P\narray B(512, 512) of float64 distribute (*, BLOCK) onto P\nB = A\n")


@pytest.mark.parametrize("source, algorithm", [
    (HEADER + "B = A\n", "auto"), (FFT, "message-passing"), (FFT, "store-forward"),
    (PARAGON, "auto"), (PARAGON, "direct"), (HEADER + "repeat 8 {\n  B = A\n  A = B\n}\n", "auto"),
])
def test_estimate_is_within_a_factor_of_two(source, algorithm):
    # the estimate of what runs is checked, not auto's choice: ranked by the closed forms
    compiled = compile_text(source, algorithm=algorithm, cost="closed-form")
    est = estimate(compiled)
    tracemalloc.start()
    result = simulate(compiled)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.verified
    assert 0.5 <= est.events / result.execution.events <= 2.0
    assert peak <= est.memory_bytes <= 8 * peak


def test_too_big_a_run_is_refused_with_the_estimate():
    compiled = compile_text(HUGE)
    with pytest.raises(UsageError) as info:
        check_fits(compiled)
    d = info.value.diagnostic
    assert d.message.startswith("t.phx on ideal:16 is too big to simulate here: it needs about ")
    assert "GiB of memory, more than the" in d.message and "--force" in d.hint
    assert check_fits(compiled, force=True).memory_bytes > 1 << 40  # --force: no refusal


def test_max_events_stops_with_a_partial_report():
    compiled = compile_text(HEADER + 'compute "w" on P cost 1 ms\nB = A\n')
    result = simulate(compiled, limits=RunLimits(max_events=300))
    assert result.execution.stopped.startswith("stopped at the limit of 300 events (300 events")
    assert result.execution.events == 300
    assert not result.verified
    assert result.collectives[0].problems[0] == ("node 0: 3328 elements never arrived (blocks from "
                                                 "[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])")


def test_time_limit_stops_a_long_run():
    compiled = compile_text(FFT, algorithm="message-passing", cost="closed-form")
    result = simulate(compiled, limits=RunLimits(time_limit_s=1e-6))
    assert result.execution.stopped.startswith("stopped at the time limit of 1e-06 s")
    assert result.execution.events < 171776 and not result.verified


def test_cli_partial_report_and_bad_values(cli, tmp_path):
    prog = tmp_path / "t.phx"
    prog.write_text(HEADER + "B = A\n")
    out = cli("run", str(prog), "--json", "--max-events", "100")
    assert out.code == 3
    data = out.json()
    assert data["stopped"]["events"] == 100 and data["stopped"]["unfinished_lines"] == [5]
    assert data["verified"] is False
    done = cli("run", str(prog), "--json", "--max-events", "100000")
    assert done.code == 0 and "stopped" not in done.json()
    bad = cli("run", str(prog), "--max-events", "0")
    assert bad.code == 2 and "--max-events 0 must be at least 1" in bad.err
    bad = cli("run", str(prog), "--time-limit", "-1")
    assert bad.code == 2 and "--time-limit -1 must be a positive number of seconds" in bad.err
    huge = tmp_path / "huge.phx"
    huge.write_text(HUGE)
    refused = cli("run", str(huge))
    assert refused.code == 2 and "is too big to simulate here" in refused.err


REPEATED = ("target ideal:64\nprocessors P(64)\n"
            "array A(512, 512) of float64 distribute (BLOCK, *) onto P\n"
            "array B(512, 512) of float64 distribute (*, BLOCK) onto P\nrepeat 40 {\n  B = A\n}\n")
BIG_REPEATED = REPEATED.replace("512, 512", "4096, 4096")  # 128 MB arrays


@pytest.mark.parametrize("source", [
    HEADER + "B = A\n", FFT, PARAGON, REPEATED, (EXAMPLES / "bcast_reduce.phx").read_text(),
    (EXAMPLES / "cyclic_to_block.phx").read_text(), (EXAMPLES / "adi.phx").read_text(),
])
def test_memory_floor_is_below_the_estimate(source):
    compiled = compile_text(source, cost="closed-form")  # the estimate of what runs, not auto's choice
    assert 0 < memory_floor(compiled.program) <= estimate(compiled).memory_bytes


def test_refusal_comes_before_communication_sets_and_schedules(cli, tmp_path, monkeypatch):
    from phalanx.compiler.ir.conversion.lower_coll_to_sched import LowerCollToSched
    from phalanx.compiler.ir.transforms.recognize_collectives import RecognizeCollectives

    def too_late(*args, **kwargs):
        raise AssertionError("the refusal must come before recognition and lowering")

    monkeypatch.setattr(RecognizeCollectives, "apply", too_late)
    monkeypatch.setattr(LowerCollToSched, "apply", too_late)
    monkeypatch.setattr("phalanx.runtime.limits.physical_memory_bytes", lambda: 1 << 29)
    prog = tmp_path / "rep.phx"
    prog.write_text(BIG_REPEATED)
    refused = cli("run", str(prog))
    assert refused.code == 2 and refused.out == ""
    first, hint = refused.err.splitlines()
    assert first.startswith(f"phalanx: error: {prog} on ideal:64 is too big to simulate here: it "
                            "needs at least ")
    assert first.endswith("of memory for the arrays and blocks of its biggest collective, more than "
                          "the 0.4 GiB this machine can give a run")
    assert hint.startswith("hint: make the arrays or the machine smaller (or repeat fewer times)")


def test_floor_refusal_names_the_floor_and_force_skips_it(monkeypatch):
    monkeypatch.setattr("phalanx.runtime.limits.physical_memory_bytes", lambda: 1 << 29)
    program = compile_text(BIG_REPEATED).program
    floor = memory_floor(program)
    # One run of the 64-node all-to-all (the runs of a repeat do not add up: each run's
    # payloads are freed when it ends): its two 128 MB arrays, 64 * 63 blocks cross the network
    assert 2 * (128 << 20) + 64 * 63 * BYTES_PER_TRANSFER <= floor < 2 * memory_floor(
        compile_text(BIG_REPEATED.replace("repeat 40", "repeat 1")).program)
    with pytest.raises(UsageError) as info:
        check_program_fits(program, "ideal:64")
    assert f"needs at least {floor / (1 << 30):.1f} GiB of memory" in info.value.diagnostic.message
    assert check_program_fits(program, "ideal:64", force=True) == floor
