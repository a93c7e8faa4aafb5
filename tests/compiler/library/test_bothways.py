"""`both-ways` (compiler/library/bothways.py): a shift by one along a torus's rings, each block in
n parts, n - 1 of them straight on and one round the ring the long way, one hop a phase."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def _shift(nodes: int, block: int, shift_blocks: int = 1) -> str:
    return (f"processors P({nodes})\narray D({nodes * block}) of byte distribute BLOCK onto P\n"
            f"D = cshift(D, {shift_blocks * block})\n")


@pytest.mark.parametrize("shift_blocks, ring", [(1, "row"), (4, "column")])
def test_both_ways_splits_each_block_round_the_ring_verified_and_faster(shift_blocks, ring):
    """torus:4x4, 64 KB blocks, every node's block to the node before it (a row's first to the
    previous row's last) or to the node a row up: 3 phases, in each a quarter straight on and a
    quarter one hop on round the ring the long way, no link twice in a phase; the data are
    checked, the time is 3 (2 h + lat + b/4 beta) to 0.1%, above the ring's bound
    (h + 3/4 b beta) and 1.2x faster than colouring's one phase (h + lat + b beta)."""
    machine = resolve("torus:4x4")
    port = machine.library.machine.port
    b = 65536
    compiled = compile_program(_shift(16, b, shift_blocks), target="torus:4x4", algorithm="both-ways")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    assert len(schedule.phases) == 3
    route = machine.library.machine.route
    for phase in schedule.phases:
        links = [link for t in phase.sends if t.src != t.dst for link in route(t.src, t.dst)]
        assert len(links) == len(set(links))  # every leg on links of its own
        assert {t.nbytes for t in phase.sends} == {b // 4}
    long_way = [t for phase in schedule.phases for t in phase.sends if t.dst != t.final]
    assert len(long_way) == 2 * 16  # two relays a block: the first and second hop
    result = simulate(compiled).collectives[0]
    assert result.verified
    closed_s = 3 * (2 * port.hold_s + port.latency_s + b / 4 * port.s_per_byte)
    assert result.time_s == pytest.approx(closed_s, rel=1e-3)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "weighted links"
    assert bound_s == pytest.approx(port.hold_s + 0.75 * b * port.link_s_per_byte)
    assert bound_s <= result.time_s
    assert simulated_time_s(machine, coll, "colouring") > 1.2 * result.time_s, ring


def test_auto_takes_it_on_the_torus_for_long_blocks_only():
    assert compile_program(_shift(16, 1 << 20), target="torus:4x4").schedules[0].algorithm == "both-ways"
    assert compile_program(_shift(16, 2048), target="torus:4x4").schedules[0].algorithm != "both-ways"


@pytest.mark.parametrize("source, spec, reason", [
    (_shift(16, 4096), "paragon:4x4",
     "its rows and columns are lines, not rings: there is no long way round"),
    (_shift(16, 4096, 2), "torus:4x4",
     "not every block moves one step along one ring of 3 or more nodes, the same way, and at "
     "most one along the other dimension"),
    (kind_program("permutation", 16, 4096), "torus:4x4",
     "not every block moves one step along one ring of 3 or more nodes, the same way, and at "
     "most one along the other dimension"),
    (_shift(8, 4096), "torus:4x4",
     "it needs all 16 nodes of the 4x4 grid, but the collective has 8 processors"),
    (_shift(16, 2), "torus:4x4", "a 2-byte block is smaller than its 4 parts (one per node of the ring)"),
])
def test_both_ways_is_refused_where_there_is_no_shift_by_one_round_a_ring(source, spec, reason):
    kind = "permutation" if "transpose" in source else "cshift"
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target=spec, algorithm="both-ways")
    line = source.count("\n")
    assert f"cannot lower the {kind} of line {line} on {spec}: {reason}" in str(err.value)


def test_both_ways_is_offered_on_tori_and_meshes_only():
    assert "both-ways" in resolve("iwarp:4x4").algorithms("cshift")
    assert "both-ways" in resolve("paragon:4x4").algorithms("cshift")  # refused there (lines)
    assert "both-ways" not in resolve("hypercube:3").algorithms("cshift")
    assert "both-ways" not in resolve("ideal:8").algorithms("cshift")
