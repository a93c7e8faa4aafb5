"""`stream-rounds` (compiler/library/streamrounds.py): a permutation on a multi-stream torus in
rounds of pieces, each piece direct or through one relay, no link twice in a round and no
node's memory streams oversubscribed."""

from __future__ import annotations

from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.streamrounds import stream_plan
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import SyncMode
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

BLOCK_BYTES = 131072


def test_the_8x8_transpose_s_rounds_keep_links_and_streams_apart_verified_near_their_closed_form():
    """torus:8x8, 128 KB blocks: 3 rounds of half blocks, barriers between them, each with every
    link once and every node in at most 4 legs (its memory's streams, sends and receives
    together); a relayed piece's legs go in two rounds, the first earlier, and chain from its
    origin to its final node; the data are checked, the time is 1.5 blocks' wire time plus at
    most 4 start-ups a round and two barriers, and it beats the corner relays (8.38 ms)."""
    spec = "torus:8x8"
    machine = resolve(spec)
    compiled = compile_program(kind_program("permutation", 64, BLOCK_BYTES), target=spec,
                               algorithm="stream-rounds")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    library = machine.library.machine
    assert library.route is not None
    assert [phase.sync for phase in schedule.phases] == [SyncMode.BARRIER, SyncMode.BARRIER,
                                                         SyncMode.LOCAL]
    legs: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for k, phase in enumerate(schedule.phases):
        moves = [t for t in phase.sends if t.src != t.dst]
        links = [link for t in moves for link in library.route(t.src, t.dst)]
        assert len(links) == len(set(links))
        ends = Counter(t.src for t in moves) + Counter(t.dst for t in moves)
        assert max(ends.values()) <= library.port.engine_streams == 4
        for t in moves:
            assert t.nbytes == BLOCK_BYTES // 2
            legs.setdefault((t.origin, t.final, t.offset), []).append((k, t.src, t.dst))
    assert len(legs) == 2 * 56
    for (origin, final, _), chain in legs.items():
        rounds = [k for k, _, _ in chain]
        assert rounds == sorted(set(rounds))
        assert chain[0][1] == origin and chain[-1][2] == final
        assert all(a[2] == b[1] for a, b in zip(chain, chain[1:]))
    result = simulate(compiled).collectives[0]
    assert result.verified and result.efficiency <= 1.0
    port = library.port
    wire_s = 1.5 * BLOCK_BYTES * port.link_s_per_byte
    assert wire_s < result.time_s < wire_s + 2 * 80e-6 + 3 * 4 * port.startup_s
    assert simulated_time_s(machine, coll, "corner-relay-wide") > 1.4 * result.time_s


def test_auto_takes_it_for_the_torus_s_long_transpose():
    compiled = compile_program(kind_program("permutation", 64, BLOCK_BYTES), target="torus:8x8")
    assert compiled.schedules[0].algorithm == "stream-rounds"


@pytest.mark.parametrize("spec, nprocs, reason", [
    ("hypercube:4", 16, "a node streams one message at a time: relay-rounds places whole blocks "
                        "for one-stream ports"),
    ("ideal:16", 16, "the machine names no one fixed route per pair to keep apart in rounds"),
    ("torus:4x4", 8, "it needs all 16 nodes of the machine (its processors are then the routes' "
                     "nodes), but the collective has 8 processors"),
])
def test_stream_rounds_is_refused_where_rounds_are_not_the_machine_s(spec, nprocs, reason):
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("permutation", nprocs, 4096), target=spec,
                        algorithm="stream-rounds")
    assert f"cannot lower the permutation of line 5 on {spec}: {reason}" in str(err.value)


def test_a_one_byte_block_is_refused():
    m = [[0] * 16 for _ in range(16)]
    m[0][1] = 1
    coll = Collective(0, Kind.PERMUTATION, 16, tuple(map(tuple, m)), "A", "B", 3)
    assert stream_plan(coll, resolve("torus:4x4").library.machine) == (
        "a block of 1 B cannot be cut in 2 pieces")
