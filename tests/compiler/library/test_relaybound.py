"""The relays' bound on fixed routes (compiler/library/relaybound.py, docs/bounds.md "Relays round
fixed routes"): what a busy link cannot carry in time is relayed, and a relay's port pays for it."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.bounds import bounds
from phalanx.compiler.library.relaybound import (
    disjoint_links,
    relay_or_direct_bound_s,
    relay_ports_bound_s,
)
from phalanx.compiler.recognize import recognize
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import schedule_time_s, simulated_time_s

ROUNDING = 1e-9


def two_on_one_link(b: int):
    """hypercube:3, blocks 1 -> 2 and 0 -> 6: e-cube (lowest bit first) takes both over 0 -> 2."""
    m = np.zeros((8, 8), dtype=np.int64)
    m[1, 2] = m[0, 6] = b
    return recognize(0, m, "A", "B", 1)


def test_the_bound_worked_by_hand_on_two_blocks_sharing_a_link():
    """The family is the shared link alone (2 b): 8 T = 2 h + beta (2 b + 2 b - (T - h) / beta),
    so T = (3 h + 4 b beta) / 9 on the hypercube's send engines (c = 1, link beta = beta)."""
    machine = resolve("hypercube:3")
    port, route = machine.library.machine.port, machine.library.machine.route
    b = 65536
    coll = two_on_one_link(b)
    assert disjoint_links({(1, 2): b, (0, 6): b}, route) == [2 * b]
    h, beta = port.hold_s, port.s_per_byte
    assert port.link_s_per_byte == beta
    assert relay_ports_bound_s(coll, port, route) == pytest.approx((3 * h + 4 * b * beta) / 9, rel=1e-9)
    assert relay_ports_bound_s(coll, port, None) == 0.0  # no fixed routes named: none
    sp2 = resolve("sp2:8")  # the adapter spreads messages over routes: not fixed
    assert "relay ports" not in bounds(coll, sp2.library.machine.port) and \
        sp2.library.bound(coll)[1] != "relay ports"


def test_a_relaying_schedule_and_the_direct_one_both_stay_above_it():
    """The two blocks sharing link 0 -> 2, sent direct or with 1 -> 2 relayed through 3 (routes
    1 -> 3 and 3 -> 2, off the shared link) in pieces: neither beats the bound."""
    machine = resolve("hypercube:3")
    b = 65536
    coll = two_on_one_link(b)
    bound_s = relay_ports_bound_s(coll, machine.library.machine.port, machine.library.machine.route)
    assert simulated_time_s(machine, coll, "direct") >= bound_s
    pieces, size = 4, b // 4
    phases = [[Transfer(0, 6, b, 0, 6)] if k == 0 else [] for k in range(pieces + 1)]
    for k in range(pieces):
        phases[k].append(Transfer(1, 3, size, 1, 2, 0, k * size))
        phases[k + 1].append(Transfer(3, 2, size, 1, 2, 0, k * size))
    relayed = Schedule(0, coll.kind, "relayed", 8, tuple(Phase.of(p) for p in phases), "A", "B", 1)
    assert schedule_time_s(machine, relayed) >= bound_s * (1 - ROUNDING)


@pytest.mark.parametrize("spec, least, binds", [("paragon:4x8", 1.06, "relay ports"),
                                                 ("hypercube:5", 1.18, "relay ports")])
def test_the_transpose_on_fixed_routes_needs_more_than_its_ports(spec, least, binds):
    """A transpose of 64 KB blocks: row-column or e-cube routes pile blocks on the links into the
    diagonal nodes; the bound is above the ports' and below every schedule the target offers."""
    machine = resolve(spec)
    coll = compile_program(kind_program("permutation", machine.nnodes, 65536), target=spec,
                           algorithm="direct").collectives[0]
    lib = machine.library
    found = bounds(coll, lib.machine.port, lib.cuts, lib.links, lib.machine.route)
    without = max(v for k, v in found.items() if k != "relay ports")
    assert found["relay ports"] >= least * without
    bound_s, name = machine.binding_bound(coll)
    assert name == binds
    for algorithm, unmet in machine.candidates(coll):
        if unmet is None:
            assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm


def test_a_relayed_byte_comes_two_start_ups_in_or_the_busiest_link_binds():
    """Two blocks on one link of hypercube:3 (alpha = h = 75 us): direct, the link carries both,
    h + 2 b beta_link; relayed, a byte arrives no sooner than 2 alpha. The bound is the smaller:
    2 alpha at 64 KB (1.5 ms of link), the link at 8 B."""
    machine = resolve("hypercube:3")
    port, route = machine.library.machine.port, machine.library.machine.route
    assert relay_or_direct_bound_s(two_on_one_link(65536), port, route) == \
        pytest.approx(2 * port.startup_s, rel=1e-12)
    small = two_on_one_link(8)
    assert relay_or_direct_bound_s(small, port, route) == \
        pytest.approx(port.hold_s + 16 * port.link_s_per_byte, rel=1e-12)
    assert relay_or_direct_bound_s(small, port, None) == 0.0  # no fixed routes named: none


@pytest.mark.parametrize("spec", ["paragon:8x8", "hypercube:6"])
def test_the_transpose_of_2_kb_blocks_binds_at_two_start_ups_and_no_schedule_beats_it(spec):
    """A transpose of 2 KB blocks: direct puts 7 (Paragon) or 4 (hypercube) blocks on a link,
    more than 2 alpha = 150 us of it, so the bound is 2 alpha (was 124.7 us of relay ports and
    97.5 us of start-up); every schedule offered takes longer."""
    machine = resolve(spec)
    coll = compile_program(kind_program("permutation", machine.nnodes, 2048), target=spec,
                           algorithm="direct").collectives[0]
    bound_s, name = machine.binding_bound(coll)
    assert name == "relay's two start-ups"
    assert bound_s == pytest.approx(2 * machine.library.machine.port.startup_s, rel=1e-12)
    for algorithm, unmet in machine.candidates(coll):
        if unmet is None:
            assert simulated_time_s(machine, coll, algorithm) >= bound_s * (1 - ROUNDING), algorithm
