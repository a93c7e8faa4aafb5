"""Programs by shape (runtime/engine_core shapes.rs, Network.program_shape): the ops the core
makes from a message's ends are transfer_program's and the network's explicit program columns,
op for op, for every pair of small machines (the torus's datelines, half-ring ties, non-square
and one-row tori), with and without the receiver combining partials; a run by shape is the
Python engine's run."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import every_pair
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.native_run import _distinct, add_shape, core_module
from phalanx.runtime.network import OP_KINDS, Acquire, Hold, Network, Release, TransferProgram
from phalanx.runtime.plan_columns import distinct

SPECS = ["ideal:5", "torus:4x4", "torus:3x5", "torus:2x6", "torus:1x4,inject_channels=2", "iwarp:8x8"]
CODES = (Acquire, Hold, Release)  # the core's op codes (Core.program_ops)


class ShapedCore:
    """A core holding a network's shape and its resources, asked for programs by shape."""

    def __init__(self, network: Network, nnodes: int):
        self.network, self.core = network, core_module.Core(nnodes, 1, 0)
        self.resources = list(network.resources())
        ids = {id(r): self.core.add_resource(True, 1, True) if isinstance(r, Resource)
               else self.core.add_resource(False, r.capacity, r.grant_now) for r in self.resources}
        shape = network.program_shape(np.zeros(1, np.int64))
        assert shape is not None
        self.shape = add_shape(self.core, shape, lambda r: ids[id(r)])
        self.data_s = shape.data_s

    def programs(self, nbytes: np.ndarray, combine_s: np.ndarray) -> int:
        """Programs with these bytes, combining for combine_s where it is positive; the first's id."""
        data_s = np.ascontiguousarray(self.data_s(nbytes), np.float64)
        return self.core.add_shaped_programs(self.shape, data_s, (combine_s > 0).astype(np.uint8),
                                             combine_s.astype(np.float64))

    def ops(self, program: int, src: int, dst: int) -> TransferProgram:
        codes, args, holds = self.core.program_ops(program, src, dst)
        return tuple(Hold(s) if CODES[c] is Hold else CODES[c](self.resources[a])
                     for c, a, s in zip(codes, args, holds))


@pytest.mark.parametrize("spec", SPECS)
def test_programs_by_shape_are_transfer_program_and_the_columns_op_for_op(spec):
    target = resolve(spec)
    network = target.build_network(Engine())
    core = ShapedCore(network, target.nnodes)
    src, dst, nbytes = every_pair(target.nnodes)
    first = core.programs(nbytes, np.zeros(len(src)))
    columns = network.transfer_programs(src, dst, nbytes, 0 * src)
    for i in range(len(src)):
        shaped = core.ops(first + i, int(src[i]), int(dst[i]))
        assert shaped == network.transfer_program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0))
        assert shaped == columns.program(i)


@pytest.mark.parametrize("spec", ["ideal:5", "torus:3x3"])
def test_a_program_by_shape_ends_combining_on_the_receivers_arithmetic(spec):
    """A reduction's message: the transfer, then the receiver's arithmetic for the combine time."""
    target = resolve(spec)
    network = target.build_network(Engine())
    core = ShapedCore(network, target.nnodes)
    arithmetic = core.core.add_resource(True, 1, True)
    core.core.set_arithmetic([4], [arithmetic])
    program = core.programs(np.array([96]), np.array([2.5e-6]))
    codes, args, holds = core.core.program_ops(program, 0, 4)
    plain = network.transfer_program(Transfer(0, 4, 96, 0, 4))
    assert [CODES[c] for c in codes] == [type(op) for op in plain] + [Acquire, Hold, Release]
    assert (args[-3], holds[-2], args[-1]) == (arithmetic, 2.5e-6, arithmetic)


