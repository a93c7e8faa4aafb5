"""Reductions cost arithmetic: every partial a node combines takes one operation at the
machine's rate (Network.combine_time_s, the `arith_MFLOPS` parameter of each target), in the
simulator and in the cost model `auto` ranks algorithms by."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

SLOW = "arith_MFLOPS=0.001"  # one operation takes 1 ms: combining dominates everything else


# A reduce of one 8-byte float64 partial per node (runtime/sweep.py: the size is the partial's).
def reduce_time_s(spec: str, algorithm: str) -> float:
    compiled = compile_program(kind_program("reduce", 8, 8), target=spec, algorithm=f"reduce={algorithm}",
                               file="<reduce>")
    result = simulate(compiled)
    assert result.verified
    return result.collectives[0].time_s


@pytest.mark.parametrize("algorithm, combines", [("linear", 8), ("binomial", 4)])
def test_combining_follows_the_critical_path(algorithm, combines):
    """Linear: the root combines all 8 partials (its own too), one after another; binomial: a
    partial is combined at each of the log2(8) = 3 levels plus the root's own."""
    fast, slow = reduce_time_s("ideal:8", algorithm), reduce_time_s(f"ideal:8,{SLOW}", algorithm)
    assert slow - fast == pytest.approx(combines * 1e-3, rel=0.01)


def test_the_cost_model_charges_the_same_combining():
    machine = resolve(f"ideal:8,{SLOW}")
    compiled = compile_program(kind_program("reduce", 8, 8), target=machine.spec + "," + SLOW,
                               algorithm="reduce=binomial", file="<reduce>")
    predicted = compiled.candidates[0]
    simulated = simulate(compiled).collectives[0].time_s
    binomial = next(c.time_s for c in predicted if c.algorithm == "binomial")
    assert binomial == pytest.approx(simulated, rel=0.05)


@pytest.mark.parametrize("spec, mflops", [("paragon:2x4", 75.0), ("sp2:8", 266.0), ("cs2:8", 100.0),
                                          ("ksr1:8", 40.0), ("iwarp:4x4", 20.0), ("proteus", 40.0)])
def test_every_machine_combines_at_its_own_rate(spec, mflops):
    network = resolve(spec).build_network(Engine())
    assert network.combine_time_s(10) == pytest.approx(10 / (mflops * 1e6))
