"""`lower-sched-to-mpi{mpi=OpenMPI}`: a `sched` module as an upstream-MLIR MPI program.

Input: a module after lower-coll-to-sched (`sched.schedule`, `sched.compute`,
`sched.pipeline`, `sched.repeat`, `dist.*` declarations). Output: MLIR text in upstream dialects
only (`func`, `scf`, `arith`, `memref`, `mpi`, `llvm`) that `mlir-opt-22 --convert-scf-to-cf
--convert-to-llvm --reconcile-unrealized-casts` lowers completely; compiler/native.py
builds it into an executable.

The program is a small interpreter over constant tables, so it stays small for any
number of ranks: rank r runs rows `row_start[r] .. row_start[r+1]` of `@rows`, the rows of
its node's walk of the plan (native_rows.py: the walk of compiler/plan_walk.py, which the
simulator and the MPI and SimGrid workers take), over one byte heap and one array of MPI
requests per rank. Messages are nonblocking (MPI_Isend, MPI_Irecv, then MPI_Waitall per
phase), so the nodes' own orders cannot deadlock.
What MLIR 22 does not lower (comm_size, barrier, wtime, the nonblocking calls and their
requests) is called through `llvm.call`. xDSL has no upstream `mpi` dialect, so the pass
records the text in the module's `phalanx.mpi_mlir` attribute; `lower_sched_to_mpi` returns
it directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from phalanx.compiler.ir.conversion.native_rows import (
    BARRIER,
    BEGIN,
    CHECK,
    COMPUTE,
    COPY,
    END,
    FILL,
    RECV,
    ROW_FIELDS,
    SEND,
    WAIT,
    NativePlan,
    place,
    plan_native,
)
from phalanx.grammar.diagnostics import usage_error

MPI_IMPLEMENTATIONS = ("OpenMPI", "MPICH")

# MPI handles for what we call through `llvm.call`. MPICH's are ints in its mpi.h; OpenMPI's
# are addresses of these globals (MLIR 22 lowers mpi.allreduce's MPI_MAX/MPI_SUM to the
# wrong OpenMPI symbols `ompi_mpi_max` / `ompi_mpi_sum`, so we call MPI_Allreduce ourselves).
MPICH_HANDLES = {"comm_world": 0x44000000, "double": 0x4C00080B, "int64_t": 0x4C00083A,
                 "op_max": 0x58000001, "op_sum": 0x58000003, "byte": 0x4C00010D,
                 "request_null": 0x2C000000}
OPENMPI_SYMBOLS = {"comm_world": "ompi_mpi_comm_world", "double": "ompi_mpi_double",
                   "int64_t": "ompi_mpi_int64_t", "op_max": "ompi_mpi_op_max", "op_sum": "ompi_mpi_op_sum",
                   "byte": "ompi_mpi_byte", "request_null": "ompi_request_null"}
# MPI_STATUSES_IGNORE: (MPI_Status *) 1 in MPICH's mpi.h, a null pointer in OpenMPI's
STATUSES_IGNORE = {"MPICH": "%one = llvm.mlir.constant(1 : i64) : i64\n"
                            "    %ignore = llvm.inttoptr %one : i64 to !llvm.ptr",
                   "OpenMPI": "%ignore = llvm.mlir.zero : !llvm.ptr"}


def _handle(mpi: str, ssa: str, name: str) -> str:
    if mpi == "MPICH":
        return f"%{ssa} = llvm.mlir.constant({MPICH_HANDLES[name]} : i32) : i32"
    return f"%{ssa} = llvm.mlir.addressof @{OPENMPI_SYMBOLS[name]} : !llvm.ptr"


def _handle_globals(mpi: str) -> str:
    if mpi == "MPICH":
        return ""
    return "".join(f"  llvm.mlir.global external @{sym}() {{addr_space = 0 : i32}} : !llvm.struct<(i8)>\n"
                   for sym in OPENMPI_SYMBOLS.values())


def _point_to_point(name: str, mpi_call: str, peer: str) -> str:
    """MLIR of phx_isend / phx_irecv: the same arguments (a heap offset and length, the peer,
    the tag, the request slot), one non-blocking MPI call apart."""
    return f"""\
  func.func @{name}(%heap: memref<?xi8>, %reqs: memref<?xi64>, %peer: i64, %off: i64, %len: i64, %tag: i64, %slot: i64) {{
    %buf = func.call @phx_at(%heap, %off) : (memref<?xi8>, i64) -> !llvm.ptr
    %req = func.call @phx_request(%reqs, %slot) : (memref<?xi64>, i64) -> !llvm.ptr
    %n = arith.trunci %len : i64 to i32
    %{peer} = arith.trunci %peer : i64 to i32
    %t = arith.trunci %tag : i64 to i32
    $world
    $byte
    %rc = llvm.call @{mpi_call}(%buf, %n, %type, %{peer}, %t, %w, %req) : (!llvm.ptr, i32, $comm_type, i32, i32, $comm_type, !llvm.ptr) -> i32
    return
  }}
