// RUN: phalanx-opt -p recognize-collectives %s | filecheck %s
//
// A collective in groups: a 3-D array on a 4 x 2 grid goes from (*, BLOCK, BLOCK) to
// (BLOCK, *, BLOCK), so dimensions 1 and 2 trade places within each grid column (the ranks
// with one second coordinate: 0, 2, 4, 6 and 1, 3, 5, 7) and nothing crosses between them.
// Each column is an all-to-all of 64-byte blocks (2 x 2 x 4 float32): `coll.alltoall` in two
// groups of four, the groups listed by size and members.

"builtin.module"() ({
  "dist.processors"() {sym_name = "Q", shape = array<i64: 4, 2>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "X", shape = array<i64: 8, 8, 8>, elem_type = "float32", distribution = ["*", "BLOCK", "BLOCK"], onto = "Q", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.array"() {sym_name = "Y", shape = array<i64: 8, 8, 8>, elem_type = "float32", distribution = ["BLOCK", "*", "BLOCK"], onto = "Q", mapping = "distributed", owner = -1 : i64, line = 4 : i64} : () -> ()
  "dist.assign"() {collective = 0 : i64, dst = "Y", src = "X", op = "copy", perm = array<i64: 0, 1, 2>, shift = array<i64: 0, 0, 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 5 : i64} : () -> ()
}) : () -> ()

// CHECK:      "coll.alltoall"() {collective = 0 : i64, src = "X", dst = "Y", nprocs = 8 : i64,
// CHECK-SAME: byte_matrix = array<i64: 64, 0, 64, 0, 64, 0, 64, 0, 0, 64, 0, 64,
// CHECK-SAME: group_sizes = array<i64: 4, 4>, group_members = array<i64: 0, 2, 4, 6, 1, 3, 5, 7>,
// Each 2 x 2 x 4 block is one run of its sender's 8 x 2 x 4 array but two runs of its
// receiver's 2 x 8 x 4: scattered (2).
// CHECK-SAME: strided = array<i64: 2, 0, 2, 0, 2, 0, 2, 0, 0, 2,
// The sender (c0, c1) holds X(:, 2c0:2c0+1, 4c1:4c1+3), whose element (i, j, k) goes to
// rank 2 (i / 2) + c1: the finals never decrease along its array, so its blocks lie in
// the finals' order, each one run (compiler/layout.py).
// CHECK-SAME: sends_in_rank_order = true, block_bytes = 64 : i64}
// CHECK-NOT:  "dist.assign"
