"""Parse .phx text into the AST with the ANTLR4 parser generated from grammar/Phalanx.g4.

The second front end (`--parser antlr`): it builds exactly the AST of grammar/parser.py (lark), with
the same locations, and reports a syntax error as the same Diagnostic at the same place. lark reads
left to right with a contextual lexer; ANTLR lexes without context. Where the two lexers cut the
text differently (`A:3` is one TARGET_SPEC token here, `1.5` one NUMBER) the error is placed where
lark's lexer stops, so both front ends point at the same character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from antlr4 import CommonTokenStream, InputStream, ParserRuleContext, Token
from antlr4.error.ErrorListener import ErrorListener

from phalanx.grammar import ast
from phalanx.grammar._antlr.PhalanxLexer import PhalanxLexer
from phalanx.grammar._antlr.PhalanxParser import PhalanxParser
from phalanx.grammar._antlr.PhalanxVisitor import PhalanxVisitor
from phalanx.grammar.diagnostics import SourceLoc, error_at, syntax_message

P = PhalanxParser
KEYWORD_TYPES = {P.literalNames[t].strip("'"): t for t in range(P.TARGET, P.AT + 1)}
STATEMENT_KEYWORDS = {P.TARGET, P.PROCESSORS, P.ARRAY, P.COMPUTE, P.PIPELINE, P.REPEAT}
# The same words as grammar/parser.py's TOKEN_NAMES, so hints read alike.
TOKEN_NAMES = {
    P.NAME: "a name", P.UNAME: "a name", P.INT: "an integer", P.SIGNED_INT: "an integer",
    P.NUMBER: "a number", P.STRING: "a quoted string", P.TARGET_SPEC: "a target spec such as ideal:16",
    P.NL: "end of line", Token.EOF: "end of file",
}
_NAME_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse(source: str, file: str = "<input>") -> ast.Module:
    """Parse a whole program; raise PhalanxError with file:line:col on a syntax error."""
    lexer = PhalanxLexer(InputStream(source))
    lexer.removeErrorListeners()  # ERROR_CHAR takes any stray character: the lexer never errs
    tokens = CommonTokenStream(lexer)
    parser = PhalanxParser(tokens)
    parser.removeErrorListeners()
    parser.addErrorListener(_SyntaxErrors(source, tokens))
    try:
        tree = parser.program()
    except _SyntaxFailure as failure:
        loc = SourceLoc(file, failure.line, failure.col)
        message, hint = syntax_message(source, failure.line, failure.col, failure.message, failure.hint)
        raise error_at(loc, message, source, hint) from None
    return ast.Module(file, source, _AstBuilder(file).visit(tree))


@dataclass
class _SyntaxFailure(Exception):
    """The first syntax error, where lark's reading stops; raised from inside the ANTLR parser."""

    line: int
    col: int
    message: str
    hint: str | None = None


class _SyntaxErrors(ErrorListener):
    """Turns ANTLR's first syntax error into lark's wording and place, and stops the parse."""

    def __init__(self, source: str, tokens: CommonTokenStream):
        self.source = source
        self.tokens = tokens

    def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):  # noqa: N802 (ANTLR API)
        expected = set(recognizer.getExpectedTokens())
        token: Token = offendingSymbol
        failure = self._contextual_split(token, expected) or self._unexpected(token)
        failure.hint = _hint(expected)
        raise failure

    def _unexpected(self, token: Token) -> _SyntaxFailure:
        if token.type == Token.EOF:  # lark places end of file on the last token it read
            last = next((t for t in reversed(self.tokens.tokens) if t.type != Token.EOF), None)
            line, col = (last.line, last.column + 1) if last else (1, 1)
            return _SyntaxFailure(line, col, "syntax error: unexpected end of file")
        if token.type == P.ERROR_CHAR:
            shown = f"character {token.text!r}"
        else:
            shown = "end of line" if token.type == P.NL else repr(token.text)
        return _SyntaxFailure(token.line, token.column + 1, f"syntax error: unexpected {shown}")

    def _contextual_split(self, token: Token, expected: set[int]) -> _SyntaxFailure | None:
        """Where lark's contextual lexer takes a prefix of this token, fail after the prefix."""
        text = token.text or ""
        if token.type == P.TARGET_SPEC:
            prefix = text.split(":", 1)[0]
            if KEYWORD_TYPES.get(prefix, P.NAME) not in expected:
                return None
            return self._at(token, len(prefix), "syntax error: unexpected ':'")
        if token.type == P.NUMBER and expected & {P.INT, P.SIGNED_INT} and P.NUMBER not in expected:
            digits = len(text) - len(text.lstrip("0123456789"))
            if text[digits] == ".":
                return self._at(token, digits, "syntax error: unexpected character '.'")
            word = _NAME_AT.match(self.source, token.start + digits).group()
            return self._at(token, digits, f"syntax error: unexpected {word!r}")
        return None

    @staticmethod
    def _at(token: Token, offset: int, message: str) -> _SyntaxFailure:
        return _SyntaxFailure(token.line, token.column + 1 + offset, message)


def _hint(expected: set[int]) -> str | None:
    """'expected ...' in lark's words: a name stands for the keywords a name may also be."""
    shown = set(expected)
    if P.TARGET_SPEC in shown:
        shown -= {P.NAME, *KEYWORD_TYPES.values()}
    if P.NAME in shown:
        keywords = set(KEYWORD_TYPES.values())
        shown -= keywords if keywords <= shown else keywords - STATEMENT_KEYWORDS
    if P.NUMBER in shown:
        shown.discard(P.INT)
    names = sorted({TOKEN_NAMES.get(t) or P.literalNames[t] for t in shown if t > 0 or t == Token.EOF})
    return "expected " + ", ".join(names) if names else None


