"""The IRDL description (compiler/ir/irdl/phalanx.irdl) lets LLVM's real mlir-opt verify our IR.

mlir-opt-22 runs WITHOUT --allow-unregistered-dialect: every op must be one the IRDL file
defines, with its attributes present and of the right kind.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import compile_text
from phalanx.compiler.driver import compile_program
from phalanx.compiler.ir.dialects import ALL_DIALECTS
from phalanx.compiler.ir.printing import print_generic
from phalanx.compiler.recognize import KINDS
from phalanx.compiler.semantics import ELEMENT_BYTES, FUNCTIONS, REDUCTIONS
from phalanx.compiler.target import TARGETS, parse_spec

IRDL = Path(__file__).resolve().parents[3] / "compiler" / "ir" / "irdl" / "phalanx.irdl"
EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.phx"))

# Every statement form on 4 processors: all collective kinds, a pipeline, a repeat.
EVERY_FORM = """target ideal:4
processors P(4)
processors Q(2, 2)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
array G(8, 8) of complex64 distribute (BLOCK, CYCLIC(2)) onto Q
array S(8) of int32 on P(0)
array R(8) of int32 replicated onto P
array C(8) of int32 distribute CYCLIC onto P
array s(1) of int32 replicated onto P
array t(1) of int32 on P(1)
compute "start" on P cost 3 us
B = A
B = transpose(A)
G = cshift(G, -2, dim=2)
R = S
S = C
C = S
R = C
C = cshift(C, 1)
s = sum(C)
t = prod(C)
pipeline stages=2 {
  compute "rows" on P cost 1 ms
  B = A
}
repeat 2 {
  s = max(C)
}
"""


def mlir_opt() -> str:
    for candidate in (shutil.which("mlir-opt-22"), "/usr/lib/llvm-22/bin/mlir-opt"):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("mlir-opt-22 is not installed (Debian package mlir-22-tools; `make setup`)")


def irdl_verify(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([mlir_opt(), f"--irdl-file={IRDL}", "--verify-each", "-"], input=text,
                          capture_output=True, text=True, timeout=120)


def assert_verified(text: str, what: str) -> None:
    done = irdl_verify(text)
    assert done.returncode == 0, f"mlir-opt rejected {what}:\n{done.stderr[:3000]}"


def irdl_ops() -> dict[str, list[str]]:
    """`dialect.op` -> attribute names, read from the IRDL file."""
    ops: dict[str, list[str]] = {}
    dialect = current = None
    for line in IRDL.read_text().splitlines():
        line = line.split("//")[0]
        if m := re.match(r"\s*irdl\.dialect @(\w+)", line):
            dialect = m.group(1)
        elif m := re.match(r"\s*irdl\.operation @(\w+)", line):
            current = ops.setdefault(f"{dialect}.{m.group(1)}", [])
        elif m := re.match(r'\s*"(\w+)" = %', line):
            current.append(m.group(1))
    return ops


def irdl_enum(op: str, prefix: str) -> list[str]:
    """The strings an `irdl.is` enumeration of `op` accepts (values named %prefix_*)."""
    block = IRDL.read_text().split(f"irdl.operation @{op} {{", 1)[1].split("irdl.attributes", 1)[0]
    return re.findall(rf'%{prefix}_\w+ = irdl\.is "(\w+)"', block)


def test_irdl_names_exactly_the_xdsl_ops_and_attributes():
    xdsl_ops = {op.name: sorted(op.get_irdl_definition().attributes)
                for dialect in ALL_DIALECTS for op in dialect.operations}
    assert {name: sorted(attrs) for name, attrs in irdl_ops().items()} == xdsl_ops


SECTION_FORMS = """target ideal:8
processors P(4)
processors Q(2, 2) at 4
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array G(8, 8) of float64 distribute (BLOCK, CYCLIC(2)) onto Q
array X(8) of float64 distribute CYCLIC onto P
array T(8, 8, 2) of float64 distribute (*, BLOCK, BLOCK) onto Q
G(:, 0:3) = A(7:0:-1, 4:7)
G = eoshift(A, -2, dim=2)
T = spread(G, dim=3, ncopies=2)
X = max(G(:, ::2), dim=2)
X(0:3) = prod(A(0:3, :), dim=2)
X(5) = min(A(:, 5), dim=1)
"""


@pytest.mark.mlir_opt
def test_mlir_opt_verifies_sections_spread_eoshift_and_dim_reductions():
    compiled = compile_text(SECTION_FORMS)
    for stage, module in compiled.stages.items():
        assert_verified(print_generic(module), f"the section forms at stage {stage}")


def test_irdl_enumerations_match_the_language():
    assert irdl_enum("assign", "how") == ["copy", "transpose", *FUNCTIONS[1:4], *REDUCTIONS]
    assert irdl_enum("array", "elem") == list(ELEMENT_BYTES)
    assert irdl_enum("reduce", "how") == list(REDUCTIONS)
    assert irdl_enum("schedule", "kind") == list(KINDS)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
@pytest.mark.mlir_opt
def test_mlir_opt_verifies_every_stage_of_every_example(example):
    source = example.read_text()
    spec = re.search(r"^target\s+(\S+)", source, re.M)
    if spec and parse_spec(spec.group(1))[0] not in TARGETS:
        pytest.skip(f"target {spec.group(1)} is not registered")
    compiled = compile_program(example, cost="closed-form")  # the IR, not auto's choice
    for stage, module in compiled.stages.items():
        assert_verified(print_generic(module), f"{example.name} at stage {stage}")


@pytest.mark.mlir_opt
def test_mlir_opt_verifies_every_statement_form():
    compiled = compile_text(EVERY_FORM)
    kinds = {c.kind for c in compiled.collectives}
    assert {"alltoall", "broadcast", "gather", "scatter", "allgather", "cshift", "allreduce",
            "reduce", "sparse"} <= kinds
    for stage, module in compiled.stages.items():
        text = print_generic(module)
        assert f'"{stage}.pipeline"' in text or stage == "coll"
        assert_verified(text, f"every statement form at stage {stage}")


GOOD = ('"dist.processors"() {sym_name = "P", shape = array<i64: 4>, base = 0 : i64, '
        'line = 2 : i64} : () -> ()\n'
        '"dist.array"() {sym_name = "A", shape = array<i64: 8>, elem_type = "float64", '
        'distribution = ["BLOCK"], onto = "P", mapping = "distributed", owner = -1 : i64, '
        'line = 3 : i64} : () -> ()\n')


@pytest.mark.parametrize("change, message", [
    ((', line = 2 : i64}', '}'), 'attribute "line" is expected but not provided'),
    (('shape = array<i64: 4>', 'shape = [4]'),
     "expected base attribute 'builtin.dense_array' but got 'builtin.array'"),
    (('line = 3 : i64', 'line = "3"'),
     "expected base attribute 'builtin.integer' but got 'builtin.string'"),
    (('mapping = "distributed"', 'mapping = "scattered"'), '"scattered"\' does not satisfy'),
    (('elem_type = "float64"', 'elem_type = "float16"'), '"float16"\' does not satisfy'),
    (('"dist.array"', '"dist.arrays"'), "unregistered operation 'dist.arrays'"),
])
@pytest.mark.mlir_opt
def test_mlir_opt_rejects_malformed_ops(change, message):
    assert_verified(GOOD, "the well-formed ops")
    old, new = change
    bad = GOOD.replace(old, new, 1)
    assert bad != GOOD
    done = irdl_verify(bad)
    assert done.returncode != 0
    assert message in done.stderr, done.stderr


@pytest.mark.mlir_opt
def test_mlir_opt_rejects_operands_and_regions_on_our_ops():
    text = ('%0 = "arith.constant"() {value = 1 : i64} : () -> i64\n'
            '"sched.pipeline"(%0) {stages = 2 : i64, line = 1 : i64} : (i64) -> ()\n')
    done = irdl_verify(text)
    assert done.returncode != 0 and "expects exactly 0 operands" in done.stderr
