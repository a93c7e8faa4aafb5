"""The generic form Phalanx prints is real MLIR: xDSL and LLVM's mlir-opt both read it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from phalanx.compiler.ir.dialects import coll, dist, sched
from phalanx.compiler.ir.printing import parse_module, print_generic
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import ComputeStep, Phase, Schedule, Transfer


def _find_mlir_opt() -> str | None:
    found = shutil.which("mlir-opt-22")
    if found:
        return found
    fallback = "/usr/lib/llvm-22/bin/mlir-opt"
    return fallback if os.access(fallback, os.X_OK) else None


MLIR_OPT = _find_mlir_opt()
needs_mlir_opt = pytest.mark.mlir_opt  # skipped where mlir-opt-22 is missing (tests/conftest.py)

# Costs that a 6-digit decimal cannot hold, so mlir-opt must print them exactly some other way.
AWKWARD_COSTS = (0.123456789, 1e-7, 2.5e-5 / 3)


def every_op_module() -> ModuleOp:
    """One op of every kind in the three dialects."""
    s = Schedule(
        collective=1,
        kind=Kind.ALLTOALL,
        algorithm="phased",
        nprocs=2,
        phases=(
            Phase(
                (Transfer(0, 1, 64, 0, 1),), (Transfer(0, 1, 64, 0, 1), Transfer(1, 0, 64, 1, 0))
            ),
            Phase.of([Transfer(1, 0, 64, 1, 0)], sync="barrier"),
            Phase((), ()),
        ),
        src="A",
        dst="B",
        line=7,
    )
    return ModuleOp(
        [
            dist.ProcessorsOp("P", [2, 1], line=1),
            dist.ArrayOp("A", [8, 8], "float64", ["BLOCK", "*"], "P", line=2),
            dist.ArrayOp("B", [8, 8], "float64", ["*", "CYCLIC(4)"], "P", line=3),
            dist.AssignOp("B", "A", line=4, collective=0),
            dist.ComputeOp("rows", "P", AWKWARD_COSTS[0], line=5),
            coll.AlltoallOp.uniform(1, "A", "B", 2, 64, line=4, self_bytes=64),
            coll.SparseOp(2, "B", "A", [[0, 3], [0, 0]], line=6),
            sched.compute_to_ir(ComputeStep("rows", 2, AWKWARD_COSTS[1], line=5)),
            sched.schedule_to_ir(s),
            sched.compute_to_ir(ComputeStep("cols", 2, AWKWARD_COSTS[2], line=8)),
        ]
    )


def op_summary(module: ModuleOp) -> list[tuple[str, dict[str, object]]]:
    """Every nested op's name and attributes, in walk order, compared by value."""
    out: list[tuple[str, dict[str, object]]] = []
    op: Operation
    for op in module.walk():
        if op is not module:
            out.append((op.name, dict(op.attributes)))
    return out


def run_mlir_opt(text: str, *extra: str) -> str:
    assert MLIR_OPT is not None
    done = subprocess.run(
        [MLIR_OPT, "--allow-unregistered-dialect", "--verify-each", *extra, "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"mlir-opt rejected our IR:\n{done.stderr}\n--- input ---\n{text}"
    return done.stdout


def test_generic_form_round_trips_in_xdsl() -> None:
    module = every_op_module()
    module.verify()
    text = print_generic(module)
    assert "phase_sync = [" in text and "attributes" not in text
    again = parse_module(text)
    assert print_generic(again) == text
    assert op_summary(again) == op_summary(module)


@needs_mlir_opt
@pytest.mark.parametrize("extra", [(), ("--mlir-print-op-generic",)], ids=["custom", "generic"])
def test_mlir_opt_accepts_and_keeps_attribute_values(extra: tuple[str, ...]) -> None:
    module = every_op_module()
    out = run_mlir_opt(print_generic(module), *extra)
    back = parse_module(out)
    assert op_summary(back) == op_summary(module)
    costs = [
        op.cost_s.value.data
        for op in back.walk()
        if isinstance(op, (dist.ComputeOp, sched.ComputeOp))
    ]
    assert costs == list(AWKWARD_COSTS)
    plan_ops = [op for op in back.ops if isinstance(op, sched.ScheduleOp)]
    assert [sched.schedule_from_ir(op) for op in plan_ops] == [
        sched.schedule_from_ir(op) for op in module.ops if isinstance(op, sched.ScheduleOp)
    ]


@needs_mlir_opt
def test_mlir_opt_output_is_a_fixed_point() -> None:
    once = run_mlir_opt(print_generic(every_op_module()))
    assert run_mlir_opt(print_generic(parse_module(once))) == once
