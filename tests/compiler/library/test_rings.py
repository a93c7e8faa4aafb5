"""Bidirectional-rings allgather on tori and meshes (rings.py): it verifies on even and odd
grids, every message goes to a grid neighbour with at most one message per link direction a
phase, each link carries the least a ring allows, and `auto` takes it for long parts on the torus
(issue 27)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.grid import spirals
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program


def neighbours(node: int, rows: int, cols: int) -> set[int]:
    r, c = divmod(node, cols)
    return {r * cols + (c + 1) % cols, r * cols + (c - 1) % cols,
            ((r + 1) % rows) * cols + c, ((r - 1) % rows) * cols + c}


@pytest.mark.parametrize("spec, shape", [("torus:4x4", (4, 4)), ("torus:3x4", (3, 4)),
                                         ("paragon:2x3", (2, 3)), ("torus:3x3", (3, 3))])
def test_every_message_goes_to_a_neighbour_one_per_link_and_verifies(spec, shape):
    rows, cols = shape
    n = rows * cols
    block = 800
    source = kind_program("allgather", n, block)
    compiled = compile_program(source, target=spec, algorithm="allgather=bidirectional-rings")
    schedule = compiled.schedules[0]
    sent: dict[tuple[int, int], int] = {}
    for phase in schedule.phases:
        pairs = [(t.src, t.dst) for t in phase.sends if t.src != t.dst]
        assert all(d in neighbours(s, rows, cols) for s, d in pairs)
        for s, d in set(pairs):
            sent[s, d] = sent.get((s, d), 0) + sum(t.nbytes for t in phase.sends
                                                   if (t.src, t.dst) == (s, d))
        assert all(len({d for s, d in set(pairs) if s == v}) <= 4 for v in range(n))
    # Each link direction carries (L - 1) / 2 of what goes round its ring in each stage.
    pieces = {(t.dst, t.origin, t.offset) for p in schedule.phases for t in p.sends}
    assert len(pieces) == sum(len(p.sends) for p in schedule.phases)  # each piece arrives once
    if shape == (4, 4):  # row stage 1.5 halves, column stage 1.5 rows of halves, per direction
        assert max(sent.values()) == pytest.approx(1.5 * block / 2 + 1.5 * 4 * block / 2, abs=8)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_preconditions_refuse_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allgather", 6, 800), target="torus:4x4",
                        algorithm="allgather=bidirectional-rings")
    assert ("algorithm 'bidirectional-rings' cannot lower the allgather of line 4 on torus:4x4: "
            "it needs all 16 nodes of the 4x4 grid, but the collective has 6 processors"
            ) in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allgather", 16, 4), target="torus:4x4",
                        algorithm="allgather=bidirectional-rings")
    assert "the 4-byte part is smaller than its 8 pieces" in str(err.value)


def test_auto_takes_bidirectional_rings_for_long_parts_on_the_torus():
    """16 KB parts on torus:4x4: twice as fast as dim-ordered (measured 0.50 of the bound, which
    counts four streams each way where the node's memory serves four in all)."""
    source = kind_program("allgather", 16, 16 * 1024)
    compiled = compile_program(source, target="torus:4x4")
    assert compiled.schedules[0].algorithm == "bidirectional-rings"
    rings = simulate(compiled).collectives[0]
    dim = simulate(compile_program(source, target="torus:4x4",
                                   algorithm="allgather=dim-ordered")).collectives[0]
    assert rings.verified and rings.time_s < 0.6 * dim.time_s


@pytest.mark.parametrize("shape, root", [((4, 4), 0), ((3, 4), 5), ((8, 8), 27), ((2, 3), 1)])
def test_the_four_spirals_visit_every_node_by_neighbour_steps(shape, root):
    rows, cols = shape
    for path in spirals(root, rows, cols):
        assert path[0] == root and sorted(path) == list(range(rows * cols))
        assert all(b in neighbours(a, rows, cols) for a, b in zip(path, path[1:]))


def test_spiral_chains_broadcast_verifies_and_refuses_a_block_it_cannot_cut():
    source = kind_program("broadcast", 16, 4000)
    result = simulate(compile_program(source, target="torus:4x4",
                                      algorithm="broadcast=spiral-chains")).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("broadcast", 16, 2), target="torus:4x4",
                        algorithm="broadcast=spiral-chains")
    assert ("algorithm 'spiral-chains' cannot lower the broadcast of line 4 on torus:4x4: the "
            "2-byte block cannot be cut in four quarters") in str(err.value)
