"""The Phalanx abstract syntax tree: frozen dataclasses, each node with its source location.

No semantic checks happen here; compiler/semantics.py does them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from phalanx.grammar.diagnostics import SourceLoc


@dataclass(frozen=True)
class TargetDecl:
    spec: str
    loc: SourceLoc


@dataclass(frozen=True)
class ProcessorsDecl:
    """`processors Q(4, 8) [at 32]`: `at` is the machine node of Q's first processor."""

    name: str
    shape: tuple[int, ...]
    loc: SourceLoc
    at: int | None = None
    at_loc: SourceLoc | None = None


@dataclass(frozen=True)
class DimDist:
    """One dimension's distribution: BLOCK, CYCLIC, CYCLIC(k), BLOCK(k) or `*`."""

    kind: str  # as written, upper-cased: "BLOCK", "CYCLIC", "*" or an unknown word
    block: int | None
    loc: SourceLoc

    def __str__(self) -> str:
        return self.kind if self.block is None else f"{self.kind}({self.block})"


class Mapping(StrEnum):
    """How an array lies on its arrangement; its value is the source's and the IR's text."""

    DISTRIBUTED = "distributed"  # `distribute (...) onto P`: a distribution format per dimension
    REPLICATED = "replicated"  # `replicated onto P`: a whole copy on every processor of P
    SINGLE = "single"  # `on P(i)`: the whole array on one processor


@dataclass(frozen=True)
class ArrayDecl:
    """An array declaration; `dist` only where the mapping is DISTRIBUTED, `owner` only where
    it is SINGLE."""

    name: str
    shape: tuple[int, ...]
    elem_type: str
    mapping: Mapping
    dist: tuple[DimDist, ...]
    onto: str
    owner: tuple[int, ...]  # coordinates of the single owner, else ()
    loc: SourceLoc
    elem_type_loc: SourceLoc
    onto_loc: SourceLoc


@dataclass(frozen=True)
class Compute:
    label: str
    onto: str
    cost: float
    unit: str
    loc: SourceLoc
    onto_loc: SourceLoc
    unit_loc: SourceLoc


@dataclass(frozen=True)
class NameRef:
    name: str
    loc: SourceLoc


@dataclass(frozen=True)
class IntArg:
    value: int
    loc: SourceLoc


@dataclass(frozen=True)
class KeywordArg:
    name: str
    value: int
    loc: SourceLoc


@dataclass(frozen=True)
class Triplet:
    """A subscript triplet `lo:hi[:stride]` (Fortran: `hi` inclusive); a bound left out is None."""

    lo: int | None
    hi: int | None
    stride: int | None
    loc: SourceLoc


@dataclass(frozen=True)
class Call:
    """`f(args)`: a call, or an array section when `func` names an array (the checker decides)."""

    func: str
    args: tuple[NameRef | IntArg | KeywordArg | Triplet | Call, ...]
    loc: SourceLoc


@dataclass(frozen=True)
class Assign:
    """`dst = src`; a destination with subscripts (`B(:, 0:63) = ...`) is a Call node."""

    dst: NameRef | Call
    src: NameRef | Call
    loc: SourceLoc


@dataclass(frozen=True)
class Pipeline:
    """`pipeline stages=N { ... }`: communication of chunk i overlaps compute of chunk i+1."""

    stages: int
    body: tuple[Statement, ...]
    loc: SourceLoc


@dataclass(frozen=True)
class Repeat:
    count: int
    body: tuple[Statement, ...]
    loc: SourceLoc


Statement = TargetDecl | ProcessorsDecl | ArrayDecl | Compute | Assign | Pipeline | Repeat


@dataclass(frozen=True)
class Module:
    """A whole .phx file."""

    file: str
    source: str
    statements: tuple[Statement, ...]
