"""targets/iwarp/wormhole_columns.py: a plain message's program as columns is transfer_program's,
op for op, for every pair of small tori (datelines, half-ring ties, non-square); library and
phased messages have none and pack only where the library's do."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.targets.iwarp.topology import route_channels
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE, SwitchTag

SPECS = ["torus:4x4", "torus:3x5", "torus:2x6", "iwarp:8x8", "torus:1x4,inject_channels=2"]


def every_pair(nnodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    src, dst = np.nonzero(~np.eye(nnodes, dtype=bool))
    return src, dst, (src * 37 + dst * 1001) % 5000


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
    target = resolve(spec)
    network = target.build_network(Engine())
    src, dst, nbytes = every_pair(target.nnodes)
    columns = network.transfer_programs(src, dst, nbytes, 0 * src)
    for i in range(len(src)):
        program = network.transfer_program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0))
        assert columns.program(i) == program


def test_library_and_phased_messages_have_no_program_and_only_the_library_packs():
    network = resolve("torus:4x4").build_network(Engine())
    phased = SwitchTag(0, 3).message
    assert network.transfer_program(Transfer(0, 5, 64, 0, 5, LIBRARY_MESSAGE)) is None
    assert network.transfer_program(Transfer(0, 5, 64, 0, 5, phased)) is None
    assert [network.packs(m) for m in (0, LIBRARY_MESSAGE, phased)] == [False, True, False]
    src, dst, nbytes = every_pair(16)
    for other in (LIBRARY_MESSAGE, phased):
        message = np.where(np.arange(len(src)) == 7, other, 0)
        assert network.transfer_programs(src, dst, nbytes, message) is None
