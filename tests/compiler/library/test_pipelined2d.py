"""pipelined-2dmesh (compiler/library/pipelined2d.py): the stored order's moves, its phases (no wire
carrying two worms, no block moving in consecutive phases, every block its fewest hops), its
packs, the data of an all-to-all and of uneven blocks, the preconditions and the 8x8 figure
(issue 27, branch a2a2d)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.pipelined2d import (
    MOVES,
    ORDERS,
    Orders,
    check_orders,
    eager_phases,
)
from phalanx.compiler.schedule import SyncMode
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.synthetic import run_matrix, varied_matrix

NAME = "pipelined-2dmesh"


def compiled(spec: str = "torus:8x8", block: int = 128):
    return compile_program(alltoall_program(64, block), target=spec, algorithm=f"alltoall={NAME}")


def test_the_stored_order_sends_each_move_once_a_class_and_a_broken_one_is_named():
    assert check_orders(ORDERS.moves) is None
    assert ORDERS.phases == 16
    short = {**ORDERS.moves, 2: ORDERS.moves[2][:-1]}
    assert check_orders(short) == "class 2 has 15 phases, another 16"
    twice = {**ORDERS.moves, 3: (MOVES[0],) + ORDERS.moves[3][1:]}
    assert check_orders(twice) == "class 3 does not send each of the 14 moves once"


@pytest.mark.parametrize("spec", ["torus:8x8", "iwarp:8x8"])
def test_one_message_a_node_a_phase_no_wire_shared_no_block_forwarded_at_once(spec):
    target = resolve(spec)
    schedule = compiled(spec).schedules[0]
    assert schedule.phases[0].sync == SyncMode.LOCAL
    assert all(p.sync == SyncMode.EAGER for p in schedule.phases[1:])
    moved_in: dict[tuple[int, int], list[int]] = {}
    hops = Counter()
    for k, phase in enumerate(schedule.phases[1:]):
        sent = [t for t in phase.sends if t.src != t.dst]  # the next phase's packs aside
        messages = {(t.src, t.dst) for t in sent}
        assert len({s for s, _ in messages}) == len(messages)  # one message a node
        wires = Counter(link for s, d in messages for link in target.torus.links(s, d))
        assert max(wires.values()) == 1
        for t in sent:
            moved_in.setdefault((t.origin, t.final), []).append(k)
            hops[(t.origin, t.final)] += target.torus.hops(t.src, t.dst)
    assert len(moved_in) == 64 * 63
    assert all(b - a >= 2 for ks in moved_in.values() for a, b in zip(ks, ks[1:]))
    assert all(hops[(o, f)] == target.torus.hops(o, f) for o, f in moved_in)


def test_an_order_that_moves_a_block_in_consecutive_phases_is_refused():
    # block 0->12 (x by 4, y by 1): x by 4 in phase 6, y by 1 in phase 7, and y before x no better
    coll = compiled().collectives[0]
    bad = Orders({0: MOVES}, lambda x, y: 0)
    with pytest.raises(ValueError) as err:
        eager_phases(coll, bad)
    assert str(err.value) == "block 0->12 moves in two consecutive phases either way"


def test_rows_in_rank_order_go_unpacked_and_only_the_own_row_is_packed():
    """alltoall_program's rows lie in rank order (Collective.sends_in_rank_order): a node's
    column messages are its rows, one run each, and it packs only the 7 blocks of its own row;
    without the fact it packs all 63. Each message's packs are made in the phase before it,
    after that phase's message (the first message's in the local phase)."""
    coll = compiled().collectives[0]
    assert coll.sends_in_rank_order
    for fact, packed in ((True, 7), (False, 63)):
        phases = eager_phases(dataclasses.replace(coll, sends_in_rank_order=fact), ORDERS)
        per_node = Counter(t.src for p in phases for t in p.sends if t.src == t.dst and t.origin != t.final)
        assert set(per_node.values()) == {packed}
        for k, phase in enumerate(phases[1:-1], start=1):  # a pack's block leaves in the next phase
            packs = {(t.origin, t.final) for t in phase.sends if t.src == t.dst and t.origin != t.final}
            assert packs <= {(t.origin, t.final) for t in phases[k + 1].sends if t.src != t.dst}


def test_the_all_to_all_and_uneven_blocks_arrive_once():
    result = simulate(compiled(block=24)).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
    run = run_matrix(resolve("iwarp:8x8"), varied_matrix(64, 128, variance=0.5), NAME)
    assert run.verified, run.problems


@pytest.mark.parametrize("spec, reason", [
    ("torus:4x4", "its order is one of an 8x8 torus, not 4x4"),
    ("paragon:8x8", "its rows and columns are the lines of a mesh, not rings"),
    ("torus:4x16", "its order is one of an 8x8 torus, not 4x16"),
])
def test_it_needs_an_8x8_torus(spec, reason):
    target = resolve(spec)
    coll = compile_program(alltoall_program(target.nnodes, 8), target=spec,
                           algorithm="alltoall=direct").collectives[0]
    assert dict(target.candidates(coll))[NAME] == reason
    with pytest.raises(PhalanxError) as err:
        compile_program(alltoall_program(target.nnodes, 8), target=spec, algorithm=f"alltoall={NAME}")
    assert f"algorithm '{NAME}' cannot lower the alltoall of line 4 on {spec}: {reason}" in str(err.value)


def test_the_128_byte_all_to_all_on_the_8x8_torus():
    """The figure of docs/efficiency.md (branch a2a2d; 441.5 us before a node's copies held its
    processor, 443.1 with each message's packs in the local phase): under 0.5 of the link-load
    bound's 224.8 us (449.6), and under signed-checkerboard-bruck's 491.1, the data verified."""
    result = simulate(compiled()).collectives[0]
    assert result.verified, result.problems
    assert result.time_s == pytest.approx(431.9e-6, rel=1e-4)
    assert result.lower_bound_s / result.time_s > 0.5
    assert np.isclose(result.lower_bound_s, 224.8e-6, rtol=1e-3)
