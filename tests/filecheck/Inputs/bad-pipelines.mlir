// Input of phalanx-opt.mlir: a pipeline header must be followed by its staged ops.
"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 2>, base = 0 : i64, line = 1 : i64} : () -> ()
  "dist.pipeline"() {stages = 2 : i64, line = 2 : i64} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = 5 : i64, line = 3 : i64} : () -> ()
}) : () -> ()
