"""The semantic checker: one method per AST node, each error with its location and a fix."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from phalanx.compiler.semantics import (
    CYCLES,
    ELEMENT_BYTES,
    FUNCTIONS,
    MAX_RANK,
    REDUCTIONS,
    SHIFTS,
    TIME_UNITS_S,
    AssignStmt,
    CheckedProgram,
    ComputeStmt,
    DimDist,
    DistArray,
    Format,
    Op,
    PipelineStmt,
    Processors,
    ReduceStmt,
    RepeatStmt,
    Statement,
    Triplet,
)
from phalanx.grammar import ast
from phalanx.grammar.ast import Mapping
from phalanx.grammar.diagnostics import SourceLoc, error_at

MAX_STATEMENT_RUNS = 100_000_000  # statement runs of a program; beyond this it is a mistake
MAX_PIPELINE_STATEMENTS = 100_000  # statements of a pipeline's body, its repeats unrolled


def _unrolled(body: list[Statement]) -> list[Statement]:
    """A body with its repeats written out (only a pipeline's body, which is split into stages)."""
    out: list[Statement] = []
    for s in body:
        out += _unrolled(list(s.body)) * s.count if isinstance(s, RepeatStmt) else [s]
    return out


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _ref_name(ref: ast.NameRef | ast.Call) -> ast.NameRef:
    """The array a reference names: `A` itself, or the `A` of a section `A(0:7, :)`."""
    return ref if isinstance(ref, ast.NameRef) else ast.NameRef(ref.func, ref.loc)


def _source_text(source: str, start: SourceLoc) -> str:
    """The text of a section as written: from `start` to its closing parenthesis."""
    line = source.splitlines()[start.line - 1]
    text = line[start.col - 1:]
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == ")" and depth == 0:
            return text[:i + 1]
    return text.strip()


def _describe(ref: ast.NameRef | ast.Call, value: _Value) -> str:
    return f"array '{value.array.name}'" if isinstance(ref, ast.NameRef) else \
        f"section of '{value.array.name}'"


@dataclass(frozen=True)
class _Value:
    """A right-hand side: `op` applied to a section of `array` (`triplets` per array dim).
    Per value dim: its extent, the array dim it reads (-1: added by spread) and the shift of
    positions along it."""

    op: Op
    array: DistArray
    triplets: tuple[Triplet, ...]
    shape: list[int]
    perm: list[int]
    shift: list[int]

    def replace(self, **changes) -> _Value:
        return dataclasses.replace(self, **changes)


class Checker:
    def __init__(self, module: ast.Module):
        self.module = module
        self.processors: dict[str, Processors] = {}
        self.arrays: dict[str, DistArray] = {}
        self.target: ast.TargetDecl | None = None
        self.runs = 1  # how many times the statements being checked run (product of the repeats)

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
        self.processors[stmt.name] = Processors(stmt.name, stmt.shape, stmt.loc, stmt.at or 0)

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
        if stmt.mapping is Mapping.DISTRIBUTED:
            dist = self._distribution(stmt, procs)
        elif stmt.mapping is Mapping.SINGLE:
            if len(stmt.owner) != len(procs.shape) or any(
                    not 0 <= c < e for c, e in zip(stmt.owner, procs.shape)):
                self.fail(stmt.onto_loc, f"owner {stmt.onto}{_shape(stmt.owner)} is not a processor "
                          f"of the arrangement {stmt.onto}{_shape(procs.shape)}",
                          "give one 0-based coordinate per arrangement dimension, within its extent")
            owner = procs.base + procs.rank(stmt.owner)
        self.arrays[stmt.name] = DistArray(stmt.name, stmt.shape, stmt.elem_type, stmt.mapping,
                                           dist, procs, owner, stmt.loc)

    def _distribution(self, stmt: ast.ArrayDecl, procs: Processors) -> tuple[DimDist, ...]:
        if len(stmt.dist) != len(stmt.shape):
            self.fail(stmt.dist[0].loc, f"distribution has {len(stmt.dist)} entries but array "
                      f"'{stmt.name}' has {len(stmt.shape)} dimensions",
                      "give one of BLOCK, CYCLIC, CYCLIC(k) or * per dimension")
        spread = [d for d in stmt.dist if d.kind != Format.COLLAPSED]
        if len(spread) != len(procs.shape):
            self.fail(stmt.dist[0].loc, f"array '{stmt.name}' distributes {len(spread)} "
                      f"dimension(s) onto the {len(procs.shape)}-D arrangement '{procs.name}'",
                      "distribute one array dimension per arrangement dimension; use * for the rest")
        out, proc_dim = [], 0
        for d, extent in zip(stmt.dist, stmt.shape):
            nprocs = procs.shape[proc_dim] if d.kind != Format.COLLAPSED else 1
            out.append(self._dim_dist(d, extent, nprocs))
            proc_dim += d.kind != Format.COLLAPSED
        return tuple(out)

    def _dim_dist(self, d: ast.DimDist, extent: int, nprocs: int) -> DimDist:
        if d.kind not in tuple(Format):
            self.fail(d.loc, f"unknown distribution '{d.kind}'",
                      "use BLOCK, BLOCK(k), CYCLIC, CYCLIC(k) or *")
        if d.block is not None and d.block < 1:
            self.fail(d.loc, f"block size {d.block} in {d} is less than 1",
                      "use a block size of at least 1")
        kind = Format(d.kind)  # the source's word, known from here on
        if kind is Format.BLOCK and d.block is not None and d.block * nprocs < extent:
            self.fail(d.loc, f"{d} over {nprocs} processors covers only {d.block * nprocs} of "
                      f"{extent} elements",
                      f"use a block size of at least {-(-extent // nprocs)}, or CYCLIC({d.block})")
        block = 1 if kind is Format.CYCLIC and d.block is None else d.block
        return DimDist(kind, block)

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
        dst = self._array(_ref_name(stmt.dst))
        call = stmt.src
        if isinstance(call, ast.Call) and call.func not in self.arrays:
            if call.func not in FUNCTIONS:
                if call.func in self.processors:
                    self.fail(call.loc, f"'{call.func}' is a processor arrangement, not an array")
                self.fail(call.loc, f"unknown function '{call.func}'",
                          "supported: " + ", ".join(FUNCTIONS) + "; or subscript a declared array")
            if call.func in REDUCTIONS and not any(
                    isinstance(a, ast.KeywordArg) and a.name == "dim" for a in call.args):
                return self._reduction(stmt, dst, call)
            builders = {Op.TRANSPOSE: self._value_transpose, Op.SPREAD: self._value_spread,
                        **{f: self._shifted for f in SHIFTS}}
            value = builders.get(call.func, self._value_reduce)(call)
        else:
            value = self._value_ref(call)
        return self._assign(stmt, dst, value)

    # The right-hand side as a value: its shape and, per value dim, the source dim it reads
    # (-1: a dim spread adds) and the shift of positions along it.

    def _section(self, ref: ast.NameRef | ast.Call) -> tuple[DistArray, tuple[Triplet, ...], list[int]]:
        """An array or array section: the array, a triplet per dim, and the dims a triplet
        subscripts (the others have a scalar subscript and drop out of the section's rank)."""
        array = self._array(_ref_name(ref))
        if isinstance(ref, ast.NameRef):
            return array, tuple(Triplet.whole(e) for e in array.shape), list(range(len(array.shape)))
        if len(ref.args) != len(array.shape):
            self.fail(ref.loc, f"array '{array.name}' has {len(array.shape)} dimension(s) but "
                      f"the section gives {len(ref.args)} subscript(s)",
                      "give one subscript (an index or a triplet lo:hi:stride) per dimension")
        triplets, kept = [], []
        for d, (sub, extent) in enumerate(zip(ref.args, array.shape)):
            if isinstance(sub, ast.IntArg):
                if not 0 <= sub.value < extent:
                    self.fail(sub.loc, f"index {sub.value} is out of bounds for dimension {d + 1} "
                              f"of '{array.name}' {_shape(array.shape)}",
                              f"indices count from 0 to {extent - 1}")
                triplets.append(Triplet(sub.value, 1, 1))
            elif isinstance(sub, ast.Triplet):
                triplets.append(self._triplet(array, d, sub))
                kept.append(d)
            else:
                self.fail(sub.loc, f"subscript {d + 1} of '{array.name}' must be an index or a "
                          "triplet lo:hi:stride", "write e.g. A(0:63, :) or A(3, :)")
        return array, tuple(triplets), kept

    def _triplet(self, array: DistArray, d: int, sub: ast.Triplet) -> Triplet:
        """Fortran's triplet lo:hi:stride, 0-based with `hi` included; lo and hi default to the
        dimension's first and last index, the stride to 1."""
        extent = array.shape[d]
        stride = 1 if sub.stride is None else sub.stride
        if stride == 0:
            self.fail(sub.loc, f"stride 0 in a subscript of '{array.name}'",
                      "a triplet's stride is a nonzero integer (negative to run backwards)")
        lo = 0 if sub.lo is None else sub.lo
        hi = extent - 1 if sub.hi is None else sub.hi
        count = max(0, (hi - lo + stride) // stride)
        written = f"{'' if sub.lo is None else sub.lo}:{'' if sub.hi is None else sub.hi}" + (
            "" if sub.stride is None else f":{sub.stride}")
        if count == 0:
            hint = ("with a negative stride give the bounds from high to low, e.g. "
                    f"{extent - 1}:0:{stride}" if stride < 0 else "give a lower bound at most "
                    "the upper bound")
            self.fail(sub.loc, f"the subscript {written} of '{array.name}' selects no elements",
                      hint)
        last = lo + stride * (count - 1)
        if not (0 <= lo < extent and 0 <= last < extent):
            self.fail(sub.loc, f"the subscript {written} of '{array.name}' is out of bounds: "
                      f"dimension {d + 1} has indices 0 to {extent - 1}",
                      "indices count from 0; the upper bound is included")
        return Triplet(lo, stride, count)

    def _value_ref(self, ref) -> _Value:
        array, triplets, kept = self._section(ref)
        return _Value(Op.COPY, array, triplets, [triplets[d].count for d in kept], kept,
                      [0] * len(kept))

    def _is_reduction(self, arg) -> bool:
        """Whether a call argument is a reduction call (sum, max, min, prod), not an array."""
        return isinstance(arg, ast.Call) and arg.func not in self.arrays and arg.func in REDUCTIONS

    def _argument(self, call: ast.Call, count: int, keywords: tuple[str, ...] = (),
                  nested_reduction: bool = False):
        """The positional arguments and the keyword arguments of a call; the first positional
        one is an array or an array section (or, for spread, a reduction along a dimension)."""
        args = [a for a in call.args if not isinstance(a, ast.KeywordArg)]
        given = {}
        for a in call.args:
            if isinstance(a, ast.KeywordArg):
                if a.name not in keywords:
                    self.fail(a.loc, f"{call.func} has no argument '{a.name}'",
                              "keywords: " + (", ".join(keywords) or "none"))
                given[a.name] = a
        if len(args) != count:
            self.fail(call.loc, f"{call.func} takes {count} positional argument(s), got {len(args)}")
        first = args[0]
        if nested_reduction and self._is_reduction(first):
            if not any(isinstance(a, ast.KeywordArg) and a.name == "dim" for a in first.args):
                self.fail(first.loc, f"the {first.func} inside spread needs dim=",
                          f"write spread({first.func}(A, dim=d1), dim=d2, ncopies=n)")
            return args, given
        if isinstance(first, ast.Call) and first.func not in self.arrays and first.func in FUNCTIONS:
            self.fail(first.loc, f"{call.func} of {first.func}(...): the only nesting allowed is "
                      "spread of a reduction along a dimension",
                      "write spread(sum(A, dim=d1), dim=d2, ncopies=n) (or max, min, prod), or "
                      "assign the inner call to an array first")
        if not isinstance(first, ast.NameRef) and not (
                isinstance(first, ast.Call) and first.func in self.arrays):
            self.fail(first.loc, f"the first argument of {call.func} must be an array or an "
                      "array section", "write e.g. cshift(A, 1) or sum(A(0:7, :), dim=2)")
        return args, given

    def _dim(self, call: ast.Call, dim: ast.KeywordArg | None, rank: int, name: str) -> int:
        """A 1-based dim= argument (default 1) as a 0-based value dim."""
        d = 1 if dim is None else dim.value
        if not 1 <= d <= rank:
            self.fail(dim.loc, f"{call.func} dim={d} is out of range for the {rank}-D {name}",
                      f"use dim=1 to dim={rank}")
        return d - 1

    def _value_transpose(self, call: ast.Call) -> _Value:
        args, _ = self._argument(call, 1)
        v = self._value_ref(args[0])
        if len(v.shape) != 2:
            self.fail(args[0].loc, f"transpose needs a 2-D array; '{_ref_name(args[0]).name}' has "
                      f"{len(v.shape)} dimension(s)")
        return v.replace(op=Op.TRANSPOSE, shape=v.shape[::-1], perm=v.perm[::-1])

    def _shifted(self, call: ast.Call) -> _Value:
        """cshift(A, k, dim=d) and eoshift(A, k, dim=d): circular and end-off (boundary 0)."""
        (ref, amount), keywords = self._argument(call, 2, ("dim",))
        v = self._value_ref(ref)
        if not isinstance(amount, ast.IntArg):
            self.fail(amount.loc, f"the shift of {call.func} must be an integer")
        d = self._dim(call, keywords.get("dim"), len(v.shape), _describe(ref, v))
        op = Op(call.func)
        k = amount.value % v.shape[d] if op is Op.CSHIFT else amount.value
        return v.replace(op=op, shift=[k if i == d else 0 for i in range(len(v.shape))])

    def _value_spread(self, call: ast.Call) -> _Value:
        """spread(A, dim=d, ncopies=n): a new dim d (1 to rank+1) of n copies. A may be a
        reduction along a dimension, spread(sum(A, dim=d1), dim=d2, ncopies=n), the one
        nesting allowed: the reduced result replicated (an allreduce when it is distributed)."""
        (ref,), keywords = self._argument(call, 1, ("dim", "ncopies"), nested_reduction=True)
        v = self._value_reduce(ref) if self._is_reduction(ref) else self._value_ref(ref)
        for needed in ("dim", "ncopies"):
            if needed not in keywords:
                self.fail(call.loc, f"spread needs {needed}=",
                          "write spread(A, dim=d, ncopies=n)")
        ncopies = keywords["ncopies"]
        if ncopies.value < 1:
            self.fail(ncopies.loc, f"spread ncopies={ncopies.value} makes no copies",
                      "use ncopies=1 or more")
        d = keywords["dim"].value - 1
        if not 0 <= d <= len(v.shape):
            what = f"{ref.func} of {_describe(ref.args[0], v)}" if v.op in REDUCTIONS else \
                _describe(ref, v)
            self.fail(keywords["dim"].loc, f"spread dim={d + 1} is out of range: spreading the "
                      f"{len(v.shape)}-D {what} makes {len(v.shape) + 1} dimensions",
                      f"use dim=1 to dim={len(v.shape) + 1}")
        op = v.op if v.op in REDUCTIONS else Op.SPREAD  # a spread reduction keeps its operator
        return v.replace(op=op, shape=v.shape[:d] + [ncopies.value] + v.shape[d:],
                         perm=v.perm[:d] + [-1] + v.perm[d:], shift=v.shift[:d] + [0] + v.shift[d:])

    def _value_reduce(self, call: ast.Call) -> _Value:
        """sum(A, dim=d) (or max, min, prod): combines along dim d; the result has one
        dimension less."""
        (ref,), keywords = self._argument(call, 1, ("dim",))
        v = self._value_ref(ref)
        d = self._dim(call, keywords["dim"], len(v.shape), _describe(ref, v))
        return v.replace(op=Op(call.func), shape=v.shape[:d] + v.shape[d + 1:],
                         perm=v.perm[:d] + v.perm[d + 1:], shift=v.shift[:d] + v.shift[d + 1:])

    def _assign(self, stmt: ast.Assign, dst: DistArray, value: _Value) -> AssignStmt:
        """Match the value's dims with the destination section's: a scalar subscript of the
        destination is a dim of one position that reads no source dim."""
        dst_array, dst_triplets, kept = self._section(stmt.dst)
        dst_shape = tuple(dst_triplets[d].count for d in kept)
        dst_text = dst.name if isinstance(stmt.dst, ast.NameRef) else _source_text(
            self.module.source, stmt.dst.loc)
        if len(value.shape) != len(dst_shape):
            self.fail(stmt.loc, f"rank mismatch: '{dst_text}' has {len(dst_shape)} dimension(s), "
                      f"the right-hand side {len(value.shape)}", "assign arrays of the same rank")
        if tuple(value.shape) != dst_shape:
            what = "declare both arrays with matching extents" if isinstance(stmt.dst, ast.NameRef) \
                and isinstance(stmt.src, ast.NameRef) else "make the sections' extents agree"
            self.fail(stmt.loc, f"shape mismatch: '{dst_text}' is {_shape(dst_shape)} but the "
                      f"right-hand side is {_shape(tuple(value.shape))}", what)
        self._same_type(stmt, dst, value.array)
        if value.array is dst and value.op is Op.COPY and value.triplets == dst_triplets:
            self.fail(stmt.loc, f"'{dst_text} = {dst_text}' moves nothing",
                      "assign between two different arrays")
        perm, shift = [-1] * len(dst.shape), [0] * len(dst.shape)
        for d, p, k in zip(kept, value.perm, value.shift):
            perm[d], shift[d] = p, k
        whole_dst = all(t == Triplet.whole(e) for t, e in zip(dst_triplets, dst.shape))
        whole_src = all(t == Triplet.whole(e) for t, e in zip(value.triplets, value.array.shape))
        return AssignStmt(dst, value.array, tuple(perm), tuple(shift), stmt.loc, value.op,
                          dst_section=() if whole_dst else dst_triplets,
                          src_section=() if whole_src else value.triplets)

    def _same_type(self, stmt, dst: DistArray, src: DistArray) -> None:
        if src.elem_type != dst.elem_type:
            self.fail(stmt.loc, f"element type mismatch: '{dst.name}' is {dst.elem_type}, "
                      f"'{src.name}' is {src.elem_type}", "declare both with the same element type")

    def _reduction(self, stmt: ast.Assign, dst: DistArray, call: ast.Call) -> ReduceStmt:
        (ref,), _ = self._argument(call, 1, ("dim",))
        if isinstance(ref, ast.Call):
            written = _source_text(self.module.source, ref.loc)
            self.fail(ref.loc, f"{call.func} of an array section needs dim=",
                      f"reduce the whole array, or write {call.func}({written}, dim=d)")
        src = self._array(ref)
        if not isinstance(stmt.dst, ast.NameRef):
            self.fail(stmt.dst.loc, f"a {call.func} of a whole array goes into a one-element "
                      "array, not a section", f"write `{dst.name} = {call.func}(...)`")
        if dst.size != 1:
            self.fail(stmt.dst.loc, f"reduction into the non-scalar array '{dst.name}' "
                      f"{_shape(dst.shape)}", f"declare it with one element, e.g. "
                      f"`array {dst.name}(1) of {src.elem_type} replicated onto {src.onto.name}`, "
                      f"or reduce along one dimension with {call.func}({src.name}, dim=d)")
        self._same_type(stmt, dst, src)
        return ReduceStmt(dst, src, call.func, stmt.loc)

    def _Pipeline(self, stmt: ast.Pipeline) -> PipelineStmt:
        body = _unrolled(self._block(stmt.body))  # a pipeline splits its body's statements
        if len(body) > MAX_PIPELINE_STATEMENTS:
            self.fail(stmt.loc, f"the pipeline's body holds {len(body)} statements once its "
                      f"repeats are unrolled, more than {MAX_PIPELINE_STATEMENTS}",
                      "repeat fewer times inside the pipeline, or put the repeat around it")
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
            counts = tuple(t.count for t in s.dst_triplets) if isinstance(s, AssignStmt) else ()
            if counts and max(counts) < stmt.stages:  # what the statement writes (its section)
                longest = counts.index(max(counts))
                self.fail(s.loc, f"cannot split '{s.dst.name}' {_shape(counts)} into "
                          f"{stmt.stages} stages: its longest dimension, dimension {longest + 1}, "
                          f"has {counts[longest]} indices", f"use at most {counts[longest]} stages")
        from phalanx.compiler.stages import split_stages

        return PipelineStmt(split_stages(body, stmt.stages), stmt.loc)

    def _Repeat(self, stmt: ast.Repeat) -> RepeatStmt:
        if stmt.count < 1:
            self.fail(stmt.loc, f"repeat needs a count of at least 1, got {stmt.count}",
                      "write e.g. `repeat 10 { ... }`, or drop the repeat to run the body once")
        outer = self.runs
        self.runs *= stmt.count
        if self.runs > MAX_STATEMENT_RUNS:
            self.fail(stmt.loc, f"repeat runs its body {self.runs} times in all (nested repeats "
                      f"multiply), more than {MAX_STATEMENT_RUNS}", "repeat fewer times")
        body = self._block(stmt.body)
        self.runs = outer
        return RepeatStmt(stmt.count, tuple(body), stmt.loc) if body else None
