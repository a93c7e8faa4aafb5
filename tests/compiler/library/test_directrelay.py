"""A link's blocks direct or relayed (compiler/library/directrelay.py, docs/bounds.md "A link's
blocks direct or relayed"): a block either crosses its fixed route's links in its source's
messages, one slot each, or leaves in legs that arrive two start-ups and a store-and-forward
late."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import runnable_times
from phalanx.compiler.library.directrelay import direct_or_relayed_bound_s, leg_bytes
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve

ROUNDING = 1e-9


def transpose(side: int, b: int):
    """Node (x, y) of a side x side grid to node (y, x), b bytes each (the diagonal sends none)."""
    m = np.zeros((side * side, side * side), dtype=np.int64)
    for x in range(side):
        for y in range(side):
            if x != y:
                m[y * side + x, x * side + y] = b
    return recognize(0, m, "A", "B", 1)


def shift(nodes: int, b: int):
    m = np.zeros((nodes, nodes), dtype=np.int64)
    m[np.arange(nodes), (np.arange(nodes) + 1) % nodes] = b
    return recognize(0, m, "A", "B", 1)


def test_a_leg_takes_its_bytes_twice_or_a_forward_start_up_more():
    """r beta + f(r) <= B: one forward, 2 r beta <= B; two, r beta (3/2) + h / 2 <= B."""
    port = resolve("torus:8x8").library.machine.port
    beta, h = port.link_s_per_byte, port.hold_s
    assert leg_bytes(30e-6, port) == pytest.approx(max(15e-6, (30e-6 - h / 2) * 2 / 3) / beta)
    assert leg_bytes(50e-6, port) == pytest.approx((50e-6 - h / 2) * 2 / 3 / beta)  # 1067 B
    assert leg_bytes(0.0, port) == 0.0


def test_a_shift_on_the_torus_worked_by_hand():
    """torus:8x8, every node 2 KB to the next along its row: each link carries one block. Its
    best is a direct message in slot 0, a leg in slot 1, the link full from h:
    D beta <= T - h and r beta <= (T - h - 2 alpha) / 2 with D + r = b, so
    T = (2 (b beta + h) + h + 2 alpha) / 3 = 67.57 us (weighted links: 64.8 us)."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    alpha, h, beta, b = port.startup_s, port.hold_s, port.link_s_per_byte, 2048
    coll = shift(64, b)
    expected = (2 * (b * beta + h) + h + 2 * alpha) / 3
    assert direct_or_relayed_bound_s(coll, port, machine.library.machine.route) \
        == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(67.5667e-6, rel=1e-4)
    assert machine.binding_bound(coll) == (pytest.approx(expected, rel=1e-6), "direct or relayed")


def test_the_transpose_of_2kb_on_torus_8x8():
    """e-cube puts four blocks on 16 links next to the diagonal: 88.96 us (weighted links 76.3;
    corner-relay takes 175.1 us)."""
    for spec in ("torus:8x8", "iwarp:8x8"):
        machine = resolve(spec)
        bound_s, binds = machine.binding_bound(transpose(8, 2048))
        assert binds == "direct or relayed"
        assert bound_s == pytest.approx(88.96e-6, abs=0.01e-6)


def test_short_blocks_go_direct():
    """At 128 B a relay's two start-ups cost more than the link's four blocks: h + 4 b beta."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    got = direct_or_relayed_bound_s(transpose(8, 128), port, machine.library.machine.route)
    assert got == pytest.approx(port.hold_s + 4 * 128 * port.link_s_per_byte, rel=1e-6)


def test_not_for_other_kinds_or_several_blocks_a_source():
    machine = resolve("torus:4x4")
    port, route = machine.library.machine.port, machine.library.machine.route
    m = np.zeros((16, 16), dtype=np.int64)
    m[0, 5] = m[0, 6] = 2048  # one source, two blocks
    assert direct_or_relayed_bound_s(recognize(0, m, "A", "B", 1), port, route) == 0.0
    assert direct_or_relayed_bound_s(recognize(0, np.full((16, 16), 64, dtype=np.int64), "A", "B", 1),
                                     port, route) == 0.0
    assert direct_or_relayed_bound_s(transpose(4, 2048), port, None) == 0.0


@pytest.mark.parametrize("spec", ["torus:4x4", "iwarp:4x4", "torus:2x4"])
@pytest.mark.parametrize("b", [512, 2048, 4096])
def test_no_transpose_or_shift_beats_it(spec, b):
    machine = resolve(spec)
    rows, cols = machine.torus.rows, machine.torus.cols
    colls = [shift(rows * cols, b)] + ([transpose(rows, b)] if rows == cols else [])
    for coll in colls:
        bound_s = direct_or_relayed_bound_s(coll, machine.library.machine.port,
                                            machine.library.machine.route)
        assert bound_s > 0
        times = runnable_times(machine, coll)
        assert times
        for algorithm, time_s in times:
            assert time_s >= bound_s * (1 - ROUNDING), (spec, b, algorithm, time_s, bound_s)


def test_no_transpose_beats_it_on_torus_8x8_at_2kb():
    machine = resolve("torus:8x8")
    coll = transpose(8, 2048)
    bound_s = machine.binding_bound(coll)[0]
    times = runnable_times(machine, coll)
    assert len(times) > 5
    assert min(t for _, t in times) >= bound_s * (1 - ROUNDING)
