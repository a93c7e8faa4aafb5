"""`checkerboard-bruck`, `signed-checkerboard-bruck` and `rows-bruck-columns-direct`
(compiler/library/checkerboard.py): no two worms of a checkerboard round share a wire on rings of
up to 8, every block crosses its fewest hops in the signed form, a pattern converging on one row
costs a node log2 cols + 1 messages, and every block arrives (issue 27, branch torusshort)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library import checkerboard
from phalanx.compiler.library.checkerboard import ring_class
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.synthetic import execute, varied_matrix
from phalanx.runtime.timing import simulated_time_s

NAMES = ("checkerboard-bruck", "signed-checkerboard-bruck")
ALL = NAMES + ("rows-bruck-columns-direct",)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("spec", ["torus:8x8", "torus:4x4", "torus:2x8", "iwarp:4x4"])
def test_no_two_worms_of_a_round_share_a_wire_and_every_block_arrives(spec, name):
    target = resolve(spec)
    compiled = compile_program(alltoall_program(target.nnodes, 64), target=spec,
                               algorithm=f"alltoall={name}")
    schedule = compiled.schedules[0]
    for phase in schedule.phases:
        messages = {(t.src, t.dst) for t in phase.sends if t.src != t.dst}
        wires = Counter(link for s, d in messages for link in target.torus.links(s, d))
        assert max(wires.values(), default=0) <= 1
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_the_signed_form_moves_every_block_its_fewest_hops():
    """Each block's hops over all rounds are its e-cube route's: the links carry the link-load
    bound's bytes (8 KB a link direction for 128 B blocks on 8x8) and no more."""
    target = resolve("torus:8x8")
    compiled = compile_program(alltoall_program(64, 128), target="torus:8x8",
                               algorithm="alltoall=signed-checkerboard-bruck")
    hops = Counter()
    for phase in compiled.schedules[0].phases:
        for t in phase.sends:
            if t.src != t.dst:
                hops[(t.origin, t.final)] += target.torus.hops(t.src, t.dst)
    assert all(hops[(o, f)] == target.torus.hops(o, f) for o in range(64) for f in range(64) if o != f)


@pytest.mark.parametrize("name", ALL)
def test_uneven_blocks_arrive_once_and_a_sparse_pattern_verifies(name):
    """alltoallv's uneven blocks (bench/efficiency.py's matrix) each arrive once, whole, at their
    destination; every node to the first two of torus:4x4 (the grid's sparse case) verifies."""
    machine = resolve("torus:4x4")
    coll = recognize(0, varied_matrix(16, 24, variance=0.5), "A", "B", 1)
    schedule = machine.schedule_for(coll, name)
    arrived = Counter()
    for phase in schedule.phases:
        for t in phase.sends:
            if t.dst == t.final and (t.src != t.dst or t.origin == t.final):
                arrived[(t.origin, t.final)] += t.nbytes
    assert arrived == {(o, f): int(coll.matrix[o, f]) for o, f in zip(*np.nonzero(coll.matrix))}
    source = ("processors P(16)\nprocessors Q(2)\narray A(16, 128) of byte distribute (BLOCK, *) onto P\n"
              "array B(16, 128) of byte distribute (*, BLOCK) onto Q\nB = A\n")
    compiled = compile_program(source, target="torus:4x4", algorithm=f"sparse={name}")
    assert compiled.collectives[0].kind == "sparse"
    result = simulate(compiled).collectives[0]
    assert result.verified and result.algorithm == name


def test_half_ring_classes_share_no_wire_on_a_ring_of_eight():
    """Shift 4 (half the ring, the routes both ways by the source's parity): class 0 is nodes
    0, 1, 4, 5; shift 2: the even nodes."""
    coords = np.arange(8)
    assert np.flatnonzero(ring_class(coords, 4, 8) == 0).tolist() == [0, 1, 4, 5]
    assert np.flatnonzero(ring_class(coords, 2, 8) == 0).tolist() == [0, 2, 4, 6]
    assert ring_class(coords, 8, 8).tolist() == [0] * 8


