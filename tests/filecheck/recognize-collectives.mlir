// RUN: phalanx-opt -p recognize-collectives %s | filecheck %s
// RUN: not phalanx-opt -p recognize-collectives %S/Inputs/repeated-collective.mlir 2>&1 | filecheck %s --check-prefix=REPEATED
// RUN: not phalanx-opt -p recognize-collectives %S/Inputs/collective-out-of-range.mlir 2>&1 | filecheck %s --check-prefix=OUTSIDE
//
// Each dist.assign / dist.reduce becomes the coll op of its collective kind, with the exact
// byte matrix (row i: what processor i sends; diagonal: what stays local), the root of a
// rooted collective and the collective's index: the statement's own (`collective` of its dist
// op), which must number the statements 0..n-1, each once. Declarations, compute steps and
// the pipeline header stay; the staged ops keep their stage.

"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["BLOCK", "*"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 8, 8>, elem_type = "float64", distribution = ["*", "BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "dist.array"() {sym_name = "S", shape = array<i64: 8>, elem_type = "float32", distribution = [], onto = "P", mapping = "single", owner = 0 : i64, line = 5 : i64} : () -> ()
  "dist.array"() {sym_name = "R", shape = array<i64: 8>, elem_type = "float32", distribution = [], onto = "P", mapping = "replicated", owner = -1 : i64, line = 6 : i64} : () -> ()
  "dist.array"() {sym_name = "C", shape = array<i64: 8>, elem_type = "float32", distribution = ["CYCLIC"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 7 : i64} : () -> ()
  "dist.array"() {sym_name = "s", shape = array<i64: 1>, elem_type = "float32", distribution = [], onto = "P", mapping = "replicated", owner = -1 : i64, line = 8 : i64} : () -> ()
  "dist.array"() {sym_name = "t", shape = array<i64: 1>, elem_type = "float32", distribution = [], onto = "P", mapping = "single", owner = 2 : i64, line = 9 : i64} : () -> ()
  "dist.compute"() {label = "rows", onto = "P", cost_s = 1.000000e-03 : f64, stage = -1 : i64, line = 10 : i64} : () -> ()
  "dist.assign"() {collective = 0 : i64, dst = "B", src = "A", op = "copy", perm = array<i64: 0, 1>, shift = array<i64: 0, 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 11 : i64} : () -> ()
  "dist.assign"() {collective = 1 : i64, dst = "R", src = "S", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 12 : i64} : () -> ()
  "dist.assign"() {collective = 2 : i64, dst = "S", src = "C", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 13 : i64} : () -> ()
  "dist.assign"() {collective = 3 : i64, dst = "C", src = "S", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 14 : i64} : () -> ()
  "dist.assign"() {collective = 4 : i64, dst = "R", src = "C", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 15 : i64} : () -> ()
  "dist.assign"() {collective = 5 : i64, dst = "C", src = "C", op = "cshift", perm = array<i64: 0>, shift = array<i64: 1>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 16 : i64} : () -> ()
  "dist.reduce"() {collective = 6 : i64, dst = "s", src = "C", op = "sum", line = 17 : i64} : () -> ()
  "dist.reduce"() {collective = 7 : i64, dst = "t", src = "C", op = "max", line = 18 : i64} : () -> ()
  "dist.pipeline"() {stages = 2 : i64, line = 19 : i64} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = 0 : i64, line = 20 : i64} : () -> ()
  "dist.assign"() {collective = 8 : i64, dst = "B", src = "A", op = "copy", perm = array<i64: 0, 1>, shift = array<i64: 0, 0>, split_dim = 0 : i64, window = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, dst_section = array<i64>, src_section = array<i64>, stage = 0 : i64, line = 21 : i64} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = 1 : i64, line = 20 : i64} : () -> ()
  "dist.assign"() {collective = 9 : i64, dst = "B", src = "A", op = "copy", perm = array<i64: 0, 1>, shift = array<i64: 0, 0>, split_dim = 1 : i64, window = array<i64: 4, 8>, dst_section = array<i64>, src_section = array<i64>, stage = 1 : i64, line = 21 : i64} : () -> ()
}) : () -> ()

