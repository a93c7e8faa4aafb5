// Input of phalanx-opt.mlir: a sched.pipeline header with no staged op after it.
"builtin.module"() ({
  "sched.pipeline"() {stages = 2 : i64, line = 2 : i64} : () -> ()
  "sched.compute"() {label = "k", first = 0 : i64, nprocs = 2 : i64, cost_s = 1.000000e-03 : f64, line = 3 : i64, stage = -1 : i64} : () -> ()
}) : () -> ()
