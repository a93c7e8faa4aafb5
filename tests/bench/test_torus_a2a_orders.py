"""bench/torus_a2a_orders.py: a schedule timed from per-class move orders (no solver needed), its
data checked by the simulator, and the command line's usage (issue 27, branches ta2a5 and a2a2d;
the builder itself is compiler/library/pipelined2d.py's, tests/compiler/library/test_pipelined2d.py)."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import load_bench_script
from phalanx.compiler.library.pipelined2d import Orders

orders = load_bench_script("bench/torus_a2a_orders.py", "torus_a2a_orders")

X_MOVES = [(0, s) for s in orders.SHIFTS]
Y_MOVES = [(1, s) for s in orders.SHIFTS]


def one_class(x: int, y: int) -> tuple[int, ...]:
    return (0,)


def test_every_node_along_x_then_along_y_is_timed_with_its_data_checked():
    # one idle phase between the stages: a block moved along x in phase 6 moves along y in 8
    time_s, problems = orders.timed_and_checked(Orders({(0,): tuple(X_MOVES + [None] + Y_MOVES)},
                                                       one_class))
    assert not any(problems.values())
    # one dimension at a time, worms sharing wires (1424.4 us with the packs in the local phase)
    assert time_s == pytest.approx(1292.85e-6, rel=1e-6)


def test_the_command_line_takes_phases_classes_seconds_and_the_stages():
    assert orders.arguments(["16"]) == orders.Search(16, "diagonal", 120.0, True, None)
    assert orders.arguments(["15", "grid", "30", "--no-wires"]) == orders.Search(15, "grid", 30.0, False)
    assert orders.arguments(["15", "--stages-apart=8,6"]) == orders.Search(15, stages_apart=(8, 6))
    assert orders.arguments(["18", "--wire-window=3,2"]) == orders.Search(18, wire_window=(3, 2))
    for bad in (["13"], ["16", "rows"], ["16", "grid", "soon"], [], ["15", "--stages-apart=7"],
                ["15", "--stages"], ["15", "--wires"], ["16", "--wire-window=2"],
                ["16", "--wire-window=2,3"], ["16", "--wire-window=2,0"]):
        with pytest.raises(SystemExit) as err:
            orders.arguments(bad)
        assert str(err.value) == f"{orders.USAGE}; got {' '.join(bad)}"


@pytest.mark.skipif(importlib.util.find_spec("ortools") is not None, reason="OR-Tools is installed")
def test_without_ortools_the_search_says_how_to_install_it():
    with pytest.raises(SystemExit) as err:
        orders.solve(16, one_class, 1.0, True)
    assert str(err.value) == "bench/torus_a2a_orders.py needs OR-Tools for its search: pip install ortools"


@pytest.mark.skipif(importlib.util.find_spec("ortools") is None, reason="the search needs OR-Tools")
def test_fifteen_phases_with_the_stages_apart_are_infeasible():
    """docs/efficiency.md (branch a2a2d): the diagonal classes cannot keep the column moves in
    phases 0..7 and the row moves in 7..14."""
    status, found = orders.solve(15, orders.CLASSES["diagonal"], 120.0, True, (7, 7))
    assert (status, found) == ("INFEASIBLE", None)


@pytest.mark.skipif(importlib.util.find_spec("ortools") is None, reason="the search needs OR-Tools")
def test_sixteen_phases_with_no_wire_in_two_consecutive_phases_are_infeasible():
    """docs/efficiency.md (session 20): every wire carries 8 worms, so in 16 phases with none in
    two consecutive ones each wire would be used every other phase; the diagonal classes cannot."""
    status, found = orders.solve(16, orders.CLASSES["diagonal"], 120.0, True, wire_window=(2, 1))
    assert (status, found) == ("INFEASIBLE", None)
