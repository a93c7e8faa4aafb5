"""The `rounds and relays` bound (compiler/library/chainbound.py, docs/bounds.md "Rounds and
relays"), worked by hand. That no schedule beats it on any target is test_bounds.py's check."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.bounds import bounds, relay_bound_s
from phalanx.compiler.library.chainbound import (
    chain_lengths,
    complete_exchange_block,
    node_blocks,
    ports_busy_s,
    rounds_relays_bound_s,
)
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


def small_patterns() -> dict[str, np.ndarray]:
    """Uniform, uneven and sparse byte matrices on 8 nodes (the diagonal's bytes stay local)."""
    rng = np.random.default_rng(7)
    uneven = rng.integers(1, 4000, (8, 8))
    sparse = rng.integers(1, 600, (8, 8)) * (rng.random((8, 8)) < 0.3)
    sparse[0, 5] = 90
    return {"uniform": np.full((8, 8), 128), "uneven": uneven, "sparse": sparse,
            "one block more": np.where(np.eye(8, dtype=bool), 0, 8) + np.eye(8, 8, 1, dtype=np.int64)}


def sorted_rows(coll) -> np.ndarray:
    """The general path's rows: each node's blocks for others sorted, largest first."""
    return -np.sort(-coll.network_matrix.astype(np.float64), axis=1)


@pytest.mark.parametrize("name", ["uniform", "uneven", "sparse", "one block more"])
def test_the_unsorted_paths_give_the_sorted_ones_values(name):
    """`start-ups or relays` by its definition (each node's least over k = 1 .. P - 1 of k holds
    plus c beta (2 X - its k largest blocks), sorted; 0 for a node that sends
    nothing) equals the sort-free count of the blocks
    worth a start-up, bit for bit, on machines with one engine, with a shared one and with none
    worth sending straight; the `rounds and relays` rows of a complete exchange are one row of
    the sorted rows, and the uneven ones are the sorted rows."""
    coll = recognize(0, small_patterns()[name].astype(np.int64), "A", "B", 1)
    for spec in ("ideal:8", "hypercube:3", "cs2:8"):
        port = resolve(spec).library.machine.port
        rows = sorted_rows(coll)
        direct = np.cumsum(rows, axis=1)
        k = np.arange(1, 9)
        each = 2.0 if port.shared_engine else 1.0
        busy = k * port.hold_s + each * port.s_per_byte * (2 * direct[:, -1:] - direct)
        least = np.where(direct[:, -1] > 0, busy.min(axis=1), 0.0)  # a node with nothing to send: 0
        assert relay_bound_s(coll, port) == float(least.sum()) / 8
    blocks = node_blocks(coll)
    assert blocks is not None
    if name == "uniform":
        assert complete_exchange_block(coll) == 128 and blocks.shape == (1, 7)
        assert (sorted_rows(coll)[:, :7] == blocks).all()
    else:
        assert complete_exchange_block(coll) == 0
        assert (sorted_rows(coll)[:, :blocks.shape[1]] == blocks).all()
        assert not sorted_rows(coll)[:, blocks.shape[1]:].any()


def test_one_row_for_a_complete_exchange_keeps_the_average_over_the_nodes():
    """hypercube:3, 128 B all-to-all: the one row's busy time is every node's, so the average
    over the 8 sorted rows, for every slot count the count reads."""
    port = resolve("hypercube:3").library.machine.port
    coll = recognize(0, small_patterns()["uniform"].astype(np.int64), "A", "B", 1)
    for slots in range(3, 3 + 16):
        one_row_s = ports_busy_s(node_blocks(coll), slots, port)
        assert one_row_s == ports_busy_s(sorted_rows(coll), slots, port) / 8
