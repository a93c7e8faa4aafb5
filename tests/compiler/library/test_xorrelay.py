"""`xor-relay` (compiler/library/xorrelay.py): a hypercube permutation in XOR-translation rounds,
each block in pieces, one direct and the others through a relay over a pair of rounds."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.xorrelay import xor_rounds
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

BLOCK_BYTES = 65536


def test_the_transpose_goes_in_link_free_translation_rounds_verified_and_at_its_closed_form():
    """hypercube:4, a 4x4 transpose of 64 KB blocks: 3 rounds, each a translation by one mask
    (every node that sends sends one piece, no two messages on one link), half of each block
    direct and half relayed; the data are checked and the time is the closed form
    3 (alpha + beta b / 2) within 2%, where `direct` (two messages on a link) is slower."""
    spec = "hypercube:4"
    machine = resolve(spec)
    compiled = compile_program(kind_program("permutation", 16, BLOCK_BYTES), target=spec,
                               algorithm="xor-relay")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    route = machine.library.machine.route
    assert route is not None
    assert len(schedule.phases) == 3
    for phase in schedule.phases:
        moves = [t for t in phase.sends if t.src != t.dst]
        masks = {t.src ^ t.dst for t in moves}
        assert len(masks) == 1  # one translation
        assert len({t.src for t in moves}) == len({t.dst for t in moves}) == len(moves) == 12
        links = [link for t in moves for link in route(t.src, t.dst)]
        assert len(links) == len(set(links))
        assert {t.nbytes for t in moves} == {BLOCK_BYTES // 2}
    relayed = [t for phase in schedule.phases for t in phase.sends
               if t.src == t.origin and t.dst != t.final]
    assert len(relayed) == 12
    result = simulate(compiled).collectives[0]
    assert result.verified and result.efficiency <= 1.0
    port = machine.library.machine.port
    closed_s = 3 * (port.startup_s + port.s_per_byte * BLOCK_BYTES / 2)
    assert result.time_s == pytest.approx(closed_s, rel=0.02)
    assert simulated_time_s(machine, coll, "direct") > 1.1 * result.time_s


def test_auto_takes_it_for_a_long_transpose_on_the_hypercube():
    compiled = compile_program(kind_program("permutation", 16, BLOCK_BYTES), target="hypercube:4")
    assert compiled.schedules[0].algorithm == "xor-relay"


@pytest.mark.parametrize("spec, nprocs, reason", [
    ("hypercube:4", 8, "it needs all 16 nodes of the hypercube, but the collective has 8 processors"),
    ("torus:4x4", 16, "the machine is not a hypercube with fixed routes"),
])
def test_xor_relay_is_refused_where_it_cannot_round(spec, nprocs, reason):
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("permutation", nprocs, 4096), target=spec, algorithm="xor-relay")
    text = str(err.value)
    assert f"cannot lower the permutation of line 5 on {spec}: {reason}" in text
    assert "line 5" in text


def permutation(nprocs: int, dest: dict[int, int]) -> Collective:
    m = [[0] * nprocs for _ in range(nprocs)]
    for p, q in dest.items():
        m[p][q] = 4096
    return Collective(0, Kind.PERMUTATION, nprocs, tuple(map(tuple, m)), "A", "B", 3)


def test_masks_that_are_no_subspace_or_differ_in_a_coset_are_refused():
    """A shift by one on 8 nodes has masks 1, 3, 1, 7, ...: no subspace; a subspace {0, 3, 5, 6}
    whose masks differ between nodes of one coset would make a relay send twice in a round;
    two messages from one node do not fit in one round."""
    cube = resolve("hypercube:3").library.machine
    shift = permutation(8, {p: (p + 1) % 8 for p in range(8)})
    assert "do not form a subspace of at least 4 elements" in str(xor_rounds(shift, cube))
    uneven = permutation(8, {0: 1, 1: 2, 2: 0})  # masks 1, 3, 2: a subspace, node 3 sends nothing
    assert "send with different masks" in str(xor_rounds(uneven, cube))
    twice = Collective(0, Kind.PERMUTATION, 8, tuple(tuple(4096 if (p, q) in {(0, 1), (0, 2)} else 0
                                                        for q in range(8)) for p in range(8)),
                       "A", "B", 3)
    assert xor_rounds(twice, cube) == ("node 0 sends to more than one node: a round carries one "
                                       "message a node")
    square = resolve("hypercube:4").library.machine
    transpose = permutation(16, {4 * r + c: 4 * c + r for r in range(4) for c in range(4) if r != c})
    assert xor_rounds(transpose, square) is None
