"""`cluster-chain` (targets/proteus/pipeline.py): a broadcast or reduce in pieces along one PP a
cluster, eager phases, each head copying its pieces to its cluster over the bus (a reduce's
combining its cluster's); its data checked, its time against the library's best, its pieces and
its refusals."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import checked_run
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s
from phalanx.targets.proteus.pipeline import piece_bytes


def broadcast(size: int, root: int = 0, spec: str = "proteus", algorithm: str = "cluster-chain"):
    n = resolve(spec).nnodes
    source = (f"processors P({n})\narray S({size}) of byte on P({root})\n"
              f"array R({size}) of byte replicated onto P\nR = S\n")
    return compile_program(source, target=spec, algorithm=f"broadcast={algorithm}", file="<broadcast>")


def reduce(size: int, spec: str = "proteus", algorithm: str = "cluster-chain"):
    source = kind_program(Kind.REDUCE, resolve(spec).nnodes, size)
    return compile_program(source, target=spec, algorithm=f"reduce={algorithm}", file="<reduce>")


@pytest.mark.parametrize("spec, size, root", [("proteus", 1 << 20, 0), ("proteus", 70000, 13),
                                              ("proteus", 8, 0), ("proteus:64", 65536, 40),
                                              ("proteus:groups=1,pps=2", 5000, 3)])
def test_every_pp_gets_the_root_s_block(spec, size, root):
    compiled = broadcast(size, root, spec)
    run = checked_run(compiled)
    assert not any(run.problems.values())
    assert run.execution.collectives[0].time_s > 0


@pytest.mark.parametrize("spec, size", [("proteus", 1 << 20), ("proteus", 5000), ("proteus:64", 65536),
                                        ("proteus:groups=1,pps=2", 40000)])
def test_the_root_gets_every_pp_s_partial_combined(spec, size):
    run = checked_run(reduce(size, spec))
    assert not any(run.problems.values())


@pytest.mark.parametrize("kind, chain_ms, library, library_ms", [
    ("broadcast", 94.750, "cut-scatter-doubling", 150.500), ("reduce", 104.428, "halving-direct", 155.540)])
def test_a_megabyte_goes_in_8_kb_pieces_faster_than_the_library_s(kind, chain_ms, library, library_ms):
    """1 MB on 8 clusters: 128 pieces of 8 KB, three a phase; the library's best takes half as
    long again (its 64 KB cycles run at a quarter of the DP); the dual-port memories' bound 56.1."""
    machine = resolve("proteus")
    assert piece_bytes(1 << 20, machine.topo, machine.params) == 8192
    coll = (broadcast(1 << 20) if kind == "broadcast" else reduce(1 << 20)).collectives[0]
    chain_s = simulated_time_s(machine, coll, "cluster-chain")
    assert chain_s == pytest.approx(chain_ms * 1e-3, rel=1e-4)
    assert simulated_time_s(machine, coll, library) == pytest.approx(library_ms * 1e-3, rel=1e-4)
    assert chain_s > machine.binding_bound(coll)[0] == pytest.approx(56.1e-3, rel=1e-3)


def test_pieces_are_powers_of_two_from_1_kb_to_a_packet():
    machine = resolve("proteus")
    topo, params = machine.topo, machine.params
    assert piece_bytes(2048, topo, params) == 1024
    assert piece_bytes(300, topo, params) == 300
    assert piece_bytes(1 << 30, topo, params) == 65536


def test_a_broadcast_to_some_pps_is_refused_with_the_reason():
    source = ("processors P(32)\nprocessors Q(8)\narray S(700) of byte on P(0)\n"
              "array R(700) of byte replicated onto Q\nR = S\n")
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="proteus", algorithm="broadcast=cluster-chain", file="<b>")
    assert "cannot lower the broadcast of line 5" in str(err.value)
    assert "7 of the 31 other PPs receive the root's block" in str(err.value)


def test_broadcasts_in_groups_are_left_to_the_library():
    """A broadcast along each row of a 4 x 4 grid of PPs: each group's own collective numbers its
    4 PPs from 0, which the chain over the machine's clusters cannot serve; auto lowers it and
    asking for the chain says why."""
    source = ("processors Q(4, 4)\narray A(64, 64) of float64 distribute (BLOCK, BLOCK) onto Q\n"
              "array AK(64, 4, 16) of float64 distribute (BLOCK, BLOCK, *) onto Q\n"
              "AK = spread(A(:, 0:15), dim=2, ncopies=4)\n")
    compiled = compile_program(source, target="proteus:groups=1", file="<spread>")
    assert compiled.schedules[0].algorithm != "cluster-chain"
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="proteus:groups=1", algorithm="broadcast=cluster-chain",
                        file="<spread>")
    assert "broadcast of line 4 on proteus:groups=1,links=1: the broadcast spans 4 of the machine's 32 PPs" \
        in str(err.value)
