"""`corner-relay` (compiler/library/corner.py): a transpose's longest messages relayed through the
other corner of their route, round the links next to the diagonal that the fixed routes crowd."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


@pytest.mark.parametrize("spec, gain", [("torus:4x4", 1.25), ("paragon:4x4", 1.1)])
def test_the_transpose_s_longest_messages_go_round_the_corner_verified_and_faster(spec, gain):
    """torus:4x4 and paragon:4x4, 64 KB blocks: the messages of the longest routes go through
    the node in the destination's row and the source's column, in pieces over consecutive
    phases, the others direct; the data are checked, and it beats `direct`."""
    machine = resolve(spec)
    compiled = compile_program(kind_program("permutation", 16, 65536), target=spec,
                               algorithm="corner-relay")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    route = machine.library.machine.route
    longest = max(len(route(p, q)) for p in range(16) for q in range(16) if coll.byte_matrix[p][q])
    relayed = {(t.origin, t.final) for phase in schedule.phases for t in phase.sends
               if (t.src, t.dst) != (t.origin, t.final)}
    assert relayed and all(len(route(p, q)) == longest for p, q in relayed)
    for phase in schedule.phases:
        for t in phase.sends:
            if t.src == t.origin and t.dst != t.final:  # the first leg, to the corner
                assert t.dst == t.final // 4 * 4 + t.origin % 4
    result = simulate(compiled).collectives[0]
    assert result.verified and result.efficiency <= 1.0
    assert simulated_time_s(machine, coll, "direct") > gain * result.time_s


def test_auto_takes_it_on_the_torus_where_it_wins():
    compiled = compile_program(kind_program("permutation", 16, 65536), target="torus:4x4")
    assert compiled.schedules[0].algorithm == "corner-relay"


def test_corner_relay_is_refused_off_the_whole_grid():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("permutation", 8, 4096), target="torus:4x4",
                        algorithm="corner-relay")
    assert ("cannot lower the permutation of line 5 on torus:4x4: it needs all 16 nodes of the "
            "4x4 grid, but the collective has 8 processors") in str(err.value)
    assert "corner-relay" not in resolve("hypercube:3").algorithms("permutation")
    assert "corner-relay-wide" in resolve("paragon:2x3").algorithms("permutation")
