"""compiler/distribution.py: owner maps built by blocks (held to HPF's owner formulas index by
index) and every node's local shape at once (held to local_shape node by node)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sections import CASES, draw_cases

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_shape, local_shapes, owner_map
from phalanx.compiler.semantics import DimDist, check
from phalanx.grammar.parser import parse


@pytest.mark.parametrize("kind", ["BLOCK", "CYCLIC"])
def test_owner_map_is_the_owner_formula(kind):
    for block in (None, 1, 2, 3, 7):
        for extent in range(40):
            for nprocs in (1, 2, 3, 5, 8):
                size = (block or -(-extent // nprocs)) if kind == "BLOCK" else (block or 1)
                i = np.arange(extent)
                want = i // size if kind == "BLOCK" else (i // size) % nprocs
                got = owner_map(DimDist(kind, block), extent, nprocs)
                assert got.tolist() == want.tolist(), (kind, block, extent, nprocs)
                assert not got.flags.writeable  # remembered: shared by every caller
    assert owner_map(DimDist("*"), 10, 4) is None


def test_local_shapes_are_each_node_s_local_shape():
    for case in draw_cases(CASES)[:200]:
        (stmt,) = check(parse(case["program"], "s.phx")).communications()
        n = CommSet(stmt).nprocs
        for array in (stmt.src, stmt.dst):
            assert local_shapes(array, n).tolist() == [list(local_shape(array, p)) for p in range(n)]
