"""Dimension-ordered scatter, gather and reduce on tori and meshes (grid.scatter_phases) and their turned
copies: every block arrives, the root starts rows + cols - 2 messages (a copy's in turn with the
others' when turned), what cannot run is refused with the reason, and on the torus the turned
scatter beats every algorithm the library had before (issue 27)."""

from __future__ import annotations

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.grid import nearest_first
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def test_nearest_first_alternates_sides_of_the_ring():
    assert nearest_first(list(range(8)), 3) == [4, 2, 5, 1, 6, 0, 7]
    assert nearest_first([10, 11, 12], 10) == [11, 12]


@pytest.mark.parametrize("spec, kind, algorithm", [
    ("torus:4x4", "scatter", "dim-ordered"), ("torus:3x4", "gather", "dim-ordered"),
    ("paragon:2x3", "scatter", "dim-ordered"), ("paragon:2x3", "gather", "dim-ordered"),
    ("torus:4x4", "scatter", "turned-dim-ordered"), ("torus:4x4", "gather", "turned-dim-ordered"),
    ("torus:3x4", "scatter", "turned-dim-ordered"), ("torus:4x4", "reduce", "turned-dim-ordered"),
    ("paragon:2x3", "reduce", "dim-ordered"),
])
def test_every_block_arrives(spec, kind, algorithm):
    assert_forced_run_verifies(spec, kind, algorithm, 4000)


def test_the_root_starts_one_message_per_other_row_and_column_node():
    """torus:4x4, root 0: three messages along its row (each a column's four blocks), then three
    down its column, and every other node of its row three down its own."""
    compiled = compile_program(kind_program("scatter", 16, 64), target="torus:4x4",
                               algorithm="scatter=dim-ordered")
    across, down = compiled.schedules[0].phases
    messages = {(t.src, t.dst) for t in across.sends if t.src != t.dst}
    assert messages == {(0, 1), (0, 3), (0, 2)}
    assert sorted(t.final for t in across.sends if t.dst == 1) == [1, 5, 9, 13]
    assert {(t.src, t.dst) for t in down.sends} == {(c, c + 4 * r) for c in range(4) for r in (1, 2, 3)}


def test_turned_copies_take_turns_at_the_root():
    """The first four messages the root starts go to its four neighbours, one per copy."""
    compiled = compile_program(kind_program("scatter", 16, 64), target="torus:4x4",
                               algorithm="scatter=turned-dim-ordered")
    first: list[int] = []
    for t in compiled.schedules[0].phases[0].sends:
        if t.src == 0 and t.dst != 0 and t.dst not in first:
            first.append(t.dst)
    assert sorted(first[:4]) == [1, 3, 4, 12]


def test_what_cannot_run_is_refused_with_the_reason():
    cases = [("ideal:8", "scatter", "dim-ordered",
              "unknown algorithm 'dim-ordered' for a scatter on target 'ideal:8'"),
             ("paragon:2x4", "gather", "turned-dim-ordered", "algorithm 'turned-dim-ordered' cannot "
              "lower the gather of line 4 on paragon:2x4: a node of this machine streams one "
              "message at a time")]
    for spec, kind, algorithm, reason in cases:
        with pytest.raises(PhalanxError) as err:
            compile_program(kind_program(kind, 8, 4096), target=spec, algorithm=f"{kind}={algorithm}")
        assert reason in str(err.value), str(err.value)


def test_on_the_torus_the_turned_scatter_beats_what_the_library_had():
    machine = resolve("torus:4x4")
    coll = compile_program(kind_program("scatter", 16, 8192), target="torus:4x4",
                           algorithm="scatter=direct").collectives[0]
    turned = simulated_time_s(machine, coll, "turned-dim-ordered")
    for algorithm in ("direct", "binomial"):
        assert turned < 0.8 * simulated_time_s(machine, coll, algorithm)
