"""Bruck's all-to-all and its dimension-wise form (compiler/library/index.py): forwarded
blocks arrive once and verify, the simulated time meets Bruck et al. 1997's closed form on
`ideal` (issue 27's textbook case), preconditions are refused with their reasons, and `auto`
takes Bruck for short blocks where it wins; the same rounds carry a sparse pattern's blocks."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.cost import bruck_alltoall_s
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.timing import simulated_time_s


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


@pytest.mark.parametrize("spec, relays_copy", [("torus:4x4", False), ("iwarp:8x8", False),
                                               ("paragon:4x4", True), ("cs2:16", True),
                                               ("hypercube:4", True), ("ideal:16", True)])
@pytest.mark.parametrize("algorithm", ["bruck", "radix-bruck"])
def test_a_relay_copies_what_it_forwards_unless_the_message_layer_deposits_it(spec, relays_copy,
                                                                            algorithm):
    """iWarp's deposit library puts a received block where the round that forwards it sends it
    (seed 001 Sec. 3.1: PortModel.deposits), so there a node packs only blocks of its own
    array; the Paragon's, SP2's and CS-2's libraries receive into one buffer (seed 003 Sec. 4:
    the multiphase exchanges' data permutation), so a relay packs again what it forwards.
    Either way every block verifies at its final."""
    machine = resolve(spec)
    compiled, result = run(spec, 8, f"alltoall={algorithm}")
    assert result.verified and machine.library.machine.port.deposits is not relays_copy
    copies = [t for p in compiled.schedules[0].phases for t in p.sends
              if t.src == t.dst and t.origin != t.final]
    assert copies and any(t.src != t.origin for t in copies) is relays_copy


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
    (the family's exchanges are simulated beside them: Bokhari's barriers and shuffles lose);
    there `radix-bruck` in radix 2 sends the top bit's round first, unpacked, and wins by that
    copy; `ideal` copies nothing, and `bruck` is the first of the equals."""
    compiled, result = run(spec, 8)
    assert result.algorithm == ("bruck" if spec.startswith("ideal") else "radix-bruck") and result.verified
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


def first_eighth_program(nprocs: int, size: int) -> str:
    """Every node sends `size` bytes to each of the first eighth of the nodes (bench/efficiency.py's
    sparse case)."""
    receivers = max(nprocs // 8, 1)
    return (f"processors P({nprocs})\nprocessors Q({receivers})\n"
            f"array A({nprocs}, {receivers * size}) of byte distribute (BLOCK, *) onto P\n"
            f"array B({nprocs}, {receivers * size}) of byte distribute (*, BLOCK) onto Q\nB = A\n")


def test_bruck_carries_a_sparse_pattern_in_its_rounds_on_ideal():
    """ideal:8 (alpha 10 us, beta 0.01 us/B), each node to the next and the third next: round 0
    moves the blocks at distances 1 and 3 (bit 0), round 1 the block at distance 3 (bit 1, now
    two along), round 2 none: 2 alpha + 3 (copy + beta) b, against `direct`'s two messages per
    node in XOR steps; a sparse pattern's blocks only, each arriving once."""
    machine = resolve("ideal:8")
    port = machine.library.machine.port
    b = 2048
    m = np.zeros((8, 8), dtype=np.int64)
    m[np.arange(8), (np.arange(8) + 1) % 8] = b
    m[np.arange(8), (np.arange(8) + 3) % 8] = b
    coll = recognize(0, m, "A", "B", 1)
    assert coll.kind == "sparse" and machine.unmet(coll, "bruck") is None
    closed_s = 2 * port.startup_s + 3 * (port.copy_s_per_byte + port.s_per_byte) * b
    assert simulated_time_s(machine, coll, "bruck") == pytest.approx(closed_s, rel=0.02)
    assert machine.predict_time_s(coll, "bruck") == pytest.approx(closed_s, rel=1e-9)
    sends = [p for p in machine.schedule_for(coll, "bruck").phases if any(t.src != t.dst for t in p.sends)]
    assert [len(p.sends) for p in sends] == [16, 8]


@pytest.mark.parametrize("spec, algorithm", [("ideal:16", "bruck"), ("sp2:8", "bruck"),
                                             ("hypercube:4", "dim-bruck"), ("paragon:2x4", "dim-bruck")])
def test_bruck_verifies_a_sparse_pattern_and_auto_takes_it_for_short_blocks(spec, algorithm):
    """Every node to the first eighth at 8 bytes: ceil(log2 P) start-ups at most per node where
    `direct` starts one per receiver; the data arrive once and verify."""
    nprocs = resolve(spec).nnodes
    compiled = compile_program(first_eighth_program(nprocs, 8), target=spec,
                               algorithm=f"sparse={algorithm}")
    assert compiled.collectives[0].kind == "sparse"
    result = simulate(compiled).collectives[0]
    assert result.verified and result.algorithm == algorithm
    if spec == "ideal:16":  # on 64 nodes Bruck's rounds beat 8 start-ups (on 16, 2 beat 4: direct);
        # radix-bruck ranked node by node takes radix 4 there, a hair under bruck (65.3 against 65.4 us)
        assert compile_program(first_eighth_program(64, 8), target="ideal:64").schedules[0] \
            .algorithm == "radix-bruck"
