"""Between the checked program and the `dist` dialect, both ways.

`module_from_program` emits the program as `dist` ops; the `*_from_*` readers rebuild
the semantic objects from the IR so that passes work from the IR alone.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from phalanx.compiler.ir.dialects import dist
from phalanx.compiler.semantics import (
    AssignStmt,
    CheckedProgram,
    ComputeStmt,
    DimDist,
    DistArray,
    Format,
    PipelineStmt,
    Processors,
    ReduceStmt,
    RepeatStmt,
    StageWindow,
    Triplet,
)
from phalanx.grammar.ast import Mapping
from phalanx.grammar.diagnostics import SourceLoc, error_at

_DIM = re.compile(r"^(BLOCK|CYCLIC|\*)(?:\((\d+)\))?$")


def compute_cost_s(stmt: ComputeStmt, clock_hz: float | None, source: str, target: str) -> float:
    """Seconds of a compute statement; `cycles` need the target's clock."""
    if stmt.unit != "cycles":
        return stmt.cost_s
    if not clock_hz:
        raise error_at(stmt.unit_loc, f"target '{target}' has no clock to count cycles with",
                       source, "give the cost in s, ms or us")
    return stmt.cost / clock_hz


def _op(stmt, program: CheckedProgram, clock_hz: float | None, target: str,
        collectives: dict[int, int]) -> Operation:
    """The statement's op; `collectives`: the collective index of each communication
    statement, by the statement's id()."""
    if isinstance(stmt, ComputeStmt):
        cost = compute_cost_s(stmt, clock_hz, program.source, target)
        return dist.ComputeOp(stmt.label, stmt.onto.name, cost, stmt.loc.line,
                              -1 if stmt.stage is None else stmt.stage)
    if isinstance(stmt, ReduceStmt):
        return dist.ReduceOp(stmt.dst.name, stmt.src.name, stmt.op, stmt.loc.line,
                             collective=collectives[id(stmt)])
    window = stmt.window
    return dist.AssignOp(stmt.dst.name, stmt.src.name, stmt.perm, stmt.loc.line, stmt.shift,
                         stmt.op, [i for run in window.runs for i in run] if window else (),
                         -1 if stmt.stage is None else stmt.stage,
                         _flat(stmt.dst_section), _flat(stmt.src_section),
                         window.dim if window else -1, collective=collectives[id(stmt)])


def _flat(section: tuple[Triplet, ...]) -> list[int]:
    return [v for t in section for v in (t.lo, t.stride, t.count)]


def _triplets(values: tuple[int, ...]) -> tuple[Triplet, ...]:
    return tuple(Triplet(*values[i:i + 3]) for i in range(0, len(values), 3))


def module_from_program(program: CheckedProgram, clock_hz: float | None = None,
                        target: str = "") -> ModuleOp:
    ops: list[Operation] = [dist.ProcessorsOp(p.name, p.shape, p.loc.line, p.base)
                            for p in program.processors.values()]
    ops += [dist.ArrayOp(a.name, a.shape, a.elem_type, [str(d) for d in a.dist], a.onto.name,
                         a.loc.line, a.mapping, -1 if a.owner is None else a.owner)
            for a in program.arrays.values()]
    # A communication statement's collective is its place in program.communications(): each
    # op says which, so that no pass relies on the order it meets them in.
    collectives = {id(stmt): i for i, stmt in enumerate(program.communications())}
    return ModuleOp(ops + _statement_ops(program.statements, program, clock_hz, target, collectives))


def _statement_ops(statements, program: CheckedProgram, clock_hz: float | None,
                   target: str, collectives: dict[int, int]) -> list[Operation]:
    ops: list[Operation] = []
    for stmt in statements:
        if isinstance(stmt, PipelineStmt):
            ops.append(dist.PipelineOp(len(stmt.stages), stmt.loc.line))
            ops += [_op(s, program, clock_hz, target, collectives) for stage in stmt.stages for s in stage]
        elif isinstance(stmt, RepeatStmt):  # a header and its body, compiled once
            body = _statement_ops(stmt.body, program, clock_hz, target, collectives)
            ops += [dist.RepeatOp(stmt.count, len(body), stmt.loc.line), *body]
        else:
            ops.append(_op(stmt, program, clock_hz, target, collectives))
    return ops


def _dim_dist(text: str) -> DimDist:
    match = _DIM.match(text)
    if match is None:
        raise ValueError(f"bad distribution entry {text!r} in dist.array")
    kind, block = match.group(1), match.group(2)
    return DimDist(Format(kind), int(block) if block else (1 if kind == Format.CYCLIC else None))


def processors_from_module(module: ModuleOp, file: str = "<ir>") -> dict[str, Processors]:
    return {op.sym_name.data: Processors(op.sym_name.data, op.dims,
                                         SourceLoc(file, op.line.value.data, 1), op.base.value.data)
            for op in module.ops if isinstance(op, dist.ProcessorsOp)}


def arrays_from_module(module: ModuleOp, file: str = "<ir>") -> dict[str, DistArray]:
    procs = processors_from_module(module, file)
    out = {}
    for op in module.ops:
        if isinstance(op, dist.ArrayOp):
            mapping = Mapping(op.mapping.data)
            dims = tuple(_dim_dist(d) for d in op.dist_formats) if mapping is Mapping.DISTRIBUTED else ()
            owner = op.owner.value.data
            out[op.sym_name.data] = DistArray(op.sym_name.data, op.dims, op.elem_type.data, mapping,
                                              dims, procs[op.onto.data],
                                              owner if owner >= 0 else None,
                                              SourceLoc(file, op.line.value.data, 1))
    return out


def assign_from_op(op: dist.AssignOp, arrays: dict[str, DistArray],
                   file: str = "<ir>") -> AssignStmt:
    bounds, dim = op.window.get_values(), op.split_dim.value.data
    window = StageWindow(dim, tuple(zip(bounds[::2], bounds[1::2]))) if dim >= 0 else None
    stage = op.stage.value.data
    return AssignStmt(arrays[op.dst.data], arrays[op.src.data], op.perm_values,
                      op.shift.get_values(), SourceLoc(file, op.line.value.data, 1), op.op.data,
                      window, stage if stage >= 0 else None,
                      _triplets(op.dst_section.get_values()), _triplets(op.src_section.get_values()))


def reduce_from_op(op: dist.ReduceOp, arrays: dict[str, DistArray], file: str = "<ir>") -> ReduceStmt:
    return ReduceStmt(arrays[op.dst.data], arrays[op.src.data], op.op.data,
                      SourceLoc(file, op.line.value.data, 1))
