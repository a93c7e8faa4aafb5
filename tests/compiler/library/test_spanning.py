"""Edge-disjoint spanning trees on a square torus (spanning.py): the four trees span the torus
and share no directed link, the broadcast and the reduce send every message to a neighbour with
at most one message per link direction a phase and verify on torus:4x4 and iwarp:4x4, and the
preconditions refuse with the reason (issue 27)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.spanning import depths, directed_links, spanning_trees
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program


@pytest.mark.parametrize("n", range(3, 10))
def test_four_trees_span_the_torus_and_share_no_directed_link(n):
    for root in (0, n + 1, n * n - 1):
        trees = spanning_trees(n, root)
        links = [link for tree in trees for link in directed_links(n, tree)]
        assert len(links) == len(set(links)) == 4 * (n * n - 1)
        for tree in trees:
            depth = depths(tree, root)
            assert sorted(depth) == list(range(n * n))  # every node, reached once
            assert len(tree) == n * n - 1 and max(depth.values()) == 2 * n - 1


def neighbours(node: int, n: int) -> set[int]:
    r, c = divmod(node, n)
    return {r * n + (c + 1) % n, r * n + (c - 1) % n, (r + 1) % n * n + c, (r - 1) % n * n + c}


@pytest.mark.parametrize("spec, kind", [("torus:4x4", "broadcast"), ("iwarp:4x4", "reduce")])
def test_every_message_to_a_neighbour_one_per_link_and_the_data_verifies(spec, kind):
    size = 4096
    compiled = compile_program(kind_program(kind, 16, size), target=spec,
                               algorithm=f"{kind}=spanning-trees")
    schedule = compiled.schedules[0]
    carried = 0
    for phase in schedule.phases:
        pairs = {(t.src, t.dst) for t in phase.sends if t.src != t.dst}
        assert all(d in neighbours(s, 4) for s, d in pairs)
        assert all(len({d for s, d in pairs if s == v}) <= 4 for v in range(16))
        assert all(len({s for s, d in pairs if d == v}) <= 4 for v in range(16))
        carried += sum(t.nbytes for t in phase.sends if t.src != t.dst and
                       (kind == "broadcast" or t.origin == t.src))
    assert carried == 15 * size  # each node's block (a reduce: its own partial) crosses once
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_preconditions_refuse_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("broadcast", 12, 4096), target="torus:3x4",
                        algorithm="broadcast=spanning-trees")
    assert ("algorithm 'spanning-trees' cannot lower the broadcast of line 4 on torus:3x4: it "
            "needs a square grid of at least 3 x 3 (four turned trees), not 3x4") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("reduce", 8, 4096), target="ideal:8",
                        algorithm="reduce=spanning-trees")
    assert "unknown algorithm 'spanning-trees' for a reduce on target 'ideal:8'" in str(err.value)
