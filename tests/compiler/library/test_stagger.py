"""The `staggered` permutation (compiler/library/stagger.py): each message's round robin over
the SP2 adapter's routes starts on a route chosen so that messages keep off each other's links."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.stagger import Slots, alternating_classes, apart_offsets, choose_offsets
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def test_messages_on_the_same_routes_start_them_in_different_slots():
    """Four messages whose four routes are the same four links: one offset each, no link shared
    in a slot; messages on links of their own keep offset 0 (no lead-in needed)."""
    same = [[("up", r)] for r in range(4)]
    offsets = choose_offsets([same] * 4, [list(range(4))] * 4)
    assert sorted(offsets) == [0, 1, 2, 3]
    table = Slots([same] * 4, 4)
    for message, offset in enumerate(offsets):
        table.place(message, offset)
    assert max(table.use.values()) == 1
    apart = [[[("own", m, r)] for r in range(4)] for m in range(3)]
    assert choose_offsets(apart, [list(range(4))] * 3) == [0, 0, 0]


def test_the_transpose_on_sp2_16_is_staggered_verified_and_near_its_bound():
    """sp2:16's transpose of 16 KB blocks: `direct` at 0.68 of the bound (the leaf switches'
    four sources on one up-link in every slot), `staggered` at 0.9 and above, its data checked;
    `auto`, which simulates the library's candidates on the SP2, takes it."""
    source = kind_program("permutation", 16, 16384)
    compiled = compile_program(source, target="sp2:16")
    assert compiled.schedules[0].algorithm == "staggered"
    schedule = compiled.schedules[0]
    assert len(schedule.phases) == 2 and schedule.direct_messages()  # nothing relayed
    leads = [t for t in schedule.phases[0].sends if t.src != t.dst]
    assert leads and all(t.offset == 0 and t.nbytes % 255 == 0 for t in leads)
    result = simulate(compiled).collectives[0]
    assert result.verified
    assert 0.9 <= result.efficiency <= 1.0
    machine, coll = compiled.target, compiled.collectives[0]
    assert simulated_time_s(machine, coll, "direct") > 1.3 * result.time_s


def test_the_messages_alternate_along_each_cycle_and_path():
    """Pairs one way then the other; an odd cycle's last message in a third phase; a path from
    its first sender; no node sends and receives in one phase."""
    pairs = [(0, 1, 8), (1, 0, 8), (2, 3, 8), (3, 4, 8), (4, 2, 8), (5, 6, 8), (6, 7, 8)]
    classes = alternating_classes(pairs)
    assert classes == [0, 1, 0, 1, 2, 0, 1]
    for c in set(classes):
        ends = [node for (p, q, _), k in zip(pairs, classes) if k == c for node in (p, q)]
        assert len(ends) == len(set(ends))


def test_apart_offsets_keep_every_slot_free_of_shared_links():
    """Four messages on the same four routes: one offset each; a message that cannot stagger
    keeps 0 and the others move round it."""
    same = [[("up", r)] for r in range(4)]
    offsets = apart_offsets([same] * 4, [list(range(4))] * 3 + [[0]])
    assert sorted(offsets) == [0, 1, 2, 3] and offsets[3] == 0


def test_the_transpose_on_sp2_64_in_halves_is_verified_and_near_its_bound():
    """sp2:64's transpose of 128 KB blocks: `staggered` 0.72 of the bound (a pair's two
    messages take turns on the shared engines, and the offsets leave links shared), the halves
    0.97 and above, data checked, nothing relayed; `auto` takes them."""
    source = kind_program("permutation", 64, 131072)
    compiled = compile_program(source, target="sp2:64")
    schedule = compiled.schedules[0]
    assert schedule.algorithm == "staggered-halves"
    assert len(schedule.phases) == 3 and schedule.direct_messages()
    for phase in schedule.phases[1:]:
        nodes = [node for t in phase.sends for node in (t.src, t.dst)]
        assert len(nodes) == len(set(nodes)) == 56  # each node sends or receives, not both
    result = simulate(compiled).collectives[0]
    assert result.verified
    assert 0.97 <= result.efficiency <= 1.0
    assert simulated_time_s(compiled.target, compiled.collectives[0], "staggered") > 1.3 * result.time_s


def test_staggered_is_refused_where_there_is_nothing_to_stagger():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("permutation", 8, 4096), target="ideal:8",
                        algorithm="staggered")
    assert "cannot lower the permutation of line 5 on ideal:8" in str(err.value)
    assert "one route: there is no round robin over routes to stagger" in str(err.value)
    machine = resolve("sp2:16")
    fan = [[0] * 16 for _ in range(16)]
    fan[0][1] = fan[0][2] = 4096  # node 0 sends two messages
    coll = Collective(0, Kind.PERMUTATION, 16, tuple(map(tuple, fan)), "A", "B", 3)
    assert machine.unmet(coll, "staggered") == ("node 0 sends to 2 nodes: the staggered slots "
                                                "assume one message each way")
    assert machine.unmet(coll, "staggered-halves") == machine.unmet(coll, "staggered")
    assert {"staggered", "staggered-halves"} <= set(machine.algorithms("cshift"))
    cs2 = compile_program(kind_program("permutation", 16, 4096), target="cs2:16")
    assert cs2.target.unmet(cs2.collectives[0], "staggered").startswith("the machine sends each "
                                                                         "message on one route")
