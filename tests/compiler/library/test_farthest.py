"""`farthest-binomial` broadcast (compiler/library/farthest.py): MPICH's child order, its closed
form on `ideal`, its data on small machines, and no shared mesh link in any round (issue 27)."""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.farthest import farthest_rounds
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program


def test_the_root_serves_the_farthest_first_and_every_member_once():
    assert farthest_rounds(8) == [[(0, 4)], [(0, 2), (4, 6)], [(0, 1), (2, 3), (4, 5), (6, 7)]]
    for n in (1, 2, 5, 6, 12, 16):
        reached = [0] + [c for pairs in farthest_rounds(n) for _, c in pairs]
        assert sorted(reached) == list(range(n)) and len(farthest_rounds(n)) == (n - 1).bit_length()


@pytest.mark.parametrize("p, size", [(8, 8), (12, 65536)])
def test_it_meets_the_binomial_closed_form_on_ideal(p, size):
    """Thakur, Rabenseifner and Gropp 2005 4.1: ceil(lg p) (alpha + n beta), as `binomial`."""
    spec = f"ideal:{p}"
    compiled = compile_program(kind_program("broadcast", p, size), target=spec,
                               algorithm="broadcast=farthest-binomial")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    port = resolve(spec).library.machine.port
    closed_form_s = (p - 1).bit_length() * (port.startup_s + size * port.s_per_byte)
    assert result.time_s == pytest.approx(closed_form_s, rel=0.02)


@pytest.mark.parametrize("spec", ["torus:4x4", "hypercube:3", "paragon:2x3"])
def test_it_delivers_every_byte(spec):
    assert_forced_run_verifies(spec, "broadcast", "farthest-binomial", 2048)


def test_no_round_shares_a_link_of_the_paragon_mesh():
    """Nearest first, binomial's last round puts 4 messages on a column link of the 8x8 mesh."""
    machine = resolve("paragon:8x8")
    route = machine.library.machine.route

    def busiest(algorithm: str) -> int:
        schedule = compile_program(kind_program("broadcast", 64, 64), target="paragon:8x8",
                                   algorithm=f"broadcast={algorithm}").schedules[0]
        return max(max(Counter(link for t in p.sends if t.src != t.dst
                               for link in route(t.src, t.dst)).values(), default=0)
                   for p in schedule.phases)

    assert (busiest("farthest-binomial"), busiest("binomial")) == (1, 4)
