"""The `dist` dialect: the declarations and statements of a Phalanx program.

It records what the source says (processor arrangements, distributed arrays,
assignments between them, compute steps) before any communication is worked out.
Every attribute is a builtin attribute held in the attribute dictionary, so the
generic form is readable by real `mlir-opt --allow-unregistered-dialect`.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Dialect, Operation
from xdsl.irdl import IRDLOperation, attr_def, irdl_op_definition, traits_def
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from phalanx.grammar.ast import Mapping


def _positive_dims(op: IRDLOperation, dims: tuple[int, ...]) -> None:
    if not dims or any(d < 1 for d in dims):
        raise VerifyException(f"'{op.name}' shape must be non-empty and positive, got {list(dims)}")


@irdl_op_definition
class ProcessorsOp(IRDLOperation):
    """`processors P(4, 4) [at b]`: a named arrangement of processors from machine node `base`."""

    name = "dist.processors"

    sym_name = attr_def(StringAttr)
    shape = attr_def(DenseArrayBase[I64])
    base = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])

    # Processor and array names share one scope; the module's symbol table checks it.
    traits = traits_def(SymbolOpInterface())

    def __init__(self, sym_name: str, shape: Sequence[int], line: int = 0, base: int = 0) -> None:
        super().__init__(
            attributes={
                "sym_name": StringAttr(sym_name),
                "shape": DenseArrayBase.from_list(i64, list(shape)),
                "base": IntegerAttr(base, i64),
                "line": IntegerAttr(line, i64),
            }
        )

    @property
    def dims(self) -> tuple[int, ...]:
        return self.shape.get_values()

    @property
    def nprocs(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def verify_(self) -> None:
        _positive_dims(self, self.dims)
        if self.base.value.data < 0:
            raise VerifyException(f"'{self.name}' base must be >= 0, got {self.base.value.data}")


@irdl_op_definition
class ArrayOp(IRDLOperation):
    """`real A(64, 64) distribute (BLOCK, *) onto P`: a distributed array."""

    name = "dist.array"

    sym_name = attr_def(StringAttr)
    shape = attr_def(DenseArrayBase[I64])
    elem_type = attr_def(StringAttr)
    # One entry per dimension: "BLOCK", "CYCLIC", "CYCLIC(4)", "*".
    distribution = attr_def(ArrayAttr[StringAttr])
    onto = attr_def(StringAttr)
    mapping = attr_def(StringAttr)  # a grammar.ast.Mapping's text
    owner = attr_def(IntegerAttr[I64])  # linear rank of the single owner, else -1
    line = attr_def(IntegerAttr[I64])

    traits = traits_def(SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        shape: Sequence[int],
        elem_type: str,
        distribution: Sequence[str],
        onto: str,
        line: int = 0,
        mapping: Mapping = Mapping.DISTRIBUTED,
        owner: int = -1,
    ) -> None:
        super().__init__(
            attributes={
                "sym_name": StringAttr(sym_name),
                "shape": DenseArrayBase.from_list(i64, list(shape)),
                "elem_type": StringAttr(elem_type),
                "distribution": ArrayAttr([StringAttr(d) for d in distribution]),
                "onto": StringAttr(onto),
                "mapping": StringAttr(mapping),
                "owner": IntegerAttr(owner, i64),
                "line": IntegerAttr(line, i64),
            }
        )

    @property
    def dims(self) -> tuple[int, ...]:
        return self.shape.get_values()

    @property
    def dist_formats(self) -> tuple[str, ...]:
        return tuple(d.data for d in self.distribution.data)

    def verify_(self) -> None:
        _positive_dims(self, self.dims)
        if self.mapping.data not in tuple(Mapping):
            raise VerifyException(f"'{self.name}' mapping '{self.mapping.data}' is not one of "
                                  "distributed, replicated, single")
        if self.mapping.data == Mapping.DISTRIBUTED and len(self.dist_formats) != len(self.dims):
            raise VerifyException(
                f"'{self.name}' @{self.sym_name.data}: {len(self.dist_formats)} distribution "
                f"entries for {len(self.dims)} dimensions"
            )


@irdl_op_definition
class AssignOp(IRDLOperation):
    """`B = A`, `B(:, 0:63) = transpose(A(0:63, :))`, `B = spread(A, dim=2, ncopies=8)`, ...:
    compiler/semantics.py AssignStmt, attribute for field.

    `perm[d]` is the source dimension that feeds destination dimension d (the identity for
    a copy, reversed for a transpose, -1 for a dimension spread adds); source dimensions no
    destination dimension reads are reduced (sum, max, min, prod) or have one index. The
    sections are flat (lo, stride, count) triples per dimension, empty for a whole array.
    `collective` is the index of the collective the statement becomes (its place in
    CheckedProgram.communications()), which recognize-collectives gives its `coll` op.
    """

    name = "dist.assign"

    collective = attr_def(IntegerAttr[I64])
    dst = attr_def(StringAttr)
    src = attr_def(StringAttr)
    op = attr_def(StringAttr)  # copy, transpose, cshift, eoshift, spread, sum, max, min, prod
    perm = attr_def(DenseArrayBase[I64])
    shift = attr_def(DenseArrayBase[I64])  # per destination dim: position j reads j + shift
    # A pipeline stage moves destination dim `split_dim` at the global indices of `window`,
    # runs [lo0, hi0, lo1, hi1, ...]; outside a pipeline split_dim is -1 and window empty.
    split_dim = attr_def(IntegerAttr[I64])
    window = attr_def(DenseArrayBase[I64])
    dst_section = attr_def(DenseArrayBase[I64])  # (lo, stride, count) per destination dim, or empty
    src_section = attr_def(DenseArrayBase[I64])  # (lo, stride, count) per source dim, or empty
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1
    line = attr_def(IntegerAttr[I64])

    def __init__(self, dst: str, src: str, perm: Sequence[int] = (0,), line: int = 0,
                 shift: Sequence[int] | None = None, op: str = "copy",
                 window: Sequence[int] = (), stage: int = -1, dst_section: Sequence[int] = (),
                 src_section: Sequence[int] = (), split_dim: int = -1, *, collective: int) -> None:
        super().__init__(
            attributes={
                "collective": IntegerAttr(collective, i64),
                "dst": StringAttr(dst),
                "src": StringAttr(src),
                "op": StringAttr(op),
                "perm": DenseArrayBase.from_list(i64, list(perm)),
                "shift": DenseArrayBase.from_list(i64, list(shift or [0] * len(perm))),
                "split_dim": IntegerAttr(split_dim, i64),
                "window": DenseArrayBase.from_list(i64, list(window)),
                "dst_section": DenseArrayBase.from_list(i64, list(dst_section)),
                "src_section": DenseArrayBase.from_list(i64, list(src_section)),
                "stage": IntegerAttr(stage, i64),
                "line": IntegerAttr(line, i64),
            }
        )

    @property
    def perm_values(self) -> tuple[int, ...]:
        return self.perm.get_values()

    def verify_(self) -> None:
        read = [p for p in self.perm_values if p != -1]
        if len(set(read)) != len(read) or any(p < -1 for p in read):
            raise VerifyException(f"'{self.name}' perm {list(self.perm_values)} reads a source "
                                  "dimension twice or names none")
        window, dim = self.window.get_values(), self.split_dim.value.data
        if (dim == -1) != (not window) or not -1 <= dim < len(self.perm_values):
            raise VerifyException(f"'{self.name}' split_dim {dim} does not fit window {list(window)} "
                                  f"of a rank-{len(self.perm_values)} assignment")
        if len(window) % 2 or any(b <= a for a, b in zip(window, window[1:])):
            raise VerifyException(f"'{self.name}' window {list(window)} is not ascending "
                                  "[lo, hi) runs")
        for attr in ("dst_section", "src_section"):
            values = self.attributes[attr].get_values()
            if len(values) % 3 or any(c < 1 for c in values[2::3]) or 0 in values[1::3]:
                raise VerifyException(f"'{self.name}' {attr} {list(values)} is not (lo, stride, "
                                      "count) triples with stride != 0 and count >= 1")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """`compute "label" on P cost T`: every processor of `onto` is busy for `cost_s`."""

    name = "dist.compute"

    label = attr_def(StringAttr)
    onto = attr_def(StringAttr)
    cost_s = attr_def(FloatAttr[Float64Type])
    stage = attr_def(IntegerAttr[I64])  # pipeline stage, else -1
    line = attr_def(IntegerAttr[I64])

    def __init__(self, label: str, onto: str, cost_s: float, line: int = 0, stage: int = -1) -> None:
        super().__init__(
            attributes={
                "label": StringAttr(label),
                "onto": StringAttr(onto),
                "cost_s": FloatAttr(float(cost_s), f64),
                "stage": IntegerAttr(stage, i64),
                "line": IntegerAttr(line, i64),
            }
        )

    def verify_(self) -> None:
        if self.cost_s.value.data < 0:
            raise VerifyException(
                f"'{self.name}' cost_s must be >= 0, got {self.cost_s.value.data}"
            )


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`s = sum(C)` (or max, min, prod): reduce array `src` into the one-element `dst`;
    `collective` as for `dist.assign`."""

    name = "dist.reduce"

    collective = attr_def(IntegerAttr[I64])
    dst = attr_def(StringAttr)
    src = attr_def(StringAttr)
    op = attr_def(StringAttr)
    line = attr_def(IntegerAttr[I64])

    def __init__(self, dst: str, src: str, op: str, line: int = 0, *, collective: int) -> None:
        super().__init__(attributes={"collective": IntegerAttr(collective, i64), "dst": StringAttr(dst),
                                     "src": StringAttr(src), "op": StringAttr(op),
                                     "line": IntegerAttr(line, i64)})