class _AstBuilder(PhalanxVisitor):
    """One method per grammar rule; builds AST nodes and nothing else (like parser._ToAst)."""

    def __init__(self, file: str):
        self.file = file

    def _loc(self, node) -> SourceLoc:
        token = node.start if isinstance(node, ParserRuleContext) else node.getSymbol()
        return SourceLoc(self.file, token.line, token.column + 1)

    def _statements(self, ctx) -> tuple[ast.Statement, ...]:
        return tuple(self.visit(s) for s in ctx.statement())

    def visitProgram(self, ctx: P.ProgramContext):
        return self._statements(ctx)

    def visitStatement(self, ctx: P.StatementContext):
        return self.visit(ctx.getChild(0))

    def visitTargetDecl(self, ctx: P.TargetDeclContext):
        return ast.TargetDecl(ctx.targetSpec().getText(), self._loc(ctx))

    def visitProcessorsDecl(self, ctx: P.ProcessorsDeclContext):
        at = ctx.INT()
        return ast.ProcessorsDecl(ctx.name().getText(), self.visit(ctx.intList()), self._loc(ctx),
                                  int(at.getText()) if at else None, self._loc(at) if at else None)

    def visitArrayDecl(self, ctx: P.ArrayDeclContext):
        name, elem_type = ctx.name()
        mapping, dist, onto, owner = self.visit(ctx.mapping())
        return ast.ArrayDecl(name.getText(), self.visit(ctx.intList()), elem_type.getText(), mapping,
                             dist, onto.getText(), owner, self._loc(ctx), self._loc(elem_type),
                             self._loc(onto))

    def visitDistributed(self, ctx: P.DistributedContext):
        return (ast.Mapping.DISTRIBUTED, self.visit(ctx.distSpec()), ctx.name(), ())

    def visitReplicated(self, ctx: P.ReplicatedContext):
        return (ast.Mapping.REPLICATED, (), ctx.name(), ())

    def visitSingleOwner(self, ctx: P.SingleOwnerContext):
        return (ast.Mapping.SINGLE, (), ctx.name(), self.visit(ctx.intList()))

    def visitDistList(self, ctx: P.DistListContext):
        return tuple(self.visit(d) for d in ctx.dimDist())

    def visitDistSingle(self, ctx: P.DistSingleContext):
        return (self.visit(ctx.dimDist()),)

    def visitDistNamed(self, ctx: P.DistNamedContext):
        block = int(ctx.INT().getText()) if ctx.INT() else None
        return ast.DimDist(ctx.name().getText().upper(), block, self._loc(ctx))

    def visitDistStar(self, ctx: P.DistStarContext):
        return ast.DimDist("*", None, self._loc(ctx))

    def visitComputeStmt(self, ctx: P.ComputeStmtContext):
        onto, unit = ctx.name()
        return ast.Compute(ctx.STRING().getText()[1:-1], onto.getText(), float(ctx.number().getText()),
                           unit.getText(), self._loc(ctx), self._loc(onto), self._loc(unit))

    def visitAssignStmt(self, ctx: P.AssignStmtContext):
        name = ctx.stmtName()
        if ctx.callArgs() is None:
            dst = ast.NameRef(name.getText(), self._loc(name))
        else:
            dst = ast.Call(name.getText(), self.visit(ctx.callArgs()), self._loc(name))
        return ast.Assign(dst, self.visit(ctx.expr()), self._loc(ctx))

    def visitExpr(self, ctx: P.ExprContext):
        name = ctx.name()
        if ctx.callArgs() is None:
            return ast.NameRef(name.getText(), self._loc(name))
        return ast.Call(name.getText(), self.visit(ctx.callArgs()), self._loc(name))

    def visitCallArgs(self, ctx: P.CallArgsContext):
        return tuple(self.visit(a) for a in ctx.callArg())

    def visitArgNameKeywordOrCall(self, ctx: P.ArgNameKeywordOrCallContext):
        name = ctx.name()
        if ctx.callArgs() is not None:
            return ast.Call(name.getText(), self.visit(ctx.callArgs()), self._loc(name))
        if ctx.signedInt() is None:
            return ast.NameRef(name.getText(), self._loc(name))
        return ast.KeywordArg(name.getText(), int(ctx.signedInt().getText()), self._loc(name))

    def visitArgIntOrTriplet(self, ctx: P.ArgIntOrTripletContext):
        ints = [int(i.getText()) for i in ctx.signedInt()]
        if ctx.COLON(0) is None:
            return ast.IntArg(ints[0], self._loc(ctx))
        stride = ints[1] if ctx.COLON(1) is not None else None
        return ast.Triplet(ints[0], self.visit(ctx.bound()), stride, self._loc(ctx))

    def visitArgTriplet(self, ctx: P.ArgTripletContext):
        stride = int(ctx.signedInt().getText()) if ctx.signedInt() is not None else None
        return ast.Triplet(None, self.visit(ctx.bound()), stride, self._loc(ctx))

    def visitBound(self, ctx: P.BoundContext):
        return int(ctx.signedInt().getText()) if ctx.signedInt() is not None else None

    def visitPipelineStmt(self, ctx: P.PipelineStmtContext):
        return ast.Pipeline(int(ctx.INT().getText()), self.visit(ctx.body()), self._loc(ctx))

    def visitRepeatStmt(self, ctx: P.RepeatStmtContext):
        return ast.Repeat(int(ctx.INT().getText()), self.visit(ctx.body()), self._loc(ctx))

    def visitBody(self, ctx: P.BodyContext):
        return self._statements(ctx)

    def visitIntList(self, ctx: P.IntListContext):
        return tuple(int(t.getText()) for t in ctx.INT())

