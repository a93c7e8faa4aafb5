"""`subpage-bruck` (targets/ksr1/subpages.py): Bruck's rounds and extra ones, each block's rounds
chosen so that no cell's round goes over a subpage; data checked, its rounds, its refusal."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.index import ForwardedBlocks
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import checked_run
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.synthetic import execute, varied_matrix
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.ksr1.subpages import best_routing, round_sets, route_blocks

SUBPAGE = 128


def uneven_matrix() -> np.ndarray:
    """The efficiency grid's uneven all-to-all of 8 B on 32 cells: blocks of 4 to 12 bytes."""
    return varied_matrix(32, 8, variance=0.5)


def round_loads(m: np.ndarray, routing) -> np.ndarray:
    """Bytes each cell sends in each round (cells x rounds), following the blocks."""
    n = len(m)
    blocks = ForwardedBlocks(m)
    loads = np.zeros((n, len(routing.distances)))
    for k, d in enumerate(routing.distances):
        moved = np.flatnonzero(routing.takes[:, k])
        np.add.at(loads[:, k], blocks.at[moved], blocks.nbytes[moved])
        blocks.at[moved] = (blocks.at[moved] + d) % n
    assert (blocks.at == blocks.final).all()  # every block reaches its cell
    return loads


def test_an_extra_round_of_3_keeps_every_round_to_one_subpage():
    """Bruck's 5 rounds carry up to 161 bytes (two subpages); with a sixth round of distance 3
    and the blocks' rounds chosen, no cell's round goes over 128."""
    m = uneven_matrix()
    bruck = route_blocks(m, (1, 2, 4, 8, 16), SUBPAGE)
    assert bruck.turns == 10 and round_loads(m, bruck).max() > SUBPAGE
    routing = best_routing(m, SUBPAGE)
    assert routing.distances == (1, 2, 4, 8, 16, 3) and routing.turns == 6
    assert round_loads(m, routing).max() <= SUBPAGE


def test_rounds_that_cannot_reach_a_distance_are_no_routing():
    m = np.ones((4, 4), np.int64)
    assert route_blocks(m, (2,), SUBPAGE) is None


def test_the_uneven_all_to_all_moves_its_data_in_six_turns():
    machine = resolve("ksr1")
    coll = recognize(0, uneven_matrix(), "A", "B", 1)
    assert simulated_time_s(machine, coll, "bruck-poststore") * 1e6 == pytest.approx(245.6, abs=0.1)
    run = execute(machine, coll, machine.schedule_for(coll, "subpage-bruck-poststore"))
    assert run.problems == []  # every block arrives once, at its cell
    assert run.execution.collectives[0].time_s * 1e6 == pytest.approx(155.5, abs=0.1)
    source = kind_program(Kind.ALLTOALL, 32, 8)  # data checked: an even all-to-all takes Bruck's rounds
    run = checked_run(compile_program(source, target="ksr1", algorithm="alltoall=subpage-bruck-poststore",
                                      file="a.phx"))
    assert run.problems == {0: []}
    (even,) = recognized_collectives(source, target="ksr1")
    bruck_s = simulated_time_s(machine, even, "bruck-poststore")
    assert run.execution.collectives[0].time_s == pytest.approx(bruck_s)


def test_more_than_64_cells_are_refused_with_the_reason():
    machine = resolve("ksr1:96")
    (coll,) = recognized_collectives(kind_program(Kind.ALLTOALL, 96, 8), target=machine.spec)
    assert machine.unmet(coll, "subpage-bruck") == \
        "its routes are searched block by block, offered up to 64 cells, not 96"


def test_no_block_visits_a_cell_twice():
    """On 15 cells rounds of 1, 6 and 8 add up to 15: a block on them would come back to its
    origin, and one on 2, 1, 6, 8 would reach its cell after 2 and leave it again, which the
    runtime refuses (a block is delivered where it first arrives)."""
    distances = (1, 2, 4, 8, 3, 5, 6)
    for total, chosen_sets in round_sets(distances, 15).items():
        for chosen in chosen_sets:
            reached = [sum(distances[k] for k in chosen[:j]) % 15 for j in range(1, len(chosen) + 1)]
            assert reached[-1] == total and 0 not in reached and len(set(reached)) == len(reached)
    source = ("processors P(15)\nprocessors P2(7)\narray C(420) of float64 distribute CYCLIC(3) onto P\n"
              "array D(420) of float64 distribute BLOCK onto P2\nD = C\n")
    run = checked_run(compile_program(source, target="ksr1:16", algorithm="sparse=subpage-bruck-poststore",
                                      file="odd.phx"))
    assert run.problems == {0: []}
