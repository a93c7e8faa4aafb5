"""The lark front end: AST shape and locations, syntax errors with file:line:col and a caret."""

from __future__ import annotations

import pytest

from phalanx.grammar import ast
from phalanx.grammar.diagnostics import PhalanxError, UsageError
from phalanx.grammar.parser import parse, parse_file


def test_example_parses_with_locations(examples):
    module = parse_file(examples / "transpose.phx")
    kinds = [type(s).__name__ for s in module.statements]
    assert kinds == ["TargetDecl", "ProcessorsDecl", "ArrayDecl", "ArrayDecl", "Compute", "Assign"]
    array = module.statements[2]
    assert array.name == "A" and array.shape == (256, 256) and array.elem_type == "float64"
    assert [str(d) for d in array.dist] == ["BLOCK", "*"]
    assert (array.loc.line, array.loc.col) == (5, 1)
    compute = module.statements[4]
    assert (compute.label, compute.cost, compute.unit) == ("row pass", 1.5, "ms")


def test_call_and_cyclic_block():
    module = parse("array C(64) of int32 distribute CYCLIC(4) onto P\nB = transpose(A)\n", "x.phx")
    decl, assign = module.statements
    assert decl.dist == (ast.DimDist("CYCLIC", 4, decl.dist[0].loc),)
    assert isinstance(assign.src, ast.Call) and assign.src.func == "transpose"
    (arg,) = assign.src.args
    assert (arg.name, arg.loc.line, arg.loc.col) == ("A", 2, 15)


def test_comments_and_blank_lines():
    module = parse("\n# one\n! two\nprocessors P(4)   ! trailing\n\n", "x.phx")
    assert len(module.statements) == 1


def test_last_line_without_newline():
    assert len(parse("processors P(4)", "x.phx").statements) == 1


@pytest.mark.parametrize("source, where, message, hint", [
    ("processors P(16\n", "x.phx:1:16", "unexpected end of line", "expected ',', ')'"),
    ("B = A $\n", "x.phx:1:7", "unexpected character '$'", None),
    ("processors P(4)\narray A(4) of float64 distribute BLOCK onto\n", "x.phx:2:44",
     "unexpected end of line", "expected a name"),
    ("processors P(4) P\n", "x.phx:1:17", "unexpected 'P'", None),
    ("array A(4,) of byte distribute * onto P\n", "x.phx:1:11", "unexpected ')'",
     "expected an integer"),
])
def test_syntax_errors_have_location_and_caret(source, where, message, hint):
    with pytest.raises(PhalanxError) as info:
        parse(source, "x.phx")
    text = info.value.diagnostic.render()
    first, line, caret = text.splitlines()[:3]
    assert first.startswith(f"{where}: error: syntax error: ") and message in first
    col = int(where.split(":")[2])
    assert caret.index("^") == 4 + col - 1
    assert line.strip() == source.splitlines()[int(where.split(":")[1]) - 1].strip()
    if hint:
        assert hint in text


def test_unreadable_file_is_a_diagnostic(tmp_path):
    with pytest.raises(UsageError) as info:  # exit 2: the command names no readable program
        parse_file(tmp_path / "missing.phx")
    assert "cannot read program" in str(info.value) and "missing.phx" in str(info.value)
