"""The busiest sender's ramp (docs/bounds.md, "An allgather's busiest sender"): worked by hand on
`ideal:8`, met by recursive doubling where a block's wire time is at least a start-up, and the
proof that no schedule on sp2:32's SimGrid platform reaches SMPI's 2 KB allgather."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import recognized_collectives
from phalanx.compiler.library.senderramp import ramp_s, sender_ramp_bound_s
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

ROUNDING = 1e-9  # the simulator's clock against the bound's arithmetic


def allgather(spec: str, nodes: int, size: int):
    machine = resolve(spec)
    (coll,) = recognized_collectives(kind_program("allgather", nodes, size), target=spec)
    return machine, coll


def test_recursive_doubling_meets_the_ramp_where_a_block_outlasts_a_start_up():
    """ideal:8, 64 KB blocks: 3 messages of 1, 2 and 4 blocks send the 7 the busiest node must
    send without waiting, so the bound is 3 alpha + 7 b beta: recursive doubling's time."""
    machine, coll = allgather("ideal:8", 8, 65536)
    port = machine.library.machine.port
    expected_s = 3 * port.startup_s + 7 * 65536 * port.s_per_byte
    assert machine.binding_bound(coll) == (pytest.approx(expected_s, rel=ROUNDING), "sender ramp")
    assert simulated_time_s(machine, coll, "recursive-doubling") == pytest.approx(expected_s, rel=ROUNDING)


def test_few_messages_wait_for_what_they_forward():
    """ideal:8 (alpha = 10 us, beta = 0.01 us/B), 512 B blocks (b beta = 5.12 us < alpha): in
    byte times (A = alpha / beta = h / beta) one message waits w = 6b to hold 7 blocks; two hold
    b + w and 2b + A + 2w, i.e. 7b with w = (4b - A) / 3; three need no wait. So
    T >= min(alpha + 13 b beta, 2 alpha + 7 b beta + (4 b beta - alpha) / 3, 3 alpha + 7 b beta),
    the second: (5/3) alpha + (25/3) b beta."""
    machine, coll = allgather("ideal:8", 8, 512)
    port = machine.library.machine.port
    alpha, wire = port.startup_s, 512 * port.s_per_byte
    candidates = (alpha + 13 * wire, 2 * alpha + 7 * wire + (4 * wire - alpha) / 3, 3 * alpha + 7 * wire)
    expected_s = min(candidates)
    assert expected_s == pytest.approx(5 / 3 * alpha + 25 / 3 * wire)
    assert sender_ramp_bound_s(coll, port, 8 * 7 * 512) == pytest.approx(expected_s, rel=ROUNDING)
    for algorithm in ("recursive-doubling", "bruck", "ring"):
        assert simulated_time_s(machine, coll, algorithm) >= expected_s * (1 - ROUNDING), algorithm


def test_no_serial_sender_on_sp2_32_reaches_smpis_2_kb_allgather():
    """sp2:32's SimGrid platform (runtime/backends/platforms.py routed_platform): a node sends one
    message at a time, its start-up then its wire, and takes bytes in at the node's rate. Its
    busiest sender must send 31 blocks of 2 KB: the ramp is 3.0526 ms (four messages after
    42.6 us of waiting), above SMPI's 2dmesh (3.031 ms, docs/efficiency.md), whose detached
    sends overlap a start-up with the wire before it; recursive doubling's 5 alpha + 31 b beta =
    3.080 ms is within 0.9% of the ramp."""
    params = resolve("sp2:32").params
    alpha_s, beta_s = params.startup_us * 1e-6, params.us_per_byte * 1e-6
    bound_s = ramp_s(31 * 2048, 2048, alpha_s, alpha_s, beta_s)
    assert bound_s == pytest.approx(3.0526e-3, abs=1e-7)
    assert bound_s > 3.031e-3
    assert 5 * alpha_s + 31 * 2048 * beta_s == pytest.approx(3.080e-3, abs=1e-6)


@pytest.mark.parametrize("spec, kind", [("ideal:8", "allreduce"), ("ideal:8", "broadcast"),
                                        ("torus:2x4", "allgather"), ("proteus:groups=1", "allgather")])
def test_the_ramp_is_for_allgathers_on_one_port_a_node(spec, kind):
    """Partials combine (allreduce), a root holds everything (broadcast), nodes that stream
    several messages (the torus) or share a port (Proteus): no such bound."""
    machine = resolve(spec)
    (coll,) = recognized_collectives(kind_program(kind, machine.nnodes, 4096), target=spec)
    assert sender_ramp_bound_s(coll, machine.library.machine.port, 1e6) == 0.0
