"""Semantic checks: turn the AST into a checked program of processors, arrays and statements.

Every error names its location in the source and says what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass

from phalanx.grammar import ast
from phalanx.grammar.diagnostics import SourceLoc, error_at

# Bytes per element of each element type.
ELEMENT_BYTES = {"byte": 1, "int32": 4, "int64": 8, "float32": 4, "float64": 8,
                 "complex64": 8, "complex128": 16}
DIST_KINDS = ("BLOCK", "CYCLIC", "*")
TIME_UNITS_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
FUNCTIONS = ("transpose",)


@dataclass(frozen=True)
class Processors:
    name: str
    shape: tuple[int, ...]
    loc: SourceLoc

    @property
    def count(self) -> int:
        n = 1
        for extent in self.shape:
            n *= extent
        return n


@dataclass(frozen=True)
class DimDist:
    """BLOCK (block None: ceil(n/P)), BLOCK(k), CYCLIC (block 1), CYCLIC(k), or `*`."""

    kind: str
    block: int | None = None

    def __str__(self) -> str:
        return self.kind if self.block is None else f"{self.kind}({self.block})"


@dataclass(frozen=True)
class DistArray:
    name: str
    shape: tuple[int, ...]
    elem_type: str
    dist: tuple[DimDist, ...]
    onto: Processors
    loc: SourceLoc

    @property
    def itemsize(self) -> int:
        return ELEMENT_BYTES[self.elem_type]

    @property
    def distributed_dim(self) -> int:
        """The one dimension spread over the (1-D) arrangement."""
        return next(d for d, dd in enumerate(self.dist) if dd.kind != "*")


@dataclass(frozen=True)
class AssignStmt:
    """`dst = src` or `dst = transpose(src)`; `perm[d]` is the source dim feeding dst dim d."""

    dst: DistArray
    src: DistArray
    perm: tuple[int, ...]
    loc: SourceLoc

    @property
    def is_transpose(self) -> bool:
        return self.perm != tuple(range(len(self.perm)))


@dataclass(frozen=True)
class ComputeStmt:
    label: str
    onto: Processors
    cost_s: float
    loc: SourceLoc


@dataclass(frozen=True)
class CheckedProgram:
    file: str
    source: str
    target_spec: str | None
    target_loc: SourceLoc | None
    processors: dict[str, Processors]
    arrays: dict[str, DistArray]
    statements: tuple[AssignStmt | ComputeStmt, ...]

    @property
    def nprocs(self) -> int:
        """Nodes the program needs: the largest arrangement."""
        return max((p.count for p in self.processors.values()), default=0)


class _Checker:
    def __init__(self, module: ast.Module):
        self.module = module
        self.processors: dict[str, Processors] = {}
        self.arrays: dict[str, DistArray] = {}
        self.statements: list[AssignStmt | ComputeStmt] = []
        self.target: ast.TargetDecl | None = None

    def fail(self, loc: SourceLoc, message: str, hint: str | None = None):
        raise error_at(loc, message, self.module.source, hint)

    def check(self) -> CheckedProgram:
        for stmt in self.module.statements:
            getattr(self, "_" + type(stmt).__name__)(stmt)
        if not self.statements:
            loc = SourceLoc(self.module.file, 1, 1)
            self.fail(loc, "the program has no statements to run",
                      "add a communication statement such as `B = A`")
        return CheckedProgram(self.module.file, self.module.source,
                              self.target.spec if self.target else None,
                              self.target.loc if self.target else None,
                              dict(self.processors), dict(self.arrays), tuple(self.statements))

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
        if len(stmt.shape) != 1:
            self.fail(stmt.loc, f"processor arrangement '{stmt.name}' has {len(stmt.shape)} "
                      "dimensions; only 1-D arrangements are supported",
                      f"declare it as `processors {stmt.name}(N)`")
        if stmt.shape[0] < 1:
            self.fail(stmt.loc, f"processor arrangement '{stmt.name}' needs at least 1 processor")
        self.processors[stmt.name] = Processors(stmt.name, stmt.shape, stmt.loc)

    def _ArrayDecl(self, stmt: ast.ArrayDecl) -> None:
        self._declare_check(stmt.name, stmt.loc)
        if stmt.elem_type not in ELEMENT_BYTES:
            self.fail(stmt.elem_type_loc, f"unknown element type '{stmt.elem_type}'",
                      "use one of " + ", ".join(ELEMENT_BYTES))
        if not 1 <= len(stmt.shape) <= 2:
            self.fail(stmt.loc, f"array '{stmt.name}' has {len(stmt.shape)} dimensions; "
                      "arrays of 1 or 2 dimensions are supported")
        if min(stmt.shape) < 1:
            self.fail(stmt.loc, f"array '{stmt.name}' has an empty dimension",
                      "every extent must be at least 1")
        procs = self.processors.get(stmt.onto)
        if procs is None:
            self.fail(stmt.onto_loc, f"undeclared processor arrangement '{stmt.onto}'",
                      f"declare it first, e.g. `processors {stmt.onto}(16)`")
        if len(stmt.dist) != len(stmt.shape):
            self.fail(stmt.dist[0].loc, f"distribution has {len(stmt.dist)} entries but array "
                      f"'{stmt.name}' has {len(stmt.shape)} dimensions",
                      "give one of BLOCK, CYCLIC, CYCLIC(k) or * per dimension")
        dist = tuple(self._dim_dist(d, extent, procs) for d, extent in zip(stmt.dist, stmt.shape))
        spread = [d for d in dist if d.kind != "*"]
        if len(spread) != len(procs.shape):
            self.fail(stmt.dist[0].loc, f"array '{stmt.name}' distributes {len(spread)} "
                      f"dimensions onto the {len(procs.shape)}-D arrangement '{procs.name}'",
                      "distribute exactly one dimension per arrangement dimension; use * for the rest")
        self.arrays[stmt.name] = DistArray(stmt.name, stmt.shape, stmt.elem_type, dist, procs,
                                           stmt.loc)

    def _dim_dist(self, d: ast.DimDist, extent: int, procs: Processors) -> DimDist:
        if d.kind not in DIST_KINDS:
            self.fail(d.loc, f"unknown distribution '{d.kind}'",
                      "use BLOCK, BLOCK(k), CYCLIC, CYCLIC(k) or *")
        if d.block is not None and d.block < 1:
            self.fail(d.loc, f"block size {d.block} in {d} is less than 1",
                      "use a block size of at least 1")
        if d.kind == "BLOCK" and d.block is not None and d.block * procs.count < extent:
            self.fail(d.loc, f"{d} over {procs.count} processors covers only "
                      f"{d.block * procs.count} of {extent} elements",
                      f"use a block size of at least {-(-extent // procs.count)}, or CYCLIC({d.block})")
        block = 1 if d.kind == "CYCLIC" and d.block is None else d.block
        return DimDist(d.kind, block)

    def _array(self, ref: ast.NameRef) -> DistArray:
        array = self.arrays.get(ref.name)
        if array is None:
            what = "a processor arrangement, not an array" if ref.name in self.processors else None
            self.fail(ref.loc, f"'{ref.name}' is {what}" if what else f"undeclared array '{ref.name}'",
                      f"declare it with `array {ref.name}(...) of float64 distribute (...) onto P`")
        return array

    def _Assign(self, stmt: ast.Assign) -> None:
        dst = self._array(stmt.dst)
        if isinstance(stmt.src, ast.Call):
            if stmt.src.func not in FUNCTIONS:
                self.fail(stmt.src.loc, f"unknown function '{stmt.src.func}'",
                          "supported: " + ", ".join(FUNCTIONS))
            src = self._array(stmt.src.arg)
            if len(src.shape) != 2:
                self.fail(stmt.src.arg.loc, f"transpose needs a 2-D array; '{src.name}' has "
                          f"{len(src.shape)} dimension(s)")
            perm = (1, 0)
        else:
            src = self._array(stmt.src)
            perm = tuple(range(len(src.shape)))
        if src is dst:
            self.fail(stmt.loc, f"'{dst.name} = {dst.name}' moves nothing",
                      "assign between two different arrays")
        src_shape = tuple(src.shape[p] for p in perm)
        if src_shape != dst.shape:
            self.fail(stmt.loc, f"shape mismatch: '{dst.name}' is {_shape(dst.shape)} but the "
                      f"right-hand side is {_shape(src_shape)}",
                      "declare both arrays with matching extents")
        if src.elem_type != dst.elem_type:
            self.fail(stmt.loc, f"element type mismatch: '{dst.name}' is {dst.elem_type}, "
                      f"'{src.name}' is {src.elem_type}", "declare both with the same element type")
        self.statements.append(AssignStmt(dst, src, perm, stmt.loc))

    def _Compute(self, stmt: ast.Compute) -> None:
        procs = self.processors.get(stmt.onto)
        if procs is None:
            self.fail(stmt.onto_loc, f"undeclared processor arrangement '{stmt.onto}'",
                      f"declare it first, e.g. `processors {stmt.onto}(16)`")
        if stmt.unit not in TIME_UNITS_S:
            self.fail(stmt.unit_loc, f"unknown time unit '{stmt.unit}'",
                      "use one of " + ", ".join(TIME_UNITS_S))
        self.statements.append(ComputeStmt(stmt.label, procs, stmt.cost * TIME_UNITS_S[stmt.unit],
                                           stmt.loc))


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def check(module: ast.Module) -> CheckedProgram:
    """Check a parsed module; raise PhalanxError at the first error."""
    return _Checker(module).check()
