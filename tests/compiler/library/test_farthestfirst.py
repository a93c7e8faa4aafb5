"""`farthest-first` (compiler/library/farthestfirst.py): a sparse pattern's messages in one
phase, each node's farthest destinations (the most links of their fixed routes) first."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.farthestfirst import named_routes
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


def test_one_phase_farthest_first_verified_and_faster_than_direct():
    """torus:8x8, 128 B blocks, every node to row 0: each node's 8 messages in one phase, their
    routes' hops never rising, each place of the nodes' orders spread over the receivers; the
    data are checked, the time is above the bound and 1.15x below `direct`'s pairwise steps
    (0.1738 ms against 0.2070)."""
    machine = resolve("torus:8x8")
    compiled = compile_program(_to_the_first_eighth(64, 128), target="torus:8x8",
                               algorithm="farthest-first")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    assert len(schedule.phases) == 1
    route = machine.library.machine.route
    order = {node: [t.dst for t in schedule.phases[0].sends if t.src == node != t.dst]
             for node in range(64)}
    for node, dsts in order.items():
        hops = [len(route(node, dst)) for dst in dsts]
        assert len(hops) == 8 - (node < 8) and hops == sorted(hops, reverse=True)
    for place in range(7):  # ties spread the senders' k-th messages over the 8 receivers
        addressed = Counter(dsts[place] for dsts in order.values())
        assert len(addressed) == 8 and max(addressed.values()) - min(addressed.values()) <= 2
    result = simulate(compiled).collectives[0]
    assert result.verified
    bound_s, _ = machine.binding_bound(coll)
    assert bound_s <= result.time_s == pytest.approx(0.1738e-3, rel=1e-3)
    assert simulated_time_s(machine, coll, "direct") > 1.15 * result.time_s


def test_farthest_first_is_refused_where_a_node_streams_one_message():
    source = _to_the_first_eighth(16, 128)
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="paragon:4x4", algorithm="farthest-first")
    assert ("cannot lower the sparse of line 5 on paragon:4x4: a node of this machine streams "
            "one message at a time, so a holder's messages would queue at its port") in str(err.value)


def test_farthest_first_needs_named_routes():
    machine = resolve("torus:4x4").library.machine
    coll = compile_program(_to_the_first_eighth(16, 128), target="torus:4x4").collectives[0]
    assert named_routes(coll, machine) is None
    unrouted = dataclasses.replace(machine, route=None)
    assert named_routes(coll, unrouted) == ("the machine names no fixed routes to order a "
                                            "node's messages by their length")


def test_farthest_first_is_offered_for_sparse_patterns_on_grids_only():
    assert "farthest-first" in resolve("iwarp:4x4").algorithms("sparse")
    assert "farthest-first" not in resolve("torus:4x4").algorithms("alltoall")
    assert "farthest-first" not in resolve("hypercube:3").algorithms("sparse")


def test_farthest_first_needs_the_whole_grid_so_that_processors_are_the_routes_nodes():
    source = ("processors P(8)\nprocessors Q(1)\narray A(8, 8) of byte distribute (*, BLOCK) onto P\n"
              "array B(8, 8) of byte distribute (*, BLOCK) onto Q\nB = A\n")
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="torus:4x4", algorithm="farthest-first")
    assert ("algorithm 'farthest-first' cannot lower the sparse of line 5 on torus:4x4: it needs "
            "all 16 nodes of the 4x4 grid, but the collective has 8 processors") in str(err.value)
