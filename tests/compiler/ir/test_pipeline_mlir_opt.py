"""`phalanx compile --emit mlir` output is accepted by Debian's real mlir-opt-22."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import compile_text
from phalanx.compiler.ir.printing import print_generic


def mlir_opt() -> str:
    for candidate in (shutil.which("mlir-opt-22"), "/usr/lib/llvm-22/bin/mlir-opt"):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("mlir-opt-22 is not installed (Debian package mlir-22-tools; `make setup`)")


@pytest.mark.mlir_opt
@pytest.mark.parametrize("stage", ["dist", "coll", "sched"])
def test_every_stage_parses_in_mlir_opt(examples, stage):
    compiled = compile_text((examples / "transpose.phx").read_text())
    text = print_generic(compiled.stages[stage])
    done = subprocess.run([mlir_opt(), "--allow-unregistered-dialect", "--mlir-print-op-generic"],
                          input=text, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f'"{stage}.' in done.stdout


@pytest.mark.mlir_opt
def test_cli_emit_mlir_roundtrips_through_mlir_opt(cli, examples):
    text = cli("compile", str(examples / "transpose.phx"), "--emit", "mlir").out
    done = subprocess.run([mlir_opt(), "--allow-unregistered-dialect"], input=text,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\"local\"") == 15  # phase_sync of the 15 phases
    assert ", 0, 1, 2048, 0, 1, 0," in done.stdout  # (src, dst, bytes, origin, final, message)
