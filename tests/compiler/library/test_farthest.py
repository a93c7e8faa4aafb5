"""`farthest-binomial` broadcast and scatter (compiler/library/farthest.py): MPICH's child
order, its closed form on `ideal`, its data on small machines, no shared mesh link in any round,
and the scatter's times on the Paragon's mesh and the CS-2's fat tree (issue 27)."""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.farthest import farthest_rounds
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


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


@pytest.mark.parametrize("spec, size", [("paragon:2x3", 100), ("ideal:6", 64), ("sp2:8", 1000),
                                        ("torus:3x4", 64), ("cs2:6", 8)])
def test_its_scatter_delivers_every_byte(spec, size):
    assert_forced_run_verifies(spec, "scatter", "farthest-binomial", size)


def test_its_scatter_sends_each_child_the_ranks_it_serves_later():
    """On 8 nodes: the root's 4 blocks to rank 4 (4-7), 2 to rank 2 (2-3), then 1 to rank 1."""
    schedule = compile_program(kind_program("scatter", 8, 16), target="ideal:8",
                               algorithm="scatter=farthest-binomial").schedules[0]
    from_root = [sorted(t.final for t in p.sends if t.src == 0 and t.dst != 0) for p in schedule.phases]
    assert [f for f in from_root if f] == [[4, 5, 6, 7], [2, 3], [1]]


@pytest.mark.parametrize("spec, size, expected_s, binomial_s", [
    ("paragon:8x8", 2048, 1.8693e-3, 2.5827e-3), ("cs2:64", 2048, 3.8556e-3, 5.0844e-3)])
def test_its_scatter_on_the_mesh_and_the_fat_tree_beats_binomial(spec, size, expected_s, binomial_s):
    """Measured (issue 27, branch tbc): the rounds' messages share no link where binomial's
    last rounds queue on column links (Paragon) and leaf up-links (CS-2); on the Paragon it is
    the hypercube's time, 6 alpha + 63 b beta."""
    machine = resolve(spec)
    coll = compile_program(kind_program("scatter", 64, size), target=spec,
                           algorithm="scatter=binomial").collectives[0]
    assert simulated_time_s(machine, coll, "farthest-binomial") == pytest.approx(expected_s, rel=1e-3)
    assert simulated_time_s(machine, coll, "binomial") == pytest.approx(binomial_s, rel=1e-3)
