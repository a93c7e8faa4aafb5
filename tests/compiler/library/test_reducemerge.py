"""A reduce's relays pay a piece's wire and merge twice (docs/bounds.md, "Relays' merges and
forwards"): its value worked by hand on torus:8x8 at 2 KB, where it applies, and every reduce
algorithm on small tori and torus:8x8 above it."""

from __future__ import annotations

import pytest

from conftest import whole_machine_collective
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.reducemerge import forwarded_bytes, relay_merges_bound_s, relayed_bytes
from phalanx.compiler.target import resolve

ROUNDING = 1e-9


def test_a_relay_forwards_a_piece_in_messages_a_hold_apart():
    """F(tau): a message each `hold`, each alpha plus its bytes at `per_byte` before the end."""
    assert forwarded_bytes(50.0, 20.0, 20.0, 0.5) == pytest.approx(30 / 0.5 + 10 / 0.5)
    assert forwarded_bytes(20.0, 20.0, 20.0, 0.5) == 0


def test_torus_8x8_2k_by_hand():
    """torus:8x8, 2 KB partials of float64: c = beta + one operation per 8 bytes (31.25 ns).
    At T = 97.2 us a contributor's first message (at 0) reaches a relay that forwards it in two
    messages (3 x c = 2 (T - alpha) - 2 alpha - h), its second (at h) and third (at 2 h) one each
    (2 x c = T - j h - 2 alpha); the 63 rests need q's four streams from alpha on."""
    machine = resolve("torus:8x8")
    port = machine.library.machine.port
    alpha, hold = port.startup_s, port.hold_s
    c = port.s_per_byte + port.combine_s_per_op / 8
    coll = whole_machine_collective(machine, 2048, Kind.REDUCE)
    bound_s = relay_merges_bound_s(coll, port)

    def relayed(t_s: float) -> float:
        first = (2 * (t_s - alpha) - 2 * alpha - hold) / (3 * c)
        return first + sum((t_s - j * hold - 2 * alpha) / (2 * c) for j in (1, 2))

    assert relayed_bytes(bound_s, port, c - port.s_per_byte) == pytest.approx(relayed(bound_s), rel=1e-9)
    straight = 63 * (2048 - relayed(bound_s)) * port.s_per_byte / 4
    assert bound_s == pytest.approx(alpha + straight, rel=1e-9)
    assert bound_s == pytest.approx(97.04e-6, rel=1e-4)
    # the straight start-ups' 99.46 us binds above it (test_reducestraight.py)
    assert machine.binding_bound(coll)[0] > bound_s


def test_it_is_left_out_for_other_kinds_and_one_stream_ports():
    torus = resolve("torus:4x4")
    port = torus.library.machine.port
    assert relay_merges_bound_s(whole_machine_collective(torus, 2048, Kind.BROADCAST), port) == 0
    for spec in ("ideal:8", "paragon:4x4", "cs2:8"):
        machine = resolve(spec)
        coll = whole_machine_collective(machine, 2048, Kind.REDUCE)
        assert relay_merges_bound_s(coll, machine.library.machine.port) == 0
