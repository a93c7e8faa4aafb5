"""`phalanx-opt`: run Phalanx's IR passes on MLIR text, like `mlir-opt` / `xdsl-opt`.

    phalanx-opt [FILE|-] [-p PIPELINE] [--print-op-generic] [-o OUT]

Reads a module (generic or custom form, a file or stdin), verifies it, runs the passes
of PIPELINE from the registry (compiler/ir/passes.py), verifying after each, and prints
the result. PIPELINE is MLIR's textual form: passes separated by commas, options in
braces separated by spaces; a value runs to the next space, so it may hold `:`, `,`
and `=`:

    -p 'recognize-collectives,lower-coll-to-sched{target=torus:16x16,link_MBps=80 algorithm=alltoall=direct}'

Exit codes: 0 success, 1 bad IR (parse or verify error, a pass that rejects the module),
2 usage errors (unknown pass or option, bad pipeline, unreadable file, bad target spec).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from phalanx.compiler.ir.dialects import make_context
from phalanx.compiler.ir.passes import PASSES
from phalanx.compiler.ir.printing import parse_module
from phalanx.grammar.diagnostics import PhalanxError, usage_error

PassSpec = tuple[str, dict[str, str]]


class IRError(Exception):
    """The input IR is malformed or a pass rejected it (exit code 1)."""


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split at `sep` outside braces and double quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "{":
            depth += 1
        elif not quoted and ch == "}":
            depth -= 1
            if depth < 0:
                raise usage_error(f"unbalanced '}}' in pass pipeline '{text}'")
        elif not quoted and depth == 0 and ch == sep:
            parts.append(text[start:i])
            start = i + 1
    if depth or quoted:
        raise usage_error(f"unclosed '{{' or '\"' in pass pipeline '{text}'")
    return [*parts, text[start:]]


def _parse_options(name: str, body: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in filter(None, _split_top_level(body.strip(), " ")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise usage_error(f"bad option '{item}' of pass '{name}'", "write KEY=VALUE")
        options[key] = value.strip('"')
    return options


def parse_pipeline(text: str) -> list[PassSpec]:
    """`a,b{k=v k2=v2}` -> [("a", {}), ("b", {"k": "v", "k2": "v2"})]."""
    specs: list[PassSpec] = []
    for part in _split_top_level(text.strip(), ","):
        part = part.strip()
        name, brace, rest = part.partition("{")
        name = name.strip()
        if not name:
            raise usage_error(f"empty pass name in pipeline '{text}'",
                              "separate passes with single commas, e.g. -p a,b")
        if brace and not rest.endswith("}"):
            raise usage_error(f"text after the options of pass '{name}' in '{part}'")
        specs.append((name, _parse_options(name, rest[:-1]) if brace else {}))
    return specs


def _convert(name: str, field: dataclasses.Field, text: str) -> object:
    kind = field.type if isinstance(field.type, str) else field.type.__name__
    try:
        if kind == "int":
            return int(text)
        if kind == "bool":
            return {"true": True, "false": False}[text.lower()]
    except (ValueError, KeyError):
        raise usage_error(f"option {field.name}={text!r} of pass '{name}' is not a {kind}") from None
    return text


def build_pass(name: str, options: dict[str, str]) -> ModulePass:
    if name not in PASSES:
        raise usage_error(f"unknown pass '{name}'", f"passes: {', '.join(sorted(PASSES))}")
    fields = {f.name: f for f in dataclasses.fields(PASSES[name])}
    for key in options:
        if key not in fields:
            have = ", ".join(fields) or "none"
            raise usage_error(f"unknown option '{key}' of pass '{name}'", f"its options: {have}")
    return PASSES[name](**{k: _convert(name, fields[k], v) for k, v in options.items()})


def print_module(module: ModuleOp, generic: bool = False) -> str:
    mpi_text = module.attributes.get("phalanx.mpi_mlir")
    if mpi_text is not None:  # lower-sched-to-mpi leaves upstream MLIR text that xDSL cannot model
        return mpi_text.data
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    out.write("\n")
    return out.getvalue()


def run_passes(text: str, pipeline: str = "", generic: bool = False, name: str = "<stdin>") -> str:
    """Parse, verify, run each pass then verify again; the printed result."""
    passes = [build_pass(n, o) for n, o in parse_pipeline(pipeline)] if pipeline.strip() else []
    try:
        module = parse_module(text, name=name)
    except ParseError as exc:  # its message starts with file:line:col
        raise IRError(str(exc)) from None
    except (VerifyException, DiagnosticException) as exc:
        raise IRError(f"{name}: {exc}") from None
    ctx = make_context()
    for p in passes:
        try:
            p.apply(ctx, module)
            module.verify()
        except (VerifyException, DiagnosticException, ValueError) as exc:
            raise IRError(f"pass '{p.name}' failed: {exc}") from None
    return print_module(module, generic)


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(), path
    except OSError as exc:
        raise usage_error(f"cannot read '{path}': {exc.strerror}",
                          "give an MLIR file or - for stdin") from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise usage_error(message, f"see `{self.prog} --help`")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="phalanx-opt", description="Run Phalanx IR passes on MLIR text.",
                epilog=f"passes: {', '.join(sorted(PASSES))}")
    p.add_argument("input", nargs="?", default="-", help="MLIR file (default: stdin)")
    p.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                   help="e.g. recognize-collectives,lower-coll-to-sched{target=ideal:16}")
    p.add_argument("--print-op-generic", "--mlir-print-op-generic", dest="generic",
                   action="store_true", help="print every op in MLIR's generic form")
    p.add_argument("-o", "--output", help="write here instead of stdout")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    # Like the `phalanx` CLI, the tool's entry point fills the registries that
    # lower-coll-to-sched{target=...,cost=...} resolves through; the passes never import targets.
    import phalanx

    phalanx.register_all()
    try:
        args = build_parser().parse_args(argv)
        text, name = _read(args.input)
        result = run_passes(text, args.passes, args.generic, name)
        if args.output:
            Path(args.output).write_text(result)
        else:
            sys.stdout.write(result)
        return 0
    except PhalanxError as exc:
        print(exc.diagnostic.render().replace("phalanx: ", "phalanx-opt: ", 1), file=sys.stderr)
        return exc.exit_code
    except IRError as exc:
        print(f"phalanx-opt: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
