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


def test_pairs_with_several_routes_have_no_columns():
    """The SP2's default adapter spreads packets over 4 routes: message by message, as before."""
    target = resolve("sp2:16")
    src, dst, nbytes = every_pair(16)
    assert target.route.columns(src, dst) is None
    network = target.build_network(Engine())
    assert not network.programs_as_columns(0 * src)
    assert network.transfer_programs(src, dst, nbytes, 0 * src) is None


def test_a_mesh_routing_around_failed_links_gives_no_columns():
    network = resolve("paragon:4x4").build_network(Engine())
    network.avoid_links(((5, "E"),), "paragon:4x4")
    src, dst, nbytes = every_pair(16)
    assert not network.programs_as_columns(0 * src)
    assert network.transfer_programs(src, dst, nbytes, 0 * src) is None
    detour = network.transfer_program(Transfer(5, 14, 8, 0, 0))  # column-row round (1,1)->(1,2)
    assert [op.resource.name for op in detour if isinstance(op, Acquire)][3:] == \
        ["link (1,1)->(2,1)", "link (2,1)->(3,1)", "link (3,1)->(3,2)"]
