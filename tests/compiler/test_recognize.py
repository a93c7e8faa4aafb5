"""Recognition of the collective from the byte matrix: alltoall vs sparse, one holder's
broadcast, an all-to-all among the processors that hold data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import HEADER, compile_text
from phalanx.compiler.groups import label
from phalanx.compiler.recognize import classify, recognize
from phalanx.runtime.simulate import simulate


def test_transpose_is_alltoall():
    c = compile_text(HEADER + "B = A\n").collectives[0]
    assert (c.kind, c.nprocs, c.block_bytes) == ("alltoall", 16, 2048)
    assert c.total_bytes == 16 * 15 * 2048 and c.participants == tuple(range(16))


def test_uneven_blocks_are_sparse():
    source = ("target ideal:4\nprocessors P(3)\narray A(10) of byte distribute BLOCK onto P\n"
              "array B(10) of byte distribute CYCLIC onto P\nB = A\n")
    c = compile_text(source).collectives[0]
    assert c.kind == "sparse" and c.matrix.tolist() == [[2, 1, 1], [1, 2, 1], [1, 0, 1]]


def test_same_distribution_moves_nothing_between_nodes():
    source = ("target ideal:4\nprocessors P(4)\narray A(8) of byte distribute BLOCK onto P\n"
              "array B(8) of byte distribute BLOCK onto P\nB = A\n")
    c = compile_text(source).collectives[0]
    assert c.kind == "sparse" and c.total_bytes == 0


def test_classify_edge_cases():
    assert classify(np.array([[5]])) == "sparse"  # one node: nothing to exchange
    assert classify(np.array([[0, 3], [3, 0]])) == "alltoall"
    assert classify(np.array([[0, 3], [4, 0]])) == "alltoallv"
    assert classify(np.array([[0, 3, 0], [0, 0, 0], [0, 0, 0]])) == "permutation"
    assert classify(np.array([[0, 3, 1], [0, 0, 0], [0, 1, 0]])) == "sparse"
    assert recognize(2, np.array([[1, 2], [2, 1]]), "A", "B", 9).index == 2


def one_holder(target: str, src_mapping: str) -> str:
    """`x(1)` on 64 processors (in BLOCKs: only processor 0 holds it; or on P(0)), replicated."""
    return (f"target {target}\nprocessors P(64)\narray x(1) of float64 {src_mapping}\n"
            "array y(1) of float64 replicated onto P\ny = x\n")


def test_one_holder_to_everyone_is_a_broadcast_from_the_holder():
    c = compile_text(one_holder("ideal:64", "distribute BLOCK onto P")).collectives[0]
    assert (c.kind, c.root, c.groups) == ("broadcast", 0, ())
    # Two holders are still an allgather.
    two = ("target ideal:64\nprocessors P(64)\narray x(2) of float64 distribute CYCLIC onto P\n"
           "array y(2) of float64 replicated onto P\ny = x\n")
    assert compile_text(two).collectives[0].kind == "allgather"


@pytest.mark.parametrize("target", ["ideal:64", "paragon:8x8", "torus:8x8"])
def test_the_one_holder_broadcast_runs_as_fast_as_one_declared_on_its_owner(target):
    """No cliff: within 1.2x of the same data declared on P(0) (issue 29); both verified."""
    times = []
    for mapping in ("distribute BLOCK onto P", "on P(0)"):
        (c,) = simulate(compile_text(one_holder(target, mapping))).collectives
        assert c.kind == "broadcast" and c.verified
        times.append(c.time_s)
    assert times[0] <= 1.2 * times[1]


def test_an_all_to_all_among_the_holders_is_an_all_to_all_in_one_group():
    # 6 rows in BLOCKs of 2 over 4 processors: processor 3 holds no row and no column.
    source = ("target ideal:4\nprocessors P(4)\n"
              "array A(6, 6) of complex128 distribute (BLOCK, *) onto P\n"
              "array B(6, 6) of complex128 distribute (*, BLOCK) onto P\nB = A\n")
    compiled = compile_text(source)
    (c,) = compiled.collectives
    assert (c.kind, c.groups, c.block_bytes) == ("alltoall", ((0, 1, 2),), 64)
    assert label(c) == "alltoall in 1 group of 3"
    assert compiled.schedules[0].algorithm == "direct"  # the all-to-all's, not `sparse:direct`
    # The all-to-all among the holders is one uneven exchange where the last holds less.
    uneven = compile_text(source.replace("6, 6", "5, 5")).collectives[0]
    assert (uneven.kind, uneven.groups) == ("alltoallv", ((0, 1, 2),))
    # Missing pairs among the holders leave it sparse.
    assert recognize(0, np.array([[1, 2, 0, 0], [2, 1, 2, 0], [0, 2, 1, 0], [0, 0, 0, 0]]),
                     "A", "B", 1).kind == "sparse"


def test_the_collective_remembered_at_recognition_is_the_one_its_op_gives_back(examples):
    """recognize-collectives hands collective_from_op the Collective it made each op of, so the
    16.8M-entry byte matrix of a 4096-node op is not read back into tuples: it must be the one
    the op's attributes give when read afresh."""
    from phalanx.compiler.ir.dialects import coll
    from phalanx.compiler.ir.transforms import recognize_collectives
    from phalanx.compiler.ir.transforms.recognize_collectives import collective_from_op

    seen = []
    for example in ("transpose.phx", "fft2d_iwarp.phx", "rowsum.phx", "summa.phx", "cyclic_to_block.phx",
                    "bcast_reduce.phx"):
        compiled = compile_text((examples / example).read_text(), cost="closed-form")  # recognition only
        ops = [op for op in compiled.stages["coll"].walk() if isinstance(op, coll.CollectiveOp)]
        remembered = [collective_from_op(op) for op in ops]
        recognize_collectives._FROM_OPS.clear()
        afresh = [collective_from_op(op) for op in ops]
        assert afresh == remembered and all(a is not r for a, r in zip(afresh, remembered)), example
        assert all((a.matrix == r.matrix).all() and a.block_bytes == r.block_bytes
                   for a, r in zip(afresh, remembered)), example
        seen += afresh
    kinds = {c.kind for c in seen}
    assert any(c.strided for c in seen) and any(c.groups for c in seen) and len(kinds) >= 4, kinds
    # cyclic_to_block.phx's CYCLIC(k) to BLOCK sends in rank order, transpose.phx's does not
    assert {c.sends_in_rank_order for c in seen} == {True, False}


