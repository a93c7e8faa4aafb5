"""The library's algorithms in the KSR-1's read modes (targets/ksr1/algorithms.py `in_read_modes`,
seed 002 Sec. 3.4): the same blocks in the same phases and loops, prefetched or pushed by their
holders; data checked, and faster where a loop reads several subpages or waits for its reads."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import Algorithm
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import checked_run
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.ksr1.algorithms import one_loop_a_pair
from phalanx.targets.ksr1.tags import Read, ReadMode


def collective(kind: Kind, size: int):
    machine = resolve("ksr1")
    (coll,) = recognized_collectives(kind_program(kind, 32, size), target=machine.spec)
    return machine, coll


def test_every_library_algorithm_comes_in_both_modes():
    machine = resolve("ksr1")
    names = machine.algorithms(Kind.REDUCE)
    for base in ("binomial", "cut-halving", "reduce-scatter-gather"):
        assert base in names and f"{base}-prefetch" in names and f"{base}-poststore" in names
    assert "gather-tree-prefetch" in names and "gather-tree-poststore" not in names  # Sec. 5's own
    assert "prefetch" in machine.describe_algorithm(Kind.REDUCE, "cut-halving-prefetch")


@pytest.mark.parametrize("mode", [ReadMode.PREFETCH, ReadMode.POSTSTORE])
def test_a_variant_reads_the_same_blocks_in_the_same_phases(mode):
    machine, coll = collective(Kind.ALLTOALL, 8)
    base = machine.schedule_for(coll, "bruck")
    variant = machine.schedule_for(coll, f"bruck-{mode}")
    assert len(base.phases) == len(variant.phases)
    for plain, read in zip(base.phases, variant.phases):
        strip = lambda ts: [t._replace(message=0) for t in ts]  # noqa: E731
        assert strip(plain.sends) == strip(read.sends) and strip(plain.recvs) == strip(read.recvs)
        assert all(Read.of(t.message) == Read(0, mode) for t in read.sends if t.src != t.dst)


@pytest.mark.parametrize("kind,size,base,mode,plain_us,variant_us", [
    # 16 subpages a loop: four prefetched reads in flight take a turn each, not a turn and a read
    (Kind.REDUCE, 2048, "cut-halving", ReadMode.PREFETCH, 961.2, 763.9),
    (Kind.ALLREDUCE, 2048, "cut-halving", ReadMode.PREFETCH, 973.6, 771.9),
    # one subpage a round: pushed, the reader takes it from its cache without the read's 8.75 us
    (Kind.ALLTOALL, 8, "bruck", ReadMode.POSTSTORE, 170.3, 129.5),
    (Kind.GATHER, 8, "binomial", ReadMode.POSTSTORE, 153.4, 125.0),
])
def test_a_variant_moves_the_data_and_is_faster(kind, size, base, mode, plain_us, variant_us):
    machine, coll = collective(kind, size)
    assert simulated_time_s(machine, coll, base) * 1e6 == pytest.approx(plain_us, abs=0.1)
    compiled = compile_program(kind_program(kind, 32, size), target="ksr1",
                               algorithm=f"{kind}={base}-{mode}", file="modes.phx")
    run = checked_run(compiled)
    assert run.problems == {0: []}
    time_s = run.execution.collectives[0].time_s
    assert time_s * 1e6 == pytest.approx(variant_us, abs=0.1)
    assert time_s >= machine.lower_bound_s(coll)


def test_two_loops_between_one_pair_are_refused():
    """A read mode numbers one private loop per pair: two would be merged, so it is refused."""
    machine, coll = collective(Kind.ALLTOALL, 8)
    two = Algorithm("two-loops", (Kind.ALLTOALL,), "two single reads of cell 1 from cell 0",
                    lambda c, m: [Phase.of([Transfer(0, 1, 8, 0, 1), Transfer(0, 1, 8, 0, 2)])])
    plain = lambda c, record: record.schedule(c, machine.library.machine).phases  # noqa: E731
    reason = one_loop_a_pair(two, plain)(coll, machine.library.machine)
    assert reason == ("its phase 0 has two read loops of cell 1 from cell 0, which a read mode "
                      "would merge into one")
    one = Algorithm("one-loop", (Kind.ALLTOALL,), "one combined read",
                    lambda c, m: [Phase.of([Transfer(0, 1, 8, 0, 1, 1), Transfer(0, 1, 8, 0, 2, 1)])])
    assert one_loop_a_pair(one, plain)(coll, machine.library.machine) is None


def test_a_holders_blocks_for_different_readers_use_its_four_cius():
    """The root's 31 blocks of a scatter sit at 31 subpage addresses (a buffer by reader), so
    its four CIUs (Sec. 2.1, by subpage address) push them four at a time: 8 accesses of 0.9 us,
    a ring:0 ride, then the reader's loop reads its cache (0.9 + 21.41 us). One CIU for all
    (every block at subpage 0, as the model had it) took 51.7 us: 31 accesses in a row."""
    machine, coll = collective(Kind.SCATTER, 8)
    compiled = compile_program(kind_program(Kind.SCATTER, 32, 8), target="ksr1",
                               algorithm="scatter=reads-poststore", file="scatter.phx")
    run = checked_run(compiled)
    assert run.problems == {0: []}
    params = machine.params
    floor_s = 8 * params.access_s + params.access_s + params.read_loop_s
    assert floor_s <= run.execution.collectives[0].time_s <= floor_s + 2 * params.rotation_s
    assert run.execution.collectives[0].time_s * 1e6 == pytest.approx(31.4, abs=0.1)
