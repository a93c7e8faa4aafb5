"""targets/iwarp/wormhole_columns.py: a plain message's program as columns is transfer_program's,
op for op, for every pair of small tori (datelines, half-ring ties, non-square); library and
phased messages have none and pack only where the library's do."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_program_columns_match, every_pair
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.targets.iwarp.topology import route_channels
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE, SwitchTag

SPECS = ["torus:4x4", "torus:3x5", "torus:2x6", "iwarp:8x8", "torus:1x4,inject_channels=2"]


@pytest.mark.parametrize("spec", SPECS)
def test_routes_with_their_pools_are_the_torus_routes(spec):
    torus = resolve(spec).torus
    src, dst, _ = every_pair(torus.nnodes)
    links, pools = route_channels(torus, src, dst)
    for i in range(len(src)):
        used = links[i] >= 0
        assert list(zip(links[i, used].tolist(), pools[i, used].tolist())) == \
            list(torus.route(int(src[i]), int(dst[i])))


@pytest.mark.parametrize("spec", SPECS)
def test_programs_as_columns_are_transfer_program_op_for_op(spec):
    assert_program_columns_match(spec)
    assert resolve(spec).build_network(Engine()).programs_as_columns(np.zeros(1, np.int64))


def test_library_and_phased_messages_have_no_columns_and_only_the_library_packs():
    """They run natively by the wormhole shape (tests/runtime/test_native_wormhole.py); one by
    one the library's have their program, the phased ones none (the core's gates are the
    shape's)."""
    network = resolve("torus:4x4").build_network(Engine())
    phased = SwitchTag(0, 3).message
    library = Transfer(0, 5, 64, 0, 5, LIBRARY_MESSAGE)
    assert network.transfer_program(library) == network.program(library)
    assert network.transfer_program(Transfer(0, 5, 64, 0, 5, phased)) is None
    assert [network.packs(m) for m in (0, LIBRARY_MESSAGE, phased)] == [False, True, False]
    src, dst, nbytes = every_pair(16)
    for other in (LIBRARY_MESSAGE, phased):
        message = np.where(np.arange(len(src)) == 7, other, 0)
        assert not network.programs_as_columns(message)
        assert network.transfer_programs(src, dst, nbytes, message) is None
