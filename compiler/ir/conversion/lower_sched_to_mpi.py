"""`lower-sched-to-mpi{mpi=OpenMPI}`: a `sched` module as an upstream-MLIR MPI program.

Input: a module after lower-coll-to-sched (`sched.schedule`, `sched.compute`,
`sched.pipeline`, `dist.*` declarations). Output: MLIR text in upstream dialects only
(`func`, `scf`, `arith`, `memref`, `mpi`, `llvm`) that `mlir-opt-22 --convert-scf-to-cf
--convert-to-llvm --reconcile-unrealized-casts` lowers completely; compiler/native.py
builds it into an executable.

The program is a small interpreter over constant tables, so it stays small for any
number of ranks: rank r runs rows `row_start[r] .. row_start[r+1]` of `@rows`, each row
(kind, a, b, c, d) one of the ROW kinds below, over one byte heap per rank. Send
buffers are filled with a pattern of (content id, byte index) and every block, or piece of
a block (Transfer.offset: its bytes from that index on), that reaches its final destination
is checked against it, so the executable verifies its data without Python. Blocking
`mpi.send` / `mpi.recv` cannot deadlock because every rank runs its messages in one global
order (schedule, phase, colour, pair): the first unfinished message always has both ends
waiting on it. Colours are a greedy edge colouring of the phase's messages, so messages of
one colour run concurrently.
What MLIR 22 does not lower (comm_size, barrier, wtime) is called through `llvm.call`.
xDSL has no upstream `mpi` dialect, so the pass records the text in the module's
`phalanx.mpi_mlir` attribute; `lower_sched_to_mpi` returns it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from string import Template

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.ir.dialects import dist, sched
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import WHOLE, Transfer
from phalanx.grammar.diagnostics import usage_error

SEND, RECV, COPY, FILL, CHECK, BARRIER, COMPUTE, BEGIN, END = range(9)
ROW_FIELDS = 5  # kind, a, b, c, d
MPI_IMPLEMENTATIONS = ("OpenMPI", "MPICH")
SHARED_CONTENT_KINDS = (Kind.BROADCAST, Kind.ALLGATHER, Kind.REDUCE, Kind.ALLREDUCE)

Row = tuple[int, int, int, int, int]


@dataclass
class NativePlan:
    """Per-processor rows of the interpreter, heap sizes and the schedules they time.

    `seqs` numbers every row in one global order (a message's send and receive share
    their number, as do the rows of one barrier): `place` merges processors onto fewer
    ranks by it, which keeps blocking send/recv deadlock-free.
    """

    nprocs: int
    rows: list[list[Row]]
    heap_bytes: list[int]
    schedules: list[tuple[str, str, int]] = field(default_factory=list)  # kind, algorithm, line
    seqs: list[list[int]] = field(default_factory=list)
    processors: int = 0  # virtual processors placed on the nprocs ranks (0: as many as ranks)
    counter: int = 0

    def __post_init__(self) -> None:
        self.seqs = self.seqs or [list(range(len(r))) for r in self.rows]

    def emit(self, rank: int, kind: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0,
             seq: int | None = None) -> None:
        self.rows[rank].append((kind, a, b, c, d))
        self.seqs[rank].append(self.counter if seq is None else seq)
        self.counter += seq is None

    def emit_all(self, kind: int, a: int = 0) -> None:
        self.counter += 1
        for rank in range(self.nprocs):
            self.emit(rank, kind, a, seq=self.counter - 1)

    def emit_message(self, src: int, dst: int, src_off: int, dst_off: int, nbytes: int, tag: int) -> None:
        self.counter += 1
        self.emit(src, SEND, dst, src_off, nbytes, tag, seq=self.counter - 1)
        self.emit(dst, RECV, src, dst_off, nbytes, tag, seq=self.counter - 1)


def place(plan: NativePlan, nranks: int) -> NativePlan:
    """Run the plan's processors on `nranks` MPI ranks (blocks of consecutive processors).

    Each rank runs its processors' rows merged in the global order; a message between
    two processors of one rank becomes a copy, a barrier runs once per rank.
    """
    if nranks == plan.nprocs:
        return plan
    if not 1 <= nranks <= plan.nprocs:
        raise usage_error(f"cannot run {plan.nprocs} processors on {nranks} MPI ranks",
                          f"use between 1 and {plan.nprocs} ranks")
    host = [v * nranks // plan.nprocs for v in range(plan.nprocs)]
    base, heap = [0] * plan.nprocs, [0] * nranks
    for v in range(plan.nprocs):
        base[v], heap[host[v]] = heap[host[v]], heap[host[v]] + plan.heap_bytes[v]
    arrival = {seq: base[v] + row[2] for v in range(plan.nprocs)
               for seq, row in zip(plan.seqs[v], plan.rows[v]) if row[0] == RECV}
    merged: list[list[tuple[int, int, Row]]] = [[] for _ in range(nranks)]
    for v in range(plan.nprocs):
        merged[host[v]] += [(seq, v, row) for seq, row in zip(plan.seqs[v], plan.rows[v])]
    out = NativePlan(nranks, [[] for _ in range(nranks)], heap, plan.schedules, processors=plan.nprocs)
    for rank, rows in enumerate(merged):
        synced: set[int] = set()
        for seq, v, (kind, a, b, c, d) in sorted(rows, key=lambda x: (x[0], x[1])):
            if kind in (BARRIER, BEGIN, END):
                if seq not in synced:
                    synced.add(seq)
                    out.emit(rank, kind, a, seq=seq)
            elif kind in (SEND, RECV) and host[a] == rank:
                if kind == SEND:
                    out.emit(rank, COPY, arrival[seq], base[v] + b, c, seq=seq)
            elif kind in (SEND, RECV):
                out.emit(rank, kind, host[a], base[v] + b, c, d, seq=seq)
            elif kind == COPY:
                out.emit(rank, COPY, base[v] + a, base[v] + b, c, seq=seq)
            elif kind in (FILL, CHECK):
                out.emit(rank, kind, base[v] + a, b, c, d, seq=seq)
            else:
                out.emit(rank, kind, a, b, c, d, seq=seq)
    return out


def pattern_byte(content_id: int, index: int) -> int:
    """The byte at `index` of a block whose content is `content_id` (the emitted code's formula)."""
    return (content_id * 131 + (content_id >> 8) + index * 7 + 1) & 255


class _Heap:
    """Bump allocation of one schedule's slots on each rank's heap."""

    def __init__(self, nprocs: int) -> None:
        self.top = [0] * nprocs

    def alloc(self, rank: int, nbytes: int) -> int:
        offset = self.top[rank]
        self.top[rank] += nbytes
        return offset


def _colour_messages(keys: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Messages (src, dst, id) in a global order: colour by colour, lower rank of a pair first."""
    order = sorted(keys, key=lambda k: (min(k[0], k[1]), max(k[0], k[1]), k[0] > k[1], k[2]))
    busy: list[set[int]] = []
    coloured = []
    for key in order:
        colour = next((c for c, used in enumerate(busy) if not {key[0], key[1]} & used), len(busy))
        if colour == len(busy):
            busy.append(set())
        busy[colour] |= {key[0], key[1]}
        coloured.append((colour, key))
    return [key for _, key in sorted(coloured, key=lambda ck: ck[0])]


class _SchedulePlanner:
    """Rows of one `sched.schedule`: fills, the phases' messages, checks."""

    def __init__(self, plan: NativePlan, op: sched.ScheduleOp, index: int, shared: bool) -> None:
        self.plan, self.op, self.index, self.shared = plan, op, index, shared
        self.n = op.nprocs.value.data
        self.heap = _Heap(plan.nprocs)
        self.held: list[dict[tuple[int, int], int]] = [{} for _ in range(plan.nprocs)]
        self.copies: list[dict[int, int]] = [{} for _ in range(plan.nprocs)]
        # where a rank holds a piece it received: (content id, offset, bytes) -> heap offset
        self.pieces: list[dict[tuple[int, int, int], int]] = [{} for _ in range(plan.nprocs)]
        self.checks: list[Row] = []

    def content_id(self, origin: int, final: int) -> int:
        return origin * (self.n + 1) + (self.n if self.shared else final)

    def run(self) -> None:
        phases = self.op.phases()
        blocks: dict[tuple[int, int], int] = {}
        for phase in phases:
            for t in phase.sends:  # a block's size: a whole transfer's, or past its last piece
                end = t.nbytes if t.offset == WHOLE else t.offset + t.nbytes
                blocks[(t.origin, t.final)] = max(blocks.get((t.origin, t.final), 0), end)
        for (origin, final), nbytes in blocks.items():
            cid = self.content_id(origin, final)
            if cid not in self.copies[origin]:
                self.copies[origin][cid] = self.heap.alloc(origin, nbytes)
                self.plan.emit(origin, FILL, self.copies[origin][cid], nbytes, cid)
            self.held[origin][(origin, final)] = self.copies[origin][cid]
        self.plan.emit_all(BEGIN, self.index)
        for k, phase in enumerate(phases):
            if sorted(phase.sends, key=repr) != sorted(phase.recvs, key=repr):
                raise VerifyException(f"schedule of collective {self.op.collective.value.data} phase "
                                      f"{k}: lower-sched-to-mpi needs every transfer received in the "
                                      "phase that sends it")
            self.phase(phase.sends)
            if phase.sync == "barrier":
                # MPI_COMM_WORLD's barrier, also for one scoped to groups (Phase.barrier_groups):
                # every rank runs every phase, so the wider barrier only waits longer
                self.plan.emit_all(BARRIER)
        self.plan.emit_all(END, self.index)
        for rank, *check in self.checks:
            self.plan.emit(rank, CHECK, *check)
        for rank in range(self.plan.nprocs):
            self.plan.heap_bytes[rank] = max(self.plan.heap_bytes[rank], self.heap.top[rank])

    def locate(self, rank: int, t: Transfer) -> int:
        """Where `rank` holds what `t` carries: the block (origin, final) or a copy of equal
        content (a piece: its bytes there), else a piece it received."""
        cid = self.content_id(t.origin, t.final)
        whole = self.held[rank].get((t.origin, t.final))
        if whole is None and self.shared:
            whole = self.copies[rank].get(cid)
        if whole is not None:
            return whole if t.offset == WHOLE else whole + t.offset
        piece = self.pieces[rank].get((cid, t.offset, t.nbytes))  # never a whole block's key
        if piece is not None:
            return piece
        raise VerifyException(f"schedule of collective {self.op.collective.value.data}: node {rank} "
                              f"sends {t.block_name}, which it does not hold")

    def phase(self, sends) -> None:
        messages: dict[tuple[int, int, int], list] = {}
        for i, t in enumerate(sends):
            messages.setdefault((t.src, t.dst, t.message or -1 - i), []).append(t)
        sources = {key: [self.locate(t.src, t) for t in group]
                   for key, group in messages.items()}  # blocks held before the phase
        for key in _colour_messages(list(messages)):
            self.message(key, messages[key], sources[key])

    def message(self, key: tuple[int, int, int], group: list, offsets: list[int]) -> None:
        src, dst, _ = key
        nbytes = sum(t.nbytes for t in group)
        contiguous = all(offsets[i] + group[i].nbytes == offsets[i + 1] for i in range(len(group) - 1))
        if src != dst and contiguous:
            start = offsets[0]
        else:  # pack (or copy locally) the blocks into one fresh region
            start = self.heap.alloc(src, nbytes)
            at = start
            for t, offset in zip(group, offsets):
                self.plan.emit(src, COPY, at, offset, t.nbytes)
                at += t.nbytes
        if src == dst:
            region = start
        else:
            region = self.heap.alloc(dst, nbytes)
            tag = self.index % 32768
            self.plan.emit_message(src, dst, start, region, nbytes, tag)
        for t in group:
            cid = self.content_id(t.origin, t.final)
            if t.offset == WHOLE:
                self.held[dst][(t.origin, t.final)] = region
                self.copies[dst][cid] = region
            else:
                self.pieces[dst][(cid, t.offset, t.nbytes)] = region
            if dst == t.final:  # the pattern's bytes from the block's or the piece's first on
                self.checks.append((dst, region, t.nbytes, cid, 0 if t.offset == WHOLE else t.offset))
            region += t.nbytes


def world_size(module: ModuleOp) -> int:
    sizes = [1]
    for op in module.walk():
        if isinstance(op, sched.ScheduleOp):
            sizes.append(op.nprocs.value.data)
        elif isinstance(op, sched.ComputeOp):
            sizes.append(op.first.value.data + op.nprocs.value.data)
        elif isinstance(op, dist.ProcessorsOp):
            sizes.append(op.base.value.data + op.nprocs)
    return max(sizes)


def _steps(module: ModuleOp):
    """Schedules and compute steps in execution order (pipeline stages one after another)."""
    yield from _run_ops(list(module.ops))


def _run_ops(ops: list):
    """The ops in execution order: a `sched.repeat`'s body once per iteration (each run of a
    schedule is then a schedule of the native program, with its own times and data check)."""
    k = 0
    while k < len(ops):
        op = ops[k]
        k += 1
        if isinstance(op, sched.RepeatOp):
            body = ops[k:k + op.ops.value.data]
            k += len(body)
            for _ in range(op.count.value.data):
                yield from _run_ops(body)
        elif isinstance(op, sched.PipelineOp):
            continue  # its staged ops follow it, stage by stage
        elif isinstance(op, (sched.ScheduleOp, sched.ComputeOp)):
            yield op
        elif not op.name.startswith("dist."):
            raise VerifyException(f"lower-sched-to-mpi cannot lower '{op.name}': lower it to the "
                                  "sched dialect first")


def plan_native(module: ModuleOp) -> NativePlan:
    """The interpreter's rows for every rank of the module's program."""
    n = world_size(module)
    plan = NativePlan(n, [[] for _ in range(n)], [0] * n)
    replicated = {op.sym_name.data for op in module.walk()
                  if isinstance(op, dist.ArrayOp) and op.mapping.data == "replicated"}
    for op in _steps(module):
        if isinstance(op, sched.ComputeOp):
            first = op.first.value.data
            for rank in range(first, first + op.nprocs.value.data):
                plan.emit(rank, COMPUTE, round(op.cost_s.value.data * 1e9))
            continue
        kind = op.kind.data
        shared = kind in SHARED_CONTENT_KINDS or op.dst.data in replicated
        _SchedulePlanner(plan, op, len(plan.schedules), shared).run()
        plan.schedules.append((kind, op.algorithm.data, op.line.value.data))
    return plan


# MPI handles for what we call through `llvm.call`. MPICH's are ints in its mpi.h; OpenMPI's
# are addresses of these globals (MLIR 22 lowers mpi.allreduce's MPI_MAX/MPI_SUM to the
# wrong OpenMPI symbols `ompi_mpi_max` / `ompi_mpi_sum`, so we call MPI_Allreduce ourselves).
MPICH_HANDLES = {"comm_world": 0x44000000, "double": 0x4C00080B, "int64_t": 0x4C00083A,
                 "op_max": 0x58000001, "op_sum": 0x58000003}
OPENMPI_SYMBOLS = {"comm_world": "ompi_mpi_comm_world", "double": "ompi_mpi_double",
                   "int64_t": "ompi_mpi_int64_t", "op_max": "ompi_mpi_op_max", "op_sum": "ompi_mpi_op_sum"}


def _handle(mpi: str, ssa: str, name: str) -> str:
    if mpi == "MPICH":
        return f"%{ssa} = llvm.mlir.constant({MPICH_HANDLES[name]} : i32) : i32"
    return f"%{ssa} = llvm.mlir.addressof @{OPENMPI_SYMBOLS[name]} : !llvm.ptr"


def _handle_globals(mpi: str) -> str:
    if mpi == "MPICH":
        return ""
    return "".join(f"  llvm.mlir.global external @{sym}() {{addr_space = 0 : i32}} : !llvm.struct<(i8)>\n"
                   for sym in OPENMPI_SYMBOLS.values())


_PROGRAM = Template("""\
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "$mpi">} {
$handle_globals  llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, $comm_type, $comm_type, $comm_type) -> i32
  llvm.func @MPI_Comm_size($comm_type, !llvm.ptr) -> i32
  llvm.func @MPI_Barrier($comm_type) -> i32
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
  func.func @phx_copy(%heap: memref<?xi8>, %dst: i64, %src: i64, %len: i64) {
    %base = memref.extract_aligned_pointer_as_index %heap : memref<?xi8> -> index
    %base64 = arith.index_cast %base : index to i64
    %p = llvm.inttoptr %base64 : i64 to !llvm.ptr
    %to = llvm.getelementptr %p[%dst] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %from = llvm.getelementptr %p[%src] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    "llvm.intr.memcpy"(%to, %from, %len) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
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
  func.func @phx_buffer(%heap: memref<?xi8>, %off: i64, %len: i64) -> memref<?xi8, strided<[1], offset: ?>> {
    %o = arith.index_cast %off : i64 to index
    %n = arith.index_cast %len : i64 to index
    %buf = memref.reinterpret_cast %heap to offset: [%o], sizes: [%n], strides: [1] : memref<?xi8> to memref<?xi8, strided<[1], offset: ?>>
    return %buf : memref<?xi8, strided<[1], offset: ?>>
  }
  func.func @phx_step(%heap: memref<?xi8>, %rows: memref<${nrows}xi64>, %at: index, %times: memref<${ntimes}xf64>, %t0: memref<1xf64>, %errors: memref<1xi64>) {
    %comm = mpi.comm_world : !mpi.comm
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %i1 = arith.addi %at, %c1 : index
    %i2 = arith.addi %at, %c2 : index
    %i3 = arith.addi %at, %c3 : index
    %i4 = arith.addi %at, %c4 : index
    %kind = memref.load %rows[%at] : memref<${nrows}xi64>
    %a = memref.load %rows[%i1] : memref<${nrows}xi64>
    %b = memref.load %rows[%i2] : memref<${nrows}xi64>
    %c = memref.load %rows[%i3] : memref<${nrows}xi64>
    %d = memref.load %rows[%i4] : memref<${nrows}xi64>
    %k = arith.index_cast %kind : i64 to index
    scf.index_switch %k
    case $SEND {
      %buf = func.call @phx_buffer(%heap, %b, %c) : (memref<?xi8>, i64, i64) -> memref<?xi8, strided<[1], offset: ?>>
      %peer = arith.trunci %a : i64 to i32
      %tag = arith.trunci %d : i64 to i32
      mpi.send(%buf, %tag, %peer, %comm) : memref<?xi8, strided<[1], offset: ?>>, i32, i32
      scf.yield
    }
    case $RECV {
      %buf = func.call @phx_buffer(%heap, %b, %c) : (memref<?xi8>, i64, i64) -> memref<?xi8, strided<[1], offset: ?>>
      %peer = arith.trunci %a : i64 to i32
      %tag = arith.trunci %d : i64 to i32
      mpi.recv(%buf, %tag, %peer, %comm) : memref<?xi8, strided<[1], offset: ?>>, i32, i32
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
      func.call @phx_barrier() : () -> ()
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
    %c5 = arith.constant 5 : index
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
      %at = arith.muli %i, %c5 : index
      func.call @phx_step(%heap, %rows, %at, %times, %t0, %errors) : (memref<?xi8>, memref<${nrows}xi64>, index, memref<${ntimes}xf64>, memref<1xf64>, memref<1xi64>) -> ()
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
""")  # noqa: E501  (MLIR lines)


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
        op_sum=_handle(mpi, "op", "op_sum"),
        nprocs=plan.nprocs, processors=plan.processors or plan.nprocs, nrows=len(rows), rows=_ints(rows),
        nstarts=len(starts),
        row_start=_ints(starts), heap_bytes=_ints(max(h, 1) for h in plan.heap_bytes),
        nschedules=len(plan.schedules), ntimes=len(plan.schedules) + 1,
        SEND=SEND, RECV=RECV, COPY=COPY, FILL=FILL, CHECK=CHECK, BARRIER=BARRIER,
        COMPUTE=COMPUTE, BEGIN=BEGIN, END=END)


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
