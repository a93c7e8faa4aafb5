"""Parse .phx text into the AST with lark (LALR, strict, positions); errors become Diagnostics."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import lark
from lark import Token, Transformer, v_args

from phalanx.grammar import ast
from phalanx.grammar.diagnostics import PhalanxError, SourceLoc, error_at, syntax_message, usage_error

GRAMMAR_PATH = Path(__file__).with_name("phalanx.lark")

# What a user would call the grammar's terminals in an error message.
TOKEN_NAMES = {
    "NAME": "a name", "INT": "an integer", "NUMBER": "a number", "STRING": "a quoted string",
    "TARGET_SPEC": "a target spec such as ideal:16", "_NL": "end of line", "$END": "end of file",
    "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "STAR": "'*'",
    "SIGNED_INT": "an integer", "LBRACE": "'{'", "RBRACE": "'}'",
}


@lru_cache(maxsize=1)
def _lark_parser() -> lark.Lark:
    # cache=True keeps the built LALR tables in the temp dir, keyed by the grammar's hash.
    return lark.Lark(GRAMMAR_PATH.read_text(), parser="lalr", strict=True,
                     propagate_positions=True, maybe_placeholders=False, cache=True)


def parse(source: str, file: str = "<input>") -> ast.Module:
    """Parse a whole program; raise PhalanxError with file:line:col on a syntax error."""
    try:
        tree = _lark_parser().parse(source)
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax_error(exc, source, file) from None
    statements = _ToAst(file).transform(tree)
    return ast.Module(file, source, tuple(statements))


def read_source(path: str | Path) -> str:
    """A program's text; an unreadable file is a usage error (exit 2: the command names a file
    that is not a program), whichever front end reads it."""
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise usage_error(f"cannot read program '{path}': {exc}",
                          "check the path and that the file is UTF-8 text") from None


def parse_file(path: str | Path) -> ast.Module:
    return parse(read_source(path), str(path))


def _syntax_error(exc: lark.exceptions.UnexpectedInput, source: str, file: str) -> PhalanxError:
    line, col = getattr(exc, "line", 1), getattr(exc, "column", 1)
    if line is None or line < 1:  # unexpected end of input
        lines = source.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
    loc = SourceLoc(file, line, col)
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        char = source[exc.pos_in_stream] if exc.pos_in_stream < len(source) else "end of file"
        message = f"syntax error: unexpected character {char!r}"
    elif isinstance(exc, lark.exceptions.UnexpectedToken):
        token = exc.token
        shown = "end of file" if token.type == "$END" else (
            "end of line" if token.type == "_NL" else repr(str(token)))
        message = f"syntax error: unexpected {shown}"
    else:
        message = "syntax error: unexpected end of file"
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
    hint = None
    if expected:
        names = [TOKEN_NAMES.get(e) or _keyword_name(e) for e in expected]
        hint = "expected " + ", ".join(dict.fromkeys(names))
    message, hint = syntax_message(source, line, col, message, hint)
    return error_at(loc, message, source, hint)


def _keyword_name(terminal: str) -> str:
    if terminal.startswith("_") and terminal[1:].isalpha():  # a keyword such as _ONTO
        return repr(terminal[1:].lower())
    pattern = _lark_parser().get_terminal(terminal).pattern if terminal else None
    if pattern is not None and pattern.type == "str":
        return repr(pattern.value)
    return terminal.lower()


@v_args(meta=True)
class _ToAst(Transformer):
    """One method per grammar rule; builds AST nodes and nothing else."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def _loc(self, meta_or_token) -> SourceLoc:
        return SourceLoc(self.file, meta_or_token.line, meta_or_token.column)

    def start(self, meta, children):
        return list(children)

    def target_decl(self, meta, children):
        return ast.TargetDecl(str(children[0]), self._loc(meta))

    def processors_decl(self, meta, children):
        name, shape, *at = children
        return ast.ProcessorsDecl(str(name), shape, self._loc(meta), int(at[0]) if at else None,
                                  self._loc(at[0]) if at else None)

    def array_decl(self, meta, children):
        name, shape, elem_type, (mapping, dist, onto, owner) = children
        return ast.ArrayDecl(str(name), shape, str(elem_type), mapping, dist, str(onto), owner,
                             self._loc(meta), self._loc(elem_type), self._loc(onto))

    def distributed(self, meta, children):
        dist, onto = children
        return (ast.Mapping.DISTRIBUTED, dist, onto, ())

    def replicated(self, meta, children):
        return (ast.Mapping.REPLICATED, (), children[0], ())

    def single_owner(self, meta, children):
        onto, owner = children
        return (ast.Mapping.SINGLE, (), onto, owner)

    def dist_list(self, meta, children):
        return tuple(children)

    def dist_single(self, meta, children):
        return tuple(children)

    def dist_named(self, meta, children):
        block = int(children[1]) if len(children) > 1 else None
        return ast.DimDist(str(children[0]).upper(), block, self._loc(meta))

    def dist_star(self, meta, children):
        return ast.DimDist("*", None, self._loc(meta))

    def compute_stmt(self, meta, children):
        label, onto, cost, unit = children
        return ast.Compute(str(label)[1:-1], str(onto), float(cost), str(unit), self._loc(meta),
                           self._loc(onto), self._loc(unit))

    def assign_stmt(self, meta, children):
        dst, src = children
        return ast.Assign(ast.NameRef(str(dst), self._loc(dst)), src, self._loc(meta))

    def assign_section(self, meta, children):
        name, args, src = children
        return ast.Assign(ast.Call(str(name), args, self._loc(name)), src, self._loc(meta))

    def name_ref(self, meta, children):
        return ast.NameRef(str(children[0]), self._loc(children[0]))

    def call_expr(self, meta, children):
        func, args = children
        return ast.Call(str(func), args, self._loc(func))

    def call_args(self, meta, children):
        return tuple(children)

    def arg_name(self, meta, children):
        return ast.NameRef(str(children[0]), self._loc(children[0]))

    def arg_call(self, meta, children):
        func, args = children
        return ast.Call(str(func), args, self._loc(func))

    def arg_triplet(self, meta, children):
        lo, hi, *stride = children
        return ast.Triplet(lo, hi, int(stride[0]) if stride else None, self._loc(meta))

    def bound(self, meta, children):
        return int(children[0]) if children else None

    def arg_int(self, meta, children):
        return ast.IntArg(int(children[0]), self._loc(children[0]))

    def arg_keyword(self, meta, children):
        name, value = children
        return ast.KeywordArg(str(name), int(value), self._loc(name))

    def pipeline_stmt(self, meta, children):
        stages, body = children
        return ast.Pipeline(int(stages), body, self._loc(meta))

    def repeat_stmt(self, meta, children):
        count, body = children
        return ast.Repeat(int(count), body, self._loc(meta))

    def body(self, meta, children):
        return tuple(children)

    def int_list(self, meta, children):
        return tuple(int(t) for t in children)

    def __default_token__(self, token: Token):
        return token
