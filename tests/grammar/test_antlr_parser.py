"""The ANTLR front end: AST and locations, lark's diagnostics, no console output, the generated parser."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

from phalanx.grammar import antlr_parser, ast, frontend
from phalanx.grammar._antlr.PhalanxLexer import PhalanxLexer
from phalanx.grammar._antlr.PhalanxParser import PhalanxParser
from phalanx.grammar.diagnostics import PhalanxError, SourceLoc, UsageError

GRAMMAR = Path(__file__).resolve().parents[2] / "grammar"  # the sources, not the installed package
FULL = """target iwarp:8x8
processors Q(8, 8)
array G(64, 64) of float32 distribute (BLOCK, CYCLIC(2)) onto Q   ! a comment
array R(4096) of float64 replicated onto P
array S(4096) of float64 on P(0)
compute "row FFTs" on P cost 18.5 ms
C = cshift(G, -2, dim=2)
pipeline stages=8 {
  B = transpose(A)
}
"""


def loc(line: int, col: int) -> SourceLoc:
    return SourceLoc("f.phx", line, col)


def test_every_statement_form_builds_the_ast_with_locations():
    stmts = antlr_parser.parse(FULL, "f.phx").statements
    assert stmts[0] == ast.TargetDecl("iwarp:8x8", loc(1, 1))
    assert stmts[1] == ast.ProcessorsDecl("Q", (8, 8), loc(2, 1))
    g = stmts[2]
    assert (g.shape, g.elem_type, g.mapping, g.onto) == ((64, 64), "float32", "distributed", "Q")
    assert g.dist == (ast.DimDist("BLOCK", None, loc(3, 40)), ast.DimDist("CYCLIC", 2, loc(3, 47)))
    assert (g.elem_type_loc, g.onto_loc) == (loc(3, 20), loc(3, 63))
    assert (stmts[3].mapping, stmts[3].dist, stmts[3].owner) == ("replicated", (), ())
    assert (stmts[4].mapping, stmts[4].onto, stmts[4].owner, stmts[4].onto_loc) == ("single", "P", (0,),
                                                                                 loc(5, 29))
    assert stmts[5] == ast.Compute("row FFTs", "P", 18.5, "ms", loc(6, 1), loc(6, 23), loc(6, 35))
    call = stmts[6].src
    assert call == ast.Call("cshift", (ast.NameRef("G", loc(7, 12)), ast.IntArg(-2, loc(7, 15)),
                                       ast.KeywordArg("dim", 2, loc(7, 19))), loc(7, 5))
    pipeline = stmts[7]
    assert (pipeline.stages, pipeline.loc) == (8, loc(8, 1))
    assert pipeline.body == (ast.Assign(ast.NameRef("B", loc(9, 3)),
                                        ast.Call("transpose", (ast.NameRef("A", loc(9, 17)),), loc(9, 7)),
                                        loc(9, 3)),)


def test_same_ast_as_lark_on_the_full_language():
    assert antlr_parser.parse(FULL, "f.phx") == frontend.parse_source(FULL, "f.phx", parser="lark")


def test_keywords_are_names_except_at_the_start_of_a_statement():
    decl, assign = antlr_parser.parse("array on(4) of of distribute onto onto cost\nstages = repeat",
                                      "f.phx").statements
    assert (decl.name, decl.elem_type, decl.dist[0].kind, decl.onto) == ("on", "of", "ONTO", "cost")
    assert (assign.dst.name, assign.src.name) == ("stages", "repeat")
    with pytest.raises(PhalanxError, match=r"f.phx:1:9: error: syntax error: unexpected '='"):
        antlr_parser.parse("compute = A", "f.phx")


@pytest.mark.parametrize("source, where, message, hint", [
    ("processors P(16\n", "x.phx:1:16", "unexpected end of line", "expected ')'"),
    ("B = A $\n", "x.phx:1:7", "unexpected character '$'", "expected end of file, end of line"),
    ("processors P(4)\narray A(4) of float64 distribute BLOCK onto\n", "x.phx:2:44",
     "unexpected end of line", "expected a name"),
    ("processors P(4) P\n", "x.phx:1:17", "unexpected 'P'", None),
    ("array A(4,) of byte distribute * onto P\n", "x.phx:1:11", "unexpected ')'", "expected an integer"),
    ("repeat 2 {\n", "x.phx:1:11", "unexpected end of file", "expected '}', a name, end of line"),
    ("B = A:3\n", "x.phx:1:6", "unexpected ':'", None),
    ("processors P(1.5)\n", "x.phx:1:15", "unexpected character '.'", None),
    ("target _p\n", "x.phx:1:8", "unexpected '_p'", "expected a target spec such as ideal:16"),
])
def test_syntax_errors_have_lark_location_caret_and_hint(source, where, message, hint):
    with pytest.raises(PhalanxError) as info:
        antlr_parser.parse(source, "x.phx")
    text = info.value.diagnostic.render()
    first, line, caret = text.splitlines()[:3]
    assert first == f"{where}: error: syntax error: {message}"
    row, col = map(int, where.split(":")[1:])
    assert line == "    " + source.splitlines()[row - 1] and caret.index("^") == 4 + col - 1
    assert text.splitlines()[-1].startswith("hint: expected ")
    if hint:
        assert text.splitlines()[-1] == f"hint: {hint}"


def test_antlr_prints_nothing_on_bad_input(capfd):
    for source in ["B = A $ # ~\n", "processors P(\n", "\"unterminated\n", "}{"]:
        with pytest.raises(PhalanxError):
            antlr_parser.parse(source, "x.phx")
    assert capfd.readouterr() == ("", "")


def test_frontend_dispatches_and_rejects_an_unknown_parser(examples):
    path = examples / "transpose.phx"
    assert frontend.parse_path(path, parser="antlr") == frontend.parse_path(path)
    assert frontend.parse_source("B = A", "f.phx", "antlr") == frontend.parse_source("B = A", "f.phx")
    with pytest.raises(UsageError) as info:
        frontend.parse_source("B = A", "f.phx", parser="yacc")
    assert info.value.diagnostic.message == "unknown parser 'yacc'"
    assert info.value.diagnostic.hint == "use one of: lark, antlr"


def test_unreadable_file_is_the_same_diagnostic_for_both(tmp_path):
    rendered = []
    for name in frontend.PARSERS:
        with pytest.raises(PhalanxError) as info:
            frontend.parse_path(tmp_path / "missing.phx", parser=name)
        rendered.append(info.value.diagnostic.render())
    assert rendered[0] == rendered[1] and "cannot read program" in rendered[0]
    (tmp_path / "bin.phx").write_bytes(b"\xff\xfe")
    with pytest.raises(PhalanxError, match="UTF-8"):
        frontend.parse_path(tmp_path / "bin.phx", parser="antlr")


def test_generated_parser_is_stamped_and_pinned():
    stamp = "GENERATED by `make antlr` from grammar/Phalanx.g4 with ANTLR 4.13.2 — do not edit"
    generated = sorted((GRAMMAR / "_antlr").iterdir())
    assert [p.name for p in generated if p.suffix in (".py", ".md")] == [
        "PhalanxLexer.py", "PhalanxParser.py", "PhalanxVisitor.py", "README.md", "__init__.py"]
    for path in generated:
        if path.is_file():
            assert stamp in path.read_text().splitlines()[0], path
    assert version("antlr4-python3-runtime") == "4.13.2"
    script = (GRAMMAR / "tools" / "generate_antlr.sh").read_text()
    assert "ANTLR_VERSION=4.13.2" in script and re.search(r"JAR_SHA256=[0-9a-f]{64}\n", script)


def test_generated_parser_matches_the_grammar_file():
    """A stale _antlr/ (Phalanx.g4 edited without `make antlr`) shows as different rule/token names."""
    g4 = (GRAMMAR / "Phalanx.g4").read_text()
    rules = re.findall(r"^([a-z]\w*)\s*:", g4, re.M)
    tokens = re.findall(r"^([A-Z]\w*)\s*:", g4, re.M)
    assert list(PhalanxParser.ruleNames) == rules
    assert list(PhalanxLexer.ruleNames) == tokens
    assert "ERROR_CHAR" in tokens and tokens[-1] == "ERROR_CHAR"  # the catch-all must stay last
