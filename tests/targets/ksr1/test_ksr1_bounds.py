"""The KSR-1's reading rounds (docs/bounds.md, "The KSR-1's reading rounds"): a cell takes in
data by transfers run one at a time, a reading-loop turn a subpage, each bringing what its
source held when it was posted, so what a cell holds of others' data at most doubles per turn;
a reduction needs that for every element of its partial, a subpage of elements a turn. Worked
by hand on 32 cells and never beaten (tests/compiler/library/test_bounds.py runs every algorithm
of ksr1:6 against it)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import recognized_collectives
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.synthetic import execute
from phalanx.runtime.timing import simulated_time_s


def collective(kind: str, size: int):
    machine = resolve("ksr1")
    (coll,) = recognized_collectives(kind_program(kind, 32, size), target=machine.spec)
    return machine, coll


@pytest.mark.parametrize("kind", ["allgather", "alltoall", "gather", "reduce", "allreduce"])
def test_thirty_two_cells_need_five_turns(kind):
    """Every cell (or the root) needs 31 others' 8-byte blocks or inputs: 5 turns of the
    reading loop, 107.05 us, where a subpage a turn counts one."""
    machine, coll = collective(kind, 8)
    turn_s = machine.params.read_loop_s
    assert machine.binding_bound(coll) == (pytest.approx(5 * turn_s), "reading rounds")
    for algorithm, unmet in machine.candidates(coll):
        if unmet is None:
            assert simulated_time_s(machine, coll, algorithm) >= 5 * turn_s, algorithm


def test_a_long_reduction_pipelines_its_subpages_through_the_rounds():
    """A 2 KB partial is 16 subpages: turn i from the last brings 128 bytes of at most
    min(2^(i-1), 31) inputs, and the root lacks 2048 x 31: the first five turns bring 128 x 31,
    each later one 128 x 31 more, so 20 turns (the reader's 16 subpages alone: 16)."""
    machine, coll = collective("reduce", 2048)
    bound_s, binds = machine.binding_bound(coll)
    assert (bound_s, binds) == (pytest.approx(20 * machine.params.read_loop_s), "reading rounds")


@pytest.mark.parametrize("kind", ["broadcast", "scatter", "cshift"])
def test_one_source_a_cell_needs_one_turn(kind):
    """A cell that needs one other's data: one turn, below the reader's own subpage bound."""
    machine, coll = collective(kind, 8)
    assert machine.binding_bound(coll)[1].startswith("reader bandwidth")


@pytest.mark.parametrize("kind, plain", [("cshift", "cshift"), ("permutation", "reads"),
                                         ("scatter", "reads")])
def test_a_holder_pushes_each_reader_s_own_block(kind, plain):
    """Poststore of private data (Sec. 3.4): the holder pushes a reader's block round the ring
    once, and the reader takes it from its cache, without the request and the ring latency of
    a read (8.75 us unloaded, Table 1). Every block still arrives once, faster than by a read."""
    machine, coll = collective(kind, 8)
    pushed = f"{plain}-poststore"
    assert pushed in machine.algorithms(coll.kind)
    schedule = machine.schedule_for(coll, pushed)
    assert not execute(machine, coll, schedule).problems
    assert simulated_time_s(machine, coll, pushed) < simulated_time_s(machine, coll, plain)
