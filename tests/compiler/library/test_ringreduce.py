"""Bidirectional-rings allreduce on tori (ringreduce.py): its data arrives on even, odd and
oblong grids, every message goes to a grid neighbour, each link direction carries the least a
ring allows, and its preconditions refuse with the reason (issue 27: the torus's long
allreduces were at half their bound)."""

from __future__ import annotations

from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.ringreduce import gather_steps, reduce_steps
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

ELEMENT = 8  # the sweep's partials are float64


def neighbours(node: int, rows: int, cols: int) -> set[int]:
    r, c = divmod(node, cols)
    return {r * cols + (c + 1) % cols, r * cols + (c - 1) % cols,
            ((r + 1) % rows) * cols + c, ((r - 1) % rows) * cols + c}


@pytest.mark.parametrize("length", [2, 3, 4, 5, 8])
def test_each_chain_of_a_ring_reaches_its_owner_and_every_partial_is_in_one(length: int):
    """Reduce-scatter: the last step's messages arrive at their owner and the chains into an
    owner hold every other position once (the one opposite in both, by halves). Allgather:
    every position's bundle reaches every other position."""
    into: dict[int, list[int]] = {o: [] for o in range(length)}
    steps = reduce_steps(length)
    assert len(steps) == length // 2
    for sender, receiver, owner, chain, _ in steps[-1]:
        assert receiver == owner and chain[0] == sender
        into[owner] += chain
    for owner, chained in into.items():
        expected = [p for p in range(length) if p != owner]
        if length % 2 == 0:
            expected.append((owner + length // 2) % length)
        assert sorted(chained) == sorted(expected)
    seen = {v: {v} for v in range(length)}
    for step in gather_steps(length):
        for _, receiver, position, _ in step:
            seen[receiver].add(position)
    assert all(s == set(range(length)) for s in seen.values())


@pytest.mark.parametrize("spec, shape, elements", [("torus:4x4", (4, 4), 200), ("torus:3x4", (3, 4), 3),
                                                   ("torus:2x3", (2, 3), 3)])
def test_the_data_arrives_by_neighbours_with_the_least_on_each_link(spec: str, shape, elements: int):
    """Rings in both dimensions: on 4x4 partials large enough that a column's message streams
    longer than a step's two start-ups (below, the columns go by halving: halves_columns)."""
    rows, cols = shape
    n = rows * cols
    size = 4 * n * ELEMENT * elements
    compiled = compile_program(kind_program("allreduce", n, size), target=spec,
                               algorithm="allreduce=bidirectional-rings")
    schedule = compiled.schedules[0]
    link: dict[tuple[int, int], int] = {}
    for phase in schedule.phases:
        sent: dict[tuple[int, int], set[tuple[int, int]]] = {}
        for t in phase.sends:
            if t.src != t.dst:
                assert t.dst in neighbours(t.src, rows, cols)
                sent.setdefault((t.src, t.dst), set()).add((t.offset, t.nbytes))
        for pair, pieces in sent.items():
            link[pair] = link.get(pair, 0) + sum(b for _, b in pieces)
    if shape == (4, 4):
        # A ring of 4 puts (4 - 1) / 2 of its pieces on each link direction, there and back:
        # the rows' pieces are a quarter of the partial, the columns' a sixteenth.
        row = {pair: b for pair, b in link.items() if pair[0] // cols == pair[1] // cols}
        assert set(row.values()) == {2 * 1.5 * size / 4} and len(row) == 2 * n
        assert {b for pair, b in link.items() if pair not in row} == {2 * 1.5 * size / 16}
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_preconditions_refuse_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allreduce", 16, 256), target="torus:4x4",
                        algorithm="allreduce=bidirectional-rings")
    assert ("algorithm 'bidirectional-rings' cannot lower the allreduce of line 4 on torus:4x4: "
            "a partial of 32 elements is smaller than its 64 units (four per node)") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allreduce", 16, 4096), target="ideal:16",
                        algorithm="allreduce=bidirectional-rings")
    assert "unknown algorithm 'bidirectional-rings' for an allreduce" in str(err.value)


@pytest.mark.parametrize("spec, n", [("torus:4x4", 16), ("torus:3x4", 12), ("torus:2x3", 6)])
def test_the_reduce_arrives(spec: str, n: int):
    compiled = compile_program(kind_program("reduce", n, 4 * n * ELEMENT * 3), target=spec,
                               algorithm="reduce=bidirectional-rings")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_the_reduce_brings_the_pieces_in_by_all_four_links_of_the_root():
    """Routes go along the row first, so pieces from off the root's row arrive by its column
    links unless relayed through the root's row; the relayed nodes even out the root's four
    in-links: on 8x8 they carry 15, 16, 16 and 16 of the 63 pieces (the root's row's own 7,
    then 24 relayed, by the row links; 32 by the column links). Before, four whole rows were
    relayed: 15 and 20 by the row links, 10 and 18 by the column links."""
    machine = resolve("torus:8x8")
    (coll,) = recognized_collectives(kind_program("reduce", 64, 64 * 4 * ELEMENT),
                                     target="torus:8x8")
    # to the relays and the root, then the relays on
    gather = machine.schedule_for(coll, "bidirectional-rings").phases[-2:]
    into_root = {(t.src, t.offset) for p in gather for t in p.sends if t.dst == 0 and t.src}
    pieces = Counter(machine.library.machine.route(src, 0)[-1] for src, _ in into_root)
    assert sorted(count // 4 for count in pieces.values()) == [15, 16, 16, 16]  # 4 units a piece
    assert sum(1 for src, _ in into_root if src < 8) // 4 == 31


@pytest.mark.parametrize("kind", ["allreduce", "reduce"])
def test_single_part_stages_run_each_step_as_two_eager_phases(kind: str):
    """torus:4x4, partials of 16 KB (every message one part): each ring step in two eager
    phases, east (or south) first, each phase receiving what the one before sent; the data
    arrives, and the native lowering takes the later receives."""
    from phalanx.compiler.ir.conversion.lower_sched_to_mpi import plan_native
    from phalanx.compiler.ir.dialects.sched import plan_to_module
    from phalanx.compiler.schedule import Plan, SyncMode

    compiled = compile_program(kind_program(kind, 16, 16384), target="torus:4x4",
                               algorithm=f"{kind}=bidirectional-rings")
    schedule = compiled.schedules[0]
    split = [p for p in schedule.phases if p.sync == SyncMode.EAGER]
    assert split and len(split) % 2 == 0
    first, second = split[0], split[1]
    assert first.sends and not first.recvs and set(second.recvs) == set(first.sends)
    assert all((t.dst % 4 - t.src % 4) % 4 == 1 for t in first.sends if t.src != t.dst)
    assert all((t.src % 4 - t.dst % 4) % 4 == 1 for t in second.sends)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert plan_native(plan_to_module(Plan(16, (schedule,)))).rows


def test_the_cost_model_follows_a_split_step_as_one_phase():
    """cost.estimate_s waits for a node's receives in the phase that sends them, so it follows
    the two eager halves of a ring step as one phase: the same estimate as the step's sends in
    one local phase."""
    from phalanx.compiler.library.cost import estimate_s
    from phalanx.compiler.schedule import Phase, Schedule, SyncMode

    machine = resolve("torus:4x4")
    compiled = compile_program(kind_program("reduce", 16, 16384), target="torus:4x4",
                               algorithm="reduce=bidirectional-rings")
    schedule = compiled.schedules[0]
    joined, group = [], []
    phases = schedule.phases
    for k, phase in enumerate(phases):
        group += phase.sends
        after = phases[k + 1] if k + 1 < len(phases) else None
        if not (after is not None and after.sync == SyncMode.EAGER and set(group) <= set(after.recvs)):
            joined.append(Phase.of(group))
            group = []
    assert len(joined) < len(schedule.phases)
    port = machine.library.machine.port
    whole = Schedule(0, Kind.REDUCE, "x", 16, tuple(joined))
    assert estimate_s(schedule, port, ELEMENT) == pytest.approx(estimate_s(whole, port, ELEMENT), rel=1e-12)


@pytest.mark.parametrize("kind", ["allreduce", "reduce"])
def test_short_column_pieces_go_by_halving_to_partners_across_bits(kind: str):
    """torus:8x8 at 16 KB: a column's ring message (256 B, 6.4 us) streams in less than a
    step's two start-ups (40 us), so the columns go by recursive halving (and the allreduce's
    back by doubling): three steps of one message a node, to (r XOR m, c) for m = 1, 2, 4, a
    node's messages 1 KB, 512 B, 256 B; the data arrives (checked on torus:8x2 alike). On
    torus:4x4 the rings stay (two steps either way)."""
    machine = resolve("torus:8x8")
    (coll,) = recognized_collectives(kind_program(kind, 64, 16384), target="torus:8x8")
    column_steps = [p for p in machine.schedule_for(coll, "bidirectional-rings").phases
                    if p.sends and all(t.src % 8 == t.dst % 8 and t.src != t.dst for t in p.sends)]
    masks = [{(t.src // 8) ^ (t.dst // 8) for t in p.sends} for p in column_steps]
    assert masks[:3] == [{1}, {2}, {4}]
    if kind == "allreduce":
        assert masks[3:] == [{4}, {2}, {1}]
    sent: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for t in column_steps[0].sends:
        sent.setdefault((t.src, t.dst), set()).add((t.offset, t.nbytes))
    assert {sum(b for _, b in pieces) for (src, _), pieces in sent.items() if src != 0} == {1024}
    small = compile_program(kind_program(kind, 16, 4 * 16 * ELEMENT * 8), target="torus:8x2",
                            algorithm=f"{kind}=bidirectional-rings")
    phases = small.schedules[0].phases
    assert any(p.sends and {(t.src // 2) ^ (t.dst // 2) for t in p.sends} == {4} for p in phases)
    square = compile_program(kind_program(kind, 16, 4 * 16 * ELEMENT * 8), target="torus:4x4",
                             algorithm=f"{kind}=bidirectional-rings")
    reduce_scatter = square.schedules[0].phases[:-2] if kind == "reduce" else square.schedules[0].phases
    assert all((t.dst // 4 - t.src // 4) % 4 in (0, 1, 3) for p in reduce_scatter for t in p.sends
               if t.dst != 0)  # neighbours (a reduce's root is a sink), before a reduce's gather
    result = simulate(small).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_the_phases_after_the_rings_are_eager_where_a_node_streams_several():
    """torus:8x8, 16 KB: the columns' halving and the gather into the root in eager phases (a
    node starts its next message once its receives are in, its last one still streaming):
    596.15 us, where local phases took 617.7; the data arrives. On the Paragon's one engine they
    stay local."""
    from phalanx.compiler.schedule import SyncMode

    compiled = compile_program(kind_program("reduce", 64, 16384), target="torus:8x8",
                               algorithm="reduce=bidirectional-rings")
    phases = compiled.schedules[0].phases
    assert all(p.sync == SyncMode.EAGER for p in phases)  # the rows' split steps, then the rest
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s == pytest.approx(596.15e-6, rel=1e-6)
    mesh = compile_program(kind_program("reduce", 16, 16384), target="paragon:4x4",
                           algorithm="reduce=bidirectional-rings")
    assert all(p.sync == SyncMode.LOCAL for p in mesh.schedules[0].phases)
