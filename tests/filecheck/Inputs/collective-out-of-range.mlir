// The only statement claims collective 1 (recognize-collectives.mlir's OUTSIDE).
"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 2>, base = 0 : i64, line = 1 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 4>, elem_type = "int32", distribution = ["BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 4>, elem_type = "int32", distribution = ["CYCLIC"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.assign"() {collective = 1 : i64, dst = "A", src = "B", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 5 : i64} : () -> ()
}) : () -> ()
