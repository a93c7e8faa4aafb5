"""lit configuration of the FileCheck tests: one .mlir file per pass of compiler/ir/passes.py.

Run with `python -m lit tests/filecheck` (tests/compiler/ir/test_filecheck_suite.py does it
from pytest). `phalanx-opt` and `filecheck` are looked up next to the Python running lit
(the venv's bin/); without an installed `phalanx-opt` script, `python -m
phalanx.compiler.ir.opt` stands in for it.
"""

# ruff: noqa: F821  (lit provides `config`)
from __future__ import annotations

import os
import shutil
import sys

import lit.formats

config.name = "phalanx-filecheck"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]  # inputs of RUN lines, not tests
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

BIN = os.path.dirname(sys.executable)


def _tool(name: str, fallback: str | None = None) -> str:
    found = os.path.join(BIN, name)
    if os.access(found, os.X_OK):
        return found
    on_path = shutil.which(name)
    if on_path:
        return on_path
    if fallback is None:
        raise SystemExit(f"lit.cfg.py: '{name}' is neither in {BIN} nor on PATH; install the "
                         "dev dependencies (pip install -e '.[dev]')")
    return fallback


PHALANX_OPT = _tool("phalanx-opt", f"{sys.executable} -m phalanx.compiler.ir.opt")
config.substitutions.append(("phalanx-opt", PHALANX_OPT))
config.substitutions.append(("filecheck", _tool("filecheck")))
config.environment["PATH"] = BIN + os.pathsep + os.environ.get("PATH", "")
# A worktree run with PYTHONPATH pointing at its own checkout tests that checkout's passes.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
