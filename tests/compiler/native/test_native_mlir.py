"""lower-sched-to-mpi: the emitted upstream MLIR (FileCheck), its tables, deadlock freedom, mlir-opt-22."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.utils.exceptions import VerifyException

from conftest import EXAMPLES, compile_text
from phalanx.compiler.ir.conversion.lower_sched_to_mpi import (
    BARRIER,
    BEGIN,
    CHECK,
    FILL,
    RECV,
    SEND,
    NativePlan,
    _colour_messages,
    lower_sched_to_mpi,
    pattern_byte,
    place,
    plan_native,
)
from phalanx.compiler.ir.dialects.sched import plan_to_module
from phalanx.compiler.ir.passes import PASSES
from phalanx.compiler.kind import Kind
from phalanx.compiler.native import MLIR_OPT_PASSES, find_tool
from phalanx.compiler.schedule import Phase, Plan, Schedule, Transfer
from phalanx.grammar.diagnostics import PhalanxError

MIXED = """target ideal:8
processors P(8)
array A(64, 64) of float32 distribute (BLOCK, *) onto P
array B(64, 64) of float32 distribute (CYCLIC(4), *) onto P
array C(64) of int32 distribute (BLOCK) onto P
array D(64) of int32 distribute (BLOCK) onto P
array S(64) of float64 on P(0)
array R(64) of float64 replicated onto P
array s(1) of float64 replicated onto P
array t(1) of float64 on P(2)
array X(64) of float64 distribute (BLOCK) onto P
B = A
D = cshift(C, 5, dim=1)
R = S
s = sum(X)
t = max(X)
"""

FILECHECK = """
CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
CHECK: llvm.mlir.global external @ompi_mpi_comm_world()
CHECK: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
CHECK: llvm.func @MPI_Barrier(!llvm.ptr) -> i32
CHECK: memref.global "private" constant @rows : memref<{{[0-9]+}}xi64> = dense<[{{[0-9, ]+}}]>
CHECK: memref.global "private" constant @row_start : memref<17xi64> = dense<[0, {{.*}}]>
CHECK: memref.global "private" constant @heap_bytes : memref<16xi64> = dense<[{{.*}}]>
CHECK: func.func @phx_step(
CHECK: scf.index_switch %k
CHECK: case 0 {
CHECK: mpi.send(%buf, %tag, %peer, %comm) : memref<?xi8, strided<[1], offset: ?>>, i32, i32
CHECK: case 1 {
CHECK: mpi.recv(%buf, %tag, %peer, %comm) : memref<?xi8, strided<[1], offset: ?>>, i32, i32
CHECK: func.func @main() -> i32 {
CHECK-NEXT: mpi.init
CHECK-NEXT: %comm = mpi.comm_world : !mpi.comm
CHECK-NEXT: %rank = mpi.comm_rank(%comm) : i32
CHECK-NEXT: %size = func.call @phx_comm_size() : () -> i32
CHECK-NEXT: %want = arith.constant 16 : i32
CHECK: mpi.finalize
CHECK-NOT: mpi.barrier
CHECK-NOT: mpi.comm_size
"""


def _filecheck(text: str, checks: str, tmp_path) -> None:
    beside = Path(sys.executable).parent / "filecheck"
    filecheck = str(beside) if beside.exists() else shutil.which("filecheck")
    if filecheck is None:
        pytest.skip("filecheck (a dev dependency) is not installed")
    (tmp_path / "checks").write_text(checks)
    done = subprocess.run([filecheck, str(tmp_path / "checks")], input=text, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_transpose_module_passes_filecheck(tmp_path):
    text = lower_sched_to_mpi(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    _filecheck(text, FILECHECK, tmp_path)


def test_mpich_uses_integer_handles(tmp_path):
    text = lower_sched_to_mpi(compile_text(MIXED).stages["sched"], "MPICH")
    _filecheck(text, """
CHECK: #dlti.map<"MPI:Implementation" = "MPICH">
CHECK-NOT: ompi_mpi
CHECK: llvm.func @MPI_Barrier(i32) -> i32
CHECK: %w = llvm.mlir.constant(1140850688 : i32) : i32
""", tmp_path)


def test_program_size_does_not_grow_with_ranks():
    """Tables indexed by rank, one send op: no branch per rank."""
    src = ("target ideal:256\nprocessors P(256)\narray A(256, 256) of byte distribute (BLOCK, *) onto P\n"
           "array B(256, 256) of byte distribute (*, BLOCK) onto P\nB = A\n")
    big = lower_sched_to_mpi(compile_text(src).stages["sched"])
    small = lower_sched_to_mpi(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    strip = [t.split("memref.global")[0] + t.split("@heap_bytes")[1].split("\n", 1)[1] for t in (big, small)]
    assert big.count("mpi.send(") == small.count("mpi.send(") == 1
    assert len(strip[0].splitlines()) == len(strip[1].splitlines())


def test_every_sent_block_is_filled_once_at_its_origin_and_checked_at_its_final_rank():
    plan = plan_native(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    assert plan.nprocs == 16 and plan.schedules == [("alltoall", "direct", 8)]
    for rows in plan.rows:
        kinds = [r[0] for r in rows]
        assert kinds.count(FILL) == 16 and kinds.count(CHECK) == 16  # 16 x 16 doubles each way
        assert kinds.count(SEND) == kinds.count(RECV) == 15
        assert {r[2] for r in rows if r[0] == CHECK} == {16 * 16 * 8}
    assert plan.heap_bytes[0] >= 16 * 2048 * 2  # send slots and receive slots


def _rendezvous(plan: NativePlan) -> list[int]:
    """Run the rows with strictly blocking send/recv (a send waits for its receive): the
    positions where ranks stop. All at the end means the order cannot deadlock."""
    at = [0] * plan.nprocs
    rows = plan.rows

    def head(rank: int):
        while at[rank] < len(rows[rank]) and rows[rank][at[rank]][0] not in (SEND, RECV, BARRIER, BEGIN):
            at[rank] += 1
        return rows[rank][at[rank]] if at[rank] < len(rows[rank]) else None

    moved = True
    while moved:
        moved = False
        heads = [head(r) for r in range(plan.nprocs)]
        if heads and all(h is not None and h[0] in (BARRIER, BEGIN) for h in heads):
            at = [a + 1 for a in at]
            moved = True
            continue
        for r, h in enumerate(heads):
            if h is not None and h[0] == SEND:
                peer = heads[h[1]]
                if peer is not None and peer[0] == RECV and peer[1] == r and peer[3] == h[3]:
                    at[r] += 1
                    at[h[1]] += 1
                    moved = True
                    break
    return [a - len(rows[r]) for r, a in enumerate(at)]


@pytest.mark.parametrize("source,target,algorithm", [
    ((EXAMPLES / "transpose.phx").read_text(), None, "auto"),
    ((EXAMPLES / "transpose.phx").read_text(), "hypercube:4", "alltoall=standard"),
    ((EXAMPLES / "fft2d_iwarp.phx").read_text(), None, "alltoall=phased"),
    (MIXED, None, "auto"),
])
def test_blocking_order_cannot_deadlock(source, target, algorithm):
    plan = plan_native(compile_text(source, target, algorithm).stages["sched"])
    assert _rendezvous(plan) == [0] * plan.nprocs
    for nranks in (plan.nprocs // 2, 3):  # several processors per rank, merged in the global order
        assert _rendezvous(place(plan, nranks)) == [0] * nranks


def test_placing_processors_turns_messages_between_them_into_copies():
    plan = plan_native(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    placed = place(plan, 8)
    rows = placed.rows[0]  # processors 0 and 1
    assert placed.processors == 16 and placed.heap_bytes[0] == plan.heap_bytes[0] + plan.heap_bytes[1]
    assert [r[0] for r in rows].count(SEND) == 2 * 14  # 15 messages each, one of them to the partner
    assert {r[1] for r in rows if r[0] in (SEND, RECV)} == set(range(1, 8))
    assert [r[0] for r in rows].count(BEGIN) == 1
    with pytest.raises(PhalanxError, match="cannot run 16 processors on 32 MPI ranks"):
        place(plan, 32)


def test_rendezvous_checker_finds_a_deadlock():
    plan = NativePlan(2, [[(RECV, 1, 0, 8, 0), (SEND, 1, 0, 8, 0)],
                          [(RECV, 0, 0, 8, 0), (SEND, 0, 0, 8, 0)]], [8, 8])
    assert _rendezvous(plan) == [-2, -2]


def test_colouring_runs_a_ring_in_two_rounds_of_disjoint_messages():
    ring = [(r, (r + 1) % 16, -1 - r) for r in range(16)]
    order = _colour_messages(ring)
    first = order[:8]
    assert len({r for m in first for r in m[:2]}) == 16  # eight vertex-disjoint messages
    assert sorted(order) == sorted(ring)


def _tree_broadcast() -> Plan:
    """0 -> 1; 0 -> 2, 1 -> 3; 0 -> 4, 1 -> 5, 2 -> 6, 3 -> 7: nodes forward copies."""
    phases = [[(0, 0), (0, 1)], [(0, 2), (1, 3)], [(0, 4), (1, 5), (2, 6), (3, 7)]]
    tree = tuple(Phase.of([Transfer(s, d, 64, 0, d) for s, d in p]) for p in phases)
    return Plan(8, (Schedule(0, Kind.BROADCAST, "tree", 8, tree, "S", "R"),))


def test_forwarded_copies_are_sent_from_where_they_arrived():
    plan = plan_native(plan_to_module(_tree_broadcast()))
    sends = {(rank, r[1]): r[2] for rank, rows in enumerate(plan.rows) for r in rows if r[0] == SEND}
    recvs = {rank: r[2] for rank, rows in enumerate(plan.rows) for r in rows if r[0] == RECV}
    assert sends[(1, 3)] == recvs[1] and sends[(1, 5)] == recvs[1] and sends[(3, 7)] == recvs[3]
    assert len([r for r in plan.rows[0] if r[0] == FILL]) == 1  # one copy of equal content


def test_a_block_its_sender_never_had_is_an_error():
    bad = Plan(4, (Schedule(0, Kind.ALLTOALL, "bad", 4, (Phase.of([Transfer(1, 2, 8, 0, 2)]),)),))
    with pytest.raises(VerifyException, match="node 1 sends block 0->2, which it does not hold"):
        plan_native(plan_to_module(bad))


def test_receiving_in_another_phase_is_an_error():
    t = Transfer(0, 1, 8, 0, 1)
    split = Plan(2, (Schedule(0, Kind.ALLTOALL, "bad", 2, (Phase((t,), ()), Phase((), (t,)))),))
    with pytest.raises(VerifyException, match="received in the phase that sends it"):
        plan_native(plan_to_module(split))


def test_unknown_mpi_implementation_is_a_usage_error():
    with pytest.raises(PhalanxError) as info:
        lower_sched_to_mpi(compile_text(MIXED).stages["sched"], "LAM")
    assert "unknown MPI implementation 'LAM'" in info.value.diagnostic.render()
    assert "OpenMPI, MPICH" in info.value.diagnostic.render()


def test_pattern_is_what_the_emitted_code_computes():
    assert pattern_byte(0, 0) == 1 and pattern_byte(2, 3) == (262 + 21 + 1) & 255
    assert pattern_byte(300, 1) == (300 * 131 + 1 + 7 + 1) & 255


def test_the_pass_is_registered_and_records_the_text():
    module = compile_text(MIXED).stages["sched"].clone()
    PASSES["lower-sched-to-mpi"](mpi="MPICH").apply(Context(), module)
    assert module.attributes["phalanx.mpi_mlir"].data.startswith("module attributes {dlti.map")


@pytest.mark.mlir_opt
@pytest.mark.parametrize("mpi", ["OpenMPI", "MPICH"])
def test_mlir_opt_verifies_and_lowers_everything(mpi):
    text = lower_sched_to_mpi(compile_text(MIXED).stages["sched"], mpi)
    opt = find_tool("mlir-opt-22")
    assert subprocess.run([opt], input=text, capture_output=True, text=True).returncode == 0
    done = subprocess.run([opt, *MLIR_OPT_PASSES], input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "mpi." not in done.stdout.replace("ompi_mpi", "") and "unrealized" not in done.stdout


PIECES = """target ideal:8
processors P(8)
array S(1000) of byte on P(0)
array R(1000) of byte replicated onto P
R = S
"""


def _piece_checks(plan: NativePlan) -> dict[int, list[tuple[int, int]]]:
    """(first byte, bytes) of each piece CHECK row, per rank."""
    return {rank: sorted((r[4], r[2]) for r in rows if r[0] == CHECK)
            for rank, rows in enumerate(plan.rows)}


@pytest.mark.parametrize("algorithm", ["chain", "scatter-allgather"])
def test_pieces_of_a_block_are_checked_from_their_first_byte(algorithm):
    compiled = compile_text(PIECES, algorithm=f"broadcast={algorithm}", cost="closed-form")
    assert any(t.offset > 0 for p in compiled.schedules[0].phases for t in p.sends)
    plan = plan_native(compiled.stages["sched"])
    for rank, checks in _piece_checks(plan).items():  # every byte of the block checked once
        assert sum(n for _, n in checks) == 1000, rank
        assert [first for first, _ in checks] == [sum(n for _, n in checks[:i])
                                                   for i in range(len(checks))]
    assert _rendezvous(plan) == [0] * plan.nprocs
    assert _rendezvous(place(plan, 3)) == [0] * 3


def test_a_piece_its_sender_never_had_is_an_error():
    piece = Transfer(1, 2, 8, 0, 2, offset=8)
    bad = Plan(4, (Schedule(0, Kind.ALLTOALL, "bad", 4, (Phase.of([piece]),)),))
    with pytest.raises(VerifyException, match=r"node 1 sends piece \[8, 16\) of block 0->2, which it "
                                              "does not hold"):
        plan_native(plan_to_module(bad))


def test_emit_mpi_mlir_takes_a_schedule_in_pieces(cli, tmp_path):
    program = tmp_path / "bcast.phx"
    program.write_text(PIECES)
    out = cli("compile", str(program), "--algorithm", "broadcast=chain", "--emit", "mpi-mlir")
    assert out.code == 0, out.err
    assert ("func.func @phx_check(%heap: memref<?xi8>, %off: i64, %len: i64, %cid: i64, "
            "%first: i64)") in out.out
