"""`split-ties` (compiler/library/splitties.py): a sparse pattern's blocks that run half way round
a torus ring go half each way, the other half through a relay one hop the other way."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.timing import simulated_time_s


def _to_the_first_eighth(nodes: int, block: int) -> str:
    """bench/efficiency.py's sparse pattern: every node's block to each node of the first eighth."""
    receivers = max(nodes // 8, 1)
    return (f"processors P({nodes})\nprocessors Q({receivers})\n"
            f"array A({nodes}, {receivers * block}) of byte distribute (BLOCK, *) onto P\n"
            f"array B({nodes}, {receivers * block}) of byte distribute (*, BLOCK) onto Q\nB = A\n")


def test_row_4_s_blocks_go_half_each_way_round_verified_and_faster():
    """torus:8x8, 16 KB blocks, every node to row 0: e-cube sends all of row 4's blocks the +
    way (rows 4-7 into row 0 through the links from row 7: 32 blocks, 24 from row 1); half of
    each goes through the node above it in row 3 instead, forwarded a step later (and row 0's
    blocks 4 columns along, through a neighbour the other way round the row). The data are
    checked; it is above the band cut's bound and 1.15x faster than `direct`."""
    machine = resolve("torus:8x8")
    compiled = compile_program(_to_the_first_eighth(64, 16384), target="torus:8x8",
                               algorithm="split-ties")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    relayed = [t for phase in schedule.phases for t in phase.sends if t.dst != t.final]
    assert all(t.nbytes == 8192 for t in relayed)
    row_4 = [t for t in relayed if t.origin // 8 == 4]  # each of its 8 blocks through row 3
    assert len(row_4) == 8 * 8 and all(t.dst == t.origin - 8 for t in row_4)
    row_0 = [t for t in relayed if t.origin // 8 == 0]  # 4 columns along row 0: a neighbour
    assert len(row_0) == 8 and all(t.dst // 8 == 0 and t.final == t.origin ^ 4 for t in row_0)
    assert len(relayed) == len(row_4) + len(row_0)
    result = simulate(compiled).collectives[0]
    assert result.verified
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "cut" and bound_s <= result.time_s
    assert simulated_time_s(machine, coll, "direct") > 1.15 * result.time_s


@pytest.mark.parametrize("source, spec, reason", [
    (_to_the_first_eighth(16, 4096), "paragon:4x4",
     "no block's route runs half way round a ring with another way that shares no link"),
    (_to_the_first_eighth(8, 4096), "torus:4x4",
     "it needs all 16 nodes of the 4x4 grid, but the collective has 8 processors"),
])
def test_split_ties_is_refused_without_a_second_way_round(source, spec, reason):
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target=spec, algorithm="split-ties")
    assert f"cannot lower the sparse of line 5 on {spec}: {reason}" in str(err.value)


def test_split_ties_is_offered_for_sparse_patterns_on_grids_only():
    assert "split-ties" in resolve("iwarp:4x4").algorithms("sparse")
    assert "split-ties" not in resolve("torus:4x4").algorithms("alltoall")
    assert "split-ties" not in resolve("hypercube:3").algorithms("sparse")
