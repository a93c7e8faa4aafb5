"""The `colouring` algorithm (compiler/library/colouring.py): König's D colours for shifts,
permutations and sparse patterns, link-aware on the machine's routes; a one-message shift
is one message time on `ideal` (issue 27's textbook case) and `auto` takes it there."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.colouring import colour_messages
from phalanx.compiler.library.cost import one_message_s
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def proper(edges: list[tuple[int, int]], colours: list[int]) -> bool:
    """No sender and no receiver has two edges of one colour."""
    sends = {(src, c) for (src, _), c in zip(edges, colours)}
    recvs = {(dst, c) for (_, dst), c in zip(edges, colours)}
    return len(sends) == len(recvs) == len(edges)


def test_random_sparse_patterns_take_exactly_their_largest_degree_in_colours():
    """König: D colours for any bipartite multigraph (the swaps along alternating paths are
    needed: greedy first-fit would use more on some of these)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(3, 14))
        edges = [(p, q) for p in range(n) for q in range(n) if p != q and rng.random() < 0.4]
        edges += [edges[0]] * 2 if edges else []  # a multigraph (ports shared by nodes)
        colours = colour_messages(edges, [()] * len(edges))
        degree = max(max(sum(1 for e in edges if e[0] == p), sum(1 for e in edges if e[1] == p))
                     for p in range(n))
        assert proper(edges, colours)
        assert max(colours, default=-1) + 1 == degree


def test_a_shift_is_one_colour_and_messages_sharing_a_link_are_kept_apart_when_they_can_be():
    assert set(colour_messages([(r, (r + 1) % 8) for r in range(8)], [()] * 8)) == {0}
    # 0 sends twice (D = 2); 0->1 and 2->3 share link "L". Without routes both take colour 0.
    edges = [(0, 1), (0, 4), (2, 3)]
    assert colour_messages(edges, [(), (), ()]) == [0, 1, 0]
    linked = colour_messages(edges, [("L",), ("M",), ("L", "N")])
    assert proper(edges, linked) and linked[0] != linked[2]


@pytest.mark.parametrize("spec, kind", [("ideal:16", "cshift"), ("ideal:8", "permutation")])
@pytest.mark.parametrize("size", [8, 65536])
def test_one_message_per_node_is_one_phase_and_one_message_time(spec, kind, size):
    compiled = compile_program(kind_program(kind, resolve(spec).nnodes, size), target=spec)
    machine, coll = compiled.target, compiled.collectives[0]
    assert coll.kind == kind and compiled.schedules[0].algorithm == "colouring"  # auto's pick
    schedule = machine.schedule_for(coll, "colouring")
    assert len(schedule.phases) == 1
    nbytes = coll.block_bytes
    result = simulate(compiled).collectives[0]
    assert result.verified
    assert result.time_s == pytest.approx(one_message_s(nbytes, machine.library.machine.port),
                                          rel=0.02)
    assert machine.predict_time_s(coll, "colouring") == pytest.approx(result.time_s, rel=1e-9)
    assert result.efficiency == pytest.approx(1.0, rel=0.02)
    assert machine.predict_time_s(coll, "direct") > 1.9 * result.time_s  # direct's XOR chain


def test_ideal_follows_colouring_of_a_sparse_pattern_message_by_message():
    """Several phases (a node sends to several): the prediction is the simulated time."""
    rng = np.random.default_rng(3)
    machine = resolve("ideal:12,copy_us_per_byte=0.002")
    for _ in range(4):
        m = (rng.random((12, 12)) < 0.3) * rng.integers(1, 5000, (12, 12))
        coll = Collective(0, Kind.SPARSE, 12, tuple(map(tuple, m.tolist())), "A", "B", 1)
        degree = int(max((m - np.diag(np.diag(m)) > 0).sum(axis=0).max(),
                         (m - np.diag(np.diag(m)) > 0).sum(axis=1).max()))
        assert len(machine.schedule_for(coll, "colouring").phases) == degree
        assert machine.predict_time_s(coll, "colouring") == pytest.approx(
            simulated_time_s(machine, coll, "colouring"), rel=1e-9)


@pytest.mark.parametrize("spec, size, least", [("torus:4x4", 8, 0.95), ("hypercube:3", 65536, 0.99),
                                               ("paragon:2x4", 8, 0.95)])
def test_a_shift_reaches_its_bound_on_routed_networks(spec, size, least):
    """The shift's e-cube or row-column routes share no link: one phase, at the bound."""
    source = kind_program("cshift", resolve(spec).nnodes, size)
    result = simulate(compile_program(source, target=spec, algorithm="colouring")).collectives[0]
    assert result.verified and result.algorithm == "colouring"
    assert least <= result.efficiency <= 1.0 + 1e-9


def test_colouring_is_offered_for_the_exchange_kinds_on_every_target():
    for spec in ("ideal:8", "torus:4x4", "iwarp:8x8", "paragon:2x4", "sp2:8", "cs2:8",
                 "hypercube:3", "ksr1:8", "proteus:groups=1"):
        machine = resolve(spec)
        for kind in ("cshift", "permutation", "sparse"):
            assert "colouring" in machine.algorithms(kind), (spec, kind)
            assert machine.describe_algorithm(kind, "colouring").startswith("every message")
        assert "colouring" not in machine.algorithms("alltoall")
