"""lower-sched-to-mpi: the emitted upstream MLIR (FileCheck), its rows (each node's walk of the plan,
nonblocking messages), deadlock freedom, mlir-opt-22."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.utils.exceptions import VerifyException

from conftest import EXAMPLES, compile_text
from phalanx.compiler.ir.conversion.lower_sched_to_mpi import lower_sched_to_mpi
from phalanx.compiler.ir.conversion.native_rows import (
    BARRIER,
    BEGIN,
    CHECK,
    COMPUTE,
    COPY,
    FILL,
    RECV,
    SEND,
    WAIT,
    NativePlan,
    pattern_byte,
    place,
    plan_native,
)
from phalanx.compiler.ir.dialects.sched import plan_to_module
from phalanx.compiler.ir.passes import PASSES
from phalanx.compiler.kind import Kind
from phalanx.compiler.native import MLIR_OPT_PASSES, find_tool
from phalanx.compiler.schedule import WHOLE, ComputeStep, Phase, Plan, Schedule, SyncMode, Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.sweep import kind_program

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
CHECK: llvm.func @MPI_Isend(!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
CHECK: llvm.func @MPI_Irecv(!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
CHECK: llvm.func @MPI_Waitall(i32, !llvm.ptr, !llvm.ptr) -> i32
CHECK: memref.global "private" constant @rows : memref<{{[0-9]+}}xi64> = dense<[{{[0-9, ]+}}]>
CHECK: memref.global "private" constant @row_start : memref<17xi64> = dense<[0, {{.*}}]>
CHECK: memref.global "private" constant @heap_bytes : memref<16xi64> = dense<[{{.*}}]>
CHECK: func.func @phx_isend(
CHECK: llvm.call @MPI_Isend(%buf, %n, %type, %to, %t, %w, %req)
CHECK: func.func @phx_irecv(
CHECK: llvm.call @MPI_Irecv(%buf, %n, %type, %from, %t, %w, %req)
CHECK: func.func @phx_waitall(
CHECK: %ignore = llvm.mlir.zero : !llvm.ptr
CHECK: llvm.call @MPI_Waitall(%n, %req, %ignore)
CHECK: func.func @phx_step(
CHECK: scf.index_switch %k
CHECK: case 0 {
CHECK-NEXT: func.call @phx_isend(
CHECK: case 1 {
CHECK-NEXT: func.call @phx_irecv(
CHECK: case 9 {
CHECK-NEXT: func.call @phx_waitall(
CHECK: func.func @phx_run(
CHECK: %reqs = memref.alloc(%nreqs_n) : memref<?xi64>
CHECK-NEXT: func.call @phx_null_requests(%reqs, %nreqs)
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
CHECK: func.func @phx_null_requests(
CHECK: %null = llvm.mlir.constant(738197504 : i32) : i32
CHECK: llvm.store %null, %at : i32, !llvm.ptr
CHECK: func.func @phx_isend(
CHECK: %type = llvm.mlir.constant(1275068685 : i32) : i32
CHECK: func.func @phx_waitall(
CHECK: %ignore = llvm.inttoptr %one : i64 to !llvm.ptr
""", tmp_path)