"""  # noqa: E501  (MLIR lines)


POINT_TO_POINT = (_point_to_point("phx_isend", "MPI_Isend", "to")
                  + _point_to_point("phx_irecv", "MPI_Irecv", "from"))


_PROGRAM = Template("""\
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "$mpi">} {
$handle_globals  llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, $comm_type, $comm_type, $comm_type) -> i32
  llvm.func @MPI_Comm_size($comm_type, !llvm.ptr) -> i32
  llvm.func @MPI_Barrier($comm_type) -> i32
  llvm.func @MPI_Isend(!llvm.ptr, i32, $comm_type, i32, i32, $comm_type, !llvm.ptr) -> i32
  llvm.func @MPI_Irecv(!llvm.ptr, i32, $comm_type, i32, i32, $comm_type, !llvm.ptr) -> i32
  llvm.func @MPI_Waitall(i32, !llvm.ptr, !llvm.ptr) -> i32
  llvm.func @MPI_Wtime() -> f64
  llvm.func @printf(!llvm.ptr, ...) -> i32
  llvm.mlir.global internal constant @fmt_head("{\\22backend\\22: \\22mpi-native\\22, \\22mpi\\22: \\22$mpi\\22, \\22nprocs\\22: %d, \\22processors\\22: $processors, \\22time_s\\22: %.9e, \\22verified\\22: %s, \\22errors\\22: %lld, \\22collective_time_s\\22: [\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_item("%s%.9e\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_tail("]}\\0A\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_size("phalanx-native: built for %d ranks but started on %d; run it with mpirun -n %d\\0A\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @str_true("true\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @str_false("false\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @str_empty("\\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @str_comma(", \\00") {addr_space = 0 : i32}
  memref.global "private" constant @rows : memref<${nrows}xi64> = dense<[$rows]>
  memref.global "private" constant @row_start : memref<${nstarts}xi64> = dense<[$row_start]>
  memref.global "private" constant @heap_bytes : memref<${nprocs}xi64> = dense<[$heap_bytes]>
  func.func @phx_comm_size() -> i32 {
    $world
    %one = llvm.mlir.constant(1 : i64) : i64
    %p = llvm.alloca %one x i32 : (i64) -> !llvm.ptr
    %rc = llvm.call @MPI_Comm_size(%w, %p) : ($comm_type, !llvm.ptr) -> i32
    %size = llvm.load %p : !llvm.ptr -> i32
    return %size : i32
  }
  func.func @phx_barrier() {
    $world
    %rc = llvm.call @MPI_Barrier(%w) : ($comm_type) -> i32
    return
  }
  func.func @phx_max_times(%in: memref<${ntimes}xf64>, %out: memref<${ntimes}xf64>) {
    %in_i = memref.extract_aligned_pointer_as_index %in : memref<${ntimes}xf64> -> index
    %out_i = memref.extract_aligned_pointer_as_index %out : memref<${ntimes}xf64> -> index
    %in_64 = arith.index_cast %in_i : index to i64
    %out_64 = arith.index_cast %out_i : index to i64
    %send = llvm.inttoptr %in_64 : i64 to !llvm.ptr
    %recv = llvm.inttoptr %out_64 : i64 to !llvm.ptr
    %n = arith.constant $ntimes : i32
    $world
    $double
    $op_max
    %rc = llvm.call @MPI_Allreduce(%send, %recv, %n, %type, %op, %w) : (!llvm.ptr, !llvm.ptr, i32, $comm_type, $comm_type, $comm_type) -> i32
    return
  }
  func.func @phx_sum_errors(%in: memref<1xi64>, %out: memref<1xi64>) {
    %in_i = memref.extract_aligned_pointer_as_index %in : memref<1xi64> -> index
    %out_i = memref.extract_aligned_pointer_as_index %out : memref<1xi64> -> index
    %in_64 = arith.index_cast %in_i : index to i64
    %out_64 = arith.index_cast %out_i : index to i64
    %send = llvm.inttoptr %in_64 : i64 to !llvm.ptr
    %recv = llvm.inttoptr %out_64 : i64 to !llvm.ptr
    %n = arith.constant 1 : i32
    $world
    $int64
    $op_sum
    %rc = llvm.call @MPI_Allreduce(%send, %recv, %n, %type, %op, %w) : (!llvm.ptr, !llvm.ptr, i32, $comm_type, $comm_type, $comm_type) -> i32
    return
  }
  func.func @phx_wtime() -> f64 {
    %t = llvm.call @MPI_Wtime() : () -> f64
    return %t : f64
  }
  func.func @phx_pattern(%cid: i64, %i: i64) -> i8 {
    %c131 = arith.constant 131 : i64
    %c8 = arith.constant 8 : i64
    %c7 = arith.constant 7 : i64
    %c1 = arith.constant 1 : i64
    %a = arith.muli %cid, %c131 : i64
    %b = arith.shrui %cid, %c8 : i64
    %c = arith.muli %i, %c7 : i64
    %ab = arith.addi %a, %b : i64
    %abc = arith.addi %ab, %c : i64
    %v = arith.addi %abc, %c1 : i64
    %byte = arith.trunci %v : i64 to i8
    return %byte : i8
  }
  func.func @phx_fill(%heap: memref<?xi8>, %off: i64, %len: i64, %cid: i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.index_cast %len : i64 to index
    scf.for %i = %c0 to %n step %c1 {
      %i64 = arith.index_cast %i : index to i64
      %v = func.call @phx_pattern(%cid, %i64) : (i64, i64) -> i8
      %at = arith.addi %off, %i64 : i64
      %ix = arith.index_cast %at : i64 to index
      memref.store %v, %heap[%ix] : memref<?xi8>
    }
    return
  }
  func.func @phx_check(%heap: memref<?xi8>, %off: i64, %len: i64, %cid: i64, %first: i64) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i64
    %n = arith.index_cast %len : i64 to index
    %bad = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
      %i64 = arith.index_cast %i : index to i64
      %byte = arith.addi %first, %i64 : i64
      %want = func.call @phx_pattern(%cid, %byte) : (i64, i64) -> i8
      %at = arith.addi %off, %i64 : i64
      %ix = arith.index_cast %at : i64 to index
      %got = memref.load %heap[%ix] : memref<?xi8>
      %ne = arith.cmpi ne, %got, %want : i8
      %inc = arith.extui %ne : i1 to i64
      %next = arith.addi %acc, %inc : i64
      scf.yield %next : i64
    }
    return %bad : i64
  }
  func.func @phx_at(%heap: memref<?xi8>, %off: i64) -> !llvm.ptr {
    %base = memref.extract_aligned_pointer_as_index %heap : memref<?xi8> -> index
    %base64 = arith.index_cast %base : index to i64
    %p = llvm.inttoptr %base64 : i64 to !llvm.ptr
    %at = llvm.getelementptr %p[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    return %at : !llvm.ptr
  }
  func.func @phx_copy(%heap: memref<?xi8>, %dst: i64, %src: i64, %len: i64) {
    %to = func.call @phx_at(%heap, %dst) : (memref<?xi8>, i64) -> !llvm.ptr
    %from = func.call @phx_at(%heap, %src) : (memref<?xi8>, i64) -> !llvm.ptr
    "llvm.intr.memcpy"(%to, %from, %len) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    return
  }
  func.func @phx_request(%reqs: memref<?xi64>, %slot: i64) -> !llvm.ptr {
    %base = memref.extract_aligned_pointer_as_index %reqs : memref<?xi64> -> index
    %base64 = arith.index_cast %base : index to i64
    %p = llvm.inttoptr %base64 : i64 to !llvm.ptr
    %at = llvm.getelementptr %p[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, $comm_type
    return %at : !llvm.ptr
  }
  func.func @phx_null_requests(%reqs: memref<?xi64>, %n: i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %count = arith.index_cast %n : i64 to index
    $request_null
    scf.for %i = %c0 to %count step %c1 {
      %i64 = arith.index_cast %i : index to i64
      %at = func.call @phx_request(%reqs, %i64) : (memref<?xi64>, i64) -> !llvm.ptr
      llvm.store %null, %at : $comm_type, !llvm.ptr
    }
    return
  }
$point_to_point
  func.func @phx_waitall(%reqs: memref<?xi64>, %first: i64, %count: i64) {
    %req = func.call @phx_request(%reqs, %first) : (memref<?xi64>, i64) -> !llvm.ptr
    %n = arith.trunci %count : i64 to i32
    $statuses_ignore
    %rc = llvm.call @MPI_Waitall(%n, %req, %ignore) : (i32, !llvm.ptr, !llvm.ptr) -> i32
    return
  }
  func.func @phx_spin(%ns: i64) {
    %seconds_per_ns = arith.constant 1.0e-09 : f64
    %nsf = arith.sitofp %ns : i64 to f64
    %seconds = arith.mulf %nsf, %seconds_per_ns : f64
    %t0 = func.call @phx_wtime() : () -> f64
    scf.while : () -> () {
      %t = func.call @phx_wtime() : () -> f64
      %dt = arith.subf %t, %t0 : f64
      %more = arith.cmpf olt, %dt, %seconds : f64
      scf.condition(%more)
    } do {
      scf.yield
    }
    return
  }
  func.func @phx_step(%heap: memref<?xi8>, %reqs: memref<?xi64>, %rows: memref<${nrows}xi64>, %at: index, %times: memref<${ntimes}xf64>, %t0: memref<1xf64>, %errors: memref<1xi64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %i1 = arith.addi %at, %c1 : index
    %i2 = arith.addi %at, %c2 : index
    %i3 = arith.addi %at, %c3 : index
    %i4 = arith.addi %at, %c4 : index
    %i5 = arith.addi %at, %c5 : index
    %kind = memref.load %rows[%at] : memref<${nrows}xi64>
    %a = memref.load %rows[%i1] : memref<${nrows}xi64>
    %b = memref.load %rows[%i2] : memref<${nrows}xi64>
    %c = memref.load %rows[%i3] : memref<${nrows}xi64>
    %d = memref.load %rows[%i4] : memref<${nrows}xi64>
    %e = memref.load %rows[%i5] : memref<${nrows}xi64>
    %k = arith.index_cast %kind : i64 to index
    scf.index_switch %k
    case $SEND {
      func.call @phx_isend(%heap, %reqs, %a, %b, %c, %d, %e) : (memref<?xi8>, memref<?xi64>, i64, i64, i64, i64, i64) -> ()
      scf.yield
    }
    case $RECV {
      func.call @phx_irecv(%heap, %reqs, %a, %b, %c, %d, %e) : (memref<?xi8>, memref<?xi64>, i64, i64, i64, i64, i64) -> ()
      scf.yield
    }
    case $WAIT {
      func.call @phx_waitall(%reqs, %a, %b) : (memref<?xi64>, i64, i64) -> ()
      scf.yield
    }
    case $COPY {
      func.call @phx_copy(%heap, %a, %b, %c) : (memref<?xi8>, i64, i64, i64) -> ()
      scf.yield
    }
    case $FILL {
      func.call @phx_fill(%heap, %a, %b, %c) : (memref<?xi8>, i64, i64, i64) -> ()
      scf.yield
    }
    case $CHECK {
      %bad = func.call @phx_check(%heap, %a, %b, %c, %d) : (memref<?xi8>, i64, i64, i64, i64) -> i64
      %old = memref.load %errors[%c0] : memref<1xi64>
      %new = arith.addi %old, %bad : i64
      memref.store %new, %errors[%c0] : memref<1xi64>
      scf.yield
    }
    case $BARRIER {
      func.call @phx_barrier() : () -> ()
      scf.yield
    }
    case $COMPUTE {
      func.call @phx_spin(%a) : (i64) -> ()
      scf.yield
    }
    case $BEGIN {
      %t = func.call @phx_wtime() : () -> f64
      memref.store %t, %t0[%c0] : memref<1xf64>
      scf.yield
    }
    case $END {
      %t = func.call @phx_wtime() : () -> f64
      %start = memref.load %t0[%c0] : memref<1xf64>
      %dt = arith.subf %t, %start : f64
      %ix = arith.index_cast %a : i64 to index
      %old = memref.load %times[%ix] : memref<${ntimes}xf64>
      %new = arith.addf %old, %dt : f64
      memref.store %new, %times[%ix] : memref<${ntimes}xf64>
      scf.yield
    }
    default {
    }
    return
  }
  func.func @phx_report(%times: memref<${ntimes}xf64>, %errors: i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cK = arith.constant $nschedules : index
    %nprocs = arith.constant $nprocs : i32
    %zero = arith.constant 0 : i64
    %ok = arith.cmpi eq, %errors, %zero : i64
    %yes = llvm.mlir.addressof @str_true : !llvm.ptr
    %no = llvm.mlir.addressof @str_false : !llvm.ptr
    %verified = llvm.select %ok, %yes, %no : i1, !llvm.ptr
    %total = memref.load %times[%cK] : memref<${ntimes}xf64>
    %head = llvm.mlir.addressof @fmt_head : !llvm.ptr
    %r0 = llvm.call @printf(%head, %nprocs, %total, %verified, %errors) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, f64, !llvm.ptr, i64) -> i32
    %item = llvm.mlir.addressof @fmt_item : !llvm.ptr
    %empty = llvm.mlir.addressof @str_empty : !llvm.ptr
    %comma = llvm.mlir.addressof @str_comma : !llvm.ptr
    scf.for %k = %c0 to %cK step %c1 {
      %first = arith.cmpi eq, %k, %c0 : index
      %sep = llvm.select %first, %empty, %comma : i1, !llvm.ptr
      %t = memref.load %times[%k] : memref<${ntimes}xf64>
      %r = llvm.call @printf(%item, %sep, %t) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, f64) -> i32
    }
    %tail = llvm.mlir.addressof @fmt_tail : !llvm.ptr
    %r1 = llvm.call @printf(%tail) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr) -> i32
    return
  }
  func.func @phx_run(%rank32: i32) -> i32 {
    %comm = mpi.comm_world : !mpi.comm
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cF = arith.constant $row_fields : index
    %cK = arith.constant $nschedules : index
    %cT = arith.constant $ntimes : index
    %zero_f = arith.constant 0.0 : f64
    %zero_i = arith.constant 0 : i64
    %rank = arith.index_cast %rank32 : i32 to index
    %rows = memref.get_global @rows : memref<${nrows}xi64>
    %starts = memref.get_global @row_start : memref<${nstarts}xi64>
    %heaps = memref.get_global @heap_bytes : memref<${nprocs}xi64>
    %heap_len = memref.load %heaps[%rank] : memref<${nprocs}xi64>
    %heap_n = arith.index_cast %heap_len : i64 to index
    %heap = memref.alloc(%heap_n) : memref<?xi8>
    %nreqs = arith.constant $nrequests : i64
    %nreqs_n = arith.index_cast %nreqs : i64 to index
    %reqs = memref.alloc(%nreqs_n) : memref<?xi64>
    func.call @phx_null_requests(%reqs, %nreqs) : (memref<?xi64>, i64) -> ()
    %times = memref.alloc() : memref<${ntimes}xf64>
    %tmax = memref.alloc() : memref<${ntimes}xf64>
    scf.for %k = %c0 to %cT step %c1 {
      memref.store %zero_f, %times[%k] : memref<${ntimes}xf64>
    }
    %t0 = memref.alloc() : memref<1xf64>
    %errors = memref.alloc() : memref<1xi64>
    %esum = memref.alloc() : memref<1xi64>
    memref.store %zero_i, %errors[%c0] : memref<1xi64>
    %next = arith.addi %rank, %c1 : index
    %lo64 = memref.load %starts[%rank] : memref<${nstarts}xi64>
    %hi64 = memref.load %starts[%next] : memref<${nstarts}xi64>
    %lo = arith.index_cast %lo64 : i64 to index
    %hi = arith.index_cast %hi64 : i64 to index
    func.call @phx_barrier() : () -> ()
    %start = func.call @phx_wtime() : () -> f64
    scf.for %i = %lo to %hi step %c1 {
      %at = arith.muli %i, %cF : index
      func.call @phx_step(%heap, %reqs, %rows, %at, %times, %t0, %errors) : (memref<?xi8>, memref<?xi64>, memref<${nrows}xi64>, index, memref<${ntimes}xf64>, memref<1xf64>, memref<1xi64>) -> ()
    }
    %end = func.call @phx_wtime() : () -> f64
    %total = arith.subf %end, %start : f64
    memref.store %total, %times[%cK] : memref<${ntimes}xf64>
    func.call @phx_max_times(%times, %tmax) : (memref<${ntimes}xf64>, memref<${ntimes}xf64>) -> ()
    func.call @phx_sum_errors(%errors, %esum) : (memref<1xi64>, memref<1xi64>) -> ()
    %bad = memref.load %esum[%c0] : memref<1xi64>
    %zero32 = arith.constant 0 : i32
    %is0 = arith.cmpi eq, %rank32, %zero32 : i32
    scf.if %is0 {
      func.call @phx_report(%tmax, %bad) : (memref<${ntimes}xf64>, i64) -> ()
    }
    %ok = arith.cmpi eq, %bad, %zero_i : i64
    %one32 = arith.constant 1 : i32
    %code = arith.select %ok, %zero32, %one32 : i32
    return %code : i32
  }
  func.func @main() -> i32 {
    mpi.init
    %comm = mpi.comm_world : !mpi.comm
    %rank = mpi.comm_rank(%comm) : i32
    %size = func.call @phx_comm_size() : () -> i32
    %want = arith.constant $nprocs : i32
    %fits = arith.cmpi eq, %size, %want : i32
    %code = scf.if %fits -> (i32) {
      %r = func.call @phx_run(%rank) : (i32) -> i32
      scf.yield %r : i32
    } else {
      %zero = arith.constant 0 : i32
      %is0 = arith.cmpi eq, %rank, %zero : i32
      scf.if %is0 {
        %fmt = llvm.mlir.addressof @fmt_size : !llvm.ptr
        %r = llvm.call @printf(%fmt, %want, %size, %want) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32, i32) -> i32
      }
      %two = arith.constant 2 : i32
      scf.yield %two : i32
    }
    mpi.finalize
    return %code : i32
  }
}
""".replace("$point_to_point\n", POINT_TO_POINT))  # noqa: E501  (MLIR lines)


def _ints(values) -> str:
    return ", ".join(str(v) for v in values)


def program_text(plan: NativePlan, mpi: str, nranks: int = 0) -> str:
    """The MLIR module of a plan (see _PROGRAM) on `nranks` ranks (0: one per processor)."""
    plan = place(plan, nranks or plan.nprocs)
    rows = [v for rank_rows in plan.rows for row in rank_rows for v in row] or [0] * ROW_FIELDS
    starts = [0]
    for rank_rows in plan.rows:
        starts.append(starts[-1] + len(rank_rows))
    return _PROGRAM.substitute(
        mpi=mpi, comm_type="i32" if mpi == "MPICH" else "!llvm.ptr", handle_globals=_handle_globals(mpi),
        world=_handle(mpi, "w", "comm_world"), double=_handle(mpi, "type", "double"),
        int64=_handle(mpi, "type", "int64_t"), op_max=_handle(mpi, "op", "op_max"),
        op_sum=_handle(mpi, "op", "op_sum"), byte=_handle(mpi, "type", "byte"),
        request_null=_handle(mpi, "null", "request_null"), statuses_ignore=STATUSES_IGNORE[mpi],
        nrequests=max(max(plan.slots, default=0), 1), row_fields=ROW_FIELDS,
        nprocs=plan.nprocs, processors=plan.processors or plan.nprocs, nrows=len(rows), rows=_ints(rows),
        nstarts=len(starts),
        row_start=_ints(starts), heap_bytes=_ints(max(h, 1) for h in plan.heap_bytes),
        nschedules=len(plan.schedules), ntimes=len(plan.schedules) + 1,
        SEND=SEND, RECV=RECV, COPY=COPY, FILL=FILL, CHECK=CHECK, BARRIER=BARRIER,
        COMPUTE=COMPUTE, BEGIN=BEGIN, END=END, WAIT=WAIT)


def lower_sched_to_mpi(module: ModuleOp, mpi: str = "OpenMPI", nranks: int = 0) -> str:
    """The upstream-MLIR program of a `sched` module (see the module docstring)."""
    if mpi not in MPI_IMPLEMENTATIONS:
        raise usage_error(f"unknown MPI implementation '{mpi}'",
                          f"use one of {', '.join(MPI_IMPLEMENTATIONS)}")
    return program_text(plan_native(module), mpi, nranks)


@dataclass(frozen=True)
class LowerSchedToMpi(ModulePass):
    """Records the MPI program's text in the module attribute `phalanx.mpi_mlir`."""

    name = "lower-sched-to-mpi"

    mpi: str = "OpenMPI"
    nranks: int = 0  # MPI ranks to run the processors on; 0: one rank per processor

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes["phalanx.mpi_mlir"] = StringAttr(lower_sched_to_mpi(op, self.mpi, self.nranks))
