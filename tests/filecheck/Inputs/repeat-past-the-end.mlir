"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, line = 2 : i64} : () -> ()
  "dist.repeat"() {count = 2 : i64, ops = 3 : i64, line = 3 : i64} : () -> ()
  "dist.compute"() {label = "k", onto = "P", cost_s = 1.000000e-03 : f64, stage = -1 : i64, line = 4 : i64} : () -> ()
}) : () -> ()
