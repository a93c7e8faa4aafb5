"""Determinism: the same program, target and seed give byte-identical JSON reports."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, HEADER

CASES = [
    (HEADER + 'compute "w" on P cost 1 ms\nB = A\n', []),
    (HEADER + "B = A\n", ["--faults", "error-rate=0.1;corrupt-rate=0.05"]),
    ((EXAMPLES / "fft2d_iwarp.phx").read_text(), ["--algorithm", "alltoall=phased"]),
    ((EXAMPLES / "fft2d_iwarp.phx").read_text(), ["--algorithm", "alltoall=message-passing-random"]),
    ("target paragon:4x8\nprocessors P(32)\narray A(64, 64) of int32 distribute (BLOCK, *) onto P\n"
     "array B(64, 64) of int32 distribute (*, CYCLIC) onto P\narray s(1) of int32 replicated "
     "onto P\nB = A\ns = sum(B)\n", []),
]


@pytest.mark.parametrize("source, options", CASES)
def test_json_reports_are_byte_identical(cli, tmp_path, source, options):
    prog = tmp_path / "prog.phx"
    prog.write_text(source)
    runs = [cli("run", str(prog), "--json", "--seed", "7", *options) for _ in range(2)]
    assert runs[0].code == 0 and runs[0].out == runs[1].out
    other = cli("run", str(prog), "--json", "--seed", "8", *options)
    assert other.code == 0 and other.json()["seed"] == 8
