"""Pipelined relays in eager phases (eager.py): the broadcasts, the allreduce and the reduce verify
on torus:4x4 with every phase eager, the spanning trees' segment count stays within its declared
gap of the simulator, and the preconditions refuse with the reason (issue 27)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library.eager import eager_of, eager_segments, eager_tree_s, heights, tallest_first
from phalanx.compiler.library.halvingfanin import fan_in_halved_rounds
from phalanx.compiler.library.shallowtrees import shallow_trees
from phalanx.compiler.library.spanning import TREES, depths
from phalanx.compiler.schedule import Phase, SyncMode, Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s


def forced(algorithm: str, target: str = "torus:4x4", size: int = 4096):
    return compile_program(kind_program("broadcast", 16, size), target=target,
                           algorithm=f"broadcast={algorithm}", cost="closed-form")


@pytest.mark.parametrize("algorithm", ["eager-spanning-trees", "eager-turned-cut-scatter-doubling",
                                       "eager-interleaved-cut-scatter-doubling"])
def test_eager_broadcasts_verify_on_a_torus(algorithm):
    compiled = forced(algorithm)
    schedule = compiled.schedules[0]
    assert all(p.sync == SyncMode.EAGER for p in schedule.phases)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_eager_cut_halving_allreduce_verifies_on_a_torus():
    compiled = compile_program(kind_program("allreduce", 16, 256), target="torus:4x4",
                               algorithm="allreduce=eager-cut-halving", cost="closed-form")
    assert all(p.sync == SyncMode.EAGER for p in compiled.schedules[0].phases)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_eager_interleaved_cut_halving_allreduce_verifies_and_pairs_neighbours_first():
    """torus:4x4 verifies; torus:8x8 at 2 KB (k = 3, masks 1, 8, 2 then 16, 4, 32): 332.7 us
    against node order's 339.25 (its 2-apart halving round carries 256 B, not 512)."""
    small = compile_program(kind_program("allreduce", 16, 256), target="torus:4x4",
                            algorithm="allreduce=eager-interleaved-cut-halving", cost="closed-form")
    assert all(p.sync == SyncMode.EAGER for p in small.schedules[0].phases)
    result = simulate(small).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s
    times = {}
    for algorithm in ("eager-interleaved-cut-halving", "eager-cut-halving"):
        compiled = compile_program(kind_program("allreduce", 64, 2048), target="torus:8x8",
                                   algorithm=f"allreduce={algorithm}", cost="closed-form")
        run = simulate(compiled).collectives[0]
        assert run.verified, run.problems
        times[algorithm] = run.time_s
    assert times["eager-interleaved-cut-halving"] == pytest.approx(332.7e-6, rel=1e-6)
    assert times["eager-cut-halving"] == pytest.approx(339.25e-6, rel=1e-6)


def reduce_on(target: str, algorithm: str, size: int):
    nodes = resolve(target).nnodes
    return compile_program(kind_program("reduce", nodes, size), target=target,
                           algorithm=f"reduce={algorithm}", cost="closed-form")


def test_eager_halving_fan_in_reduce_verifies_on_a_torus():
    compiled = reduce_on("torus:4x4", "eager-halving-fan-in", 2048)
    assert all(p.sync == SyncMode.EAGER for p in compiled.schedules[0].phases)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_eager_halving_fan_in_starts_each_round_while_the_last_message_streams():
    """torus:8x8, 2 KB (issue 27's case): k = 3 with the fan-ins over two links (4 in the
    one-port form, as halving-fan-in), 197.45 us against the local phases' 246.9 (k = 4; 239.9
    at k = 3): a member's next message no longer waits for its previous one to be delivered
    (209.6 us with the first round in one message, 214.55 with the collectors in the root's row
    besides)."""
    compiled = reduce_on("torus:8x8", "eager-halving-fan-in", 2048)
    machine = compiled.target.library.machine
    coll = compiled.collectives[0]
    assert fan_in_halved_rounds(coll, machine, 64, links=2) == 3
    assert fan_in_halved_rounds(coll, machine, 64) == 4
    eager_run = simulate(compiled).collectives[0]
    local_run = simulate(reduce_on("torus:8x8", "halving-fan-in", 2048)).collectives[0]
    assert eager_run.verified and local_run.verified
    assert eager_run.time_s == pytest.approx(197.45e-6, rel=1e-6)
    assert local_run.time_s == pytest.approx(246.9e-6, rel=1e-6)


