"""Far-first recursive doubling (group.far_first_doubling_phases): recursive doubling with the
rank bits reversed delivers every part, pairs ranks P/2 apart first and neighbours last, is
refused with the reason on other member counts, and on the CS-2's fat tree beats node order
(issue 27, branch permhyper). Its closed form on `ideal` is checked in test_textbook.py."""

from __future__ import annotations

import pytest

from conftest import assert_forced_run_verifies
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.group import reversed_bits
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def test_reversed_bits():
    assert [reversed_bits(v, 3) for v in range(8)] == [0, 4, 2, 6, 1, 5, 3, 7]
    assert reversed_bits(1, 6) == 32 and reversed_bits(0b110000, 6) == 0b11


@pytest.mark.parametrize("spec", ["ideal:8", "hypercube:3", "torus:4x4", "cs2:16"])
def test_far_first_doubling_delivers_every_part(spec):
    assert_forced_run_verifies(spec, "allgather", "far-first-doubling", 96)


def test_the_first_exchange_is_half_the_machine_apart_and_the_last_between_neighbours():
    """cs2:16: one part to the node 8 away first; 8 parts to the node 1 away (same leaf switch) last."""
    compiled = compile_program(kind_program("allgather", 16, 8), target="cs2:16",
                               algorithm="allgather=far-first-doubling")
    exchanges = [[t for t in p.sends if t.src != t.dst] for p in compiled.schedules[0].phases]
    assert len(exchanges) == 4
    assert all(abs(t.src - t.dst) == 8 for t in exchanges[0]) and len(exchanges[0]) == 16
    assert all(abs(t.src - t.dst) == 1 for t in exchanges[-1]) and len(exchanges[-1]) == 16 * 8


def test_other_member_counts_are_refused_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allgather", 12, 64), target="ideal:12",
                        algorithm="allgather=far-first-doubling")
    assert "algorithm 'far-first-doubling' cannot lower the allgather of line 4 on ideal:12: " \
        in str(err.value) and "a power of two of members, but 12" in str(err.value)


def test_on_the_cs2_fat_tree_far_first_beats_node_order():
    """cs2:16, 2 KB parts: 2.31 ms against 3.80 ms for recursive doubling in node order, whose
    largest exchange leaves the leaf switch and shares its one down-link from the next stage
    (docs/efficiency.md, branch permhyper)."""
    machine = resolve("cs2:16")
    coll = compile_program(kind_program("allgather", 16, 2048), target="cs2:16",
                           algorithm="allgather=recursive-doubling").collectives[0]
    far = simulated_time_s(machine, coll, "far-first-doubling")
    node_order = simulated_time_s(machine, coll, "recursive-doubling")
    assert far == pytest.approx(2.312e-3, rel=0.01) and node_order == pytest.approx(3.799e-3, rel=0.01)
