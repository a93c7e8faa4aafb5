"""Text in and out of the IR: the generic form real `mlir-opt` reads, and a parser back."""

from __future__ import annotations

from io import StringIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from phalanx.compiler.ir.dialects import make_context


def print_generic(module: ModuleOp) -> str:
    """The module in MLIR's generic form, every attribute in the attribute dictionary."""
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    out.write("\n")
    return out.getvalue()


def parse_module(text: str, *, verify: bool = True, name: str = "<text>") -> ModuleOp:
    """Parse generic or custom-form text (xDSL's or mlir-opt's output) into a module.

    Top-level ops without an enclosing `builtin.module` are wrapped in one.
    """
    module = Parser(make_context(), text, name).parse_module()
    if verify:
        module.verify()
    return module
