"""`relay-rounds` (compiler/library/relayrounds.py): a permutation in a few whole-block rounds on
the machine's fixed routes, each block direct or through one relay, no link twice in a round."""

from __future__ import annotations

from collections import Counter

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.relayrounds import relay_plan
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

BLOCK_BYTES = 16384


@pytest.mark.parametrize("spec, nprocs, rounds", [("hypercube:6", 64, 2), ("paragon:4x4", 16, 2)])
def test_the_transpose_s_rounds_keep_links_and_ports_apart_verified_at_their_closed_form(spec, nprocs,
                                                                                          rounds):
    """An 8x8 and a 4x4 transpose of 16 KB blocks (e-cube routes put 4 on a link of
    hypercube:6, `direct` about 5 message times there; hypercube:4's 2 a link leave no gain):
    every round has each link once and each node in one send and one receive (the Paragon's
    shared engine: one of the two); a relayed block's legs go in two rounds, the first earlier;
    the data are checked, the time is R (alpha + beta b) within 2%, and it beats `direct`."""
    machine = resolve(spec)
    compiled = compile_program(kind_program("permutation", nprocs, BLOCK_BYTES), target=spec,
                               algorithm="relay-rounds")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    library = machine.library.machine
    assert library.route is not None
    assert len(schedule.phases) == rounds
    legs: dict[tuple[int, int], list[int]] = {}
    for k, phase in enumerate(schedule.phases):
        moves = [t for t in phase.sends if t.src != t.dst]
        links = [link for t in moves for link in library.route(t.src, t.dst)]
        assert len(links) == len(set(links))
        sends, recvs = Counter(t.src for t in moves), Counter(t.dst for t in moves)
        assert max(sends.values()) == max(recvs.values()) == 1
        if library.port.shared_engine:
            assert not set(sends) & set(recvs)
        for t in moves:
            assert t.nbytes == BLOCK_BYTES
            legs.setdefault((t.origin, t.final), []).append(k)
    assert all(len(ks) == 1 or (len(ks) == 2 and ks[0] < ks[1]) for ks in legs.values())
    result = simulate(compiled).collectives[0]
    assert result.verified and result.efficiency <= 1.0
    port = library.port
    closed_s = rounds * (port.startup_s + port.s_per_byte * BLOCK_BYTES)
    assert result.time_s == pytest.approx(closed_s, rel=0.02)
    assert simulated_time_s(machine, coll, "direct") > 1.1 * result.time_s


def test_auto_takes_it_for_the_paragon_s_transpose():
    compiled = compile_program(kind_program("permutation", 16, BLOCK_BYTES), target="paragon:4x4")
    assert compiled.schedules[0].algorithm == "relay-rounds"


@pytest.mark.parametrize("spec, nprocs, reason", [
    ("torus:4x4", 16, "a node streams 4 messages at once: the rounds place one message a port"),
    ("ideal:16", 16, "the machine names no one fixed route per pair to keep apart in rounds"),
    ("sp2:16", 16, "the machine names no one fixed route per pair to keep apart in rounds"),
    ("hypercube:4", 8, "it needs all 16 nodes of the machine (its processors are then the routes' "
                       "nodes), but the collective has 8 processors"),
])
def test_relay_rounds_is_refused_where_rounds_are_not_the_machine_s(spec, nprocs, reason):
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("permutation", nprocs, 4096), target=spec,
                        algorithm="relay-rounds")
    assert f"cannot lower the permutation of line 5 on {spec}: {reason}" in str(err.value)


def test_a_node_in_two_messages_is_refused():
    m = [[0] * 16 for _ in range(16)]
    m[0][1] = m[0][2] = 4096
    coll = Collective(0, Kind.PERMUTATION, 16, tuple(map(tuple, m)), "A", "B", 3)
    assert relay_plan(coll, resolve("hypercube:4").library.machine) == (
        "node 0 sends 2 messages: the rounds place one block a node each way")
