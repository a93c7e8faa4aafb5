"""Semantic errors: each with its message and its file:line:col, and the checked program."""

from __future__ import annotations

import pytest

from conftest import HEADER, compile_text, error_of


def test_checked_program(examples):
    compiled = compile_text((examples / "transpose.phx").read_text())
    program = compiled.program
    assert program.nprocs == 16 and program.target_spec == "ideal:16"
    assert program.arrays["A"].proc_dims == (0, None) and program.arrays["B"].proc_dims == (None, 0)
    compute, assign = program.statements
    assert compute.cost_s == pytest.approx(1.5e-3)
    assert assign.perm == (0, 1) and assign.op == "copy" and assign.shift == (0, 0)


def where_and_message(text: str) -> tuple[str, str]:
    first = text.splitlines()[0]
    where, _, message = first.partition(": error: ")
    return where, message


WORK = 'compute "work" on P cost 1 ms\n'
CASES = [
    ("undeclared array", HEADER + "B = C\n", "t.phx:5:5", "undeclared array 'C'", "declare it"),
    ("undeclared dst", HEADER + "Z = A\n", "t.phx:5:1", "undeclared array 'Z'", None),
    ("shape mismatch",
     HEADER + "array C(128, 256) of float64 distribute (BLOCK, *) onto P\nC = A\n",
     "t.phx:6:1", "shape mismatch: 'C' is (128, 256) but the right-hand side is (256, 256)", None),
    ("transpose shape",
     HEADER + "array C(128, 256) of float64 distribute (BLOCK, *) onto P\nC = transpose(C)\n",
     "t.phx:6:1", "shape mismatch: 'C' is (128, 256) but the right-hand side is (256, 128)", None),
    ("self assignment", HEADER + "A = A\n", "t.phx:5:1", "'A = A' moves nothing", None),
    ("unknown distribution",
     "processors P(4)\narray A(16) of float64 distribute BLOCKY onto P\n",
     "t.phx:2:35", "unknown distribution 'BLOCKY'", "use BLOCK, BLOCK(k), CYCLIC, CYCLIC(k) or *"),
    ("unknown target", "target nosuch:4\nprocessors P(4)\n" + WORK, "t.phx:1:1",
     "unknown target 'nosuch' in spec 'nosuch:4'", "known targets: "),
    ("bad target parameter", "target ideal:4,speed=3\nprocessors P(4)\n" + WORK, "t.phx:1:1",
     "unknown parameter 'speed' for target 'ideal'", "known parameters: alpha_us"),
    ("redeclared", "processors P(4)\narray P(4) of byte distribute BLOCK onto P\n", "t.phx:2:1",
     "'P' is already declared at line 1", None),
    ("unknown element type", "processors P(4)\narray A(4) of real distribute BLOCK onto P\n",
     "t.phx:2:15", "unknown element type 'real'", "use one of byte, int32"),
    ("rank of distribution", "processors P(4)\narray A(4, 4) of byte distribute BLOCK onto P\n",
     "t.phx:2:34", "distribution has 1 entries but array 'A' has 2 dimensions", None),
    ("two distributed dims",
     "processors P(4)\narray A(4, 4) of byte distribute (BLOCK, CYCLIC) onto P\n",
     "t.phx:2:35", "array 'A' distributes 2 dimension(s) onto the 1-D arrangement 'P'", None),
    ("block size", "processors P(4)\narray A(16) of byte distribute CYCLIC(0) onto P\n",
     "t.phx:2:32", "block size 0 in CYCLIC(0) is less than 1", None),
    ("block too small", "processors P(4)\narray A(16) of byte distribute BLOCK(2) onto P\n",
     "t.phx:2:32", "BLOCK(2) over 4 processors covers only 8 of 16 elements", "at least 4"),
    ("undeclared processors", "array A(16) of byte distribute BLOCK onto Q\n", "t.phx:1:43",
     "undeclared processor arrangement 'Q'", None),
    ("too many processors", "target ideal:8\nprocessors P(16)\n" + WORK, "t.phx:2:1",
     "processor arrangement 'P' has 16 processors but target 'ideal:8' has 8 nodes", None),
    ("unknown time unit", HEADER + 'compute "x" on P cost 3 hours\n', "t.phx:5:25",
     "unknown time unit 'hours'", "use one of s, ms, us"),
    ("unknown function", HEADER + "B = fft(A)\n", "t.phx:5:5", "unknown function 'fft'", None),
    ("element type mismatch",
     HEADER + "array C(256, 256) of float32 distribute (BLOCK, *) onto P\nC = A\n", "t.phx:6:1",
     "element type mismatch: 'C' is float32, 'A' is float64", None),
    ("no statements", "target ideal:4\nprocessors P(4)\n", "t.phx:1:1",
     "the program has no statements to run", None),
    ("processors rank", "processors Q(4, 4, 2, 2)\n", "t.phx:1:1",
     "processor arrangement 'Q' has 4 dimensions; at most 3 are supported", None),
    ("second target", "target ideal:4\ntarget ideal:8\n", "t.phx:2:1",
     "second target declaration (first at line 1)", None),
]


@pytest.mark.parametrize("name, source, where, message, hint", CASES, ids=[c[0] for c in CASES])
def test_semantic_error(name, source, where, message, hint):
    text = error_of(source)
    got_where, got_message = where_and_message(text)
    assert (got_where, got_message) == (where, message)
    caret_line = text.splitlines()[2]
    assert caret_line.index("^") == 4 + int(where.split(":")[2]) - 1
    if hint:
        assert hint in text


def test_program_without_target_needs_one():
    text = error_of("processors P(4)\narray A(4) of byte distribute BLOCK onto P\n"
                    "array B(4) of byte distribute CYCLIC onto P\nB = A\n")
    assert "declares no target and none was given" in text and "--target SPEC" in text
