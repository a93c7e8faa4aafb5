"""Both front ends (lark and ANTLR) accept the same programs, build the same AST, reject the same inputs.

The programs come from every example and from hypothesis strategies that follow grammar/phalanx.lark
rule by rule (keywords as names, comments, CRLF, nested bodies); the malformed ones are those
programs with characters and tokens deleted, inserted and replaced. Rejections must agree on the
error's line, column and message. Keywords are whole words in both (`offloat64` is a name).
Derandomized, so every run checks the same inputs.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phalanx.grammar import antlr_parser, frontend
from phalanx.grammar import parser as lark_parser
from phalanx.grammar.diagnostics import PhalanxError

KEYWORDS = ("target", "processors", "array", "of", "distribute", "replicated", "onto", "on", "compute",
            "cost", "pipeline", "stages", "repeat", "at")
STATEMENT_KEYWORDS = {"target", "processors", "array", "compute", "pipeline", "repeat"}
SETTINGS = settings(derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def outcome(parse, source: str):
    """("ok", statements) or ("error", line, col, message) — what a conformance check compares."""
    try:
        return ("ok", parse(source, "g.phx").statements)
    except PhalanxError as exc:
        d = exc.diagnostic
        assert d.loc is not None and (d.hint is None or d.hint.startswith(("expected ", "write a unit")))
        return ("error", d.loc.line, d.loc.col, d.message)


def assert_conform(source: str) -> str:
    by_lark, by_antlr = outcome(lark_parser.parse, source), outcome(antlr_parser.parse, source)
    assert by_lark == by_antlr, f"{source!r}\n  lark:  {by_lark}\n  antlr: {by_antlr}"
    return by_lark[0]


# ---- programs from the grammar ------------------------------------------------------------------

words = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True)
names = st.one_of(words, st.sampled_from(KEYWORDS), st.sampled_from(["P", "BLOCK", "CYCLIC", "float64", "_"]))
stmt_names = names.filter(lambda n: n not in STATEMENT_KEYWORDS)
ints = st.from_regex(r"[0-9]{1,4}", fullmatch=True)
signed_ints = st.from_regex(r"[+-]?[0-9]{1,3}", fullmatch=True)
numbers = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,2})?([eE][+-]?[0-9]{1,2})?", fullmatch=True)
target_specs = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,5}(:[A-Za-z0-9_.=,x:\-]{1,8})?", fullmatch=True)
strings = st.text(st.characters(blacklist_characters='"\n\r', codec="utf-8"), max_size=8).map(
    lambda s: f'"{s}"')
newlines = st.sampled_from(["\n", "\r\n", "\n\n", "  # note\n", "\t! x = y\n", "\n# c\n\n"])
WORDLIKE = re.compile(r"[\w.:+\-,=]")


def listed(items: list[str]) -> list[str]:
    return [t for i, item in enumerate(items) for t in ([","] if i else []) + [item]]


@st.composite
def dim_dists(draw) -> list[str]:
    if draw(st.integers(0, 3)) == 0:
        return ["*"]
    return [draw(names)] + (["(", draw(ints), ")"] if draw(st.booleans()) else [])


@st.composite
def mappings(draw) -> list[str]:
    kind = draw(st.sampled_from(["distribute", "replicated", "on"]))
    if kind == "replicated":
        return ["replicated", "onto", draw(names)]
    if kind == "on":
        return ["on", draw(names), "(", *listed(draw(st.lists(ints, min_size=1, max_size=3))), ")"]
    dims = draw(st.lists(dim_dists(), min_size=1, max_size=3))
    spec = dims[0] if len(dims) == 1 and draw(st.booleans()) else [
        "(", *[t for i, d in enumerate(dims) for t in ([","] if i else []) + d], ")"]
    return ["distribute", *spec, "onto", draw(names)]


@st.composite
def triplets(draw) -> list[str]:
    """`lo:hi[:stride]` with either bound left out (an array section's subscript)."""
    lo = [draw(signed_ints)] if draw(st.booleans()) else []
    hi = [draw(signed_ints)] if draw(st.booleans()) else []
    return [*lo, ":", *hi, *([":", draw(signed_ints)] if draw(st.booleans()) else [])]


def arg_list(args: list[list[str]]) -> list[str]:
    return [t for i, a in enumerate(args) for t in ([","] if i else []) + a]


@st.composite
def call_args(draw, nested: bool = True) -> list[str]:
    arg = draw(st.sampled_from(["name", "int", "keyword", "triplet"] + (["section"] if nested else [])))
    if arg == "name":
        return [draw(names)]
    if arg == "triplet":
        return draw(triplets())
    if arg == "section":  # a section (or call) as an argument: spread(A(:, 3), dim=2)
        inner = draw(st.lists(call_args(nested=False), min_size=1, max_size=3))
        return [draw(names), "(", *arg_list(inner), ")"]
    return [draw(signed_ints)] if arg == "int" else [draw(names), "=", draw(signed_ints)]


@st.composite
def simple_statements(draw) -> list[str]:
    kind = draw(st.sampled_from(["target", "processors", "array", "compute", "assign", "call"]))
    if kind == "target":
        return ["target", draw(target_specs)]
    if kind == "processors":
        at = ["at", draw(ints)] if draw(st.booleans()) else []
        return ["processors", draw(names), "(", *listed(draw(st.lists(ints, min_size=1, max_size=3))), ")",
                *at]
    if kind == "array":
        shape = listed(draw(st.lists(ints, min_size=1, max_size=3)))
        return ["array", draw(names), "(", *shape, ")", "of", draw(names), *draw(mappings())]
    if kind == "compute":
        return ["compute", draw(strings), "on", draw(names), "cost", draw(numbers), draw(names)]
    lhs = [draw(stmt_names)]
    if draw(st.integers(0, 3)) == 0:  # a section on the left: B(:, 0:63) = ...
        lhs += ["(", *arg_list(draw(st.lists(call_args(nested=False), min_size=1, max_size=3))), ")"]
    head = [*lhs, "=", draw(names)]
    if kind == "assign":
        return head
    args = draw(st.lists(call_args(), min_size=1, max_size=3))
    return [*head, "(", *arg_list(args), ")"]


def statements(depth: int) -> st.SearchStrategy[list[str]]:
    if depth == 0:
        return simple_statements()
    return st.one_of(simple_statements(), simple_statements(), blocks(depth))


@st.composite
def blocks(draw, depth: int) -> list[str]:
    head = ["pipeline", "stages", "=", draw(ints)] if draw(st.booleans()) else ["repeat", draw(ints)]
    body = draw(st.lists(statements(depth - 1), max_size=3))
    return [*head, "{", *draw(separated(body)), "}"]


@st.composite
def separated(draw, stmts: list[list[str]]) -> list[str]:
    """Statements with newline tokens between them, and maybe before and after."""
    out = [draw(newlines)] if draw(st.booleans()) else []
    for i, stmt in enumerate(stmts):
        out += ([draw(newlines)] if i else []) + stmt
    return out + ([draw(newlines)] if stmts and draw(st.booleans()) else [])


@st.composite
def programs(draw) -> str:
    tokens = draw(separated(draw(st.lists(statements(2), max_size=6))))
    text = tokens[0] if tokens else ""
    for prev, token in zip(tokens, tokens[1:]):
        glue = WORDLIKE.match(prev[-1]) and WORDLIKE.match(token[0])
        text += draw(st.sampled_from([" ", "\t", "  "] if glue else ["", " "])) + token
    return text


SNIPPETS = ["(", ")", ",", "=", "*", "{", "}", ":", ".", "-", "+", "$", '"', "#", "\n", "\r", " ", "1",
            "1.5", "-2", "x", "_", "on", "onto", "of", "target", "stages", "array", "e5", ":4", "\r\n",
            "at", "::", "(:", "1:"]


@st.composite
def mutated_programs(draw) -> str:
    text = draw(programs())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        cut = draw(st.integers(1, 3)) if op != "insert" else 0
        new = draw(st.sampled_from(SNIPPETS)) if op != "delete" else ""
        text = text[:at] + new + text[at + cut:]
    return text


# ---- the checks ---------------------------------------------------------------------------------

def test_every_example_parses_the_same(examples):
    paths = sorted(examples.glob("*.phx"))
    assert paths
    for path in paths:
        by_lark, by_antlr = frontend.parse_path(path, "lark"), frontend.parse_path(path, "antlr")
        assert by_lark == by_antlr and by_lark.statements, path


@settings(SETTINGS, max_examples=200)
@given(programs())
def test_generated_programs_parse_to_the_same_ast(source):
    assert assert_conform(source) == "ok", source


@settings(SETTINGS, max_examples=300)
@given(mutated_programs())
def test_mutated_programs_fail_alike(source):
    assert_conform(source)


def test_mutations_do_break_programs():
    """The mutation strategy must produce rejections, or the test above would check nothing."""
    seen = []

    @settings(SETTINGS, max_examples=40)
    @given(mutated_programs())
    def collect(source):
        seen.append(assert_conform(source))

    collect()
    assert seen.count("error") >= len(seen) // 4 and seen.count("ok") >= 1, seen


def test_brace_after_a_statement_fails_alike():
    assert assert_conform("B = A }") == "error"  # '}' outside a body, where end of file is expected


@pytest.mark.parametrize("source", [
    "repeat 3 {\nB = A\n",          # body never closed
    "processors P(1.5)",             # lark's INT stops at '.', ANTLR's NUMBER does not
    "processors P(1e5)",
    "B = A:3",                       # ANTLR lexes A:3 as one TARGET_SPEC
    "array A(4) of f distribute:3",  # a keyword before the ':'
    "compute \"unterminated on P cost 1 ms",
    "target _x",                     # a name, but not a target spec
    "target = A",                    # 'target' is reserved at the start of a statement
    "B = f(- 3)",
    "\n\n  B = A\rC = D",
])
def test_known_tricky_inputs_fail_alike(source):
    assert assert_conform(source) == "error"


@pytest.mark.parametrize("source", [
    "on = A", "stages = cost", "processors target(4)", "array of(4) of of distribute of onto of",
    "target target", "target compute", "target iwarp:8x8,link=40e6", "compute \"a!b\" on P cost 1ems",
    "repeat 2 { repeat 3 { B = A } }", "repeat 3 {}", "C = cshift(G, -2, dim=+2)", "B = A\r\n",
    "Y = spread(sum(A(0:255, :), dim=2), dim=2, ncopies=8)",
])
def test_keywords_as_names_and_corner_cases_parse_alike(source):
    assert assert_conform(source) == "ok"


def test_glued_keywords_are_rejected_by_both():
    for source in ["array A(4) offloat64 replicated onto P", "array A(4) of f onP(0)",
                   "compute \"x\" on P cost5 ms"]:
        assert outcome(lark_parser.parse, source)[0] == "error"
        assert outcome(antlr_parser.parse, source)[0] == "error"
