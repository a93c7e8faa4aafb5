"""bench/torus_a2a_orders.py: the builder of a schedule from per-class move orders (no solver
needed), its data checked by the simulator, the refusal of an order that moves a block in two
consecutive phases, and the command line's usage (issue 27, branch ta2a5)."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import load_bench_script

orders = load_bench_script("bench/torus_a2a_orders.py", "torus_a2a_orders")

X_MOVES = [(0, s) for s in orders.SHIFTS]
Y_MOVES = [(1, s) for s in orders.SHIFTS]


def one_class(x: int, y: int) -> tuple[int, ...]:
    return (0,)


def test_every_node_along_x_then_along_y_delivers_every_block():
    # one idle phase between the stages: a block moved along x in phase 6 moves along y in 8
    phases = orders.schedule_phases({(0,): X_MOVES + [None] + Y_MOVES}, one_class, 128)
    assert len(phases) == 1 + 15
    node_0 = [{t.dst for t in phase.sends if t.src == 0} for phase in phases[1:]]
    assert [len(dsts) for dsts in node_0] == [1] * 7 + [0] + [1] * 7  # one message a phase
    time_s, problems = orders.timed_and_checked(phases)
    assert not any(problems.values())
    assert time_s > 0


def test_an_order_that_moves_a_block_in_consecutive_phases_is_refused():
    # block 0->12 (x by 4, y by 1): x by 4 in phase 6, y by 1 in phase 7, and y before x no better
    with pytest.raises(ValueError) as err:
        orders.schedule_phases({(0,): X_MOVES + Y_MOVES}, one_class, 128)
    assert str(err.value) == "block 0->12 moves in two consecutive phases either way"


def test_the_command_line_takes_phases_classes_and_seconds():
    assert orders.arguments(["16"]) == (16, "diagonal", 120.0, True)
    assert orders.arguments(["15", "grid", "30", "--no-wires"]) == (15, "grid", 30.0, False)
    for bad in (["13"], ["16", "rows"], ["16", "grid", "soon"], []):
        with pytest.raises(SystemExit) as err:
            orders.arguments(bad)
        assert str(err.value) == f"{orders.USAGE}; got {' '.join(bad)}"


@pytest.mark.skipif(importlib.util.find_spec("ortools") is not None, reason="OR-Tools is installed")
def test_without_ortools_the_search_says_how_to_install_it():
    with pytest.raises(SystemExit) as err:
        orders.solve(16, one_class, 1.0, True)
    assert str(err.value) == "bench/torus_a2a_orders.py needs OR-Tools for its search: pip install ortools"