// CHECK:      "dist.compute"() {label = "rows"
// 8x8 float64 rows to columns on 4: every pair exchanges a 2x2 block of 8-byte elements,
// two pieces of rows of the sender's 2 x 8 array (gathered: 1), whole rows of the
// receiver's 8 x 2 (one run: not scattered). Each of the sender's two rows runs through
// the finals 0..3 again: its blocks are not in the finals' order (sends_in_rank_order false).
// CHECK-NEXT: "coll.alltoall"() {collective = 0 : i64, src = "A", dst = "B", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32>, line = 11 : i64, root = -1 : i64, stage = -1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1>, sends_in_rank_order = false, block_bytes = 32 : i64}
// The single owner's 8 float32 to every processor.
// CHECK-NEXT: "coll.broadcast"() {collective = 1 : i64, src = "S", dst = "R", nprocs = 4 : i64, byte_matrix = array<i64: 32, 32, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, line = 12 : i64, root = 0 : i64
// Two cyclic elements of each processor concatenated on the owner, and back.
// CHECK-NEXT: "coll.gather"() {collective = 2 : i64, src = "C", dst = "S", nprocs = 4 : i64, byte_matrix = array<i64: 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0>, line = 13 : i64, root = 0 : i64
// CHECK-NEXT: "coll.scatter"() {collective = 3 : i64, src = "S", dst = "C", nprocs = 4 : i64, byte_matrix = array<i64: 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, line = 14 : i64, root = 0 : i64
// CHECK-NEXT: "coll.allgather"() {collective = 4 : i64, src = "C", dst = "R", nprocs = 4 : i64, byte_matrix = array<i64: 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8>, line = 15 : i64, root = -1 : i64
// cshift by 1 on CYCLIC: processor p receives from p + 1 (row i sends to i - 1).
// CHECK-NEXT: "coll.cshift"() {collective = 5 : i64, src = "C", dst = "C", nprocs = 4 : i64, byte_matrix = array<i64: 0, 0, 0, 8, 8, 0, 0, 0, 0, 8, 0, 0, 0, 0, 8, 0>, line = 16 : i64
// One float32 partial per processor to every processor, or to the owner of t (rank 2).
// CHECK-NEXT: "coll.allreduce"() {collective = 6 : i64, src = "C", dst = "s", nprocs = 4 : i64, byte_matrix = array<i64: 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4>, line = 17 : i64, root = -1 : i64
// CHECK-NEXT: "coll.reduce"() {collective = 7 : i64, src = "C", dst = "t", nprocs = 4 : i64, byte_matrix = array<i64: 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0>, line = 18 : i64, root = 2 : i64
// CHECK-NEXT: "dist.pipeline"() {stages = 2 : i64, line = 19 : i64}
// CHECK-NEXT: "dist.compute"() {label = "k", {{.*}} stage = 0 : i64
// Stage 0 moves rows 0, 2, 4 and 6 of B (split_dim 0): one of each processor's two rows of
// A, so every processor still sends to every other one, half a block each.
// CHECK-NEXT: "coll.alltoall"() {collective = 8 : i64, {{.*}} byte_matrix = array<i64: 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16>, line = 21 : i64, root = -1 : i64, stage = 0 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, sends_in_rank_order = false, block_bytes = 16 : i64}
// CHECK-NEXT: "dist.compute"() {label = "k", {{.*}} stage = 1 : i64
// A window along dimension 1 (split_dim 1): columns [4, 8) of B, which processors 2 and 3
// hold in B: only they receive.
// CHECK-NEXT: "coll.sparse"() {collective = 9 : i64, {{.*}} byte_matrix = array<i64: 0, 0, 32, 32, 0, 0, 32, 32, 0, 0, 32, 32, 0, 0, 32, 32>, {{.*}} stage = 1 : i64, group_sizes = array<i64>, group_members = array<i64>, strided = array<i64: 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1>, sends_in_rank_order = false}
// CHECK-NOT:  "dist.assign"
// CHECK-NOT:  "dist.reduce"

// REPEATED: phalanx-opt: error: pass 'recognize-collectives' failed: 'dist.assign' of line 5: collective = 0 is also the statement's of line 4; each statement has its own
// OUTSIDE: phalanx-opt: error: pass 'recognize-collectives' failed: 'dist.assign' of line 5: collective = 1 is outside 0..0 (the module's 1 statements)
