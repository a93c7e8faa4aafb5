// RUN: phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 algorithm=direct}' %s | filecheck %s
// RUN: phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 algorithm=sparse=direct}' %s | filecheck %s --check-prefix=AUTO
// RUN: not phalanx-opt -p 'lower-coll-to-sched{target=nosuch:4}' %s 2>&1 | filecheck %s --check-prefix=BADTARGET
// RUN: not phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 algorithm=alltoall=phased}' %s 2>&1 | filecheck %s --check-prefix=BADALG
// RUN: phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 cost=simgrid}' %s | filecheck %s --check-prefix=AUTO
// RUN: not phalanx-opt -p 'lower-coll-to-sched{target=ideal:4 cost=wormhole}' %s 2>&1 | filecheck %s --check-prefix=BADCOST
//
// Each coll op becomes one sched.schedule whose phases are i64 tables of
// (src, dst, bytes, origin, final, message) rows; dist.compute becomes sched.compute with
// the arrangement's processor count; the pipeline header becomes sched.pipeline and its
// staged ops keep their stage. Declarations stay.

"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["BLOCK", "*"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["*", "BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "dist.array"() {sym_name = "S", shape = array<i64: 8>, elem_type = "float32", distribution = [], onto = "P", mapping = "single", owner = 0 : i64, line = 5 : i64} : () -> ()
  "dist.array"() {sym_name = "R", shape = array<i64: 8>, elem_type = "float32", distribution = [], onto = "P", mapping = "replicated", owner = -1 : i64, line = 6 : i64} : () -> ()
  "dist.compute"() {label = "rows", onto = "P", cost_s = 1.000000e-03 : f64, stage = -1 : i64, line = 10 : i64} : () -> ()
  "coll.alltoall"() {collective = 0 : i64, src = "A", dst = "B", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32>, line = 11 : i64, root = -1 : i64, stage = -1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false, block_bytes = 32 : i64} : () -> ()
  "coll.broadcast"() {collective = 1 : i64, src = "S", dst = "R", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, line = 12 : i64, root = 0 : i64, stage = -1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false} : () -> ()
  "dist.pipeline"() {stages = 2 : i64, line = 19 : i64} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = 0 : i64, line = 20 : i64} : () -> ()
  "coll.sparse"() {collective = 2 : i64, src = "A", dst = "B", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 32, 32, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0>, line = 21 : i64, root = -1 : i64, stage = 0 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = 1 : i64, line = 20 : i64} : () -> ()
  "coll.sparse"() {collective = 3 : i64, src = "A", dst = "B", nprocs = 4 : i64, byte_matrix = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 32, 32, 32, 32, 32, 32, 32, 32>, line = 21 : i64, root = -1 : i64, stage = 1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false} : () -> ()
}) : () -> ()

// CHECK:      "dist.array"() {sym_name = "R"
// CHECK-NEXT: "sched.compute"() {label = "rows", first = 0 : i64, nprocs = 4 : i64, cost_s = 1.000000e-03 : f64, line = 10 : i64, stage = -1 : i64}
// direct on 4 = 2^2 processors: phase k pairs p with p XOR k, phase 1 with each node's local
// block just before its send (the order the runtime walks a phase in).
// CHECK-NEXT: "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", src = "A", dst = "B", nprocs = 4 : i64, line = 11 : i64, stage = -1 : i64, phase_sync = ["local", "local", "local"], send_offsets = array<i64: 0, 8, 12, 16>,
// CHECK-SAME: sends = array<i64: 0, 0, 32, 0, 0, 0, -1, 0, 1, 32, 0, 1, 0, -1, 1, 1, 32, 1, 1, 0, -1, 1, 0, 32, 1, 0, 0, -1, 2, 2, 32, 2, 2, 0, -1, 2, 3, 32, 2, 3, 0, -1, 3, 3, 32, 3, 3, 0, -1, 3, 2, 32, 3, 2, 0, -1, 0, 2, 32, 0, 2, 0, -1, 1, 3, 32, 1, 3, 0, -1, 2, 0, 32, 2, 0, 0, -1, 3, 1, 32, 3, 1, 0, -1, 0, 3, 32, 0, 3, 0, -1,
// CHECK-SAME: recv_offsets = array<i64: 0, 8, 12, 16>
// The root's 32 bytes to each of the others, one per phase.
// CHECK-NEXT: "sched.schedule"() {collective = 1 : i64, kind = "broadcast", algorithm = "direct", src = "S", dst = "R", {{.*}} stage = -1 : i64, phase_sync = ["local", "local", "local"], send_offsets = array<i64: 0, 2, 3, 4>, sends = array<i64: 0, 0, 32, 0, 0, 0, -1, 0, 1, 32, 0, 1, 0, -1, 0, 2, 32, 0, 2, 0, -1, 0, 3, 32, 0, 3, 0, -1>
// CHECK-NEXT: "sched.pipeline"() {stages = 2 : i64, line = 19 : i64}
// CHECK-NEXT: "sched.compute"() {label = "k", {{.*}} stage = 0 : i64}
// CHECK-NEXT: "sched.schedule"() {collective = 2 : i64, kind = "sparse", algorithm = "direct", {{.*}} stage = 0 : i64,
// CHECK-NEXT: "sched.compute"() {label = "k", {{.*}} stage = 1 : i64}
// CHECK-NEXT: "sched.schedule"() {collective = 3 : i64, kind = "sparse", algorithm = "direct", {{.*}} stage = 1 : i64,
// CHECK-NOT:  "coll.
// CHECK-NOT:  "dist.compute"
// CHECK-NOT:  "dist.pipeline"

// AUTO: "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "{{direct|bruck}}"
// AUTO: "sched.schedule"() {collective = 2 : i64, kind = "sparse", algorithm = "{{direct|bruck}}"

// BADTARGET: phalanx-opt: error: unknown target 'nosuch' in spec 'nosuch:4'
// BADTARGET-NEXT: hint: known targets: {{.*}}ideal

// BADALG: phalanx-opt: error: unknown algorithm 'phased' for an alltoall on target 'ideal:4'
// BADALG-NEXT: hint: choose one of: auto, direct{{.*}}
// BADCOST: phalanx-opt: error: unknown cost model 'wormhole'
// BADCOST-NEXT: hint: choose one of: target, closed-form, simgrid
