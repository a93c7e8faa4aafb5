"""The `rounds and relays` bound (compiler/library/chainbound.py, docs/bounds.md "Rounds and
relays"), worked by hand. That no schedule beats it on any target is test_bounds.py's check."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.bounds import bounds, relay_bound_s
from phalanx.compiler.library.chainbound import chain_lengths, ports_busy_s, rounds_relays_bound_s
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program


def test_chains_fixed_by_their_slots_are_at_most_c_s_j_long_j_and_k_of_them_direct():
    """4 slots, 4 messages: the 15 subsets of the slots, by size (Bruck's count, 32 sends in
    all); 1 message: every chain starts in it, C(3, j - 1) of length j, 8 in all; 2 messages,
    in slots 0 and 1 at best: C(3, 1) + C(2, 1) = 5 chains of 2."""
    assert chain_lengths(4, 4, 15).tolist() == [1] * 4 + [2] * 6 + [3] * 4 + [4]
    assert chain_lengths(4, 4, 15).sum() == 32
    assert chain_lengths(4, 1, 8).tolist() == [1, 2, 2, 2, 3, 3, 3, 4]
    assert chain_lengths(4, 1, 9) is None  # 2^4 - 2^3 = 8 destinations at most
    assert chain_lengths(4, 2, 9).tolist() == [1, 1, 2, 2, 2, 2, 2, 3, 3]


def test_the_largest_blocks_take_the_shortest_chains_and_a_shared_engine_pays_twice():
    """Blocks 30, 20, 10 B in 2 slots: one message reaches 2 nodes at most, so 2 messages,
    chains 1, 1, 2: 2 h + (30 + 20 + 2 x 10) beta; twice the bytes on a shared engine."""
    blocks = np.array([[30.0, 20.0, 10.0]])
    port = PortModel(startup_s=10.0, s_per_byte=1.0, combine_s_per_op=0.0)
    assert ports_busy_s(blocks, 2, port) == pytest.approx(20 + 70)
    shared = PortModel(startup_s=10.0, s_per_byte=1.0, combine_s_per_op=0.0, shared_engine=True)
    assert ports_busy_s(blocks, 2, shared) == pytest.approx(20 + 140)
    assert ports_busy_s(blocks, 1, port) == np.inf  # one slot reaches one node


def test_hypercube_128_byte_all_to_all_needs_seven_slots_or_six_with_long_chains():
    """hypercube:6 (alpha = h = 75 us, beta 0.011 us/B: one engine each way, seed 000): in 6
    slots 6 start-ups and Bruck's 192 block-sends of 128 B per node, 0.72 ms; in 7 the last
    start is 6 holds in and its first byte alpha later, 0.525 ms, above the ports' 0.29 ms;
    more slots only start later. Above the start-up rounds' 0.451 ms."""
    machine = resolve("hypercube:6")
    port = machine.library.machine.port
    coll = recognize(0, np.full((64, 64), 128, dtype=np.int64), "A", "B", 1)
    found = bounds(coll, port)
    assert found["rounds and relays"] == pytest.approx(7 * port.startup_s)
    assert found["rounds and relays"] > found["start-up"]
    six_slots_s = (6 * port.hold_s + 192 * 128 * port.s_per_byte)
    assert ports_busy_s(np.full((1, 63), 128.0), 6, port) == pytest.approx(six_slots_s)
    assert machine.binding_bound(coll)[1] == "rounds and relays"


def test_with_many_slots_it_is_never_below_the_start_ups_or_relays():
    """Long blocks: the chains' bytes outweigh the start-ups, every block is best sent
    straight, and the bound is the `start-ups or relays` bound's (ideal:16, 64 KB)."""
    machine = resolve("ideal:16")
    port = machine.library.machine.port
    coll = recognize(0, np.full((16, 16), 65536, dtype=np.int64), "A", "B", 1)
    relays_s = relay_bound_s(coll, port)
    assert rounds_relays_bound_s(coll, port, relays_s) == pytest.approx(relays_s)


def test_not_on_machines_whose_ports_stream_several_messages():
    """iWarp and the torus stream four messages at once: a start-up need not hold the port,
    and the bound is left out (as `start-ups or relays`); so for kinds whose data serve several
    destinations (a broadcast)."""
    torus = resolve("torus:4x4")
    coll = recognize(0, np.full((16, 16), 128, dtype=np.int64), "A", "B", 1)
    assert "rounds and relays" not in bounds(coll, torus.library.machine.port)
    ideal = resolve("ideal:16")
    port = ideal.library.machine.port
    assert rounds_relays_bound_s(coll, PortModel(port.startup_s, port.s_per_byte, 0.0, streams=4),
                                 0.0) == 0.0
    broadcast = compile_program(kind_program("broadcast", 16, 128), target="ideal:16").collectives[0]
    assert "rounds and relays" not in bounds(broadcast, port)
