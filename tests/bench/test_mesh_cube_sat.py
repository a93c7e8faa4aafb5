"""bench/mesh_cube_sat.py's command line: a mesh of 2^d nodes, and python-sat (an optional extra)
named where it is missing. The SAT search itself needs python-sat, which CI does not install."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import load_bench_script

sat = load_bench_script("bench/mesh_cube_sat.py", "mesh_cube_sat")


def test_the_mesh_shape_is_two_positive_sizes():
    assert sat.mesh_shape(["8", "8"]) == (8, 8)
    with pytest.raises(SystemExit) as err:
        sat.mesh_shape(["8"])
    assert str(err.value) == ("usage: python bench/mesh_cube_sat.py ROWS COLS (e.g. 8 8: a mesh of "
                              "2^d nodes); got 8")
    with pytest.raises(SystemExit) as err:
        sat.mesh_shape(["0", "x"])
    assert str(err.value).endswith("; got 0 x")


def test_a_mesh_of_nodes_not_a_power_of_two_is_refused():
    with pytest.raises(SystemExit) as err:
        sat.mesh_shape(["3", "4"])
    assert str(err.value).endswith("; 3x4 has 12 nodes, not a power of two")


@pytest.mark.skipif(importlib.util.find_spec("pysat") is not None, reason="python-sat is installed")
def test_without_python_sat_the_script_says_how_to_install_it():
    with pytest.raises(SystemExit) as err:
        sat.main(2, 4)
    assert str(err.value) == ("bench/mesh_cube_sat.py needs python-sat, the project's optional "
                              "`sat` extra: pip install '.[sat]' (or pip install python-sat)")
