"""Bruck's all-to-all and its dimension-wise form (compiler/library/index.py): forwarded
blocks arrive once and verify, the simulated time meets Bruck et al. 1997's closed form on
`ideal` (issue 27's textbook case), preconditions are refused with their reasons, and `auto`
takes Bruck for short blocks where it wins."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.cost import bruck_alltoall_s
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program


def run(spec: str, size: int, algorithm: str = "auto", nprocs: int | None = None):
    source = alltoall_program(nprocs or resolve(spec).nnodes, size)
    compiled = compile_program(source, target=spec, algorithm=algorithm)
    return compiled, simulate(compiled).collectives[0]


@pytest.mark.parametrize("spec", ["ideal:16", "ideal:12,copy_us_per_byte=0.002"])
@pytest.mark.parametrize("size", [8, 2048])
def test_bruck_meets_its_closed_form_on_ideal(spec, size):
    """ceil(log2 P) rounds of alpha + (copy + beta) n_k b: 4 x (10 + 0.01 x 64) us = 42.56 us
    for 8-byte blocks on ideal:16, where `direct` takes 151 us."""
    compiled, result = run(spec, size, "alltoall=bruck")
    machine, coll = compiled.target, compiled.collectives[0]
    assert result.verified and result.algorithm == "bruck"
    closed_s = bruck_alltoall_s(coll.nprocs, size, machine.library.machine.port)
    assert result.time_s == pytest.approx(closed_s, rel=0.02)
    assert machine.predict_time_s(coll, "bruck") == pytest.approx(closed_s, rel=1e-9)
    sends = [p for p in compiled.schedules[0].phases if any(t.src != t.dst for t in p.sends)]
    assert len(sends) == (coll.nprocs - 1).bit_length()
    if spec == "ideal:16" and size == 8:
        assert closed_s == pytest.approx(42.56e-6)


@pytest.mark.parametrize("spec, rounds", [("torus:4x4", 4), ("hypercube:3", 3), ("paragon:2x3", 3)])
def test_dim_bruck_verifies_and_keeps_each_round_inside_one_dimension(spec, rounds):
    compiled, result = run(spec, 8, "alltoall=dim-bruck")
    assert result.verified and result.algorithm == "dim-bruck"
    grid = compiled.target.library.machine.dimensions
    sends = [p for p in compiled.schedules[0].phases if any(t.src != t.dst for t in p.sends)]
    assert len(sends) == rounds
    for phase in sends:  # every message changes one coordinate only
        for t in phase.sends:
            changed = [i for i in range(len(grid))
                       if _coords(t.src, grid)[i] != _coords(t.dst, grid)[i]]
            assert len(changed) == 1, (t, grid)


def _coords(node: int, dims: tuple[int, ...]) -> list[int]:
    out = []
    for size in reversed(dims):
        node, c = divmod(node, size)
        out.append(c)
    return out[::-1]


@pytest.mark.parametrize("spec", ["torus:4x4", "sp2:8", "ksr1:8"])
def test_bruck_verifies_on_routed_and_ring_machines(spec):
    _, result = run(spec, 8, "alltoall=bruck")
    assert result.verified and result.algorithm == "bruck"


def test_dim_bruck_is_refused_with_its_reason():
    with pytest.raises(PhalanxError) as err:
        run("ideal:8", 8, "alltoall=dim-bruck")
    assert "unknown algorithm 'dim-bruck' for an alltoall on target 'ideal:8'" in str(err.value)
    assert "choose one of: auto, direct, bruck" in str(err.value)
    with pytest.raises(PhalanxError) as err:
        run("torus:4x4", 8, "alltoall=dim-bruck", nprocs=8)
    assert ("algorithm 'dim-bruck' cannot lower the alltoall of line 4 on torus:4x4: it needs "
            "all 16 nodes of the 4x4 network, but the collective has 8 processors") in str(err.value)
    machine = resolve("hypercube:4")
    coll = compile_program(alltoall_program(8, 8), target="hypercube:4", cost="closed-form").collectives[0]
    assert machine.unmet(coll, "dim-bruck") == ("it needs all 16 nodes of the 4-dimensional "
                                                "hypercube's network, but the collective has 8 "
                                                "processors")


@pytest.mark.parametrize("spec, long", [("ideal:16", "direct"), ("hypercube:3", None)])
def test_auto_takes_bruck_for_short_blocks_where_it_wins(spec, long):
    """On the hypercube Bruck's partners r + 2^k and the cube's r XOR 2^k tie at 8 bytes
    (the family's exchanges are simulated beside them: Bokhari's barriers and shuffles lose)."""
    compiled, result = run(spec, 8)
    assert result.algorithm in ("bruck", "dim-bruck") and result.verified
    machine, coll = compiled.target, compiled.collectives[0]
    others = [a for a, why in machine.candidates(coll) if why is None]
    assert all(machine.predict(coll, a) >= machine.predict(coll, result.algorithm) for a in others)
    if long is not None:
        assert compile_program(alltoall_program(16, 65536), target=spec).schedules[0].algorithm \
            == long


def test_bruck_is_offered_and_described_beside_each_targets_own_exchanges():
    for spec, dims in (("ideal:8", False), ("iwarp:8x8", True), ("torus:4x4", True),
                       ("paragon:2x3", True), ("hypercube:3", True), ("sp2:8", False),
                       ("cs2:8", False), ("ksr1:8", False), ("proteus:groups=1", False)):
        machine = resolve(spec)
        names = machine.algorithms("alltoall")
        assert "bruck" in names and ("dim-bruck" in names) == dims, (spec, names)
        assert machine.describe_algorithm("alltoall", "bruck").startswith("Bruck et al. 1997")
