// RUN: phalanx-opt -p lower-sched-to-mpi %s | filecheck %s
//
// The nonblocking form: each node's walk of the plan (compiler/plan_walk.py) as rows of
// (kind, a, b, c, d, e). Two nodes swap a block in an eager phase, then send it back in a
// barrier phase. Node 0's rows, in order:
//   FILL 0 8 1          its block (content 1) at heap 0
//   BARRIER             the run's start (MPI_Barrier: the schedule spans every rank), then BEGIN 0
//   SEND 1 0 8 0 0      phase 0: MPI_Isend to 1, request slot 0
//   RECV 1 8 8 0 1      MPI_Irecv from 1 into heap 8, slot 1
//   WAIT 1 1            the eager phase waits for its receive only: its send streams on
//   SEND 1 8 8 0 2      phase 1 forwards what arrived, slot 2
//   RECV 1 16 8 0 3     slot 3
//   WAIT 0 1, WAIT 2 2  MPI_Waitall of phase 0's streaming send, then of phase 1's send and receive
//   BARRIER, END 0      the phase's barrier; the run's clock
//   CHECK 8 8 3 0       the block of node 1 for node 0 (content 3), checked from its first byte

// CHECK: llvm.func @MPI_Isend(!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @MPI_Irecv(!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @MPI_Waitall(i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: @rows : memref<156xi64> = dense<[3, 0, 8, 1, 0, 0, 5, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 1, 1, 8, 8, 0, 1, 9, 1, 1, 0, 0, 0, 0, 1, 8, 8, 0, 2, 1, 1, 16, 8, 0, 3, 9, 0, 1, 0, 0, 0, 9, 2, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 4, 8, 8, 3, 0, 0,
// CHECK: @row_start : memref<3xi64> = dense<[0, 13, 26]>
// CHECK: func.func @phx_isend(
// CHECK: llvm.call @MPI_Isend(%buf, %n, %type, %to, %t, %w, %req)
// CHECK: func.func @phx_irecv(
// CHECK: llvm.call @MPI_Irecv(%buf, %n, %type, %from, %t, %w, %req)
// CHECK: func.func @phx_waitall(
// CHECK: llvm.call @MPI_Waitall(%n, %req, %ignore)
// CHECK: func.func @phx_step(
// CHECK: case 0 {
// CHECK-NEXT: func.call @phx_isend(%heap, %reqs, %a, %b, %c, %d, %e)
// CHECK: case 1 {
// CHECK-NEXT: func.call @phx_irecv(%heap, %reqs, %a, %b, %c, %d, %e)
// CHECK: case 9 {
// CHECK-NEXT: func.call @phx_waitall(%reqs, %a, %b)
// CHECK: %nreqs = arith.constant 4 : i64
// CHECK-NOT: mpi.send
// CHECK-NOT: mpi.recv

builtin.module {
  "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "x", src = "A", dst = "B", nprocs = 2 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["eager", "barrier"], send_offsets = array<i64: 0, 2, 4>, sends = array<i64: 0, 1, 8, 0, 1, 0, -1, 1, 0, 8, 1, 0, 0, -1, 0, 1, 8, 1, 0, 0, -1, 1, 0, 8, 0, 1, 0, -1>, recv_offsets = array<i64: 0, 2, 4>, recvs = array<i64: 0, 1, 8, 0, 1, 0, -1, 1, 0, 8, 1, 0, 0, -1, 0, 1, 8, 1, 0, 0, -1, 1, 0, 8, 0, 1, 0, -1>, barrier_offsets = array<i64: 0, 0, 0>, barrier_sizes = array<i64>, barrier_members = array<i64>} : () -> ()
}