@pytest.mark.parametrize("spec, reason", [
    ("paragon:4x4", "its rows and columns are the lines of a mesh, not rings"),
    ("torus:6x4", "its shifts need rows and columns that are powers of two, not 6x4"),
])
def test_it_needs_a_torus_of_power_of_two_rings(spec, reason):
    target = resolve(spec)
    coll = compile_program(alltoall_program(target.nnodes, 8), target=spec,
                           algorithm="alltoall=direct").collectives[0]
    assert dict(target.candidates(coll))["checkerboard-bruck"] == reason
    with pytest.raises(PhalanxError) as err:
        compile_program(alltoall_program(target.nnodes, 8), target=spec,
                        algorithm="alltoall=checkerboard-bruck")
    assert f"algorithm 'checkerboard-bruck' cannot lower the alltoall of line 4 on {spec}: {reason}" \
        in str(err.value)


@pytest.mark.parametrize("spec", ["torus:4x4", "torus:2x8", "iwarp:4x4"])
def test_rows_bruck_then_columns_delivers_an_all_to_all(spec):
    target = resolve(spec)
    compiled = compile_program(alltoall_program(target.nnodes, 64), target=spec,
                               algorithm="alltoall=rows-bruck-columns-direct")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_rows_bruck_then_columns_sends_a_converging_pattern_in_four_messages_a_node():
    """Every node of torus:8x8 to the first eighth (row 0): three rounds along the rows, then
    one message down each column; each round a node sends at most one message."""
    source = ("processors P(64)\nprocessors Q(8)\narray A(64, 64) of byte distribute (BLOCK, *) onto P\n"
              "array B(64, 64) of byte distribute (*, BLOCK) onto Q\nB = A\n")
    compiled = compile_program(source, target="torus:8x8", algorithm="sparse=rows-bruck-columns-direct")
    sent = Counter()
    for phase in compiled.schedules[0].phases:
        messages = {(t.src, t.dst) for t in phase.sends if t.src != t.dst}
        assert len({s for s, _ in messages}) == len(messages)
        sent.update(s for s, _ in messages)
    assert max(sent.values()) == 4
    assert simulate(compiled).collectives[0].verified


def test_the_signed_form_sends_a_nodes_larger_message_of_a_round_first():
    """Uneven blocks (alltoallv 128 B, bench/efficiency.py's matrix) on torus:8x8: in every round
    a node's first message is at least its second's bytes, the second start-up running while the
    first streams; the data are checked and the time is 0.5119 ms (0.6023 forward first, 0.5799
    with each round's packs in a phase of their own before it)."""
    machine = resolve("torus:8x8")
    coll = recognize(0, varied_matrix(64, 128, variance=0.5), "A", "B", 1)
    schedule = machine.schedule_for(coll, "signed-checkerboard-bruck")
    unequal = 0
    for phase in schedule.phases:
        sizes: dict[int, dict[int, int]] = {}  # node -> destination -> bytes, in send order
        for t in phase.sends:
            if t.src != t.dst:
                sizes.setdefault(t.src, {}).setdefault(t.dst, 0)
                sizes[t.src][t.dst] += t.nbytes
        for by_dst in sizes.values():
            message = list(by_dst.values())
            assert message == sorted(message, reverse=True)
            unequal += len(set(message)) > 1
    assert unequal > 0  # the rule decides somewhere
    assert simulated_time_s(machine, coll, "signed-checkerboard-bruck") == pytest.approx(0.5119e-3, rel=1e-3)


def test_a_rounds_packs_ride_in_the_round_before_after_its_messages():
    """packs_ahead: each phase of local copies only (a round's packs) joins the phase before,
    in the columns and in the cost model's message phases alike; the copies hold the tori's
    processor while the round's worms stream (torus:8x8 alltoallv 2 KB 6.536 -> 5.259 ms, 128 B
    0.5799 -> 0.5119), and every block still arrives once (the data are checked)."""
    machine = resolve("torus:8x8")
    coll = recognize(0, varied_matrix(64, 2048, variance=0.5), "A", "B", 1)
    schedule = machine.schedule_for(coll, "signed-checkerboard-bruck")
    copies_only = [p for p in schedule.phases if all(t.src == t.dst for t in p.sends)]
    assert len(copies_only) == 1  # the own blocks and the first round's packs
    later_packs = [t for p in schedule.phases[1:] for t in p.sends if t.src == t.dst]
    assert later_packs and all(t.src == t.origin for t in later_packs)
    phases = list(checkerboard.signed_checkerboard_bruck_messages(coll, machine.library.machine))
    assert len(phases) == len(schedule.phases)
    assert simulated_time_s(machine, coll, "signed-checkerboard-bruck") == pytest.approx(5.259e-3, rel=1e-3)
    assert execute(machine, coll, schedule).problems == []