def small_matrices(n: int) -> list[np.ndarray]:
    """Every 0/1/2-valued n x n matrix for n <= 2, every 7th for n = 3, random ones beyond."""
    if n <= 3:
        every = [np.array(v).reshape(n, n) for v in itertools.product((0, 1, 2), repeat=n * n)]
        return every[::7] if n == 3 else every
    rng = np.random.default_rng(n)
    return [rng.integers(0, 3, (n, n)) for _ in range(300)] + [np.full((n, n), 4),
                                                                np.full((n, n), 4) + np.eye(n, dtype=int)]


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_classify_and_block_bytes_on_small_matrices(n):
    """The kind, the block size and the complete exchange's block as the off-diagonal entries
    define them."""
    for m in small_matrices(n):
        off = m[~np.eye(n, dtype=bool)]
        sent = off[off > 0]
        want = int(sent[0]) if sent.size and (sent == sent[0]).all() else None
        assert recognize(0, m, "A", "B", 1).block_bytes == want, m
        complete = n > 1 and (off > 0).all() and (off == off[0]).all()
        assert recognize(0, m, "A", "B", 1).complete_block_bytes == (int(off[0]) if complete else None), m
        kind = classify(m)
        if n > 1 and (off > 0).all():
            assert kind == ("alltoall" if (off == off[0]).all() else "alltoallv"), m
        else:
            assert kind in ("sparse", "permutation"), m


def test_recognized_collectives_are_the_compile_s_without_lowering():
    """driver.recognized_collectives: the collectives compile_program recognizes, by index (no
    candidate listed nor lowered), and the front end's errors alike."""
    from phalanx.compiler.driver import compile_program, recognized_collectives
    from phalanx.grammar.diagnostics import PhalanxError

    source = HEADER + "B = A\nA = B\n"
    assert recognized_collectives(source) == compile_text(source).collectives
    assert [c.index for c in recognized_collectives(source)] == [0, 1]
    too_many = source.replace("target ideal:16", "target ideal:8")
    for front in (recognized_collectives, compile_program):
        with pytest.raises(PhalanxError) as info:
            front(too_many)
        assert ("processor arrangement 'P' has 16 processors but target 'ideal:8' has 8 nodes"
                in str(info.value))
