// Input of phalanx-opt.mlir: dist.processors without its shape.
"dist.processors"() {sym_name = "P", line = 1 : i64} : () -> ()
