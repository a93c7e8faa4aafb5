"""One Diagnostic type for syntax, semantic and usage errors, rendered like a compiler's.

    examples/bad.phx:3:12: error: undeclared array 'C'
        B = C
            ^
    hint: declare it with `array C(...) of float64 distribute (...) onto P`
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A 1-based position in a source file."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """An error with its location, message, the source line and an optional hint."""

    message: str
    loc: SourceLoc | None = None
    source_line: str | None = None
    hint: str | None = None
    severity: str = "error"

    def render(self) -> str:
        where = f"{self.loc}: " if self.loc else "phalanx: "
        out = [f"{where}{self.severity}: {self.message}"]
        if self.loc and self.source_line is not None:
            out.append("    " + self.source_line.rstrip("\n"))
            out.append("    " + " " * max(self.loc.col - 1, 0) + "^")
        if self.hint:
            out.append(f"hint: {self.hint}")
        return "\n".join(out)


class PhalanxError(Exception):
    """Raised for bad input of any stage; the CLI prints `diagnostic.render()` and exits."""

    exit_code = 1  # program errors; usage errors use UsageError (exit code 2)

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.render())
        self.diagnostic = diagnostic


class UsageError(PhalanxError):
    """Bad command-line usage: unknown target spec, bad option value."""

    exit_code = 2


def error_at(loc: SourceLoc | None, message: str, source: str | None = None,
             hint: str | None = None) -> PhalanxError:
    """Build a PhalanxError, taking the source line from `source` when given."""
    line_text = None
    if loc is not None and source is not None:
        lines = source.splitlines()
        if 1 <= loc.line <= len(lines):
            line_text = lines[loc.line - 1]
    return PhalanxError(Diagnostic(message, loc, line_text, hint))


def usage_error(message: str, hint: str | None = None) -> UsageError:
    return UsageError(Diagnostic(message, None, None, hint))


# `cost` and a number at the end of the text before a syntax error: the unit is what is missing
# (the grammar's only number followed by a name is a compute statement's cost).
_COST_NUMBER = re.compile(r"(?<![A-Za-z0-9_])cost\s+([0-9][0-9.eE+-]*)\s*$")


def syntax_message(source: str, line: int, col: int, message: str,
                   hint: str | None) -> tuple[str, str | None]:
    """The message and hint of a syntax error at `line`:`col` (1-based), both front ends alike:
    their own, except where a compute statement's cost has no unit (`cost 5`), which says so."""
    lines = source.splitlines()
    found = _COST_NUMBER.search(lines[line - 1][:col - 1]) if 1 <= line <= len(lines) else None
    if found is None:
        return message, hint
    number = found.group(1)
    return (f"syntax error: the cost {number} has no time unit",
            f"write a unit after the number: s, ms, us or cycles (e.g. cost {number} ms)")

