// RUN: phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 algorithm=direct}' %s | filecheck %s
// RUN: not phalanx-opt %S/Inputs/repeat-past-the-end.mlir 2>&1 | filecheck %s --check-prefix=SHORT
//
// `repeat 20000 { B = A; A = B }` stays a loop: the dist.repeat header becomes a sched.repeat
// with the same count and body length, and each statement of the body is one schedule.

"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["BLOCK", "*"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["*", "BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "dist.repeat"() {count = 20000 : i64, ops = 2 : i64, line = 5 : i64} : () -> ()
  "coll.alltoall"() {collective = 0 : i64, src = "A", dst = "B", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32>, line = 6 : i64, root = -1 : i64, stage = -1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false, block_bytes = 32 : i64} : () -> ()
  "coll.alltoall"() {collective = 1 : i64, src = "B", dst = "A", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32>, line = 7 : i64, root = -1 : i64, stage = -1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false, block_bytes = 32 : i64} : () -> ()
}) : () -> ()

// CHECK:      "sched.repeat"() {count = 20000 : i64, ops = 2 : i64, line = 5 : i64}
// CHECK-NEXT: "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct"
// CHECK-NEXT: "sched.schedule"() {collective = 1 : i64, kind = "alltoall", algorithm = "direct"
// CHECK-NEXT: }

// SHORT: 'dist.repeat' has a body of 3 ops but only 1 follow it
