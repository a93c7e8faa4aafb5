"""The three-level bound of a reduce (compiler/library/reducedepth.py, docs/bounds.md "A
reduce's root over three levels"): no reduce algorithm beats it on small machines of the
families it serves, at sizes where it is above the fan-in bound; its value on ideal:64 and
torus:8x8 at 2 KB worked by hand."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.bounds import bounds, fan_in_bound_s
from phalanx.compiler.library.reducedepth import (
    deadline_bound_s,
    deadlines_met,
    feasible,
    relay_capacity_bytes,
    three_level_bound_s,
)
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

ROUNDING = 1e-9


def _reduce(spec: str, size: int):
    machine = resolve(spec)
    return machine, compile_program(kind_program("reduce", machine.nnodes, size), target=spec,
                                    algorithm="reduce=direct").collectives[0]


@pytest.mark.parametrize("spec", ["ideal:8", "ideal:16", "hypercube:3", "hypercube:4", "paragon:4x4",
                                  "sp2:8", "cs2:8", "torus:4x4", "iwarp:4x4"])
def test_no_reduce_beats_it(spec):
    raised = 0
    for size in (512, 2048, 16384):
        machine, coll = _reduce(spec, size)
        port = machine.library.machine.port
        bound_s = three_level_bound_s(coll, port)
        assert bound_s > 0
        raised += bound_s > fan_in_bound_s(coll, port) * (1 + 1e-6)
        for algorithm, unmet in machine.candidates(coll):
            if unmet is None:
                time_s = simulated_time_s(machine, coll, algorithm)
                assert time_s >= bound_s * (1 - ROUNDING), (spec, size, algorithm, time_s, bound_s)
    assert raised, spec  # above the fan-in bound somewhere: the test can fail


def test_ideal_64_at_2_kb():
    """alpha 10 us, beta 0.01 us/B, 63 contributors of 2048 B. At T = 46.09 us a contributor
    starts at most floor((T - n beta) / alpha) = 2 messages; elements of three levels cost
    3 alpha + f n beta, so f <= 0.785, and the rest must go through relays: d (1 - f) n - A
    <= sqrt(d K A B) with A = (T - alpha) / beta - f n, B = (T - 2 alpha) / beta. The least T
    that meets both is 46.09 us, against the fan-in bound's 40.32."""
    machine, coll = _reduce("ideal:64", 2048)
    port = machine.library.machine.port
    bound_s = three_level_bound_s(coll, port)
    assert bound_s == pytest.approx(46.09e-6, abs=0.01e-6)
    assert fan_in_bound_s(coll, port) == pytest.approx(40.32e-6, abs=0.01e-6)
    # the contributor pipeline (reducepipeline.py) binds here since branch reducesingle
    assert machine.binding_bound(coll) == (pytest.approx(53.06e-6, abs=0.01e-6), "contributor pipeline")
    assert not feasible(bound_s, 63, 2048, port) and feasible(bound_s * (1 + 1e-6), 63, 2048, port)
    assert feasible(10e-6 + 63 * 2048 * 0.01e-6, 63, 2048, port)  # every partial straight to q


def test_a_shared_engine_relay_also_sends_its_own_partial():
    """cs2:64 at 2 KB: every node but the root contributes, so a relay's one engine takes the
    values it relays, sends its own 2048 B (51.2 us) and starts its message to the root:
    B = (T - 2 alpha - n beta) / beta, and the bound rises from 334.1 to 340.0 us."""
    machine, coll = _reduce("cs2:64", 2048)
    port = machine.library.machine.port
    bound_s = three_level_bound_s(coll, port)
    assert bound_s == pytest.approx(339.95e-6, abs=0.01e-6)
    assert feasible(bound_s * (1 + 1e-6), 63, 2048, port, relays_send=True)
    assert not feasible(bound_s, 63, 2048, port, relays_send=True)
    assert feasible(334.2e-6, 63, 2048, port) and not feasible(334.0e-6, 63, 2048, port)
def test_torus_8x8_at_2_kb():
    """A node streams four messages (alpha 20.15 us, h = alpha - hop = 20 us, beta 0.025 us/B
    per link, four links in). At T = 66.79 us a contributor starts its messages to relays by
    T - 2 alpha, so at most floor((T - 2 alpha) / h) + 1 = 2 of them; elements of three levels
    cost 3 alpha + f n beta / 4, so f <= 0.50, and the rest must go through relays that two
    messages per contributor cannot feed: 66.79 us, against the fan-in bound's 52.78."""
    machine, coll = _reduce("torus:8x8", 2048)
    port = machine.library.machine.port
    bound_s = three_level_bound_s(coll, port)
    assert bound_s == pytest.approx(66.79e-6, abs=0.01e-6)
    assert fan_in_bound_s(coll, port) == pytest.approx(52.78e-6, abs=0.01e-6)
    assert bound_s < deadline_bound_s(coll, port)  # the relays' deadlines bind here
    assert not feasible(bound_s, 63, 2048, port) and feasible(bound_s * (1 + 1e-6), 63, 2048, port)
    assert feasible(3 * port.startup_s + 2048 * port.s_per_byte / 4, 63, 2048, port)  # all deep


@pytest.mark.parametrize("spec", ["torus:2x2", "torus:2x4", "torus:4x4", "iwarp:4x4"])
def test_no_reduce_beats_the_relays_deadlines(spec):
    raised = 0
    for size in (128, 512, 2048, 16384):
        machine, coll = _reduce(spec, size)
        port = machine.library.machine.port
        bound_s = deadline_bound_s(coll, port)
        assert bound_s > 0
        raised += bound_s > max(fan_in_bound_s(coll, port), three_level_bound_s(coll, port)) * (1 + 1e-6)
        for algorithm, unmet in machine.candidates(coll):
            if unmet is None:
                time_s = simulated_time_s(machine, coll, algorithm)
                assert time_s >= bound_s * (1 - ROUNDING), (spec, size, algorithm, time_s, bound_s)
    assert raised, spec  # above the other reduce bounds somewhere: the test can fail


def test_relays_deadlines_on_torus_8x8_at_2_kb():
    """At T = 74.18 us a contributor's start-ups at 0 and h = 20 us can bring a relay
    (T - 2 alpha) + (T - 2 alpha - h) = 33.88 + 13.88 us of bytes, 1910 B at 40 MB/s; the other
    138 B of each of the 63 partials, 8669 B, must go straight to the root, whose four links take
    4 x (T - alpha) = 4 x 54.03 us of bytes, 8645 B: just short, so 74.18 us is the bound (the
    three levels': 66.79; the root drain's 74.87 is above it, the relays' merges' 97.04 above
    that, and the straight start-ups, 99.46, bind: test_reducestraight.py). Not applied where a
    node streams one message (ideal)."""
    machine, coll = _reduce("torus:8x8", 2048)
    port = machine.library.machine.port
    bound_s = deadline_bound_s(coll, port)
    assert bound_s == pytest.approx(74.18e-6, abs=0.01e-6)
    assert relay_capacity_bytes(bound_s, port) == pytest.approx(1910.4, abs=1.0)
    assert not deadlines_met(bound_s, 63, 2048, port) and deadlines_met(bound_s * (1 + 1e-6), 63, 2048, port)
    assert bounds(coll, port)["relay deadlines"] == pytest.approx(bound_s)
    assert bounds(coll, port)["root drain"] == pytest.approx(74.87e-6, abs=0.01e-6)
    ideal, short = _reduce("ideal:64", 2048)
    assert deadline_bound_s(short, ideal.library.machine.port) == 0.0
