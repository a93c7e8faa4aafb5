"""Lower bounds are bounds: every algorithm of every kind on a small machine of every target
family, timed without payload (runtime/timing.py), takes at least the target's lower bound
(docs/bounds.md). Also each bound's closed form on `ideal`, where it can be worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import runnable_times
from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.library.bounds import (
    Weighting,
    bounds,
    engine_fill_bound_s,
    engine_startups_bound_s,
    fan_in_bound_s,
    gossip_messages,
    late_nodes_bound_s,
    memory_fill_bound_s,
    memory_ramp_bound_s,
    memory_rounds_bound_s,
    memory_start_bound_s,
    pipeline_bound_s,
    relay_bound_s,
    startup_bound_s,
)
from phalanx.compiler.library.enginerelays import engine_relays_bound_s
from phalanx.compiler.library.offer import diagonal_weightings, entry_cuts, grid_links, ring_weightings
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective, recognize
from phalanx.compiler.semantics import Op
from phalanx.compiler.target import Target, resolve
from phalanx.grammar.ast import Mapping
from phalanx.runtime.sweep import SWEEP_KINDS, kind_program
from phalanx.runtime.synthetic import varied_matrix
from phalanx.runtime.timing import simulated_time_s

ROUNDING = 1e-9  # float rounding of the simulator's clock against the bound's closed form
# One small machine of each built-in family (odd node counts where the family has them), and
# the sizes each is run at: a start-up-bound size and bandwidth-bound ones.
MACHINES = {"ideal:6": (8, 4096, 65536), "ideal:8": (8, 4096, 65536), "torus:3x4": (8, 65536),
            "iwarp:4x4": (8, 65536), "paragon:2x3": (8, 4096, 65536), "hypercube:3": (8, 65536),
            "sp2:8": (8, 65536), "cs2:6": (8, 65536), "ksr1:6": (8, 512),
            "proteus:groups=1": (8, 2048)}


def collective(machine: Target, kind: str, size: int) -> Collective | None:
    """The sweep's `kind` program of `size`-byte blocks on the whole machine, as recognized
    (no candidate's schedule generated), or None where no algorithm's preconditions hold for
    it; or a byte matrix for the kinds no sweep program makes: `sparse` (each node to the next
    and the third next) and `alltoallv` (Fig. 9's varied sizes)."""
    n = machine.nnodes
    if kind in ("sparse", "alltoallv"):
        if kind == "sparse":
            m = np.zeros((n, n), dtype=np.int64)
            m[np.arange(n), (np.arange(n) + 1) % n] = size
            m[np.arange(n), (np.arange(n) + 3) % n] = size
        else:
            m = varied_matrix(n, size, variance=0.5)
        return recognize(0, m, "A", "B", 1)
    (coll,) = recognized_collectives(kind_program(kind, n, size), target=machine.spec)
    if all(unmet is not None for _, unmet in machine.candidates(coll)):
        return None
    return coll


@pytest.mark.parametrize("spec", sorted(MACHINES))
def test_no_algorithm_beats_the_lower_bound(spec):
    machine = resolve(spec)
    for kind in (*SWEEP_KINDS, "sparse", "alltoallv"):
        for size in MACHINES[spec]:
            coll = collective(machine, kind, size)
            if coll is None:
                continue
            bound_s, binds = machine.binding_bound(coll)
            assert bound_s > 0 and binds, (spec, kind, size)
            times = runnable_times(machine, coll)
            for algorithm, time_s in times:
                assert time_s >= bound_s * (1 - ROUNDING), (spec, kind, size, algorithm, binds)
            assert times, (spec, kind, size)


def test_all_to_all_needs_log_p_start_up_rounds_then_its_last_block():
    """ideal:16 (alpha 10 us, beta 0.01 us/B): an 8-byte all-to-all cannot finish in fewer
    than ceil(log2 16) = 4 start-ups plus one block (`start-up`); with 4 slots each source's 15
    chains take at least 4 + 2 x 6 + 3 x 4 + 4 = 32 block-sends (`rounds and relays`), which
    binds, and Bruck's algorithm meets it (4 rounds of 8 blocks)."""
    machine = resolve("ideal:16")
    coll = recognize(0, np.full((16, 16), 8, dtype=np.int64), "A", "B", 1)
    found = bounds(coll, machine.library.machine.port)
    assert found["start-up"] == pytest.approx(4 * 10e-6 + 8 * 0.01e-6)
    bound_s = 4 * 10e-6 + 32 * 8 * 0.01e-6
    assert machine.binding_bound(coll) == (pytest.approx(bound_s), "rounds and relays")
    assert simulated_time_s(machine, coll, "bruck") == pytest.approx(bound_s)


def test_a_shift_needs_one_start_up_and_a_broadcast_its_depth_then_the_whole_block():
    machine = resolve("ideal:8")
    port = machine.library.machine.port
    shift = recognize(0, np.roll(np.eye(8, dtype=np.int64), 1, axis=1) * 4096, "A", "B", 1)
    assert shift.kind == "permutation"  # a shift given as its byte matrix
    assert startup_bound_s(shift, port) == pytest.approx(10e-6 + 4096 * 0.01e-6)
    m = np.zeros((8, 8), dtype=np.int64)
    m[0, 1:] = 65536
    broadcast = recognize(0, m, "A", "B", 1, Op.COPY, Mapping.SINGLE, Mapping.REPLICATED)
    assert broadcast.kind == "broadcast"
    # ceil(log2 8) = 3 start-ups, then every byte through the last receiver's port
    assert startup_bound_s(broadcast, port) == pytest.approx(3 * 10e-6 + 65536 * 0.01e-6)
    assert machine.binding_bound(broadcast)[1] == "pipeline"  # the pieces' start-ups on top


def test_a_broadcast_pays_each_piece_twice_and_its_start_up_before_the_rounds():
    """ideal (alpha 10 us, beta 0.01 us/B), 64 KB (B beta 655.36 us): the root's pieces cost
    at least min over q of B beta / q + (q - 1) alpha / 2, at q = 11 (59.58 + 50 us), on top of
    2 alpha + (lg P - 2) alpha + B beta. On ideal:3 an 8-byte broadcast sent straight to both
    receivers (q = 1) meets it: 2 (alpha + 8 beta). Not where the port streams several messages
    (torus) or the engine lets another start-up in before a message's wire (Paragon)."""
    pieces_s = 655.36e-6 / 11 + 10 * 10e-6 / 2
    for spec, rounds in (("ideal:8", 3), ("ideal:16", 4)):
        machine = resolve(spec)
        coll = recognized_collectives(kind_program("broadcast", machine.nnodes, 65536),
                                      target=spec)[0]
        assert pipeline_bound_s(coll, machine.library.machine.port) == pytest.approx(
            (2 + rounds - 2) * 10e-6 + 655.36e-6 + pieces_s)
    machine = resolve("ideal:3")
    coll = recognized_collectives(kind_program("broadcast", 3, 8), target="ideal:3")[0]
    assert machine.binding_bound(coll) == (pytest.approx(2 * (10e-6 + 8 * 0.01e-6)), "pipeline")
    assert simulated_time_s(machine, coll, "direct") == pytest.approx(2 * (10e-6 + 8 * 0.01e-6))
    for spec in ("torus:4x4", "paragon:4x4"):
        machine = resolve(spec)
        coll = recognized_collectives(kind_program("broadcast", 16, 65536), target=spec)[0]
        assert pipeline_bound_s(coll, machine.library.machine.port) == 0.0


def test_an_allreduce_moves_two_partials_per_member_less_one_share():
    """Patarasuk and Yuan's bound: 2(P - 1)/P partials through the busiest port; on an engine
    shared by both directions (the SP2) both count."""
    ideal, sp2 = resolve("ideal:8"), resolve("sp2:8")
    source = kind_program("allreduce", 8, 65536)
    coll = compile_program(source, target="ideal:8", algorithm="allreduce=ring").collectives[0]
    assert coll.element_bytes == 8 and coll.network_matrix.max() == 65536
    found = bounds(coll, ideal.library.machine.port)
    assert found["port bandwidth"] == pytest.approx(10e-6 + 2 * 7 / 8 * 65536 * 0.01e-6)
    port = sp2.library.machine.port
    assert bounds(coll, port)["port bandwidth"] == pytest.approx(
        port.startup_s + 4 * 7 / 8 * 65536 * port.s_per_byte)


def test_shared_engines_carry_both_directions_of_an_all_to_all():
    """paragon:2x4 (one engine per node, Bokhari Sec. 3.1): 7 blocks out and 7 in."""
    machine = resolve("paragon:2x4")
    port = machine.library.machine.port
    coll = recognize(0, np.full((8, 8), 65536, dtype=np.int64), "A", "B", 1)
    found = bounds(coll, port, machine.library.cuts, machine.library.links)
    assert found["port bandwidth"] == pytest.approx(port.startup_s + 14 * 65536 * port.s_per_byte)


def test_shared_engines_carry_every_byte_on_the_wire_twice_between_them():
    """sp2:8 (one engine per node): a broadcast's 7 receivers take the block and someone sends
    each copy, so the 8 engines carry 14 blocks and the busiest 14/8 of one; an allgather's 56
    parts, in and out, 14 parts per engine where one node's own need is 8; a reduce's 7
    contributors each send their partial at least once."""
    machine = resolve("sp2:8")
    port = machine.library.machine.port
    for kind, size, blocks in (("broadcast", 65536, 14 / 8), ("allgather", 4096, 14),
                               ("reduce", 65536, 14 / 8)):
        coll = recognized_collectives(kind_program(kind, 8, size), target="sp2:8")[0]
        found = bounds(coll, port, machine.library.cuts, machine.library.links)
        engines_s = port.startup_s + blocks * size * port.s_per_byte
        assert found["shared engines"] == pytest.approx(engines_s), kind
        if kind == "reduce":  # a broadcast's engines also wait for the rounds ("engine fill"),
            # an allgather's also run a gossip's start-ups ("engine start-ups"); a reduce's idle
            # at both ends ("root drain", test_reducedrain.py) adds alpha (1 - 2/8) to it, and
            # its relays' start-ups between those ends ("relay start-ups") more
            assert found["root drain"] == pytest.approx(engines_s + port.startup_s * 0.75), kind
            assert machine.binding_bound(coll)[1] == "relay start-ups", kind
            assert found["relay start-ups"] > found["root drain"], kind
    ideal = resolve("ideal:8")  # separate send and receive ports: no such bound
    coll = recognized_collectives(kind_program("broadcast", 8, 65536), target="ideal:8")[0]
    assert "shared engines" not in bounds(coll, ideal.library.machine.port)


def test_a_broadcast_s_engines_wait_for_the_rounds_then_carry_every_byte_twice():
    """paragon:2x4 (one engine per node): the k-th receiver to be sent some of the block waits
    floor(log2 k) start-ups, 0 + 1 + 1 + 2 + 2 + 2 + 2 = 10 for k = 1 .. 7, and its start-up
    more; the engines make 7 start-ups and carry the 7 receivers' blocks out and in: 8 T >=
    10 alpha + 7 alpha + 7 alpha + 14 B beta, 3 alpha + 1.75 B beta (docs/bounds.md, "Engines
    filling a broadcast"), above the start-up rounds' 3 alpha + B beta and the engines' total
    alpha + 1.75 B beta."""
    machine = resolve("paragon:2x4")
    port = machine.library.machine.port
    coll = recognized_collectives(kind_program("broadcast", 8, 65536), target="paragon:2x4")[0]
    block_s = 65536 * port.s_per_byte
    assert machine.binding_bound(coll) == (pytest.approx(3 * port.startup_s + 1.75 * block_s), "engine fill")
    # on two nodes it is one message's time, which the one message meets
    pair = resolve("sp2:2")
    coll = recognized_collectives(kind_program("broadcast", 2, 65536), target="sp2:2")[0]
    fill_s = engine_fill_bound_s(coll, pair.library.machine.port)
    assert fill_s == pytest.approx(simulated_time_s(pair, coll, "direct"), rel=ROUNDING)
    # separate send and receive engines (ideal, the hypercube), or another kind: no such bound
    for spec, kind in (("ideal:8", "broadcast"), ("hypercube:3", "broadcast"), ("paragon:2x4", "reduce")):
        other = resolve(spec)
        coll = recognized_collectives(kind_program(kind, 8, 65536), target=spec)[0]
        assert engine_fill_bound_s(coll, other.library.machine.port) == 0.0, (spec, kind)


def test_a_gossip_s_engines_run_its_start_ups_and_carry_every_byte_twice():
    """sp2:8 (one engine per node): an allgather or allreduce needs 2 (8 - 1) = 14 messages (a
    gossip), so 8 T >= 14 alpha + 2 W beta: an allgather's W = 56 parts, 1.75 alpha + 14 b beta,
    above the engines' total alpha + 14 b beta; an allreduce's W = 2 (8 - 1) partials. On two
    nodes it is the pair's exchange, alpha + 2 b beta, which recursive doubling meets
    (docs/bounds.md, "Engine start-ups of a gossip")."""
    machine = resolve("sp2:8")
    port = machine.library.machine.port
    for kind, size, parts in (("allgather", 4096, 14), ("allreduce", 65536, 14 / 8 * 2)):
        coll = recognized_collectives(kind_program(kind, 8, size), target="sp2:8")[0]
        assert gossip_messages(coll) == 14
        expected_s = 1.75 * port.startup_s + parts * size * port.s_per_byte
        assert machine.binding_bound(coll) == (pytest.approx(expected_s), "engine start-ups"), kind
    pair = resolve("sp2:2")
    coll = recognized_collectives(kind_program("allgather", 2, 4096), target="sp2:2")[0]
    assert engine_startups_bound_s(coll, pair.library.machine.port) == pytest.approx(
        simulated_time_s(pair, coll, "recursive-doubling"), rel=ROUNDING)
    # separate send and receive engines, or a kind that is no gossip: no such bound
    for spec, kind in (("ideal:8", "allgather"), ("hypercube:3", "allreduce"), ("sp2:8", "broadcast")):
        other = resolve(spec)
        coll = recognized_collectives(kind_program(kind, 8, 4096), target=spec)[0]
        assert engine_startups_bound_s(coll, other.library.machine.port) == 0.0, (spec, kind)


def test_iwarp_memory_streams_carry_a_node_s_sends_and_receives_together():
    """iwarp:4x4: every message streams through the memory of both its ends, four link-rate
    streams a node (001 Sec. 1, 4.1), so 16 memories carry 2 x 15 blocks of a broadcast, an
    allgather's node 15 parts in and its own out, and 2 x 15 x 16 parts between them; with
    memory for eight streams (four each way) there is no such bound."""
    machine = resolve("iwarp:4x4")
    port = machine.library.machine.port
    assert (port.streams, port.shared_streams, port.engine_streams) == (4, 4, 4)
    for kind, size, blocks in (("broadcast", 65536, 30 / 16), ("allgather", 4096, 30)):
        coll = recognized_collectives(kind_program(kind, 16, size), target="iwarp:4x4")[0]
        found = bounds(coll, port, machine.library.cuts, machine.library.links)
        engines_s = port.startup_s + blocks * size * port.s_per_byte / 4
        assert found["shared engines"] == pytest.approx(engines_s), kind
        if kind != "broadcast":  # a broadcast's memories also wait for the rounds ("memory fill")
            assert machine.binding_bound(coll)[1] == "shared engines", kind
    wide = resolve("torus:4x4,memory_streams=8")
    assert wide.library.machine.port.engine_streams == 0
    coll = recognized_collectives(kind_program("broadcast", 16, 65536), target="torus:4x4")[0]
    assert "shared engines" not in bounds(coll, wide.library.machine.port)


def test_a_broadcast_s_memories_wait_for_the_rounds_then_carry_every_byte_twice():
    """iwarp:4x4 (four memory streams a node, shared by its sends and receives; the processor
    starts messages `hold` apart): the k-th receiver to be sent some of the block waits
    floor(log2 k) holds, 34 for k = 1 .. 15, and every memory a start-up before its first byte
    streams; the 16 memories carry the 15 receivers' blocks out and in on four streams each:
    T >= alpha + 34 h / 16 + 30 B beta / 64 (docs/bounds.md, "Memories filling a broadcast"),
    above the shared engines' alpha + 30 B beta / 64 and every schedule's time. Not on a
    machine whose directions are apart, nor for another kind."""
    machine = resolve("iwarp:4x4")
    port = machine.library.machine.port
    coll = recognized_collectives(kind_program("broadcast", 16, 65536), target="iwarp:4x4")[0]
    fill_s = port.startup_s + 34 * port.hold_s / 16 + 30 * 65536 * port.s_per_byte / 64
    assert memory_fill_bound_s(coll, port) == pytest.approx(fill_s)
    # the memory ramp (below) adds the messages' count to the same argument and binds here
    assert machine.binding_bound(coll) == (pytest.approx(memory_ramp_bound_s(coll, port)), "memory ramp")
    assert memory_ramp_bound_s(coll, port) > fill_s
    for algorithm in ("spanning-trees", "turned-scatter-doubling", "binomial"):
        assert simulated_time_s(machine, coll, algorithm) >= fill_s, algorithm
    wide = resolve("torus:4x4,memory_streams=8")
    assert memory_fill_bound_s(coll, wide.library.machine.port) == 0.0
    for spec, kind in (("iwarp:4x4", "reduce"), ("paragon:2x4", "broadcast")):
        other = resolve(spec)
        coll = recognized_collectives(kind_program(kind, other.nnodes, 65536), target=spec)[0]
        assert memory_fill_bound_s(coll, other.library.machine.port) == 0.0, (spec, kind)



def test_a_broadcast_s_memories_carry_it_on_no_more_streams_than_its_messages_hold():
    """torus:2x2: a message holds one memory stream at each end and streams alpha after its
    start; a node starts one per hold, a receiver from alpha after it is first sent some (u = 0,
    0, h, h). The streams the broadcast can use, min(4 A(t), 2 x messages streaming), are 2, 4,
    6, 8, 14 from alpha, alpha + h, 2 alpha, alpha + 2 h, 2 alpha + h and 16 from alpha + 3 h
    (area 30 h - 8 alpha before), and must carry the 3 receivers' blocks twice:
    T >= alpha + 3 h + (6 B beta - 30 h + 8 alpha) / 16 (docs/bounds.md, "Memories filling a
    broadcast as its messages start"), 0.625 h + 0.5 alpha above the memory fill. Every
    broadcast takes at least it at 64 KB, and on torus:8x8 at 16 KB (325.0 us); none on a
    machine whose memories have streams for both directions, nor for another kind."""
    machine = resolve("torus:2x2")
    port = machine.library.machine.port
    hold, alpha = port.hold_s, port.startup_s
    coll = recognized_collectives(kind_program("broadcast", 4, 65536), target="torus:2x2")[0]
    ramp_s = alpha + 3 * hold + (6 * 65536 * port.s_per_byte - 30 * hold + 8 * alpha) / 16
    assert memory_ramp_bound_s(coll, port) == pytest.approx(ramp_s)
    assert ramp_s == pytest.approx(memory_fill_bound_s(coll, port) + 0.625 * hold + 0.5 * alpha)
    assert machine.binding_bound(coll) == (pytest.approx(ramp_s), "memory ramp")
    for spec, size in (("torus:2x2", 65536), ("torus:8x8", 16384)):
        other = resolve(spec)
        other_coll = recognized_collectives(kind_program("broadcast", other.nnodes, size), target=spec)[0]
        bound_s = memory_ramp_bound_s(other_coll, other.library.machine.port)
        assert bound_s > memory_fill_bound_s(other_coll, other.library.machine.port)
        for algorithm, unmet in other.candidates(other_coll):
            if unmet is None:
                assert simulated_time_s(other, other_coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm
    wide = resolve("torus:2x2,memory_streams=8")
    assert memory_ramp_bound_s(coll, wide.library.machine.port) == 0.0
    for spec, kind in (("iwarp:4x4", "reduce"), ("paragon:2x4", "broadcast")):
        other = resolve(spec)
        other_coll = recognized_collectives(kind_program(kind, other.nnodes, 65536), target=spec)[0]
        assert memory_ramp_bound_s(other_coll, other.library.machine.port) == 0.0, (spec, kind)


@pytest.mark.parametrize("spec, size", [("iwarp:4x4", 2048), ("iwarp:4x4", 512), ("torus:3x4", 2048),
                                        ("torus:8x8", 2048)])
def test_a_broadcast_s_late_nodes_take_their_block_from_few_start_ups(spec, size):
    """A node streams four messages, each on one link (one byte per beta). On P = 16 (64) nodes
    at least 8 (32) are first sent some of the block no sooner than 3 (5) holds, and take all
    of it from messages started then or later; with x = T - (L - 1) h - alpha, an early node's
    messages bring at most C(x) / beta bytes by T, a late one's C(x - alpha) / beta
    (docs/bounds.md, "Late nodes of a broadcast"). At 2 KB (B beta = 51.2 us, h = 20 us,
    alpha = 20.15 us) x lies in (h, 2 h) and x - alpha in (0, h): x + (x - h) + (x - alpha) =
    B beta, so x = (B beta + h + alpha) / 3 and the bound is above the start-up rounds' last
    block on four streams. Every broadcast of the machine takes at least it. torus:3x4, 12
    nodes: 4 late against 8 early. Not on one-stream ports, nor for another kind."""
    machine = resolve(spec)
    port = machine.library.machine.port
    n = machine.nnodes
    coll = recognized_collectives(kind_program("broadcast", n, size), target=spec)[0]
    bound_s = late_nodes_bound_s(coll, port)
    rounds = int(np.ceil(np.log2(n)))
    if n == 2 ** rounds and size == 2048:
        block_s = size * port.s_per_byte
        assert port.hold_s < (block_s + port.hold_s + port.startup_s) / 3 < 2 * port.hold_s
        assert bound_s == pytest.approx((rounds - 1) * port.hold_s + port.startup_s
                                        + (block_s + port.hold_s + port.startup_s) / 3)
        assert bound_s > startup_bound_s(coll, port)
    assert machine.binding_bound(coll)[0] >= bound_s > 0
    for algorithm, unmet in machine.candidates(coll):
        if unmet is None:
            assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm
    for other_spec, kind in (("paragon:2x4", "broadcast"), ("ideal:8", "broadcast"),
                             ("iwarp:4x4", "allgather")):
        other = resolve(other_spec)
        other_coll = recognized_collectives(kind_program(kind, other.nnodes, size), target=other_spec)[0]
        assert late_nodes_bound_s(other_coll, other.library.machine.port) == 0.0, (other_spec, kind)


@pytest.mark.parametrize("spec", ["torus:8x8", "iwarp:4x4", "torus:3x4"])
def test_an_allreduce_s_late_nodes_take_one_input_s_partial_from_few_start_ups(spec):
    """An allreduce of one group: every element of each other member's result depends on any
    one member's input, so the broadcast's late nodes bound holds with that input as the block
    and the partial's bytes as B (docs/bounds.md, "An allreduce's late nodes"): at 2 KB on
    torus:8x8 the broadcast's figure, 5 h + alpha + (B beta + h + alpha) / 3 = 150.6 us, above
    the start-up rounds' 132.95. Every allreduce algorithm of the machine takes at least it at
    128 B, 2 KB and 16 KB. Not for two groups nor on one-stream ports."""
    machine = resolve(spec)
    port = machine.library.machine.port
    n = machine.nnodes
    for size in (128, 2048, 16384):
        coll = recognized_collectives(kind_program("allreduce", n, size), target=spec)[0]
        bound_s = late_nodes_bound_s(coll, port)
        broadcast = recognized_collectives(kind_program("broadcast", n, size), target=spec)[0]
        assert bound_s == pytest.approx(late_nodes_bound_s(broadcast, port)) and bound_s > 0
        if spec == "torus:8x8":
            if size == 2048:
                assert bound_s == pytest.approx(5 * port.hold_s + port.startup_s
                                                + (size * port.s_per_byte + port.hold_s + port.startup_s) / 3)
                assert bound_s > startup_bound_s(coll, port)
                assert machine.binding_bound(coll) == (pytest.approx(bound_s), "late nodes")
            continue  # 64 nodes: the every-algorithm check is the grid's (bench/efficiency.py)
        assert machine.binding_bound(coll)[0] >= bound_s
        for algorithm, unmet in machine.candidates(coll):
            if unmet is None:
                assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm
    two_groups = recognize(0, np.kron(np.eye(2, dtype=np.int64), np.ones((8, 8), np.int64)) * 2048,
                           "A", "B", 1, op="sum", nreceivers=16)
    assert two_groups.kind == "allreduce"
    assert late_nodes_bound_s(two_groups, resolve("iwarp:4x4").library.machine.port) == 0.0
    one_stream = resolve("paragon:2x4")
    coll = recognized_collectives(kind_program("allreduce", 8, 2048), target="paragon:2x4")[0]
    assert late_nodes_bound_s(coll, one_stream.library.machine.port) == 0.0


@pytest.mark.parametrize("spec", ["torus:8x8", "iwarp:4x4", "torus:3x4"])
def test_an_allreduce_s_memories_are_half_idle_for_the_first_hold(spec):
    """Four memory streams a node, shared by its sends and receives: an allreduce's members move
    2 (P - 1) partials in all, each byte holding a stream at both ends, and from alpha to
    alpha + h each node has started at most one message, so at most 2 P of the 4 P streams are
    busy (docs/bounds.md, "An allreduce's memories at the start"): T >= alpha + h / 2 +
    4 (P - 1) B beta / (4 P), h / 2 above the port bandwidth bound. Every allreduce algorithm of
    the machine takes at least it at 2 KB and 16 KB. Not for an allgather, nor where sends and
    receives do not share streams (paragon)."""
    machine = resolve(spec)
    port = machine.library.machine.port
    n = machine.nnodes
    for size in (2048, 16384):
        coll = recognized_collectives(kind_program("allreduce", n, size), target=spec)[0]
        bound_s = memory_start_bound_s(coll, port)
        assert bound_s == pytest.approx(port.startup_s + port.hold_s / 2
                                        + 4 * (n - 1) * size * port.s_per_byte / (4 * n))
        assert bound_s == pytest.approx(bounds(coll, port)["port bandwidth"] + port.hold_s / 2)
        if spec == "torus:8x8":
            continue  # 64 nodes: the every-algorithm check is the grid's (bench/efficiency.py)
        assert machine.binding_bound(coll)[0] >= bound_s
        for algorithm, unmet in machine.candidates(coll):
            if unmet is None:
                assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm
    for other_spec, kind in (("paragon:2x4", "allreduce"), ("iwarp:4x4", "allgather")):
        other = resolve(other_spec)
        other_coll = recognized_collectives(kind_program(kind, other.nnodes, 16384), target=other_spec)[0]
        assert memory_start_bound_s(other_coll, other.library.machine.port) == 0.0, (other_spec, kind)


def test_the_memories_carry_what_the_start_up_rounds_left_undelivered():
    """torus:8x8 (four memory streams a node, shared by its sends and receives): j holds after
    alpha at most 2^j nodes hold any of a source's data, so each source's other 64 - 2^j
    receivers still need their blocks, which the 64 memories carry in and out on four streams
    each: T >= alpha + j h + 2 x 64 (64 - 2^j) b beta / (4 x 64), largest at j = 4 for 128-byte
    blocks: alpha + 4 h + 48 x 1.6 us = 176.95 us, above the start-up rounds' 120.95 us (the
    allgather's bound before) and every schedule's time; at 8 B, j = 5: alpha + 5 h + 32 x 0.1
    us. An all-to-all's and an allgather's are the same; alltoallv's sums each source's
    smallest needs. Not on a machine whose directions are apart, nor for a reduction."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    assert (port.startup_s, port.hold_s, port.s_per_byte) == pytest.approx((20.15e-6, 20e-6, 25e-9))
    for kind in ("allgather", "alltoall"):
        for size, j in ((128, 4), (8, 5)):
            coll = recognized_collectives(kind_program(kind, 64, size), target="torus:8x8")[0]
            rounds_s = port.startup_s + j * port.hold_s + 2 * (64 - 2 ** j) * size * port.s_per_byte / 4
            assert memory_rounds_bound_s(coll, port) == pytest.approx(rounds_s), (kind, size)
            assert machine.binding_bound(coll)[0] >= rounds_s * (1 - ROUNDING)
            if kind == "allgather" or size == 8:  # an all-to-all of 128 B: its links bind
                assert machine.binding_bound(coll) == (pytest.approx(rounds_s), "memory rounds")
            if size == 128:
                assert rounds_s == pytest.approx(176.95e-6)
                for algorithm, unmet in machine.candidates(coll):
                    if unmet is None:
                        assert simulated_time_s(machine, coll, algorithm) >= rounds_s, algorithm
    uneven = varied_matrix(16, 64, variance=0.5)
    small = resolve("iwarp:4x4")
    coll = recognize(0, uneven, "A", "B", 1)
    sink = np.sort(np.where(np.eye(16, dtype=bool), 0, uneven), axis=1)  # zeros first
    expected = max(small.library.machine.port.startup_s + j * small.library.machine.port.hold_s
                   + 2 * sink[:, 1:17 - 2 ** j].sum() * small.library.machine.port.s_per_byte / 64
                   for j in (1, 2, 3))
    assert memory_rounds_bound_s(coll, small.library.machine.port) == pytest.approx(expected)
    wide = resolve("torus:8x8,memory_streams=8")
    allgather = recognized_collectives(kind_program("allgather", 64, 128), target="torus:8x8")[0]
    assert memory_rounds_bound_s(allgather, wide.library.machine.port) == 0.0
    reduce = recognized_collectives(kind_program("allreduce", 64, 128), target="torus:8x8")[0]
    assert memory_rounds_bound_s(reduce, port) == 0.0


def test_a_reduce_root_takes_every_partial_or_waits_two_start_ups_for_a_relay():
    """ideal:8 (alpha 10 us, beta 0.01 us/B), 7 contributors: 8-byte partials all sent straight
    to the root take 10 + 7 * 0.08 us, less than any relay's 20 us, and `direct` meets it but
    for its merges; 4 KB partials: 2 alpha + n beta - alpha / 7, where the root's fan-in and
    the relay's second start-up cross (the contributor pipeline binds there now)."""
    machine = resolve("ideal:8")
    port = machine.library.machine.port
    short = recognized_collectives(kind_program("reduce", 8, 8), target="ideal:8")[0]
    assert machine.binding_bound(short) == (pytest.approx(10e-6 + 7 * 8 * 0.01e-6), "fan-in")
    assert simulated_time_s(machine, short, "direct") == pytest.approx(10.56e-6, rel=0.01)
    long = recognized_collectives(kind_program("reduce", 8, 4096), target="ideal:8")[0]
    assert fan_in_bound_s(long, port) == pytest.approx(20e-6 + 4096 * 0.01e-6 - 10e-6 / 7)
    # a contributor's relayed pieces pay a store-and-forward each (reducepipeline.py): above it
    assert machine.binding_bound(long)[1] == "contributor pipeline"
    assert machine.binding_bound(long)[0] > fan_in_bound_s(long, port)
    gather = recognized_collectives(kind_program("gather", 8, 8), target="ideal:8")[0]
    assert fan_in_bound_s(gather, port) == 0.0  # no combining: the port bound counts every block


def is_direct(machine: Target, coll: Collective, algorithm: str) -> bool:
    return machine.schedule_for(coll, algorithm).direct_messages()


def test_link_load_counts_every_byte_over_its_fewest_hops():
    """hypercube:3, each node to its complement (3 hops): 8 * 3 blocks over 24 link directions;
    each bit's halves exchange 4 blocks over 4 links each way. Mesh links: a 3x3 mesh has 24
    link directions and 4 hops corner to corner; a 3x4 torus 48, and 2 hops corner to corner."""
    machine = resolve("hypercube:3")
    port = machine.library.machine.port
    b = 4096
    m = np.zeros((8, 8), dtype=np.int64)
    m[np.arange(8), np.arange(8) ^ 7] = b
    coll = recognize(0, m, "A", "B", 1)
    found = bounds(coll, port, machine.library.cuts, machine.library.links)
    assert port.hold_s == port.startup_s  # a worm takes its links after its start-up
    assert found["link load"] == pytest.approx(port.startup_s + 8 * 3 * b / 24 * port.link_s_per_byte)
    assert found["cut"] == pytest.approx(port.startup_s + b * port.link_s_per_byte)
    assert port.link_s_per_byte == port.s_per_byte  # a worm holds each link of its route at its rate
    mesh, torus = grid_links(3, 3, wrap=False), grid_links(3, 4, wrap=True)
    corners = np.array([0, 4]), np.array([8, 4])
    assert (mesh.directions, mesh.hops(*corners).tolist()) == (24, [4, 0])
    assert (torus.directions, torus.hops(np.array([0]), np.array([11])).tolist()) == (48, [2])
    m = np.zeros((8, 8), dtype=np.int64)
    m[0, 1:] = b
    broadcast = recognize(0, m, "A", "B", 1, Op.COPY, Mapping.SINGLE, Mapping.REPLICATED)
    assert "link load" not in bounds(broadcast, port, machine.library.cuts, machine.library.links)


def test_weighted_links_count_the_links_at_the_diagonal_twice():
    """torus:8x8: the 64 link directions with an end on the diagonal weigh 2 (total 320); a
    transpose's 48 messages off the anti-diagonal cross it (hops + 2), the 8 on it go round:
    352 / 320 = 1.1 blocks, above link load's 1; an all-to-all keeps the uniform count. A
    non-square grid gets no weights."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    main, anti = diagonal_weightings(8, 8, wrap=True)
    assert main.total == anti.total == 320
    assert (main.distances[1, 8], main.distances[4, 32], main.distances[0, 9]) == (4, 8, 4)
    b = 65536
    m = np.zeros((64, 64), dtype=np.int64)
    for r in range(8):
        for c in range(8):
            m[8 * r + c, 8 * c + r] = b
    coll = recognize(0, m, "A", "B", 1)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "weighted links"
    assert bound_s == pytest.approx(port.hold_s + 1.1 * b * port.link_s_per_byte)
    library = bounds(coll, port, machine.library.cuts, machine.library.links)
    assert library["weighted links"] == pytest.approx(bound_s)
    assert library["link load"] == pytest.approx(port.hold_s + b * port.link_s_per_byte)
    everyone = recognize(0, np.full((64, 64), b, dtype=np.int64), "A", "B", 1)
    found = bounds(everyone, port, machine.library.cuts, machine.library.links)
    diagonal_s = port.hold_s + float((everyone.network_matrix * main.distances).sum()) / main.total \
        * port.link_s_per_byte
    assert diagonal_s < found["link load"]  # the diagonals weigh less than the uniform count
    assert found["weighted links"] == pytest.approx(found["link load"])  # a ring's halves, x or y
    assert diagonal_weightings(4, 8, wrap=True) == ()


def test_a_shift_on_a_torus_ring_needs_seven_eighths_of_its_block_on_a_link():
    """torus:8x8, every node to the one before it along x (the grid's cshift): a message goes
    one link - or seven + (through y moves nothing along x). With the + links weighing 1 and
    the - links 7, each message weighs at least 7 and the 128 x-link directions 8 x 64: T >=
    h + 7/8 b link beta, where the half-cut counts b/2; colouring's one phase of direct
    messages (b on each - link) stays above it. On a transpose the uniform count stays."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    x_rings = ring_weightings(8, 8).x  # d = 1..7 along x: + weighs 8 - d, - weighs d
    assert [w.total for w in x_rings] == [64 * 8] * 7
    plus_one_less = x_rings[6]  # d = 7: + weighs 1, - weighs 7
    assert plus_one_less.by_delta[[7, 1, 4, 0]].tolist() == [7, 1, 4, 0]  # nodes 7, 1, 4, 8 from 0
    b = 65536
    m = np.zeros((64, 64), dtype=np.int64)
    nodes = np.arange(64)
    m[nodes, nodes // 8 * 8 + (nodes - 1) % 8] = b
    coll = recognize(0, m, "A", "B", 1)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "weighted links"
    assert bound_s == pytest.approx(port.hold_s + 7 / 8 * b * port.link_s_per_byte)
    library = bounds(coll, port, machine.library.cuts, machine.library.links)
    assert library["weighted links"] == pytest.approx(bound_s)
    assert library["cut"] == pytest.approx(port.hold_s + b / 2 * port.link_s_per_byte)
    assert simulated_time_s(machine, coll, "colouring") >= bound_s
    assert ring_weightings(1, 8).x[-1].total == 8 * 8 and not ring_weightings(1, 8).y  # x only


def floyd_warshall_weightings(n: int, wrap: bool) -> list[tuple[np.ndarray, float]]:
    """The diagonal weightings' distances and totals by Floyd and Warshall over every link, as
    offer.py found them before (O(P^3): 18 minutes at torus:64x64), for small grids."""
    def on_diagonal(r: int, c: int, anti: bool) -> bool:
        level = c + r - (n - 1) if anti else c - r
        return (level % n if wrap else level) == 0

    out = []
    for anti in (False, True):
        weight = np.full((n * n, n * n), np.inf)
        np.fill_diagonal(weight, 0.0)
        total = 0.0
        for r in range(n):
            for c in range(n):
                for r2, c2 in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if not wrap and not (0 <= r2 < n and 0 <= c2 < n):
                        continue
                    r2, c2 = r2 % n, c2 % n
                    w = 2.0 if on_diagonal(r, c, anti) or on_diagonal(r2, c2, anti) else 1.0
                    weight[r * n + c, r2 * n + c2] = w
                    total += w
        for k in range(n * n):
            weight = np.minimum(weight, weight[:, k:k + 1] + weight[k:k + 1, :])
        out.append((weight, total))
    return out


@pytest.mark.parametrize("wrap", [True, False], ids=["torus", "mesh"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 11])
def test_diagonal_weightings_are_the_least_weights_of_every_path(n: int, wrap: bool):
    """The torus's distances from row 0 moved along the diagonal, the mesh's closed form: the
    same distances and totals as Floyd and Warshall over every link, exactly (odd and even
    sides, torus:2x2's doubled links)."""
    found = diagonal_weightings(n, n, wrap)
    for (distances, total), weighting in zip(floyd_warshall_weightings(n, wrap), found, strict=True):
        assert weighting.total == total
        np.testing.assert_array_equal(weighting.distances, distances)


def test_fixed_routes_bound_holds_for_direct_messages_only():
    """torus:1x8, each node to the one two along: e-cube puts two messages on every link, so
    direct messages need 2 b of link time, where the cut (4 of 8 nodes, 2 links) needs b and
    the ring's directions weighed 6 and 2 (a quarter of each block the long way) 1.5 b."""
    machine = resolve("torus:1x8")
    port = machine.library.machine.port
    b = 4096
    m = np.zeros((8, 8), dtype=np.int64)
    m[np.arange(8), (np.arange(8) + 2) % 8] = b
    coll = recognize(0, m, "A", "B", 1)
    fixed_s = machine.fixed_routes_bound_s(coll)
    # a link carries bytes once the processor's overhead is done: the first hop is a link's
    assert fixed_s == pytest.approx(port.hold_s + 2 * b * port.link_s_per_byte)
    bound_s, binds = machine.binding_bound(coll)
    assert binds == "weighted links" and bound_s < fixed_s
    assert bound_s == pytest.approx(port.hold_s + 1.5 * b * port.link_s_per_byte)
    assert not is_direct(machine, coll, "store-forward")  # it relays: only the general bound
    assert is_direct(machine, coll, "direct")
    assert simulated_time_s(machine, coll, "direct") >= fixed_s * (1 - ROUNDING)


@pytest.mark.parametrize("spec", ["torus:4x4", "paragon:4x4"])
def test_transposes_and_shifts_meet_the_link_bounds(spec):
    """A transpose and a shift at 64 KB: no schedule beats the general bound, no schedule of
    direct messages the busiest link under the fixed routing."""
    machine = resolve(spec)
    for kind in ("permutation", "cshift"):
        coll = collective(machine, kind, 65536)
        assert coll is not None and coll.kind == kind
        bound_s, binds = machine.binding_bound(coll)
        fixed_s = machine.fixed_routes_bound_s(coll)
        assert fixed_s is not None and fixed_s > 0, kind
        direct = 0
        for algorithm, unmet in machine.candidates(coll):
            if unmet is not None:
                continue
            time_s = simulated_time_s(machine, coll, algorithm)
            assert time_s >= bound_s * (1 - ROUNDING), (kind, algorithm, binds)
            if is_direct(machine, coll, algorithm):
                assert time_s >= fixed_s * (1 - ROUNDING), (kind, algorithm)
                direct += 1
        assert direct, kind


def test_an_exchange_pays_a_start_up_per_destination_or_relays_its_blocks():
    """ideal:8 (alpha 10 us, beta 0.01 us/B): a node that starts k messages sends k blocks
    straight and each other block twice or more; the send ports together are busy at least
    8 min over k of (k alpha + (14 - k) b beta). 4 KB blocks: k = 7, the direct exchange's
    7 (alpha + b beta), which `direct` meets; 8 B: k = 1, one message and 13 block sends. On
    paragon:2x4 (one engine for both directions) each byte counts twice, and a transpose's
    single block per node gives nothing beyond the port's alpha + 2 b beta."""
    machine = resolve("ideal:8")
    port = machine.library.machine.port
    for b, k in ((4096, 7), (8, 1)):
        coll = recognize(0, np.full((8, 8), b, dtype=np.int64), "A", "B", 1)
        assert relay_bound_s(coll, port) == pytest.approx(k * 10e-6 + (14 - k) * b * 0.01e-6), b
    long = recognize(0, np.full((8, 8), 4096, dtype=np.int64), "A", "B", 1)
    assert machine.binding_bound(long)[1] == "start-ups or relays"
    assert simulated_time_s(machine, long, "direct") == pytest.approx(7 * (10e-6 + 4096 * 0.01e-6),
                                                                      rel=1e-6)
    paragon = resolve("paragon:2x4")
    engine = paragon.library.machine.port
    coll = recognize(0, np.full((8, 8), 65536, dtype=np.int64), "A", "B", 1)
    assert paragon.binding_bound(coll) == (
        pytest.approx(7 * engine.startup_s + 14 * 65536 * engine.s_per_byte), "start-ups or relays")
    transpose = recognize(0, np.roll(np.eye(8, dtype=np.int64), 3, axis=1) * 65536, "A", "B", 1)
    assert relay_bound_s(transpose, engine) == pytest.approx(engine.startup_s + 2 * 65536 * engine.s_per_byte)
    iwarp = resolve("iwarp:4x4")  # four streams: a start-up need not idle the port
    assert relay_bound_s(coll, iwarp.library.machine.port) == 0.0


def test_a_cs2_leaf_switch_is_entered_by_one_link():
    """cs2:16 (destination digit above): every route into a leaf switch's four nodes from the
    other twelve comes down one link, so what they must receive from outside passes it at the
    worm's rate: a transpose of 4 x 4 blocks puts 3 blocks into each leaf, 3 messages on that
    link, and `direct` takes at least that. The SP2's four routes per pair give no such link."""
    machine = resolve("cs2:16")
    port = machine.library.machine.port
    leaves = [sorted(c.side) for c in machine.library.cuts]
    assert leaves == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert all(c.into and c.links == 1 for c in machine.library.cuts)
    b = 65536
    m = np.zeros((16, 16), dtype=np.int64)
    nodes = np.arange(16)
    m[nodes, nodes % 4 * 4 + nodes // 4] = b  # (r, c) -> (c, r) on a 4 x 4 grid
    coll = recognize(0, m, "A", "B", 1)
    assert machine.binding_bound(coll) == (pytest.approx(port.startup_s + 3 * b * port.link_s_per_byte),
                                           "entry link")
    for algorithm in ("direct", "colouring"):
        assert simulated_time_s(machine, coll, algorithm) >= machine.binding_bound(coll)[0] * (1 - ROUNDING)
    sp2 = resolve("sp2:16")
    assert sp2.library.cuts == ()
    assert entry_cuts(4, resolve("paragon:2x2").route) == ()  # row-column: no single way in


@pytest.mark.parametrize("rows, cols", [(8, 8), (4, 8), (1, 8), (2, 4)])
def test_ring_weightings_load_is_the_nodes_x_nodes_weights(rows, cols):
    """RingWeightings sums the bytes by their distance along each ring once; the load is what
    every weighting's nodes x nodes distances give (the matrices offer.py built before: 126
    of 134 MB each at 64x64), for fewer processors than nodes too."""
    rng = np.random.default_rng(rows * cols)
    nodes = np.arange(rows * cols)
    family = ring_weightings(rows, cols)
    for n in (rows * cols, rows * cols - 3):
        m = rng.integers(0, 5, (n, n)).astype(np.float64) * 64
        dense = []
        for coord, members in ((nodes % cols, family.x), (nodes // cols, family.y)):
            for w in members:
                delta = (coord[None, :] - coord[:, None]) % w.size
                dense.append(Weighting(w.by_delta[delta], w.total))
        assert family.load(m) == max(w.load(m) for w in dense)


def test_a_busy_engine_relays_what_its_start_ups_cannot_send():
    """One shared engine per node (h = alpha = 10 us, beta 0.01 us/B): node 0 exchanges 10 KB
    with each of three others, which exchange 7 KB among themselves. On average the engines
    need 540 us (`start-ups or relays`: 630 for node 0, 510 for the others), and node 0's
    sends and receives alone 600 us. With k messages node 0's engine is busy 600 + 10 k us and
    its other 3 - k blocks go through relays at 0.02 us a byte, into the others' room of
    (T - 510 us) each: T >= 682.5 - 47.5 k and T >= 600 + 10 k, least at k = 2: 620 us, which
    binds (`engines and relays`; the busiest port's 610 us counts one start-up)."""
    m = np.full((4, 4), 7000, dtype=np.int64)
    m[0, :] = m[:, 0] = 10000
    np.fill_diagonal(m, 0)
    coll = recognize(0, m, "A", "B", 1)
    port = PortModel(startup_s=10e-6, s_per_byte=1e-8, combine_s_per_op=0.0, shared_engine=True)
    found = bounds(coll, port)
    assert found["start-ups or relays"] == pytest.approx(540e-6)
    assert found["port bandwidth"] == pytest.approx(610e-6)
    assert found["engines and relays"] == pytest.approx(620e-6)
    assert max(found, key=found.get) == "engines and relays"
    assert engine_relays_bound_s(coll, PortModel(10e-6, 1e-8, 0.0)) == 0.0  # a port per direction
    even = recognize(0, np.where(np.eye(4, dtype=bool), 0, 8000), "A", "B", 1)
    assert engine_relays_bound_s(even, port) == 0.0  # every node alike: start-ups or relays


def test_the_paragons_uneven_exchange_binds_its_busiest_engines():
    """paragon:8x8, the grid's alltoallv of 16 KB: 27.78 ms where the average over the engines
    gives 27.52 (docs/bounds.md, "Engines and relays")."""
    machine = resolve("paragon:8x8")
    coll = recognize(0, varied_matrix(64, 16384, variance=0.5), "A", "B", 1)
    found = bounds(coll, machine.library.machine.port)
    assert found["start-ups or relays"] == pytest.approx(27.519e-3, rel=1e-4)
    assert found["engines and relays"] == pytest.approx(27.7847e-3, rel=1e-4)
    assert machine.binding_bound(coll)[1] == "engines and relays"
