"""Semantic checks: turn the AST into a checked program of processors, arrays and statements.

Every error names its location in the source and says what to do about it. Pipelines
are split into stages here (compiler/stages.py). A `repeat` stays a loop (RepeatStmt): its
body's statements are checked, and later compiled, once each, however many times it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from phalanx.grammar import ast
from phalanx.grammar.ast import Mapping
from phalanx.grammar.diagnostics import SourceLoc

# Bytes per element of each element type.
ELEMENT_BYTES = {"byte": 1, "int32": 4, "int64": 8, "float32": 4, "float64": 8,
                 "complex64": 8, "complex128": 16}
TIME_UNITS_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
CYCLES = "cycles"
MAX_RANK = 3


@dataclass(frozen=True)
class Processors:
    """An arrangement of processors: `rank` and `coords` number them from 0 within it, and
    machine node `base + rank` is the processor of rank `rank` (`processors Q(4, 8) at 32`)."""

    name: str
    shape: tuple[int, ...]
    loc: SourceLoc
    base: int = 0

    @property
    def nodes(self) -> range:
        """The machine nodes the arrangement occupies."""
        return range(self.base, self.base + self.count)

    @property
    def count(self) -> int:
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    def coords(self, rank: int) -> tuple[int, ...]:
        """Row-major coordinates of a linear rank."""
        out = []
        for extent in reversed(self.shape):
            out.append(rank % extent)
            rank //= extent
        return tuple(reversed(out))

    def rank(self, coords: tuple[int, ...]) -> int:
        r = 0
        for c, extent in zip(coords, self.shape):
            r = r * extent + c
        return r


class Format(StrEnum):
    """A dimension's distribution format; its value is the source's (upper-cased) and the IR's text."""

    BLOCK = "BLOCK"  # contiguous blocks, one a processor
    CYCLIC = "CYCLIC"  # blocks dealt round the processors
    COLLAPSED = "*"  # not spread: every processor of the arrangement holds the whole extent


@dataclass(frozen=True)
class DimDist:
    """BLOCK (block None: ceil(n/P)), BLOCK(k), CYCLIC (block 1), CYCLIC(k), or `*`."""

    kind: Format
    block: int | None = None

    def __post_init__(self) -> None:
        if type(self.kind) is not Format:  # text from the IR: one typed value
            object.__setattr__(self, "kind", Format(self.kind))

    def __str__(self) -> str:
        if self.kind is Format.CYCLIC and self.block == 1:
            return "CYCLIC"
        return self.kind if self.block is None else f"{self.kind}({self.block})"


@dataclass(frozen=True)
class DistArray:
    """An array and its mapping (`dist` per dimension where DISTRIBUTED, `owner` where SINGLE)."""

    name: str
    shape: tuple[int, ...]
    elem_type: str
    mapping: Mapping
    dist: tuple[DimDist, ...]
    onto: Processors
    owner: int | None  # machine node of the single owner
    loc: SourceLoc

    def __post_init__(self) -> None:
        if type(self.mapping) is not Mapping:  # text from the IR: one typed value
            object.__setattr__(self, "mapping", Mapping(self.mapping))

    @property
    def itemsize(self) -> int:
        return ELEMENT_BYTES[self.elem_type]

    @property
    def size(self) -> int:
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    @property
    def proc_dims(self) -> tuple[int | None, ...]:
        """For each array dim, the arrangement dim it is spread over (None for `*`)."""
        out, next_dim = [], 0
        for dd in self.dist:
            if dd.kind is Format.COLLAPSED:
                out.append(None)
            else:
                out.append(next_dim)
                next_dim += 1
        return tuple(out) if self.mapping is Mapping.DISTRIBUTED else (None,) * len(self.shape)

    def describe(self) -> str:
        if self.mapping is Mapping.REPLICATED:
            return f"replicated onto {self.onto.name}"
        if self.mapping is Mapping.SINGLE:
            coords = self.onto.coords(self.owner - self.onto.base)
            return f"on {self.onto.name}({', '.join(map(str, coords))})"
        return f"distribute ({', '.join(map(str, self.dist))}) onto {self.onto.name}"


@dataclass(frozen=True)
class Triplet:
    """The indices lo, lo + stride, ..., `count` of them: a subscript triplet with its bounds
    resolved (a scalar subscript is a triplet of one index)."""

    lo: int
    stride: int
    count: int

    @staticmethod
    def whole(extent: int) -> Triplet:
        return Triplet(0, 1, extent)

    def indices(self) -> np.ndarray:
        return np.arange(self.lo, self.lo + self.stride * self.count, self.stride, dtype=np.int64)


class Op(StrEnum):
    """What a statement computes from its source; its value is the source's function name (and
    the IR's text): a copy, a transpose, a shift, a spread or a reduction along dimensions."""

    COPY = "copy"
    TRANSPOSE = "transpose"
    CSHIFT = "cshift"  # circular: positions wrap round the dimension
    EOSHIFT = "eoshift"  # end-off: positions past the ends get the boundary 0
    SPREAD = "spread"
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


REDUCTIONS = (Op.SUM, Op.MAX, Op.MIN, Op.PROD)
SHIFTS = (Op.CSHIFT, Op.EOSHIFT)
FUNCTIONS = (Op.TRANSPOSE, *SHIFTS, Op.SPREAD, *REDUCTIONS)  # what a right-hand side may call


