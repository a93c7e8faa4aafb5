"""The shallow edge-disjoint spanning trees (shallowtrees.py): the four turns of the grown tree
span the torus and share no directed link, they are never deeper than spanning.py's and reach
depth 10 on 8x8 (spanning.py's: 15), and the eager broadcast down them verifies (issue 27)."""

from __future__ import annotations

import pytest

from phalanx.compiler.library.shallowtrees import shallow_trees
from phalanx.compiler.library.spanning import depths, directed_links


@pytest.mark.parametrize("n", range(3, 10))
def test_four_shallow_trees_span_the_torus_and_share_no_directed_link(n):
    for root in (0, n + 1, n * n - 1):
        trees = shallow_trees(n, root)
        links = [link for tree in trees for link in directed_links(n, tree)]
        assert len(links) == len(set(links)) == 4 * (n * n - 1)
        for tree in trees:
            depth = depths(tree, root)
            assert sorted(depth) == list(range(n * n))  # every node, reached once
            assert len(tree) == n * n - 1 and max(depth.values()) <= 2 * n - 1


@pytest.mark.parametrize("n, depth", [(4, 5), (8, 10)])
def test_the_trees_are_shallower_than_the_turned_two_direction_tree(n, depth):
    trees = shallow_trees(n, 5)
    assert [max(depths(tree, 5).values()) for tree in trees] == [depth] * 4