def test_the_core_refuses_a_shape_that_does_not_fit():
    core = core_module.Core(4, 1, 0)
    port = core.add_resource(True, 1, True)
    with pytest.raises(ValueError, match="a send and a receive port per node"):
        core.add_ports_shape([port] * 3, [port] * 3, 1e-6)
    with pytest.raises(ValueError, match="no resource 9"):
        core.add_ports_shape([port] * 3 + [9], [port] * 4, 1e-6)
    with pytest.raises(ValueError, match="two virtual channels per link"):
        core.add_torus_shape(2, 2, [port] * 4, [port] * 4, [port] * 8, [port] * 16, [port] * 4, 1e-6, 1e-7)
    with pytest.raises(ValueError, match="unknown shape"):
        core.add_shaped_programs(0, np.zeros(1), np.zeros(1, np.uint8), np.zeros(1))


def test_op_kinds_are_the_cores_codes():
    assert OP_KINDS == CODES


def test_messages_of_one_size_share_one_shaped_program():
    """_distinct: one row throughout gives one kept row, every row its; `distinct` likewise."""
    kept, which = _distinct([np.full(6, 8), np.zeros(6, np.int64)])
    assert kept.tolist() == [0] and which.tolist() == [0] * 6
    kept, which = _distinct([np.array([8, 16, 8, 8]), np.zeros(4, np.int64)])
    assert kept.tolist() == [0, 1] and which.tolist() == [0, 1, 0, 0]
    assert distinct(np.full(5, 7)).tolist() == [7] and distinct(np.array([3, 1, 3])).tolist() == [1, 3]


def test_distinct_rows_by_a_table_are_those_of_a_sort():
    """_distinct's table of first rows (few possible keys) gives np.unique's rows, in the order
    they first come, and each row's index among them."""
    rng = np.random.default_rng(3)
    phase, size = rng.integers(0, 40, 5000), rng.choice([8, 16], 5000)
    kept, which = _distinct([phase, size])
    _, first, inverse = np.unique(phase * 17 + size, return_index=True, return_inverse=True)
    assert kept.tolist() == sorted(first.tolist())
    assert (phase[kept][which] == phase).all() and (size[kept][which] == size).all()
    assert len(np.unique(which)) == len(first) and which[0] == 0


def test_the_core_refuses_programs_longer_than_a_process_counts():
    """A process counts its ops in 16 bits (model.rs Proc::pc): a longer program, explicit or a
    torus's longest route, is refused with its length."""
    core = core_module.Core(4, 1, 0)
    port = core.add_resource(True, 1, True)
    n = 65_536
    codes, args = np.ones(n, np.uint8), np.zeros(n, np.uint32)
    with pytest.raises(ValueError, match="program 1 has 65536 ops; the core takes at most 65535"):
        core.add_programs(np.array([0, 0, n], np.uint32), codes, args, np.zeros(n))
    assert core.add_programs(np.array([0, n - 1], np.uint32), codes[1:], args[1:], np.zeros(n - 1)) == 0
    cols = 26_220  # a 1 x 26,220 ring: 13,110 hops at most, 5 ops a hop
    with pytest.raises(ValueError, match=r"a 1x26220 torus's routes take up to 65563 ops a message"):
        core.add_torus_shape(1, cols, [port] * cols, [port] * cols, [port] * 8 * cols, [port] * 4 * cols,
                             [port] * cols, 1e-6, 1e-7)


def test_the_core_refuses_a_wormhole_shape_whose_library_and_phased_messages_are_too_long():
    """The wormhole shape (wormhole.rs) adds a gate and a tail per hop and 13 ops to the plain
    route's 5 a hop and 13: 7 * hops + 26. A 1 x 18,718 ring (9,359 hops at most) is the
    smallest whose plain routes fit in the 16-bit op counter (46,808 ops) but whose library and
    phased messages do not (65,539); one node fewer (9,358 hops, 65,532 ops) is taken."""
    def add(cols: int) -> int:
        core = core_module.Core(4, 1, 0)
        port = core.add_resource(True, 1, True)
        return core.add_wormhole_shape(1, cols, [port] * cols, [port] * cols, [port] * 8 * cols,
                                       [port] * 4 * cols, [port] * cols, 1e-6, 1e-7,
                                       [port] * cols, [port] * cols, 1e-6, 2e-6)

    with pytest.raises(ValueError, match=r"^a 1x18718 torus's library and phased messages take up to "
                                         r"65539 ops a message; the core takes at most 65535$"):
        add(18_718)
    assert add(18_717) == 0
