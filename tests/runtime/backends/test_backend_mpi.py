"""The MPI backend: schedules on real Open MPI processes, real bytes verified on every rank."""

from __future__ import annotations

import pytest

from conftest import GROUPED_EXCHANGE, compile_text, pipeline_source
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.backends import mpi

MISSING = mpi.mpi_missing()
needs_mpi = pytest.mark.mpi  # skipped where MPI is missing (tests/conftest.py)


def transpose(nprocs: int, n: int = 64) -> str:
    return (f"target ideal:{nprocs}\nprocessors P({nprocs})\n"
            f"array A({n}, {n}) of float64 distribute (BLOCK, *) onto P\n"
            f"array B({n}, {n}) of float64 distribute (*, BLOCK) onto P\nB = A\n")


@needs_mpi
@pytest.mark.parametrize("nprocs", [4, 8])
def test_transpose_verified_on_n_ranks(nprocs):
    run = mpi.run_mpi(compile_text(transpose(nprocs)))
    out = run.to_json()
    assert run.verified and out["backend"] == "mpi" and out["nprocs"] == nprocs
    c = out["collectives"][0]
    assert c["kind"] == "alltoall" and c["time_s"] > 0
    assert c["mpi_library"] == "MPI_Alltoallv" and c["mpi_library_time_s"] > 0


@needs_mpi
def test_example_on_16_ranks_by_cli(cli, examples):
    out = cli("run", str(examples / "transpose.phx"), "--backend", "mpi", "-n", "16", "--json")
    assert out.code == 0, out.err
    data = out.json()
    assert data["verified"] and data["nprocs"] == 16 and data["collectives"][0]["verified"]


@needs_mpi
def test_reduction_and_broadcast_against_mpi_library():
    """Each program has one collective; the library's counterpart runs on the same data."""
    reduce_src = ("target ideal:4\nprocessors P(4)\narray C(64) of float64 distribute BLOCK onto P\n"
                  "array s(1) of float64 replicated onto P\ns = sum(C)\n")
    bcast_src = ("target ideal:4\nprocessors P(4)\narray S(8) of int32 on P(0)\n"
                 "array R(8) of int32 replicated onto P\nR = S\n")
    for source, library in ((reduce_src, "MPI_Allreduce"), (bcast_src, "MPI_Bcast")):
        run = mpi.run_mpi(compile_text(source))
        assert run.verified, run.to_json()["collectives"]
        assert run.to_json()["collectives"][0]["mpi_library"] == library


BROADCAST_IN_PIECES = ("target ideal:8\nprocessors P(8)\narray S(125) of float64 on P(0)\n"
                      "array R(125) of float64 replicated onto P\nR = S\n")


@needs_mpi
@pytest.mark.parametrize("algorithm", ["chain", "scatter-allgather"])
def test_a_broadcast_in_pieces_is_verified(algorithm):
    """1000 bytes of float64 in pieces cut between bytes (125 B each for scatter-allgather):
    the ranks forward and assemble them as the interpreter does."""
    compiled = compile_text(BROADCAST_IN_PIECES, algorithm=f"broadcast={algorithm}", cost="closed-form")
    assert any(t.offset > 0 for p in compiled.schedules[0].phases for t in p.sends)
    run = mpi.run_mpi(compiled)
    assert run.verified, run.to_json()["collectives"]
    assert run.to_json()["collectives"][0]["mpi_library"] == "MPI_Bcast"


@needs_mpi
def test_reduce_in_groups_against_mpi_reduce_in_groups():
    """`sum(A, dim=2)` on a 4 x 4 grid into grid column 0: a reduce in 4 groups of 4 whose
    partials combine on the way (binomial), verified on every rank, beside MPI_Reduce of the
    same 8-element float64 partials on each row's communicator."""
    source = ("target ideal:16\nprocessors Q(4, 4)\n"
              "array A(32, 32) of float64 distribute (BLOCK, BLOCK) onto Q\n"
              "array Y(32, 4) of float64 distribute (BLOCK, BLOCK) onto Q\n"
              "Y(:, 0) = sum(A, dim=2)\n")
    compiled = compile_text(source, algorithm="reduce=binomial")
    assert compiled.collectives[0].kind == "reduce" and len(compiled.collectives[0].groups) == 4
    run = mpi.run_mpi(compiled, timeout_s=120)
    assert run.verified, run.to_json()["collectives"]
    assert run.to_json()["collectives"][0]["mpi_library"] == "MPI_Reduce in groups"


