"""Between the checked program and the `dist` dialect, both ways.

`module_from_program` emits the program as `dist` ops; `arrays_from_module` reads the
declarations back so that passes work from the IR alone.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import ModuleOp

from phalanx.compiler.ir.dialects import dist
from phalanx.compiler.semantics import (
    AssignStmt,
    CheckedProgram,
    ComputeStmt,
    DimDist,
    DistArray,
    Processors,
)
from phalanx.grammar.diagnostics import SourceLoc

_DIM = re.compile(r"^(BLOCK|CYCLIC|\*)(?:\((\d+)\))?$")


def module_from_program(program: CheckedProgram) -> ModuleOp:
    ops = [dist.ProcessorsOp(p.name, p.shape, p.loc.line) for p in program.processors.values()]
    ops += [dist.ArrayOp(a.name, a.shape, a.elem_type, [str(d) for d in a.dist], a.onto.name,
                         a.loc.line) for a in program.arrays.values()]
    for stmt in program.statements:
        if isinstance(stmt, AssignStmt):
            ops.append(dist.AssignOp(stmt.dst.name, stmt.src.name, stmt.perm, stmt.loc.line))
        else:
            ops.append(dist.ComputeOp(stmt.label, stmt.onto.name, stmt.cost_s, stmt.loc.line))
    return ModuleOp(ops)


def _dim_dist(text: str) -> DimDist:
    match = _DIM.match(text)
    if match is None:
        raise ValueError(f"bad distribution entry {text!r} in dist.array")
    kind, block = match.group(1), match.group(2)
    return DimDist(kind, int(block) if block else (1 if kind == "CYCLIC" else None))


def processors_from_module(module: ModuleOp, file: str = "<ir>") -> dict[str, Processors]:
    return {op.sym_name.data: Processors(op.sym_name.data, op.dims,
                                         SourceLoc(file, op.line.value.data, 1))
            for op in module.ops if isinstance(op, dist.ProcessorsOp)}


def arrays_from_module(module: ModuleOp, file: str = "<ir>") -> dict[str, DistArray]:
    procs = processors_from_module(module, file)
    return {op.sym_name.data: DistArray(op.sym_name.data, op.dims, op.elem_type.data,
                                        tuple(_dim_dist(d) for d in op.dist_formats),
                                        procs[op.onto.data], SourceLoc(file, op.line.value.data, 1))
            for op in module.ops if isinstance(op, dist.ArrayOp)}


def assign_from_op(op: dist.AssignOp, arrays: dict[str, DistArray],
                   file: str = "<ir>") -> AssignStmt:
    return AssignStmt(arrays[op.dst.data], arrays[op.src.data], op.perm_values,
                      SourceLoc(file, op.line.value.data, 1))


def compute_from_op(op: dist.ComputeOp, procs: dict[str, Processors],
                    file: str = "<ir>") -> ComputeStmt:
    return ComputeStmt(op.label.data, procs[op.onto.data], op.cost_s.value.data,
                       SourceLoc(file, op.line.value.data, 1))
