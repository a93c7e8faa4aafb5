"""collected-halving (compiler/library/collectedhalving.py): the blocks of the last step, their
collectors, the data on small tori, the preconditions and the 8x8 figure (issue 27, branch tred7)."""

from __future__ import annotations

from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.collectedhalving import blocks, collectors
from phalanx.compiler.library.groupedhalving import GroupedGrid, groups
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

ELEMENT = 8  # kind_program's partials are float64


def grid(spec: str, n: int, root: int = 0) -> GroupedGrid:
    source = kind_program("reduce", n, 4 * n * ELEMENT).replace("on P(0)", f"on P({root})")
    compiled = compile_program(source, target=spec, algorithm="reduce=collected-halving")
    return GroupedGrid(compiled.collectives[0], compiled.target.library.machine)


def test_a_step_gives_pairs_and_a_group_2_x_2_blocks():
    g = grid("torus:4x4", 16)
    last = {h: groups(g, h)[-1] for h in (0, 1)}
    assert [len(group) for group in last.values()] == [1, 2]
    for half, size in ((0, 2), (1, 4)):
        found = blocks(g, last[half])
        assert all(len(block) == size for block in found)
        assert sorted(v for block in found for v in block) == list(range(16))


def test_the_collectors_keep_the_roots_in_links_even_and_the_root_row_collects_its_pairs():
    """torus:8x8, root 0: each half's last step pairs nodes of a column. The root collects its
    pair, a node of row 0 its own, and the root's four in-links carry 14, 16, 16 and 16 pieces;
    a collector off the root's row and column is a member of its pair or row 0's node of its
    column, never a third node elsewhere."""
    g = grid("torus:8x8", 64)
    last = {h: groups(g, h)[-1] for h in (0, 1)}
    chosen = collectors(g, last, {0: 256, 1: 256})
    assert len(chosen) == 64
    route = g.machine.route
    loads = Counter(route(v, 0)[-1] for v in chosen.values() if v != 0)
    assert sorted(loads.values()) == [14, 16, 16, 16]
    for (_, block), v in chosen.items():
        if 0 in block:
            assert v == 0
        elif any(w < 8 for w in block):
            assert v in block and v < 8
        else:
            assert v in block or v == block[0] % 8


# the data on every size, and the preconditions: tests/compiler/library/test_groupedhalving.py


def test_the_16_kb_reduce_on_the_8x8_torus():
    """The figure of docs/efficiency.md (branch tred7): below grouped-halving's 521.15 us and
    under 0.5 of the root drain's 251.27 us (502.5), with the data verified."""
    source = kind_program("reduce", 64, 16384).replace("on P(0)", "on P(27)")
    result = simulate(compile_program(source, target="torus:8x8",
                                      algorithm="reduce=collected-halving")).collectives[0]
    assert result.verified, result.problems
    assert result.time_s == pytest.approx(499.35e-6, rel=1e-6)
    machine = resolve("torus:8x8")
    coll = compile_program(kind_program("reduce", 64, 16384), target="torus:8x8",
                           algorithm="reduce=collected-halving").collectives[0]
    assert simulated_time_s(machine, coll, "collected-halving") == pytest.approx(494.55e-6, rel=1e-6)
    assert simulated_time_s(machine, coll, "grouped-halving") == pytest.approx(521.15e-6, rel=1e-6)
