// RUN: phalanx-opt %s | filecheck %s
// RUN: phalanx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: phalanx-opt %s --print-op-generic | phalanx-opt - -p recognize-collectives | filecheck %s --check-prefix=PIPE
// RUN: not phalanx-opt %S/Inputs/missing-attribute.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not phalanx-opt %s -p 'recognize-collectives,,verify-schedule' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not phalanx-opt %s -p 'no-such-pass' 2>&1 | filecheck %s --check-prefix=NOPASS
// RUN: not phalanx-opt %S/Inputs/bad-pipelines.mlir 2>&1 | filecheck %s --check-prefix=STAGE
// RUN: not phalanx-opt %S/Inputs/empty-pipeline.mlir 2>&1 | filecheck %s --check-prefix=HEADLESS
//
// The tool without passes: parse, verify, print (custom module syntax by default, MLIR's
// generic form on request); stdin with `-`; errors as one message with exit code 1 (bad
// IR) or 2 (bad usage). A pipeline is a header op followed by its staged ops.

"builtin.module"() ({
  "dist.processors"() {sym_name = "P", shape = array<i64: 2>, base = 0 : i64, line = 1 : i64} : () -> ()
  "dist.array"() {sym_name = "A", shape = array<i64: 4>, elem_type = "int32", distribution = ["BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 2 : i64} : () -> ()
  "dist.array"() {sym_name = "B", shape = array<i64: 4>, elem_type = "int32", distribution = ["CYCLIC"], onto = "P", mapping = "distributed", owner = -1 : i64, line = 3 : i64} : () -> ()
  "dist.assign"() {collective = 0 : i64, dst = "B", src = "A", op = "copy", perm = array<i64: 0>, shift = array<i64: 0>, split_dim = -1 : i64, window = array<i64>, dst_section = array<i64>, src_section = array<i64>, stage = -1 : i64, line = 4 : i64} : () -> ()
}) : () -> ()

// CHECK:      builtin.module {
// CHECK-NEXT:   "dist.processors"() {sym_name = "P", shape = array<i64: 2>, base = 0 : i64, line = 1 : i64} : () -> ()
// CHECK:        "dist.assign"() {collective = 0 : i64, dst = "B", src = "A", op = "copy"

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "dist.processors"()
// GENERIC:      }) : () -> ()

// BLOCK to CYCLIC on 2: each processor keeps one of its two int32 and sends the other.
// PIPE: "coll.alltoall"() {collective = 0 : i64, src = "A", dst = "B", nprocs = 2 : i64, byte_matrix = array<i64: 4, 4, 4, 4>

// MISSING: phalanx-opt: error: {{.*}}missing-attribute.mlir: attribute 'shape' expected in operation 'dist.processors'

// EMPTY: phalanx-opt: error: empty pass name in pipeline 'recognize-collectives,,verify-schedule'

// NOPASS: phalanx-opt: error: unknown pass 'no-such-pass'
// NOPASS-NEXT: hint: passes: {{.*}}lower-coll-to-sched, {{.*}}recognize-collectives, verify-schedule

// STAGE: phalanx-opt: error: {{.*}}'dist.pipeline' has 2 stages but 'dist.compute' that follows it is in stage 5

// HEADLESS: phalanx-opt: error: {{.*}}'sched.pipeline' must be followed by its staged ops (stage >= 0)
