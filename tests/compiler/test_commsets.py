"""Communication sets against a brute-force element-by-element owner oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compile_text
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_index_map, owner_map
from phalanx.compiler.semantics import DimDist

DISTS = ["BLOCK", "CYCLIC", "CYCLIC(3)", "BLOCK(5)"]


def oracle_owner(dd: DimDist, extent: int, nprocs: int, i: int) -> int:
    """Owner straight from the HPF definitions, one element at a time."""
    if dd.kind == "BLOCK":
        b = dd.block or -(-extent // nprocs)
        return i // b
    k = dd.block or 1
    return (i // k) % nprocs


@pytest.mark.parametrize("dd", [DimDist("BLOCK"), DimDist("BLOCK", 7), DimDist("CYCLIC", 1),
                                DimDist("CYCLIC", 4)])
def test_owner_and_local_maps(dd):
    extent, nprocs = 50, 6
    owners = owner_map(dd, extent, nprocs)
    local = local_index_map(dd, extent, nprocs)
    assert [int(o) for o in owners] == [oracle_owner(dd, extent, nprocs, i) for i in range(extent)]
    for p in range(nprocs):  # local indices number each owner's elements 0, 1, 2, ...
        mine = local[owners == p]
        assert list(mine) == list(range(len(mine)))


def program(n0, n1, src, dst, transpose, procs_src, procs_dst):
    src_shape = (n1, n0) if transpose else (n0, n1)
    rhs = "transpose(A)" if transpose else "A"
    return (f"target ideal:16\nprocessors P({procs_src})\nprocessors Q({procs_dst})\n"
            f"array A({src_shape[0]}, {src_shape[1]}) of int32 distribute {src} onto P\n"
            f"array B({n0}, {n1}) of int32 distribute {dst} onto Q\nB = {rhs}\n")


def brute_force(stmt) -> np.ndarray:
    n = max(stmt.src.onto.count, stmt.dst.onto.count)
    m = np.zeros((n, n), dtype=np.int64)
    for index in itertools.product(*(range(e) for e in stmt.dst.shape)):
        src_index = tuple(index[stmt.perm.index(d)] for d in range(len(index)))
        src_dim, dst_dim = stmt.src.distributed_dim, stmt.dst.distributed_dim
        p = oracle_owner(stmt.src.dist[src_dim], stmt.src.shape[src_dim], stmt.src.onto.count,
                         src_index[src_dim])
        q = oracle_owner(stmt.dst.dist[dst_dim], stmt.dst.shape[dst_dim], stmt.dst.onto.count,
                         index[dst_dim])
        m[p, q] += stmt.dst.itemsize
    return m


def random_cases(count: int):
    rng = np.random.default_rng(7)
    for _ in range(count):
        n0, n1 = (int(x) for x in rng.integers(1, 23, size=2))
        procs_src, procs_dst = (int(x) for x in rng.integers(1, 7, size=2))
        dists = []
        for procs, extents in ((procs_src, (n0, n1)), (procs_dst, (n0, n1))):
            dim = int(rng.integers(0, 2))
            kind = DISTS[int(rng.integers(0, len(DISTS)))]
            if kind == "BLOCK(5)":
                kind = f"BLOCK({-(-extents[dim] // procs) + int(rng.integers(0, 3))})"
            dists.append("(" + ", ".join(kind if d == dim else "*" for d in range(2)) + ")")
        transpose = bool(rng.integers(0, 2))
        yield n0, n1, dists[0], dists[1], transpose, procs_src, procs_dst


@pytest.mark.parametrize("case", list(random_cases(60)))
def test_byte_matrix_matches_oracle(case):
    n0, n1, src, dst, transpose, ps, pd = case
    if transpose:  # the source's distribution is written in its own (transposed) index space
        src = "(" + ", ".join(reversed(src[1:-1].split(", "))) + ")"
    compiled = compile_text(program(n0, n1, src, dst, transpose, ps, pd))
    stmt = compiled.assignments[0]
    commset = CommSet(stmt)
    assert (commset.byte_matrix == brute_force(stmt)).all()
    for p in range(commset.nprocs):  # the sections tile the destination exactly
        for q in range(commset.nprocs):
            assert commset.section(p, q).count * 4 == commset.byte_matrix[p, q]


def test_runs_are_maximal():
    compiled = compile_text(program(12, 4, "(CYCLIC(2), *)", "(BLOCK, *)", False, 3, 3))
    section = CommSet(compiled.assignments[0]).section(0, 0)
    assert section.runs() == (((0, 2),), ((0, 4),))