@needs_mpi
def test_barriers_in_groups_run_on_each_groups_communicator():
    """An all-to-all in 4 groups of 4 by the standard exchange: each of its 2 barrier phases
    runs on the rank's group's communicator (split off before the clock starts; a rank
    waiting on another split would hang), and every rank's data are verified."""
    compiled = compile_text(GROUPED_EXCHANGE, algorithm="alltoall=standard")
    assert sum(bool(p.barrier_groups) for p in compiled.schedules[0].phases) == 2
    run = mpi.run_mpi(compiled, timeout_s=120)
    assert run.verified, run.to_json()["collectives"]
    assert run.to_json()["collectives"][0]["mpi_library"] == "MPI_Alltoallv in groups"


PIPELINE = pipeline_source(8)


@needs_mpi
def test_compute_steps_and_pipeline_run_as_the_interpreter():
    """Compute steps busy-wait their cost on the wall clock; stage i's exchange runs in the
    rank's agent during stage i+1's compute, and stage i+2's compute waits for it (double
    buffering, compiler/plan_walk.py `walk_node`). Checked on every rank's own timeline."""
    compiled = compile_text(PIPELINE)
    setup, pipeline = compiled.plan.steps
    stage_cost_s = pipeline.stages[0][0].cost_s  # 8 ms over 4 stages
    run = mpi.run_mpi(compiled, timeout_s=120)
    assert run.verified and len(run.result.collectives) == 4
    assert run.result.execution.total_time_s >= setup.cost_s + 4 * stage_cost_s
    spans = run.result.execution.spans
    for rank in range(4):
        computes = [s for s in spans if s.node == rank and s.kind == "compute"]
        assert [s.label for s in computes] == ["setup"] + ["work"] * 4
        assert all(s.end_s - s.start_s >= c for s, c in
                   zip(computes, [setup.cost_s] + [stage_cost_s] * 4))
        work = computes[1:]
        exchange = sorted((i, a, b) for r, i, a, b in run.measured["schedule_spans"] if r == rank)
        assert [i for i, _, _ in exchange] == [0, 1, 2, 3]
        for i, start, end in exchange:
            assert start >= work[i].end_s  # stage i's data is ready
            if i + 1 < 4:
                assert start < work[i + 1].end_s  # ... and moves while stage i+1 computes
            if i + 2 < 4:
                assert work[i + 2].start_s >= end  # double buffering


def test_wrong_rank_count_is_a_clear_error():
    if MISSING is not None:
        pytest.skip(f"MPI unavailable: {MISSING}")
    with pytest.raises(UsageError, match="the program runs on 8 processors but -n 4 was given"):
        mpi.run_mpi(compile_text(transpose(8)), nprocs=4)


@needs_mpi
def test_failing_rank_is_named():
    with pytest.raises(UsageError, match="rank 2 failed: RuntimeError: failure injected"):
        mpi.run_mpi(compile_text(transpose(4)), extra=["--fail-rank", "2"], timeout_s=60)


@needs_mpi
def test_hanging_rank_is_killed_and_named():
    """Rank 3 never reaches the schedule: the others wait for it until the timeout."""
    with pytest.raises(UsageError) as info:
        mpi.run_mpi(compile_text(transpose(4)), extra=["--hang-rank", "3"], timeout_s=8)
    message = str(info.value)
    assert "killed after 8 s without finishing" in message
    assert "rank 3 hanging (injected by --hang-rank)" in message
    assert "rank 0 at the barrier before schedule 0 (line 5)" in message


def test_missing_mpirun_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UsageError, match="mpirun not found: apt-get install openmpi-bin"):
        mpi.run_mpi(compile_text(transpose(4)))
