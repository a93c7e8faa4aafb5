"""Native MPI executables: built with mlir-opt-22 / mlir-translate-22 / clang-22, run under mpirun.

Each executable fills its send buffers with the pattern of (content, index), checks every
received byte and prints one JSON line; these tests read that line and the exit code.
"""

from __future__ import annotations

import json

import pytest
from test_native_mlir import MIXED, PIECES, _tree_broadcast

from conftest import EXAMPLES, GROUPED_EXCHANGE, compile_text
from phalanx.compiler.ir.conversion.lower_sched_to_mpi import program_text
from phalanx.compiler.ir.conversion.native_rows import BARRIER, CHECK, plan_native
from phalanx.compiler.ir.dialects.sched import plan_to_module
from phalanx.compiler.native import (
    build_executable,
    build_program,
    find_tool,
    missing_tools,
    run_executable,
    run_program,
)
from phalanx.grammar.diagnostics import PhalanxError


def needs_toolchain(test):
    """MLIR's tools, clang and MPI build and run the executables (tests/conftest.py skips the
    test where one is missing)."""
    return pytest.mark.mlir_opt(pytest.mark.clang(pytest.mark.mpi(test)))


SPARSE_CSHIFT = """target hypercube:3
processors P(8)
array A(64, 64) of float32 distribute (BLOCK, *) onto P
array B(64, 64) of float32 distribute (CYCLIC(4), *) onto P
array C(64) of int32 distribute (BLOCK) onto P
array D(64) of int32 distribute (BLOCK) onto P
array E(128, 128) of float64 distribute (BLOCK, *) onto P
array F(128, 128) of float64 distribute (*, BLOCK) onto P
B = A
D = cshift(C, 5, dim=1)
F = E
"""


def _verified(run, nprocs: int, collectives: int) -> None:
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.result["verified"] is True and run.result["errors"] == 0
    assert run.result["nprocs"] == nprocs and len(run.result["collective_time_s"]) == collectives
    assert 0 < max(run.result["collective_time_s"]) <= run.result["time_s"]


@needs_toolchain
def test_transpose_runs_on_16_ranks_and_verifies(tmp_path, cli):
    exe = tmp_path / "transpose"
    result = cli("compile", str(EXAMPLES / "transpose.phx"), "--emit", "exe", "-o", str(exe))
    assert result.code == 0, result.err
    run = run_executable(exe, 16)
    _verified(run, 16, 1)
    assert run.result["time_s"] >= 1.5e-3  # the program's 1.5 ms compute step spins


@needs_toolchain
@pytest.mark.parametrize("program,nranks",
                         [("transpose.phx", 8), ("transpose.phx", 4), ("fft2d_iwarp.phx", 8)])
def test_examples_run_on_fewer_ranks_than_processors(program, nranks):
    compiled = compile_text((EXAMPLES / program).read_text(), cost="closed-form")  # not auto's choice
    run = run_program(compiled, nranks=nranks)
    _verified(run, nranks, len(compiled.schedules))
    assert run.result["processors"] == compiled.plan.nprocs


@needs_toolchain
def test_sparse_cshift_and_standard_exchange_with_forwarding_verify():
    compiled = compile_text(SPARSE_CSHIFT, algorithm="alltoall=standard")
    assert [s.kind for s in compiled.schedules] == ["sparse", "cshift", "alltoall"]
    assert any(t.message for p in compiled.schedules[2].phases for t in p.sends)  # combined messages
    _verified(run_program(compiled), 8, 3)


@needs_toolchain
def test_broadcast_reduce_allreduce_verify():
    compiled = compile_text(MIXED)
    assert [s.kind for s in compiled.schedules] == ["sparse", "cshift", "broadcast", "allreduce", "reduce"]
    _verified(run_program(compiled), 8, 5)
    _verified(run_program(compiled, nranks=4), 4, 5)


@needs_toolchain
def test_a_wrong_byte_fails_verification(tmp_path):
    plan = plan_native(plan_to_module(_tree_broadcast()))
    rank7 = plan.rows[7]
    i = next(k for k, row in enumerate(rank7) if row[0] == CHECK)
    rank7[i] = rank7[i][:3] + (rank7[i][3] + 1,) + rank7[i][4:]  # expect another content
    exe = build_executable(program_text(plan, "OpenMPI"), tmp_path / "bad")
    run = run_executable(exe, 8)
    assert run.returncode != 0
    assert run.result["verified"] is False and run.result["errors"] == 64


@needs_toolchain
@pytest.mark.parametrize("algorithm", ["broadcast=chain", "broadcast=scatter-allgather"])
def test_schedules_that_move_pieces_of_blocks_verify(algorithm):
    compiled = compile_text(PIECES, algorithm=algorithm, cost="closed-form")
    assert any(t.offset > 0 for p in compiled.schedules[0].phases for t in p.sends)
    _verified(run_program(compiled), 8, 1)
    _verified(run_program(compiled, nranks=3), 3, 1)


