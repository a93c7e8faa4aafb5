"""`grid-direct` all-to-all (compiler/library/gridexchange.py): its line squares are Latin and
spread every link, each phase's busiest link under the machine's own routes is the busier of
its two line permutations', and it delivers every block (issue 27)."""

from __future__ import annotations

from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.gridexchange import line_squares
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program


def line_load(square, route, node) -> int:
    """The most messages one permutation of `square` puts on a link (node(i): line position i)."""
    return max(max(Counter(link for i, j in enumerate(perm) for link in route(node(i), node(j))).values(),
                   default=0) for perm in square)


@pytest.mark.parametrize("spec, least", [("paragon:8x8", 2), ("paragon:4x6", 2), ("paragon:4x4", 1)])
def test_line_squares_are_latin_and_meet_the_busiest_link_of_a_line(spec, least):
    """On a line of 8 the middle link carries 16 messages each way: 2 in each of 8 permutations
    (direct's XOR pairs: 4 in half of them); a line of 6: 9 over 6, 2; a line of 4: 1."""
    machine = resolve(spec).library.machine
    rows, cols = machine.grid
    row, column = line_squares(machine)
    for square, size in ((row, cols), (column, rows)):
        assert len(square) == size and all(sorted(p) == list(range(size)) for p in square)
        assert all(sorted(p[i] for p in square) == list(range(size)) for i in range(size))
    loads = (line_load(row, machine.route, lambda i: i),
             line_load(column, machine.route, lambda i: i * cols))
    assert max(loads) == least


@pytest.mark.parametrize("spec", ["paragon:4x4", "paragon:2x3"])
def test_every_phase_spreads_its_links_and_the_data_arrive(spec):
    target = resolve(spec)
    machine = target.library.machine
    rows, cols = machine.grid
    row, column = line_squares(machine)
    most = max(line_load(row, machine.route, lambda i: i),
               line_load(column, machine.route, lambda i: i * cols))
    n = rows * cols
    compiled = compile_program(alltoall_program(n, 64), target=spec, algorithm="alltoall=grid-direct")
    schedule = compiled.schedules[0]
    assert len(schedule.phases) == n  # rows x cols phases, each node idle in one of them
    for phase in schedule.phases:
        messages = [(t.src, t.dst) for t in phase.sends if t.src != t.dst]
        assert len({s for s, _ in messages}) == len(messages) == len({d for _, d in messages})
        links = Counter(link for s, d in messages for link in machine.route(s, d))
        assert max(links.values(), default=0) <= most
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_it_needs_the_whole_grid_of_a_mesh_with_short_lines():
    with pytest.raises(PhalanxError) as err:
        compile_program(alltoall_program(8, 64), target="paragon:4x4", algorithm="alltoall=grid-direct")
    assert ("algorithm 'grid-direct' cannot lower the alltoall of line 4 on paragon:4x4: it needs "
            "all 16 nodes of the 4x4 grid, but the collective has 8 processors") in str(err.value)
    refused = {spec: dict(resolve(spec).candidates(compile_program(
        alltoall_program(resolve(spec).nnodes, 8), target=spec, algorithm="alltoall=bruck"
    ).collectives[0]))["grid-direct"] for spec in ("torus:4x4", "paragon:2x16")}
    assert refused == {"torus:4x4": "its rows and columns are rings, not the lines of a mesh",
                       "paragon:2x16": "it searches balanced Latin squares for lines of at most 8 "
                                       "nodes, not 16"}