@dataclass(frozen=True)
class StageWindow:
    """The destination indices one pipeline stage of an assignment moves: along destination
    dimension `dim` (0-based), the global indices in the [lo, hi) `runs`; every index of
    the other dimensions."""

    dim: int
    runs: tuple[tuple[int, int], ...]

    def indices(self) -> np.ndarray:
        return np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi in self.runs])


@dataclass(frozen=True)
class AssignStmt:
    """`dst(dst_section) = f(src(src_section))` where f is a copy, transpose, cshift, eoshift,
    spread, or a reduction (sum, max, min, prod) along dimensions.

    The sections are per-dimension triplets of the destination and the source (whole arrays
    when empty). Position j of destination section dim d reads source section dim perm[d] at
    position j + shift[d]: modulo that dim's count for cshift, and for eoshift only where
    0 <= j + shift[d] < count (the other positions get the boundary 0). perm[d] = -1 is a dim
    that spread adds: every position reads the same source elements. Source dims no
    destination dim reads are collapsed: combined by a reduction, or one index (a scalar
    subscript). A reduction may also have spread dims: spread(sum(A, dim=d1), dim=d2, ...).
    `window` restricts one destination dim to some of its global indices: one stage of a
    pipeline (compiler/stages.py chooses the dim).
    """

    dst: DistArray
    src: DistArray
    perm: tuple[int, ...]
    shift: tuple[int, ...]
    loc: SourceLoc
    op: Op = Op.COPY
    window: StageWindow | None = None
    stage: int | None = None
    dst_section: tuple[Triplet, ...] = ()
    src_section: tuple[Triplet, ...] = ()

    def __post_init__(self) -> None:
        if type(self.op) is not Op:  # text from the IR: one typed value
            object.__setattr__(self, "op", Op(self.op))

    @property
    def dst_triplets(self) -> tuple[Triplet, ...]:
        return self.dst_section or tuple(Triplet.whole(e) for e in self.dst.shape)

    @property
    def src_triplets(self) -> tuple[Triplet, ...]:
        return self.src_section or tuple(Triplet.whole(e) for e in self.src.shape)

    @property
    def collapsed(self) -> tuple[int, ...]:
        """Source dims no destination dim reads (reduced, or a scalar subscript)."""
        return tuple(d for d in range(len(self.src.shape)) if d not in self.perm)

    @property
    def reduces(self) -> bool:
        """A reduction along dimensions: partial results are combined at the destination."""
        return self.op in REDUCTIONS


@dataclass(frozen=True)
class ReduceStmt:
    """`dst = sum(src)` (or max, min, prod): a one-element result."""

    dst: DistArray
    src: DistArray
    op: Op
    loc: SourceLoc

    def __post_init__(self) -> None:
        if type(self.op) is not Op:  # text from the IR: one typed value
            object.__setattr__(self, "op", Op(self.op))


@dataclass(frozen=True)
class ComputeStmt:
    label: str
    onto: Processors
    cost: float
    unit: str  # s, ms, us or cycles (of the target's clock)
    loc: SourceLoc
    unit_loc: SourceLoc
    stage: int | None = None

    @property
    def cost_s(self) -> float:
        """The cost in seconds (not for `cycles`, which need the target's clock)."""
        return self.cost * TIME_UNITS_S[self.unit]


@dataclass(frozen=True)
class PipelineStmt:
    """Stages of compute and communication: stage i's communication overlaps stage i+1's compute."""

    stages: tuple[tuple[ComputeStmt | AssignStmt, ...], ...]
    loc: SourceLoc


@dataclass(frozen=True)
class RepeatStmt:
    """`repeat N { ... }`: the body runs `count` times in order; it is not unrolled."""

    count: int
    body: tuple[Statement, ...]
    loc: SourceLoc


Comm = AssignStmt | ReduceStmt
Statement = ComputeStmt | AssignStmt | ReduceStmt | PipelineStmt | RepeatStmt


def flat_statements(statements: tuple[Statement, ...]) -> list[Statement]:
    """The statements with every repeat's body in its place, once each (not unrolled)."""
    out: list[Statement] = []
    for s in statements:
        out += flat_statements(s.body) if isinstance(s, RepeatStmt) else [s]
    return out


@dataclass(frozen=True)
class CheckedProgram:
    file: str
    source: str
    target_spec: str | None
    target_loc: SourceLoc | None
    processors: dict[str, Processors]
    arrays: dict[str, DistArray]
    statements: tuple[Statement, ...]

    @property
    def nprocs(self) -> int:
        """Nodes the program needs: up to the end of the last-placed arrangement."""
        return max((p.base + p.count for p in self.processors.values()), default=0)

    def communications(self) -> list[Comm]:
        """Every communication statement in program order (pipeline stages included), the
        statements of a repeat's body once each."""
        out: list[Comm] = []
        for s in flat_statements(self.statements):
            if isinstance(s, PipelineStmt):
                out += [x for stage in s.stages for x in stage if not isinstance(x, ComputeStmt)]
            elif not isinstance(s, ComputeStmt):
                out.append(s)
        return out


def check(module: ast.Module) -> CheckedProgram:
    """Check a parsed module; raise PhalanxError at the first error."""
    from phalanx.compiler.checker import Checker

    return Checker(module).check()
