"""crossed-halving (compiler/library/crossedhalving.py): the rings' halving steps, the data on
small tori, the preconditions, and the step structure (issue 27, branch tallred)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.library.crossedhalving import (
    CrossedGrid,
    dimension_steps,
    halved_pairs,
    halving_steps,
    ring_halving,
)
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

ELEMENT = 8  # kind_program's partials are float64


def ring_distance(a: int, b: int, length: int) -> int:
    return min((a - b) % length, (b - a) % length)


@pytest.mark.parametrize("length", [2, 4, 8, 16, 32])
def test_a_rings_halving_pairs_equal_holdings_of_disjoint_groups_and_ends_one_segment_each(length: int):
    """Each step pairs positions that hold the same segments, reduced over disjoint groups, and
    splits them; after lg L steps every position holds one segment reduced over the whole ring.
    The first two steps pair neighbours."""
    steps = ring_halving(list(range(length)), list(range(length)))
    assert len(steps) == length.bit_length() - 1
    holds = {v: frozenset(range(length)) for v in range(length)}
    group = {v: frozenset([v]) for v in range(length)}
    for k, (partners, keeps) in enumerate(steps):
        assert sorted(partners) == list(range(length))
        for v, w in partners.items():
            assert partners[w] == v and holds[v] == holds[w] and not group[v] & group[w]
            assert keeps[v] | keeps[w] == holds[v] and not keeps[v] & keeps[w]
            assert len(keeps[v]) == len(holds[v]) // 2
            if k < 2:
                assert ring_distance(v, w, length) == 1
        holds = dict(keeps)
        group = {v: group[v] | group[partners[v]] for v in range(length)}
    assert all(group[v] == frozenset(range(length)) and len(holds[v]) == 1 for v in range(length))
    ends = dimension_steps(length)
    assert all(ends[-1][1][v] == frozenset([v]) for v in range(length)) if ends else length == 1


def test_eight_positions_pair_3_apart_in_the_third_step():
    partners, _ = dimension_steps(8)[2]
    assert {ring_distance(v, w, 8) for v, w in partners.items()} == {3}


@pytest.mark.parametrize("spec, n", [("torus:4x4", 16), ("torus:2x4", 8), ("iwarp:4x4", 16),
                                     ("torus:2x2", 4), ("torus:4x8", 32)])
@pytest.mark.parametrize("kind", ["allreduce", "reduce"])
def test_the_data_arrives(spec: str, n: int, kind: str):
    compiled = compile_program(kind_program(kind, n, 4 * n * ELEMENT * 3), target=spec,
                               algorithm=f"{kind}=crossed-halving")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


@pytest.mark.parametrize("spec, n, root", [("torus:4x4", 16, 6), ("torus:2x4", 8, 5)])
def test_the_reduce_arrives_at_a_root_off_the_corner(spec: str, n: int, root: int):
    source = kind_program("reduce", n, 4 * n * ELEMENT * 2).replace("on P(0)", f"on P({root})")
    compiled = compile_program(source, target=spec, algorithm="reduce=crossed-halving")
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems


def test_the_allreduce_with_its_last_step_by_recursive_doubling_arrives():
    """torus:4x4 at 2 KB: a member's piece after the halving (128 B) streams in less than a
    start-up, so the last of the four pairs of steps exchanges instead."""
    compiled = compile_program(kind_program("allreduce", 16, 2048), target="torus:4x4",
                               algorithm="allreduce=crossed-halving")
    coll, machine = compiled.collectives[0], compiled.target.library.machine
    g = CrossedGrid(coll, machine)
    assert (len(halving_steps(g)), halved_pairs(g)) == (4, 3)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems


def test_preconditions_refuse_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allreduce", 12, 12 * 4 * ELEMENT), target="torus:3x4",
                        algorithm="allreduce=crossed-halving")
    assert ("algorithm 'crossed-halving' cannot lower the allreduce of line 4 on torus:3x4: the "
            "grid's sides must be powers of two of at least 2, not 3 x 4") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allreduce", 16, 256), target="torus:4x4",
                        algorithm="allreduce=crossed-halving")
    assert "a partial of 32 elements is smaller than its 64 units (four per node)" in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("reduce", 16, 4096), target="paragon:4x4",
                        algorithm="reduce=crossed-halving")
    assert "streams one message at a time" in str(err.value)


def test_each_step_sends_one_message_across_and_one_down():
    """On a square grid every step's two halvings go in different dimensions: a node drives
    one link of its row and one of its column, and takes one from each."""
    machine = resolve("torus:8x8")
    (coll,) = recognized_collectives(kind_program("allreduce", 64, 16384), target="torus:8x8")
    g = CrossedGrid(coll, machine.library.machine)
    assert [{a[1], b[1]} for a, b in halving_steps(g)] == [{0, 1}] * 6
    sizes = []
    for phase in machine.schedule_for(coll, "crossed-halving").phases[:12]:
        out = {}
        for t in phase.sends:
            if t.src != t.dst:
                out.setdefault((t.src, t.dst), set()).add((t.offset, t.nbytes))
        assert {src for src, _ in out} == set(range(64))  # one message (in parts) each
        sizes.append(max(sum(b for _, b in pieces) for pieces in out.values()))
    # 4 KB, 2 KB, ..., 256 B a half in the halving; the last pair exchanges 256 B
    assert sizes == [4096, 4096, 2048, 2048, 1024, 1024, 512, 512, 256, 256, 256, 256]


def test_the_16_kb_allreduce_and_reduce_on_the_8x8_torus():
    """The figures of docs/efficiency.md (branch tallred; the allreduce 798.6 us while copies
    held no processor, 927.1 with each node's whole partial copied, 805.0 with only its kept
    units'): below bidirectional-rings' 899.6 and 596.15 us."""
    machine = resolve("torus:8x8")
    times = {}
    for kind in ("allreduce", "reduce"):
        (coll,) = recognized_collectives(kind_program(kind, 64, 16384), target="torus:8x8")
        times[kind] = simulated_time_s(machine, coll, "crossed-halving")
    assert times["allreduce"] == pytest.approx(805.0e-6, rel=1e-6)
    assert times["reduce"] == pytest.approx(553.55e-6, rel=1e-6)
