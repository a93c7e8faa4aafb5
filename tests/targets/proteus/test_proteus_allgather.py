"""`cluster-allgather` (targets/proteus/allgather.py): each PP's block to its place-mate in every
other cluster, one packet a cluster pair in the group exchange's cycle order, then copied to the
cluster's other PPs over the bus; its data checked, its time against the library's best, its
phases and its refusal."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import checked_run
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.proteus.allgather import GAP
from phalanx.targets.proteus.exchange import group_slots


def allgather(size: int, spec: str = "proteus"):
    source = kind_program(Kind.ALLGATHER, resolve(spec).nnodes, size)
    return compile_program(source, target=spec, algorithm="allgather=cluster-allgather", file="<allgather>")


@pytest.mark.parametrize("spec, size", [("proteus", 2048), ("proteus", 8), ("proteus:64", 2048),
                                        ("proteus:groups=1,pps=2", 5000)])
def test_every_pp_gets_every_block(spec, size):
    run = checked_run(allgather(size, spec))
    assert not any(run.problems.values())
    assert run.execution.collectives[0].time_s > 0


def test_each_block_crosses_between_two_clusters_once():
    """8 clusters of 4 PPs: 7 plan cycles, each packet four blocks (one per place), each block
    copied to 3 mates GAP phases after its packet."""
    machine = resolve("proteus")
    schedule = allgather(2048).schedules[0]
    pps = machine.topo.pps
    crossing = [(k, t) for k, p in enumerate(schedule.phases) for t in p.sends
                if t.src // pps != t.dst // pps]
    assert len(crossing) == 32 * 7 and len(group_slots(machine.topo)) == 7  # a PP's block to 7 clusters
    assert {t.src % pps == t.dst % pps for _, t in crossing} == {True}
    sent = {(t.origin, t.dst): k for k, t in crossing}
    copies = [(k, t) for k, p in enumerate(schedule.phases) for t in p.sends
              if t.src // pps == t.dst // pps and t.origin // pps != t.src // pps]
    assert len(copies) == 32 * 7 * 3  # each crossing block to the 3 other PPs of its cluster
    assert all(k == sent[(t.origin, t.src)] + GAP for k, t in copies)


@pytest.mark.parametrize("size, ours_ms, library, library_ms", [
    (2048, 4.859375, "far-first-doubling", 7.284375), (131072, 242.325, "ring", 290.3)])
def test_it_is_faster_than_the_library_s_best(size, ours_ms, library, library_ms):
    """The library forwards blocks through clusters between (doubling, ring); here each crosses
    once. Against the dual-port memories' bound: 3.6 ms at 2 KB (0.74), 224.1 ms at 128 KB."""
    machine = resolve("proteus")
    coll = allgather(size).collectives[0]
    ours_s = simulated_time_s(machine, coll, "cluster-allgather")
    assert ours_s == pytest.approx(ours_ms * 1e-3, rel=1e-4)
    assert simulated_time_s(machine, coll, library) == pytest.approx(library_ms * 1e-3, rel=1e-3)
    assert ours_s > machine.binding_bound(coll)[0]


@pytest.mark.parametrize("kind, statement", [("allgather", "R = S"), ("allreduce", "s = sum(S)")])
def test_a_collective_of_some_pps_is_refused_with_the_reason(kind, statement):
    """cluster-allgather and cluster-allreduce serve the whole machine only."""
    source = ("processors P(32)\nprocessors Q(8)\narray S(64) of float64 distribute (BLOCK) onto Q\n"
              "array R(64) of float64 replicated onto Q\narray s(1) of float64 replicated onto Q\n"
              f"{statement}\n")
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="proteus", algorithm=f"{kind}=cluster-{kind}", file="<g>")
    assert f"cannot lower the {kind} of line 6 on proteus:groups=1,links=1: the {kind} spans " \
        "8 of the machine's 32 PPs" in str(err.value)