def staged_run(header: Operation) -> list[Operation]:
    """The ops that follow a pipeline header and carry a stage: the pipeline's body."""
    body: list[Operation] = []
    op = header.next_op
    while op is not None and isinstance(op.attributes.get("stage"), IntegerAttr) \
            and op.attributes["stage"].value.data >= 0:
        body.append(op)
        op = op.next_op
    return body


def verify_pipeline_header(op: IRDLOperation, stages: int) -> None:
    """A pipeline header is followed by at least one staged op, each of a stage it has."""
    if stages < 1:
        raise VerifyException(f"'{op.name}' needs at least 1 stage, got {stages}")
    body = staged_run(op)
    if not body:
        raise VerifyException(f"'{op.name}' must be followed by its staged ops (stage >= 0)")
    for inner in body:
        stage = inner.attributes["stage"].value.data
        if stage >= stages:
            raise VerifyException(f"'{op.name}' has {stages} stages but '{inner.name}' that "
                                  f"follows it is in stage {stage}")


class PipelineHeaderOp(IRDLOperation, ABC):
    """A pipeline header, shared by `dist.pipeline` and `sched.pipeline`: the run of ops right
    after it whose `stage` is >= 0 is its body (ops outside pipelines carry stage -1).

    The body is not a region because real mlir-opt 22 cannot verify an IRDL-defined op with
    a region: IRDL has no traits, so such a region would need a terminator and no IRDL op
    can be one (see compiler/ir/irdl/phalanx.irdl).
    """

    stages = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])

    def __init__(self, stages: int, line: int = 0) -> None:
        super().__init__(attributes={"stages": IntegerAttr(stages, i64),
                                     "line": IntegerAttr(line, i64)})

    def body_ops(self) -> list[Operation]:
        return staged_run(self)

    def verify_(self) -> None:
        verify_pipeline_header(self, self.stages.value.data)