def test_eager_spanning_trees_beat_the_local_ones_within_the_declared_gap():
    """16 KB on torus:4x4: eager phases take less than the local spanning trees, and the
    simulator stays between 0.75 and 1.5 times the segment count's model T (eager.py's declared
    gap; measured 0.80 here, the trees of depth 5, their sends tallest first)."""
    size = 16384
    compiled = forced("eager-spanning-trees", size=size)
    early = simulate(compiled).collectives[0]
    local = simulate(forced("spanning-trees", size=size)).collectives[0]
    assert early.verified and early.time_s < local.time_s
    machine = compiled.target.library.machine
    depth = max(depths(shallow_trees(4, 0)[0], 0).values())
    count = eager_segments(machine, size // TREES, depth)
    model_s = eager_tree_s(machine, size // TREES, depth, count)
    assert 0.75 * model_s <= early.time_s <= 1.5 * model_s
    assert all(model_s <= eager_tree_s(machine, size // TREES, depth, c) for c in range(1, 64))


def test_preconditions_refuse_with_the_reason():
    with pytest.raises(PhalanxError) as err:
        forced("eager-spanning-trees", target="paragon:4x4")
    assert ("algorithm 'eager-spanning-trees' cannot lower the broadcast of line 4 on paragon:4x4: "
            "a node of this machine streams one message at a time") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        reduce_on("paragon:4x4", "eager-halving-fan-in", 2048)
    assert ("algorithm 'eager-halving-fan-in' cannot lower the reduce of line 4 on paragon:4x4: "
            "a node of this machine streams one message at a time") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        forced("eager-interleaved-cut-scatter-doubling", target="ideal:16")
    assert "unknown algorithm 'eager-interleaved-cut-scatter-doubling' for a broadcast on target " \
           "'ideal:16'" in str(err.value)


def test_only_local_phases_turn_eager():
    t = Transfer(0, 1, 8, 0, 1)
    with pytest.raises(ValueError, match="eager phases replace local ones, not barrier"):
        eager_of([Phase.of([t], SyncMode.BARRIER)])


def test_heights_count_the_levels_below_a_node():
    tree = [(0, 1), (1, 2), (2, 3), (0, 4)]
    assert heights(tree, 0) == {0: 3, 1: 2, 2: 1, 3: 0, 4: 0}


def test_a_node_starts_the_message_to_its_tallest_child_first():
    """Two quarters (trees) of 100 bytes: node 0's transfer to 4 (height 0 in tree 0) goes after
    its transfer to 1 (height 1 in tree 1), node 2's stays where it is; ties keep their order."""
    tall = [{0: 2, 1: 0, 4: 0, 3: 0}, {0: 2, 1: 1, 2: 0, 3: 0}]
    quarters = [(0, 100), (100, 100)]
    sends = [Transfer(0, 4, 10, 0, 4, offset=0), Transfer(2, 3, 10, 0, 3, offset=110),
             Transfer(0, 1, 10, 0, 1, offset=100), Transfer(0, 3, 10, 0, 3, offset=20)]
    assert [(t.src, t.dst) for t in tallest_first(sends, tall, quarters)] == \
        [(0, 1), (0, 4), (0, 3), (2, 3)]


def test_the_tallest_first_order_is_faster_on_8x8_at_64_kb():
    """torus:8x8, 64 KB, simulated: the trees' order took 2.128 ms, tallest first 2.051."""
    spec = "torus:8x8"
    coll = compile_program(kind_program("broadcast", 64, 65536), target=spec,
                           algorithm="broadcast=binomial").collectives[0]
    assert simulated_time_s(resolve(spec), coll, "eager-spanning-trees") < 2.06e-3


@pytest.mark.parametrize("target", ["torus:2x4", "torus:4x4", "iwarp:4x4"])
@pytest.mark.parametrize("size", [128, 2048, 16384])
def test_eager_quad_cut_halving_verifies_on_tori(target, size):
    nodes = resolve(target).nnodes
    compiled = compile_program(kind_program("allreduce", nodes, size), target=target,
                               algorithm="allreduce=eager-quad-cut-halving", cost="closed-form")
    assert all(p.sync == SyncMode.EAGER for p in compiled.schedules[0].phases)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_eager_quad_cut_halving_sends_three_quarters_first_and_beats_one_mask_a_step():
    """torus:8x8, 2 KB (k = 3 bits): the first phase sends each node's row neighbour, column
    neighbour and diagonal one 512 B each (three start-ups, their wires together), and the
    whole takes 310.0 us against eager-interleaved-cut-halving's 332.7 (issue 27, branch r2ar;
    308.7 before a node's copies held its processor)."""
    compiled = compile_program(kind_program("allreduce", 64, 2048), target="torus:8x8",
                               algorithm="allreduce=eager-quad-cut-halving", cost="closed-form")
    first = compiled.schedules[0].phases[0]
    partners = {t.dst for t in first.sends if t.src == 0 and t.dst != 0}
    assert partners == {1, 8, 9}
    assert {sum(t.nbytes for t in first.sends if t.src == 0 and t.dst == w and t.origin == 0)
            for w in partners} == {512}
    run = simulate(compiled).collectives[0]
    assert run.verified, run.problems
    assert run.time_s == pytest.approx(310.0e-6, rel=1e-6)


@pytest.mark.parametrize("target, size", [(target, size) for target in ("torus:2x4", "torus:4x4", "iwarp:4x4")
                                           for size in (128, 2048, 16384)]
                         + [("torus:4x8", 2048), ("torus:4x8", 16384)])
def test_eager_classed_quad_cut_halving_verifies_on_tori(target, size):
    nodes = resolve(target).nnodes
    compiled = compile_program(kind_program("allreduce", nodes, size), target=target,
                               algorithm="allreduce=eager-classed-quad-cut-halving", cost="closed-form")
    assert all(p.sync == SyncMode.EAGER for p in compiled.schedules[0].phases)
    result = simulate(compiled).collectives[0]
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def test_ring_labels_pair_neighbours_then_nodes_two_apart():
    """Bit 0 of a label pairs neighbours; on a ring of 8 every higher bit pairs nodes 2 apart,
    and the pairs among the nodes of one parity take disjoint arcs (no link shared)."""
    from phalanx.compiler.library.interleaved import ring_labels
    at = ring_labels(8)
    assert at == [0, 1, 2, 3, 6, 7, 4, 5]
    assert sorted(at) == list(range(8))
    for bit in (1, 2, 4):
        pairs = {tuple(sorted((at[label], at[label ^ bit]))) for label in range(8)}
        gaps = {min(b - a, 8 - (b - a)) for a, b in pairs}
        assert gaps == ({1} if bit == 1 else {2})
        for parity in (0, 1) if bit > 1 else ():
            arcs = [frozenset(range(a, b)) if b - a == 2 else frozenset({b, (b + 1) % 8})
                    for a, b in pairs if a % 2 == parity]
            assert len(arcs) == 2 and not arcs[0] & arcs[1]
    assert ring_labels(4) == [0, 1, 2, 3] and ring_labels(2) == [0, 1]


def test_eager_classed_quad_cut_halving_pairs_one_class_a_row_and_beats_the_quad():
    """torus:8x8, 2 KB (k = 3 bits): after the radix-4 step the nodes of even x + y send along
    their row (2 apart) and the others down their column, so no two routes of a step share a
    link, and the whole takes 295.4 us against eager-quad-cut-halving's 310.0 (issue 27,
    branch tar3; 294.1 before a node's copies held its processor)."""
    compiled = compile_program(kind_program("allreduce", 64, 2048), target="torus:8x8",
                               algorithm="allreduce=eager-classed-quad-cut-halving", cost="closed-form")
    phases = compiled.schedules[0].phases
    first = {t.dst for t in phases[0].sends if t.src == 0 and t.dst != 0}
    assert first == {1, 8, 9}
    second = {(t.src, t.dst) for t in phases[1].sends if t.src != t.dst}
    for src, dst in second:
        same_row = src // 8 == dst // 8
        assert same_row == ((src // 8 + src % 8) % 2 == 0)
        gap = abs(src % 8 - dst % 8) if same_row else abs(src // 8 - dst // 8)
        assert min(gap, 8 - gap) == 2
    run = simulate(compiled).collectives[0]
    assert run.verified, run.problems
    assert run.time_s == pytest.approx(295.4e-6, rel=1e-6)
