"""targets/bokhari/route_columns.py: the routes and transfer programs of many messages at once
are, for every pair of small machines of each kind, the per-pair routes (routing.py) and
transfer_program's ops (network.py), op for op, the same Resources in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_program_columns_match, every_pair
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.runtime.network import Acquire

# Each kind of routing and both engine models (shared: paragon, sp2, cs2; separate: hypercube);
# the SP2 under every up-route rule, a mesh that is not square, a three-level fat tree.
SPECS = ["paragon:4x4", "paragon:2x3", "hypercube:3", "hypercube:1", "sp2:8,routes_per_pair=1",
         "sp2:16,routes_per_pair=1,up_route=0", "sp2:16,routes_per_pair=1,up_route=1",
         "sp2:16,routes_per_pair=1,up_route=3", "cs2:8", "cs2:4", "cs2:20"]


@pytest.mark.parametrize("spec", SPECS)
def test_routes_as_columns_are_the_per_pair_routes(spec):
    target = resolve(spec)
    src, dst, _ = every_pair(target.nnodes)
    routes = target.route.columns(src, dst)
    for i in range(len(src)):
        keys = routes.keys[routes.offsets[i]:routes.offsets[i + 1]].tolist()
        assert [routes.hop(k) for k in keys] == target.route(int(src[i]), int(dst[i]))


@pytest.mark.parametrize("spec", SPECS)
def test_programs_as_columns_are_transfer_program_op_for_op(spec):
    assert_program_columns_match(spec)
    assert resolve(spec).build_network(Engine()).programs_as_columns(np.zeros(1, np.int64))


@pytest.mark.parametrize("spec", ["hypercube:3", "cs2:16"])
def test_columns_make_the_links_in_the_order_messages_first_take_them(spec):
    """Links are made when first used: the network lists them (its utilisation report) in the
    same order whichever way the programs were asked for."""
    target = resolve(spec)
    src, dst, nbytes = every_pair(target.nnodes)
    order = np.random.default_rng(3).permutation(len(src))
    by_columns, one_by_one = target.build_network(Engine()), target.build_network(Engine())
    by_columns.transfer_programs(src[order], dst[order], nbytes[order], 0 * src)
    for i in order.tolist():
        one_by_one.transfer_program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0))
    assert [r.name for r in by_columns.resources()] == [r.name for r in one_by_one.resources()]


@pytest.mark.parametrize("spec", ["sp2:16", "sp2:64,up_route=3", "sp2:20,routes_per_pair=3"])
def test_every_alternative_route_as_columns_is_the_per_pair_route(spec):
    """Route r of a pair (FatTreeRoutes.one), as columns, for every pair and every r it has."""
    routing = resolve(spec).route
    src, dst, _ = every_pair(resolve(spec).nnodes)
    counts = routing.route_counts(src, dst)
    assert counts.tolist() == [len(routing.all(int(s), int(d))) for s, d in zip(src, dst)]
    assert set(counts.tolist()) == {1, min(routing.routes_per_pair, 4)}
    which = np.repeat(np.arange(len(src)), counts)
    alternative = np.arange(len(which)) - np.repeat(np.cumsum(counts) - counts, counts)
    routes = routing.columns(src[which], dst[which], alternative)
    for i, (m, r) in enumerate(zip(which.tolist(), alternative.tolist())):
        keys = routes.keys[routes.offsets[i]:routes.offsets[i + 1]].tolist()
        assert [routes.hop(k) for k in keys] == routing.one(int(src[m]), int(dst[m]), r)


# Messages shorter than a packet, of one packet, of 3 packets with a short last one, of 9 (past
# the 4 routes); both engine models.
@pytest.mark.parametrize("spec", ["sp2:16", "sp2:16,shared_engine=0", "sp2:20,routes_per_pair=3"])
def test_round_robin_programs_as_columns_are_the_networks_programs_op_for_op(spec):
    """The default SP2's programs depend on the pair's round-robin counter (its turn): as
    columns (PairRoundRobin.programs) they are RoutedNetwork.program's, op for op, for every
    pair, every turn and sizes around the packet."""
    target = resolve(spec)
    network = target.build_network(Engine())
    robin = network.round_robin()
    assert robin is not None and not network.programs_as_columns(np.zeros(1, np.int64))
    src, dst, _ = every_pair(target.nnodes)
    assert network.transfer_programs(src, dst, 0 * src + 8, 0 * src) is None
    for nbytes in (8, 255, 600, 2048):
        for turn in range(4):
            sizes = np.full(len(src), nbytes)
            turns = turn % robin.modulus(src, dst)
            columns = robin.programs(src, dst, sizes, turns)
            for i in range(len(src)):
                message = Transfer(int(src[i]), int(dst[i]), nbytes, 0, 0)
                assert columns.program(i) == network.program(message, int(turns[i]))


def test_a_message_takes_its_pairs_turn_and_spreads_its_packets():
    """take_turn reads the pair's counter and advances it past the message's packets; a
    600-byte message (3 packets of 255, 255 and 90 bytes) spreads over three routes."""
    network = resolve("sp2:16").build_network(Engine())
    big, small = Transfer(0, 5, 600, 0, 5), Transfer(0, 5, 100, 0, 5)
    assert network.packet_steps(np.array([8, 255, 256, 600])).tolist() == [1, 1, 2, 3]
    assert [network.take_turn(t) for t in (big, small, small, big)] == [0, 3, 0, 1]
    assert network.packet_pieces(600, 3, 4) == [(3, 255), (0, 255), (1, 90)]
    assert network.take_turn(Transfer(0, 1, 600, 0, 1)) == 0 and (0, 1) not in network.next_route  # one route


def test_round_robin_columns_make_every_route_of_a_pair_as_paths_does():
    """The links of all of a pair's routes, made in the order pairs first come: the network
    lists them as when its programs were made message by message."""
    target = resolve("sp2:16")
    src, dst, nbytes = every_pair(target.nnodes)
    order = np.random.default_rng(5).permutation(len(src))
    by_columns, one_by_one = target.build_network(Engine()), target.build_network(Engine())
    by_columns.round_robin().programs(src[order], dst[order], nbytes[order], 0 * src)
    for i in order.tolist():
        one_by_one.program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0), 0)
    assert [r.name for r in by_columns.resources()] == [r.name for r in one_by_one.resources()]


def test_a_mesh_routing_around_failed_links_gives_no_columns():
    network = resolve("paragon:4x4").build_network(Engine())
    network.avoid_links(((5, "E"),), "paragon:4x4")
    src, dst, nbytes = every_pair(16)
    assert not network.programs_as_columns(0 * src)
    assert network.transfer_programs(src, dst, nbytes, 0 * src) is None
    detour = network.transfer_program(Transfer(5, 14, 8, 0, 0))  # column-row round (1,1)->(1,2)
    assert [op.resource.name for op in detour if isinstance(op, Acquire)][3:] == \
        ["link (1,1)->(2,1)", "link (2,1)->(3,1)", "link (3,1)->(3,2)"]