@irdl_op_definition
class PipelineOp(PipelineHeaderOp):
    """`pipeline stages=N { ... }`, already split into stages. Stage i's communication
    overlaps stage i+1's compute. The body holds `coll` ops after recognition; lowering
    turns the header into `sched.pipeline`."""

    name = "dist.pipeline"


def repeat_body(header: Operation) -> list[Operation]:
    """The `ops` ops right after a repeat header: its body (nested headers and their bodies
    included), or fewer when the block ends first (the header's verifier refuses that)."""
    body: list[Operation] = []
    op = header.next_op
    while op is not None and len(body) < header.attributes["ops"].value.data:
        body.append(op)
        op = op.next_op
    return body


class RepeatHeaderOp(IRDLOperation, ABC):
    """A repeat header, shared by `dist.repeat` and `sched.repeat`: the `ops` ops right after it
    (a nested repeat's header and body, a pipeline's header and staged ops, counted one by
    one) are its body, which runs `count` times. The loop is kept, not unrolled: each body
    statement is compiled once. A header, not a region, for the reason PipelineHeaderOp gives.
    """

    count = attr_def(IntegerAttr[I64])
    ops = attr_def(IntegerAttr[I64])
    line = attr_def(IntegerAttr[I64])

    def __init__(self, count: int, ops: int, line: int = 0) -> None:
        super().__init__(attributes={"count": IntegerAttr(count, i64), "ops": IntegerAttr(ops, i64),
                                     "line": IntegerAttr(line, i64)})

    def body_ops(self) -> list[Operation]:
        return repeat_body(self)

    def verify_(self) -> None:
        count, ops = self.count.value.data, self.ops.value.data
        if count < 1 or ops < 1:
            raise VerifyException(f"'{self.name}' needs a count and a body of at least 1, got "
                                  f"count {count} and {ops} ops")
        body = self.body_ops()
        if len(body) < ops:
            raise VerifyException(f"'{self.name}' has a body of {ops} ops but only {len(body)} "
                                  "follow it")
        for inner in body:  # a nested repeat ends within this one
            if isinstance(inner, RepeatHeaderOp) and inner.body_ops() and \
                    inner.body_ops()[-1] not in body:
                raise VerifyException(f"'{self.name}' ends inside the body of the nested "
                                      f"'{inner.name}' of line {inner.line.value.data}")


@irdl_op_definition
class RepeatOp(RepeatHeaderOp):
    """`repeat N { ... }`: the body (the next `ops` ops) runs `count` times. Lowering turns the
    header into `sched.repeat`."""

    name = "dist.repeat"


Dist = Dialect("dist", [ProcessorsOp, ArrayOp, AssignOp, ComputeOp, ReduceOp, PipelineOp, RepeatOp],
               [])