def test_program_size_does_not_grow_with_ranks():
    """Tables indexed by rank, one send op: no branch per rank."""
    src = ("target ideal:256\nprocessors P(256)\narray A(256, 256) of byte distribute (BLOCK, *) onto P\n"
           "array B(256, 256) of byte distribute (*, BLOCK) onto P\nB = A\n")
    big = lower_sched_to_mpi(compile_text(src).stages["sched"])
    small = lower_sched_to_mpi(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    strip = [t.split("memref.global")[0] + t.split("@heap_bytes")[1].split("\n", 1)[1] for t in (big, small)]
    assert big.count("llvm.call @MPI_Isend(") == small.count("llvm.call @MPI_Isend(") == 1
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


def _execute(plan: NativePlan) -> tuple[list[int], int]:
    """Run the rows in Python with MPI's nonblocking semantics at their strictest: a send is done
    only once its receive is posted (its bytes move then); messages of a pair of ranks (one tag)
    match in the order they are posted, and a matched pair must agree on its bytes. Returns the
    positions where ranks stop (row - rows; all 0: the rows cannot deadlock) and the bytes the
    CHECK rows found wrong."""
    at, rows = [0] * plan.nprocs, plan.rows
    heaps = [bytearray(max(h, 1)) for h in plan.heap_bytes]
    pending: dict[tuple[int, int, int], tuple[list, list]] = {}  # (src, dst, tag) -> sends, receives
    active: list[dict[int, list]] = [{} for _ in range(plan.nprocs)]  # rank -> slot -> request
    errors = 0

    def post(rank: int, row) -> None:
        kind, peer, offset, nbytes, tag, slot = row
        assert slot not in active[rank], f"rank {rank} reuses slot {slot} before waiting for it"
        request = [False, nbytes, rank, offset]
        active[rank][slot] = request
        pair = (rank, peer, tag) if kind == SEND else (peer, rank, tag)
        sends, receives = pending.setdefault(pair, ([], []))
        (sends if kind == SEND else receives).append(request)
        while sends and receives:
            s, r = sends.pop(0), receives.pop(0)
            assert s[1] == r[1], f"a message of {s[1]} bytes meets a receive of {r[1]}"
            heaps[r[2]][r[3]:r[3] + r[1]] = heaps[s[2]][s[3]:s[3] + s[1]]
            s[0] = r[0] = True

    def local(rank: int, row) -> None:
        nonlocal errors
        kind, a, b, c, d, _ = row
        heap = heaps[rank]
        if kind == COPY:
            heap[a:a + c] = heap[b:b + c]
        elif kind == FILL:
            heap[a:a + b] = bytes(pattern_byte(c, i) for i in range(b))
        elif kind == CHECK:
            errors += sum(heap[a + i] != pattern_byte(c, d + i) for i in range(b))

    moved = True
    while moved:
        moved = False
        for rank in range(plan.nprocs):
            while at[rank] < len(rows[rank]):
                row = rows[rank][at[rank]]
                if row[0] in (SEND, RECV):
                    post(rank, row)
                elif row[0] == WAIT:
                    slots = range(row[1], row[1] + row[2])
                    if not all(active[rank][s][0] for s in slots if s in active[rank]):
                        break
                    for s in slots:
                        active[rank].pop(s, None)
                elif row[0] == BARRIER:
                    break
                else:
                    local(rank, row)
                at[rank] += 1
                moved = True
        waiting = [r for r in range(plan.nprocs) if at[r] < len(rows[r]) and rows[r][at[r]][0] == BARRIER]
        if waiting and len(waiting) == plan.nprocs:
            at = [a + 1 for a in at]
            moved = True
    return [a - len(rows[r]) for r, a in enumerate(at)], errors


def _progress(plan: NativePlan) -> list[int]:
    """Where the ranks stop (_execute), once every byte checked is right."""
    stops, errors = _execute(plan)
    assert errors == 0
    return stops


@pytest.mark.parametrize("source,target,algorithm", [
    ((EXAMPLES / "transpose.phx").read_text(), None, "auto"),
    ((EXAMPLES / "transpose.phx").read_text(), "hypercube:4", "alltoall=standard"),
    ((EXAMPLES / "fft2d_iwarp.phx").read_text(), None, "alltoall=phased"),
    (MIXED, None, "auto"),
])
def test_nodes_walks_cannot_deadlock(source, target, algorithm):
    plan = plan_native(compile_text(source, target, algorithm).stages["sched"])
    assert _progress(plan) == [0] * plan.nprocs
    for nranks in (plan.nprocs // 2, 3):  # several processors per rank, merged by their rows' keys
        assert _progress(place(plan, nranks)) == [0] * nranks


def test_placing_processors_turns_messages_between_them_into_copies():
    plan = plan_native(compile_text((EXAMPLES / "transpose.phx").read_text()).stages["sched"])
    placed = place(plan, 8)
    rows = placed.rows[0]  # processors 0 and 1
    assert placed.processors == 16 and placed.heap_bytes[0] == plan.heap_bytes[0] + plan.heap_bytes[1]
    assert [r[0] for r in rows].count(SEND) == 2 * 14  # 15 messages each, one of them to the partner
    assert [r[0] for r in rows].count(COPY) == 2 + 2  # the partner's (by its receive) and its own block
    assert {r[1] for r in rows if r[0] in (SEND, RECV)} == set(range(1, 8))
    assert [r[0] for r in rows].count(BEGIN) == 1 and [r[0] for r in rows].count(BARRIER) == 1
    assert placed.slots[0] == plan.slots[0] + plan.slots[1]
    with pytest.raises(PhalanxError, match="cannot run 16 processors on 32 MPI ranks"):
        place(plan, 32)


def test_progress_checker_finds_a_deadlock_and_a_mismatch():
    waits_first = NativePlan(2, [[(RECV, 1, 0, 8, 0, 0), (WAIT, 0, 1, 0, 0, 0), (SEND, 1, 0, 8, 0, 1)],
                                 [(RECV, 0, 0, 8, 0, 0), (WAIT, 0, 1, 0, 0, 0), (SEND, 0, 0, 8, 0, 1)]],
                             [8, 8])
    assert _progress(waits_first) == [-2, -2]
    posted_first = NativePlan(2, [[(RECV, 1, 0, 8, 0, 0), (SEND, 1, 0, 8, 0, 1), (WAIT, 0, 2, 0, 0, 0)],
                                  [(RECV, 0, 0, 8, 0, 0), (SEND, 0, 0, 8, 0, 1), (WAIT, 0, 2, 0, 0, 0)]],
                              [8, 8])
    assert _progress(posted_first) == [0, 0]
    crossed = NativePlan(2, [[(SEND, 1, 0, 8, 0, 0), (SEND, 1, 8, 16, 0, 1), (WAIT, 0, 2, 0, 0, 0)],
                             [(RECV, 0, 0, 16, 0, 0), (RECV, 0, 16, 8, 0, 1), (WAIT, 0, 2, 0, 0, 0)]],
                         [24, 24])
    with pytest.raises(AssertionError, match="a message of 8 bytes meets a receive of 16"):
        _progress(crossed)


def test_a_node_posts_a_phase_before_it_waits_and_eager_sends_stream_into_the_next_wait():
    t = [Transfer(0, 1, 8, 0, 1), Transfer(1, 0, 8, 1, 0)]
    u = [Transfer(0, 1, 8, 1, 0), Transfer(1, 0, 8, 0, 1)]  # forwarded back
    eager = Plan(2, (Schedule(0, Kind.ALLTOALL, "x", 2, (Phase.of(t, SyncMode.EAGER), Phase.of(u))),))
    plan = plan_native(plan_to_module(eager))
    rows = [r for r in plan.rows[0] if r[0] in (SEND, RECV, WAIT)]
    # phase 0: Isend (slot 0), Irecv (slot 1), wait for the receive only; phase 1: both posts, then
    # the wait for phase 0's streaming send, phase 1's send and receive
    assert [(r[0], r[-1] if r[0] != WAIT else (r[1], r[2])) for r in rows] == [
        (SEND, 0), (RECV, 1), (WAIT, (1, 1)), (SEND, 2), (RECV, 3), (WAIT, (0, 1)), (WAIT, (2, 2))]
    assert _progress(plan) == [0, 0]


def test_a_barrier_of_part_of_the_ranks_is_a_dissemination_of_empty_messages():
    t = [Transfer(0, 1, 8, 0, 1), Transfer(1, 0, 8, 1, 0)]
    small = Schedule(0, Kind.ALLTOALL, "x", 2, (Phase.of(t, SyncMode.BARRIER),))
    plan = plan_native(plan_to_module(Plan(4, (ComputeStep("work", 4, 1e-6), small))))  # 4 ranks
    empty = [r for r in plan.rows[0] if r[0] in (SEND, RECV) and r[3] == 0]
    assert [(r[0], r[1]) for r in empty] == [(SEND, 1), (RECV, 1)] * 2  # the BEGIN's and the phase's
    assert BARRIER not in [r[0] for rows in plan.rows for r in rows]
    assert plan.rows[3] == [(COMPUTE, 1000, 0, 0, 0, 0)]
    assert _progress(plan) == [0] * 4
    assert _progress(place(plan, 1)) == [0]


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


def test_receiving_before_the_phase_that_sends_is_an_error():
    t = Transfer(0, 1, 8, 0, 1)
    early = Plan(2, (Schedule(0, Kind.ALLTOALL, "bad", 2, (Phase((), (t,)), Phase((t,), ()))),))
    with pytest.raises(VerifyException, match="received in the phase that sends it or a later one"):
        plan_native(plan_to_module(early))


def test_a_receive_a_phase_later_runs_in_the_sending_phase():
    """An eager phase's receive waited for a phase on (ringreduce.split_step_phases) lowers as if
    received where it is sent: the same message rows as the one-phase schedule."""
    t = Transfer(0, 1, 8, 0, 1)
    late = Plan(2, (Schedule(0, Kind.ALLTOALL, "late", 2, (Phase((t,), ()), Phase((), (t,)))),))
    together = Plan(2, (Schedule(0, Kind.ALLTOALL, "late", 2, (Phase.of([t]), Phase((), ()))),))
    assert plan_native(plan_to_module(late)).rows == plan_native(plan_to_module(together)).rows


def test_a_module_not_lowered_to_sched_is_an_error():
    coll = compile_text((EXAMPLES / "transpose.phx").read_text(), cost="closed-form").stages["coll"]
    with pytest.raises(VerifyException, match="lower-sched-to-mpi: cannot execute 'coll.alltoall': "
                                              "lower it to the sched dialect first"):
        plan_native(coll)


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
    assert _progress(plan) == [0] * plan.nprocs
    assert _progress(place(plan, 3)) == [0] * 3


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


@pytest.mark.parametrize("spec", ["ideal:8", "hypercube:3", "paragon:2x4"])
def test_every_algorithm_of_the_catalog_runs_natively_and_verifies(spec):
    """What the simulator runs, the native rows run (issue 30): every algorithm the target offers
    for each kind (pieces of blocks, forwarding, eager phases among them) finishes with every
    byte right, on a rank per processor and with processors merged onto 3 ranks."""
    target, ran, pieces = resolve(spec), 0, 0
    for kind in ("alltoall", "broadcast", "scatter", "gather", "allgather", "reduce", "allreduce",
                 "cshift", "permutation"):
        for algorithm in target.algorithms(kind):
            try:
                compiled = compile_text(kind_program(kind, 8, 1000), spec, f"{kind}={algorithm}",
                                        cost="closed-form")
            except PhalanxError:  # the algorithm cannot lower this collective here
                continue
            plan = plan_native(compiled.stages["sched"])
            for placed in (plan, place(plan, 3)):
                assert _execute(placed) == ([0] * placed.nprocs, 0), (kind, algorithm)
            ran += 1
            pieces += any(t.offset != WHOLE for s in compiled.schedules for p in s.phases for t in p.sends)
    assert ran >= 30 and pieces >= 5
