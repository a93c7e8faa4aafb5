"""Choose the front end: `lark` (grammar/parser.py, the default) or `antlr` (grammar/antlr_parser.py).

Both build the same AST and the same diagnostics (tests/grammar/test_conformance.py keeps them so);
the CLI's `--parser` option comes here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from phalanx.grammar import ast
from phalanx.grammar.diagnostics import usage_error
from phalanx.grammar.parser import read_source

PARSERS = ("lark", "antlr")


def parse_source(source: str, file: str = "<input>", parser: str = "lark") -> ast.Module:
    """Parse program text with the named front end."""
    return _front_end(parser)(source, file)


def parse_path(path: str | Path, parser: str = "lark") -> ast.Module:
    """Read and parse a .phx file."""
    front_end = _front_end(parser)  # a bad parser name is reported before the file is read
    return front_end(read_source(path), str(path))


def _front_end(parser: str) -> Callable[[str, str], ast.Module]:
    # Imported on demand: the ANTLR runtime is only loaded by those who ask for it.
    if parser == "lark":
        from phalanx.grammar.parser import parse
        return parse
    if parser == "antlr":
        from phalanx.grammar.antlr_parser import parse
        return parse
    raise usage_error(f"unknown parser '{parser}'", hint=f"use one of: {', '.join(PARSERS)}")
