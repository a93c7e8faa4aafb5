"""`sweep --sizes` for reductions: the size is the partial's bytes (issue 27, item 3)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.sweep import kind_program, sweep


@pytest.mark.parametrize("kind", ["reduce", "allreduce"])
@pytest.mark.parametrize("size, element_bytes", [(8, 8), (1024, 8), (12, 1)])
def test_a_reduction_of_size_bytes_combines_partials_of_that_many_bytes(kind, size, element_bytes):
    """float64 elements where the size is a multiple of 8, else bytes."""
    coll = compile_program(kind_program(kind, 4, size), target="ideal:4",
                           algorithm=f"{kind}=binomial").collectives[0]
    assert coll.kind == kind
    assert coll.element_bytes == element_bytes
    assert int(coll.network_matrix.max()) == size


def test_sweep_measures_each_size_of_an_allreduce():
    """Before: 8 and 1K both measured an 8-byte partial (equal times, the second labelled 1024).
    ideal:8 (alpha 10 us, beta 0.01 us/B), recursive doubling: 3 steps, each a start-up and the
    partial, the combining at 100 M operations/s on top."""
    out = sweep("ideal:8", "allreduce", [8, 1024], "recursive-doubling")
    small, large = out["results"]
    assert (small["block_bytes"], large["block_bytes"]) == (8, 1024)
    assert small["verified"] and large["verified"]
    assert large["time_s"] - small["time_s"] >= 3 * (1024 - 8) * 0.01e-6
    assert large["lower_bound_s"] > small["lower_bound_s"]
