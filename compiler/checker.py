"""The semantic checker: one method per AST node, each error with its location and a fix."""

from __future__ import annotations

from phalanx.compiler.semantics import (
    CYCLES,
    DIST_KINDS,
    ELEMENT_BYTES,
    FUNCTIONS,
    MAX_RANK,
    REDUCTIONS,
    TIME_UNITS_S,
    AssignStmt,
    CheckedProgram,
    ComputeStmt,
    DimDist,
    DistArray,
    PipelineStmt,
    Processors,
    ReduceStmt,
    Statement,
)
from phalanx.grammar import ast
from phalanx.grammar.diagnostics import SourceLoc, error_at

MAX_REPEAT_STATEMENTS = 100_000  # unrolled statements; beyond this a program is a mistake


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


class Checker:
    def __init__(self, module: ast.Module):
        self.module = module
        self.processors: dict[str, Processors] = {}
        self.arrays: dict[str, DistArray] = {}
        self.target: ast.TargetDecl | None = None
        self.unrolled = 0

    def fail(self, loc: SourceLoc, message: str, hint: str | None = None):
        raise error_at(loc, message, self.module.source, hint)

    def check(self) -> CheckedProgram:
        statements = self._block(self.module.statements, top=True)
        if not statements:
            self.fail(SourceLoc(self.module.file, 1, 1), "the program has no statements to run",
                      "add a communication statement such as `B = A`")
        return CheckedProgram(self.module.file, self.module.source,
                              self.target.spec if self.target else None,
                              self.target.loc if self.target else None,
                              dict(self.processors), dict(self.arrays), tuple(statements))

    def _block(self, statements, top: bool = False) -> list[Statement]:
        out: list[Statement] = []
        for stmt in statements:
            if not top and isinstance(stmt, (ast.TargetDecl, ast.ProcessorsDecl, ast.ArrayDecl)):
                self.fail(stmt.loc, "declarations belong at the top level, not inside a block",
                          "move the declaration before the pipeline or repeat")
            result = getattr(self, "_" + type(stmt).__name__)(stmt)
            if isinstance(result, list):
                out += result
            elif result is not None:
                out.append(result)
        return out

    # Declarations

    def _declare_check(self, name: str, loc: SourceLoc) -> None:
        prior = self.processors.get(name) or self.arrays.get(name)
        if prior is not None:
            self.fail(loc, f"'{name}' is already declared at line {prior.loc.line}",
                      "give each processor arrangement and array its own name")

    def _TargetDecl(self, stmt: ast.TargetDecl) -> None:
        if self.target is not None:
            self.fail(stmt.loc, f"second target declaration (first at line {self.target.loc.line})",
                      "keep one `target` line per program")
        self.target = stmt

    def _ProcessorsDecl(self, stmt: ast.ProcessorsDecl) -> None:
        self._declare_check(stmt.name, stmt.loc)
        if len(stmt.shape) > MAX_RANK:
            self.fail(stmt.loc, f"processor arrangement '{stmt.name}' has {len(stmt.shape)} "
                      f"dimensions; at most {MAX_RANK} are supported")
        if min(stmt.shape) < 1:
            self.fail(stmt.loc, f"processor arrangement '{stmt.name}' has an empty dimension",
                      "every extent must be at least 1")
        self.processors[stmt.name] = Processors(stmt.name, stmt.shape, stmt.loc)

    def _processors(self, name: str, loc: SourceLoc) -> Processors:
        procs = self.processors.get(name)
        if procs is None:
            self.fail(loc, f"undeclared processor arrangement '{name}'",
                      f"declare it first, e.g. `processors {name}(16)`")
        return procs

    def _ArrayDecl(self, stmt: ast.ArrayDecl) -> None:
        self._declare_check(stmt.name, stmt.loc)
        if stmt.elem_type not in ELEMENT_BYTES:
            self.fail(stmt.elem_type_loc, f"unknown element type '{stmt.elem_type}'",
                      "use one of " + ", ".join(ELEMENT_BYTES))
        if len(stmt.shape) > MAX_RANK:
            self.fail(stmt.loc, f"array '{stmt.name}' has {len(stmt.shape)} dimensions; "
                      f"at most {MAX_RANK} are supported")
        if min(stmt.shape) < 1:
            self.fail(stmt.loc, f"array '{stmt.name}' has an empty dimension",
                      "every extent must be at least 1")
        procs = self._processors(stmt.onto, stmt.onto_loc)
        dist, owner = (), None
        if stmt.mapping == "distributed":
            dist = self._distribution(stmt, procs)
        elif stmt.mapping == "single":
            if len(stmt.owner) != len(procs.shape) or any(
                    not 0 <= c < e for c, e in zip(stmt.owner, procs.shape)):
                self.fail(stmt.onto_loc, f"owner {stmt.onto}{_shape(stmt.owner)} is not a processor "
                          f"of the arrangement {stmt.onto}{_shape(procs.shape)}",
                          "give one 0-based coordinate per arrangement dimension, within its extent")
            owner = procs.rank(stmt.owner)
        self.arrays[stmt.name] = DistArray(stmt.name, stmt.shape, stmt.elem_type, stmt.mapping,
                                           dist, procs, owner, stmt.loc)

    def _distribution(self, stmt: ast.ArrayDecl, procs: Processors) -> tuple[DimDist, ...]:
        if len(stmt.dist) != len(stmt.shape):
            self.fail(stmt.dist[0].loc, f"distribution has {len(stmt.dist)} entries but array "
                      f"'{stmt.name}' has {len(stmt.shape)} dimensions",
                      "give one of BLOCK, CYCLIC, CYCLIC(k) or * per dimension")
        spread = [d for d in stmt.dist if d.kind != "*"]
        if len(spread) != len(procs.shape):
            self.fail(stmt.dist[0].loc, f"array '{stmt.name}' distributes {len(spread)} "
                      f"dimension(s) onto the {len(procs.shape)}-D arrangement '{procs.name}'",
                      "distribute one array dimension per arrangement dimension; use * for the rest")
        out, proc_dim = [], 0
        for d, extent in zip(stmt.dist, stmt.shape):
            nprocs = procs.shape[proc_dim] if d.kind != "*" else 1
            out.append(self._dim_dist(d, extent, nprocs))
            proc_dim += d.kind != "*"
        return tuple(out)

    def _dim_dist(self, d: ast.DimDist, extent: int, nprocs: int) -> DimDist:
        if d.kind not in DIST_KINDS:
            self.fail(d.loc, f"unknown distribution '{d.kind}'",
                      "use BLOCK, BLOCK(k), CYCLIC, CYCLIC(k) or *")
        if d.block is not None and d.block < 1:
            self.fail(d.loc, f"block size {d.block} in {d} is less than 1",
                      "use a block size of at least 1")
        if d.kind == "BLOCK" and d.block is not None and d.block * nprocs < extent:
            self.fail(d.loc, f"{d} over {nprocs} processors covers only {d.block * nprocs} of "
                      f"{extent} elements",
                      f"use a block size of at least {-(-extent // nprocs)}, or CYCLIC({d.block})")
        block = 1 if d.kind == "CYCLIC" and d.block is None else d.block
        return DimDist(d.kind, block)

    # Statements

    def _array(self, ref: ast.NameRef) -> DistArray:
        array = self.arrays.get(ref.name)
        if array is None:
            if ref.name in self.processors:
                self.fail(ref.loc, f"'{ref.name}' is a processor arrangement, not an array")
            self.fail(ref.loc, f"undeclared array '{ref.name}'",
                      f"declare it with `array {ref.name}(...) of float64 distribute (...) onto P`")
        return array

    def _Compute(self, stmt: ast.Compute) -> ComputeStmt:
        procs = self._processors(stmt.onto, stmt.onto_loc)
        if stmt.unit not in TIME_UNITS_S and stmt.unit != CYCLES:
            self.fail(stmt.unit_loc, f"unknown time unit '{stmt.unit}'",
                      "use one of s, ms, us, or cycles (of the target's clock)")
        return ComputeStmt(stmt.label, procs, stmt.cost, stmt.unit, stmt.loc, stmt.unit_loc)

    def _Assign(self, stmt: ast.Assign) -> AssignStmt | ReduceStmt:
        dst = self._array(stmt.dst)
        if isinstance(stmt.src, ast.NameRef):
            src = self._array(stmt.src)
            if src is dst:
                self.fail(stmt.loc, f"'{dst.name} = {dst.name}' moves nothing",
                          "assign between two different arrays")
            rank = len(src.shape)
            return self._assign(stmt, dst, src, tuple(range(rank)), (0,) * rank, "copy")
        call = stmt.src
        if call.func not in FUNCTIONS:
            self.fail(call.loc, f"unknown function '{call.func}'", "supported: " + ", ".join(FUNCTIONS))
        if call.func in REDUCTIONS:
            return self._reduction(stmt, dst, call)
        if call.func == "transpose":
            src = self._array(self._positional(call, 1)[0])
            if len(src.shape) != 2:
                self.fail(call.args[0].loc, f"transpose needs a 2-D array; '{src.name}' has "
                          f"{len(src.shape)} dimension(s)")
            return self._assign(stmt, dst, src, (1, 0), (0, 0), "transpose")
        return self._cshift(stmt, dst, call)

    def _positional(self, call: ast.Call, count: int, keywords: tuple[str, ...] = ()):
        args = [a for a in call.args if not isinstance(a, ast.KeywordArg)]
        for a in call.args:
            if isinstance(a, ast.KeywordArg) and a.name not in keywords:
                self.fail(a.loc, f"{call.func} has no argument '{a.name}'",
                          "keywords: " + (", ".join(keywords) or "none"))
        if len(args) != count:
            self.fail(call.loc, f"{call.func} takes {count} positional argument(s), got {len(args)}")
        if not isinstance(args[0], ast.NameRef):
            self.fail(args[0].loc, f"the first argument of {call.func} must be an array")
        return args

    def _cshift(self, stmt: ast.Assign, dst: DistArray, call: ast.Call) -> AssignStmt:
        ref, amount = self._positional(call, 2, ("dim",))
        src = self._array(ref)
        if not isinstance(amount, ast.IntArg):
            self.fail(amount.loc, "the shift of cshift must be an integer")
        dim = next((a for a in call.args if isinstance(a, ast.KeywordArg)), None)
        d = 1 if dim is None else dim.value
        if not 1 <= d <= len(src.shape):
            self.fail(dim.loc, f"cshift dim={d} is out of range for the {len(src.shape)}-D array "
                      f"'{src.name}'", f"use dim=1 to dim={len(src.shape)}")
        shift = tuple(amount.value % src.shape[k] if k == d - 1 else 0 for k in range(len(src.shape)))
        return self._assign(stmt, dst, src, tuple(range(len(src.shape))), shift, "cshift")

    def _assign(self, stmt, dst, src, perm, shift, op) -> AssignStmt:
        src_shape = tuple(src.shape[p] for p in perm)
        if len(src_shape) != len(dst.shape):
            self.fail(stmt.loc, f"rank mismatch: '{dst.name}' has {len(dst.shape)} dimension(s), "
                      f"the right-hand side {len(src_shape)}", "assign arrays of the same rank")
        if src_shape != dst.shape:
            self.fail(stmt.loc, f"shape mismatch: '{dst.name}' is {_shape(dst.shape)} but the "
                      f"right-hand side is {_shape(src_shape)}",
                      "declare both arrays with matching extents")
        self._same_type(stmt, dst, src)
        return AssignStmt(dst, src, perm, shift, stmt.loc, op)

    def _same_type(self, stmt, dst: DistArray, src: DistArray) -> None:
        if src.elem_type != dst.elem_type:
            self.fail(stmt.loc, f"element type mismatch: '{dst.name}' is {dst.elem_type}, "
                      f"'{src.name}' is {src.elem_type}", "declare both with the same element type")

    def _reduction(self, stmt: ast.Assign, dst: DistArray, call: ast.Call) -> ReduceStmt:
        (ref,) = self._positional(call, 1)
        src = self._array(ref)
        if dst.size != 1:
            self.fail(stmt.dst.loc, f"reduction into the non-scalar array '{dst.name}' "
                      f"{_shape(dst.shape)}", f"declare it with one element, e.g. "
                      f"`array {dst.name}(1) of {src.elem_type} replicated onto {src.onto.name}`")
        self._same_type(stmt, dst, src)
        return ReduceStmt(dst, src, call.func, stmt.loc)

    def _Pipeline(self, stmt: ast.Pipeline) -> PipelineStmt:
        body = self._block(stmt.body)
        if stmt.stages < 1:
            self.fail(stmt.loc, "a pipeline needs at least 1 stage", "write e.g. pipeline stages=8")
        comms = [s for s in body if isinstance(s, AssignStmt)]
        if not comms:
            self.fail(stmt.loc, "pipeline without a communication statement",
                      "put the redistribution to overlap (e.g. `B = A`) inside the pipeline")
        for s in body:
            if isinstance(s, (ReduceStmt, PipelineStmt)):
                self.fail(s.loc, "a pipeline may hold only compute statements and assignments",
                          "move the reduction or the nested pipeline out of the pipeline")
            if isinstance(s, AssignStmt) and max(s.dst.shape) < stmt.stages:
                longest = s.dst.shape.index(max(s.dst.shape))
                self.fail(s.loc, f"cannot split '{s.dst.name}' {_shape(s.dst.shape)} into "
                          f"{stmt.stages} stages: its longest dimension, dimension {longest + 1}, "
                          f"has {s.dst.shape[longest]} indices",
                          f"use at most {s.dst.shape[longest]} stages")
        from phalanx.compiler.stages import split_stages

        return PipelineStmt(split_stages(body, stmt.stages), stmt.loc)

    def _Repeat(self, stmt: ast.Repeat) -> list[Statement]:
        if stmt.count < 1:
            self.fail(stmt.loc, "repeat needs a count of at least 1")
        body = self._block(stmt.body)
        self.unrolled += len(body) * stmt.count
        if self.unrolled > MAX_REPEAT_STATEMENTS:
            self.fail(stmt.loc, f"repeat unrolls to more than {MAX_REPEAT_STATEMENTS} statements",
                      "repeat fewer times")
        return body * stmt.count
