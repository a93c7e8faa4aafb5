// RUN: phalanx-opt -p verify-schedule %s | filecheck %s
// RUN: phalanx-opt -p 'verify-schedule{target=ideal:2}' %s | filecheck %s
// RUN: not phalanx-opt -p verify-schedule %S/Inputs/unmatched-send.mlir 2>&1 | filecheck %s --check-prefix=UNMATCHED
// RUN: phalanx-opt -p verify-schedule %S/Inputs/eager-phases.mlir | filecheck %s --check-prefix=EAGER
// RUN: not phalanx-opt %s -p 'verify-schedule{target=ideal:2 strict=1}' 2>&1 | filecheck %s --check-prefix=BADOPT
//
// verify-schedule leaves a well-formed module unchanged: every send has its receive
// (same row in the same phase), nodes are in range, blocks are not empty; with `target`
// also the target's own proofs. A malformed schedule is an error naming the collective.

"builtin.module"() ({
  "sched.compute"() {label = "k", first = 0 : i64, nprocs = 2 : i64, cost_s = 2.500000e-04 : f64, line = 4 : i64, stage = -1 : i64} : () -> ()
  "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", src = "A", dst = "B", nprocs = 2 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["local", "barrier"], send_offsets = array<i64: 0, 2, 4>, sends = array<i64: 0, 0, 16, 0, 0, 0, -1, 1, 1, 16, 1, 1, 0, -1, 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, recv_offsets = array<i64: 0, 2, 4>, recvs = array<i64: 0, 0, 16, 0, 0, 0, -1, 1, 1, 16, 1, 1, 0, -1, 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, barrier_offsets = array<i64: 0, 0, 0>, barrier_sizes = array<i64>, barrier_members = array<i64>} : () -> ()
}) : () -> ()

// CHECK:      "sched.compute"() {label = "k", first = 0 : i64, nprocs = 2 : i64, cost_s = 2.500000e-04 : f64, line = 4 : i64, stage = -1 : i64}
// CHECK-NEXT: "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", {{.*}} phase_sync = ["local", "barrier"], send_offsets = array<i64: 0, 2, 4>, sends = array<i64: 0, 0, 16, 0, 0, 0, -1, 1, 1, 16, 1, 1, 0, -1, 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, recv_offsets = array<i64: 0, 2, 4>,

// An eager phase (compiler/schedule.py SyncMode) verifies and prints as it was written.
// EAGER: "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", {{.*}} phase_sync = ["eager", "local"],

// UNMATCHED: phalanx-opt: error: pass 'verify-schedule' failed: schedule of collective 0: sends and receives do not match: 2 sends, 1 receives

// BADOPT: phalanx-opt: error: unknown option 'strict' of pass 'verify-schedule'
// BADOPT-NEXT: hint: its options: target
