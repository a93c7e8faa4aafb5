// RUN: phalanx-opt -p 'recognize-collectives,lower-coll-to-sched{target=hypercube:3 algorithm=alltoall=standard},verify-schedule' %s | filecheck %s
// RUN: not phalanx-opt -p verify-schedule %S/Inputs/barrier-groups-on-local-phase.mlir 2>&1 | filecheck %s --check-prefix=LOCAL
//
// A collective in groups keeps each group's barriers its own: an all-to-all in two groups
// of four (the grid columns 0, 2, 4, 6 and 1, 3, 5, 7, as in recognize-groups.mlir) by the
// standard exchange has two barrier phases (one before each of its d = 2 steps), and each
// is scoped to the two groups (barrier_offsets: phases 0 and 2 have two groups each), so
// a group waits for its own four members only, at a 4-node barrier (compiler/groups.py).
// A barrier group on a local phase has no barrier to scope: the verifier says so.

"builtin.module"() ({
  "dist.processors"() {sym_name = "Q", shape = array<i64: 4, 2>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "X", shape = array<i64: 8, 8, 8>, elem_type = "float32", distribution = ["*", "BLOCK", "BLOCK"], onto = "Q", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "Y", shape = array<i64: 8, 8, 8>, elem_type = "float32", distribution = ["BLOCK", "*", "BLOCK"], onto = "Q", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "dist.assign"() {collective = 0 : i64, dst = "Y", src = "X", op = "copy", perm = array<i64: 0, 1, 2>, shift = array<i64: 0, 0, 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 5 : i64} : () -> ()
}) : () -> ()

// CHECK:      "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "standard",
// CHECK-SAME: phase_sync = ["barrier", "local", "barrier", "local"]
// CHECK-SAME: barrier_offsets = array<i64: 0, 2, 2, 4, 4>, barrier_sizes = array<i64: 4, 4, 4, 4>,
// CHECK-SAME: barrier_members = array<i64: 0, 2, 4, 6, 1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7>}

// LOCAL: phalanx-opt: error: {{.*}}phase 0 is local but has barrier groups (only a barrier phase is scoped to groups)