@needs_toolchain
def test_a_piece_checked_against_the_wrong_bytes_fails(tmp_path):
    plan = plan_native(compile_text(PIECES, algorithm="broadcast=chain", cost="closed-form").stages["sched"])
    rank5 = plan.rows[5]
    i = next(k for k, row in enumerate(rank5) if row[0] == CHECK and row[4] > 0)
    rank5[i] = rank5[i][:4] + (rank5[i][4] + 1,) + rank5[i][5:]  # the piece's bytes from its second on
    run = run_executable(build_executable(program_text(plan, "OpenMPI"), tmp_path / "bad"), 8)
    assert run.returncode != 0
    assert run.result["verified"] is False and run.result["errors"] == rank5[i][2]


@needs_toolchain
def test_tree_broadcast_runs(tmp_path):
    exe = build_executable(program_text(plan_native(plan_to_module(_tree_broadcast())), "OpenMPI"),
                           tmp_path / "tree")
    _verified(run_executable(exe, 8), 8, 1)


@needs_toolchain
def test_wrong_rank_count_says_how_to_run(tmp_path):
    exe = build_program(compile_text(MIXED), tmp_path / "mixed")
    run = run_executable(exe, 4)
    assert run.returncode != 0 and run.result is None
    assert "built for 8 ranks but started on 4; run it with mpirun -n 8" in run.stdout


def test_emit_exe_needs_an_output(cli):
    result = cli("compile", str(EXAMPLES / "transpose.phx"), "--emit", "exe")
    assert result.code == 2 and "--emit exe needs an output file" in result.err
    assert "-o PROGRAM" in result.err


def test_emit_mpi_mlir_and_the_mpi_option(cli):
    result = cli("compile", str(EXAMPLES / "transpose.phx"), "--emit", "mpi-mlir", "--mpi", "MPICH")
    assert result.code == 0 and '"MPI:Implementation" = "MPICH"' in result.out
    bad = cli("compile", str(EXAMPLES / "transpose.phx"), "--emit", "mpi-mlir", "--mpi", "LAM")
    assert bad.code == 2 and "invalid choice: 'LAM'" in bad.err


def test_a_missing_tool_names_its_debian_package(monkeypatch):
    monkeypatch.setattr("phalanx.compiler.native.shutil.which", lambda name: None)
    monkeypatch.setattr("phalanx.compiler.native.LLVM_BIN", EXAMPLES / "no-such-dir")
    for tool, package in [("clang-22", "clang-22"), ("mpicc", "libopenmpi-dev"),
                          ("mpirun", "openmpi-bin"), ("mlir-opt-22", "mlir-22-tools")]:
        with pytest.raises(PhalanxError) as info:
            find_tool(tool)
        text = info.value.diagnostic.render()
        assert f"`{tool}` is not installed" in text and f"apt-get install -y {package}" in text
    assert json.dumps(missing_tools(("clang-22",))) == '["clang-22 (Debian package clang-22)"]'


@needs_toolchain
def test_run_backend_mpi_native_reports_verified_data(cli):
    """`phalanx run --backend mpi-native -n 8`: built through MLIR and LLVM, run under mpirun."""
    result = cli("run", str(EXAMPLES / "transpose.phx"), "--backend", "mpi-native", "-n", "8",
                 "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["backend"] == "mpi-native" and data["verified"] is True and data["ranks"] == 8
    (c,) = data["collectives"]
    assert (c["kind"], c["phases"]) == ("alltoall", 15) and c["time_s"] > 0


def test_mpi_native_refuses_a_report(cli, tmp_path):
    result = cli("run", str(EXAMPLES / "transpose.phx"), "--backend", "mpi-native",
                 "--report", str(tmp_path / "r"))
    assert result.code == 2 and "--report is not available for --backend mpi-native" in result.err


@needs_toolchain
def test_barriers_in_groups_synchronise_each_group_on_its_own():
    """An all-to-all in 4 groups of 4 by the standard exchange: its 2 barrier phases are
    dissemination barriers within each group (no MPI_Barrier of every rank but the run's start),
    on 16 ranks and with processors merged onto 5."""
    compiled = compile_text(GROUPED_EXCHANGE, algorithm="alltoall=standard")
    assert sum(bool(p.barrier_groups) for p in compiled.schedules[0].phases) == 2
    plan = plan_native(compiled.stages["sched"])
    assert all([r[0] for r in rows].count(BARRIER) == 1 for rows in plan.rows)  # the run's start
    _verified(run_program(compiled), 16, 1)
    _verified(run_program(compiled, nranks=5), 5, 1)
