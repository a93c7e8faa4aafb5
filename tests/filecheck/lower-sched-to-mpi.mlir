// RUN: phalanx-opt -p lower-sched-to-mpi %s | filecheck %s
// RUN: phalanx-opt -p 'lower-sched-to-mpi{mpi=MPICH}' %s | filecheck %s --check-prefix=MPICH
//
// A sched module (transpose of 8x8 float64 on 4 processors, direct exchange) becomes
// upstream MLIR: rank-indexed tables, one MPI_Isend / MPI_Irecv / MPI_Waitall call each, the
// implementation in the module's dlti.map.

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
// CHECK: memref.global "private" constant @row_start : memref<5xi64>
// CHECK: llvm.call @MPI_Isend(
// CHECK: llvm.call @MPI_Irecv(
// CHECK: llvm.call @MPI_Waitall(
// CHECK: func.func @phx_step(
// CHECK: func.func @main() -> i32 {
// CHECK-NEXT: mpi.init
// CHECK: mpi.finalize
// CHECK-NOT: mpi.barrier

// MPICH: #dlti.map<"MPI:Implementation" = "MPICH">
// MPICH-NOT: ompi_mpi

"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["BLOCK", "*"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["*", "BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", src = "A", dst = "B", nprocs = 4 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["local", "local", "local"], send_offsets = array<i64: 0, 8, 12, 16>, sends = array<i64: 0, 0, 32, 0, 0, 0, -1, 1, 1, 32, 1, 1, 0, -1, 2, 2, 32, 2, 2, 0, -1, 3, 3, 32, 3, 3, 0, -1, 0, 1, 32, 0, 1, 0, -1, 1, 0, 32, 1, 0, 0, -1, 2, 3, 32, 2, 3, 0, -1, 3, 2, 32, 3, 2, 0, -1, 0, 2, 32, 0, 2, 0, -1, 1, 3, 32, 1, 3, 0, -1, 2, 0, 32, 2, 0, 0, -1, 3, 1, 32, 3, 1, 0, -1, 0, 3, 32, 0, 3, 0, -1, 1, 2, 32, 1, 2, 0, -1, 2, 1, 32, 2, 1, 0, -1, 3, 0, 32, 3, 0, 0, -1>, recv_offsets = array<i64: 0, 8, 12, 16>, recvs = array<i64: 0, 0, 32, 0, 0, 0, -1, 1, 1, 32, 1, 1, 0, -1, 2, 2, 32, 2, 2, 0, -1, 3, 3, 32, 3, 3, 0, -1, 0, 1, 32, 0, 1, 0, -1, 1, 0, 32, 1, 0, 0, -1, 2, 3, 32, 2, 3, 0, -1, 3, 2, 32, 3, 2, 0, -1, 0, 2, 32, 0, 2, 0, -1, 1, 3, 32, 1, 3, 0, -1, 2, 0, 32, 2, 0, 0, -1, 3, 1, 32, 3, 1, 0, -1, 0, 3, 32, 0, 3, 0, -1, 1, 2, 32, 1, 2, 0, -1, 2, 1, 32, 2, 1, 0, -1, 3, 0, 32, 3, 0, 0, -1>, barrier_offsets = array<i64: 0, 0, 0, 0>, barrier_sizes = array<i64>, barrier_members = array<i64>} : () -> ()
}) : () -> ()
