"""Communication sets against a brute-force element-by-element owner oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compile_text
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.distribution import local_index_map, owned_indices, owned_sections, owner_map
from phalanx.compiler.semantics import DimDist


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


@pytest.mark.parametrize("dist", ["BLOCK, *", "*, CYCLIC", "CYCLIC(3), BLOCK(4)", "BLOCK, CYCLIC(2)"])
def test_owned_sections_are_what_the_owner_maps_give(dist):
    """owned_sections works from the owner's coordinate alone (O(local size)); it must give
    exactly the indices whose owner-map entry is that coordinate, on every rank."""
    grid = "P(6)" if "*" in dist else "P(2, 3)"
    compiled = compile_text(f"processors {grid}\narray A(13, 11) of int32 distribute "
                            f"({dist}) onto P\narray B(13, 11) of int32 distribute ({dist}) onto P\n"
                            "B = A\n", target="ideal:6")
    array = compiled.communications[0].src
    for rank in range(6):
        coords = array.onto.coords(rank)
        for d, got in enumerate(owned_indices(array, rank)):
            pd = array.proc_dims[d]
            owners = owner_map(array.dist[d], 13 if d == 0 else 11, array.onto.shape[pd]) \
                if pd is not None else None
            want = np.arange(13 if d == 0 else 11)
            if owners is not None:
                want = want[owners == coords[pd]]
            assert got.tolist() == want.tolist()
        sections = owned_sections(array, rank)
        assert any(isinstance(s, slice) for s in sections) or "CYCLIC(" in dist


def element_owner(array, index) -> int | None:
    """Linear rank owning one element of a distributed array (oracle)."""
    coords = []
    for d, (dd, i) in enumerate(zip(array.dist, index)):
        pd = array.proc_dims[d]
        if pd is not None:
            coords.append(oracle_owner(dd, array.shape[d], array.onto.shape[pd], i))
    return array.onto.rank(tuple(coords))


def brute_force(stmt) -> np.ndarray:
    n = max(stmt.src.onto.count, stmt.dst.onto.count)
    m = np.zeros((n, n), dtype=np.int64)
    for index in itertools.product(*(range(e) for e in stmt.dst.shape)):
        src_index = [0] * len(index)
        for d, i in enumerate(index):
            src_index[stmt.perm[d]] = (i + stmt.shift[d]) % stmt.dst.shape[d]
        dst = stmt.dst
        receivers = ([dst.owner] if dst.mapping == "single" else
                     range(dst.onto.count) if dst.mapping == "replicated" else
                     [element_owner(dst, index)])
        for q in receivers:
            src = stmt.src
            p = (q % src.onto.count if src.mapping == "replicated" else src.owner if src.mapping == "single"
                 else element_owner(src, src_index))
            m[p, q] += dst.itemsize
    return m


DISTS = ["BLOCK", "CYCLIC", "CYCLIC(3)", "BLOCKK"]
GRIDS = [(1,), (3,), (4,), (6,), (2, 3), (4, 2), (2, 2, 2)]


def random_mapping(rng, shape, grid_name, grid):
    """A random mapping of an array of `shape` onto the arrangement `grid`."""
    roll = rng.random()
    if roll < 0.1:
        return f"replicated onto {grid_name}"
    if roll < 0.2:
        return f"on {grid_name}({', '.join(str(int(rng.integers(0, g))) for g in grid)})"
    if len(grid) > len(shape):
        return f"replicated onto {grid_name}"
    dims = sorted(rng.choice(len(shape), size=len(grid), replace=False))
    entries, g = [], 0
    for d in range(len(shape)):
        if d in dims:
            kind = DISTS[int(rng.integers(0, len(DISTS)))]
            if kind == "BLOCKK":
                kind = f"BLOCK({-(-shape[d] // grid[g]) + int(rng.integers(0, 3))})"
            entries.append(kind)
            g += 1
        else:
            entries.append("*")
    return f"distribute ({', '.join(entries)}) onto {grid_name}"


def random_programs(count: int):
    rng = np.random.default_rng(7)
    for _ in range(count):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(x) for x in rng.integers(1, 9 if rank < 3 else 6, size=rank))
        op = ["copy", "transpose", "cshift"][int(rng.integers(0, 3))] if rank == 2 else \
            ["copy", "cshift"][int(rng.integers(0, 2))]
        src_shape = tuple(reversed(shape)) if op == "transpose" else shape
        g1, g2 = GRIDS[int(rng.integers(0, len(GRIDS)))], GRIDS[int(rng.integers(0, len(GRIDS)))]
        grid = lambda g: ", ".join(map(str, g))  # noqa: E731
        rhs = {"copy": "A", "transpose": "transpose(A)",
               "cshift": f"cshift(A, {int(rng.integers(-7, 8))}, dim={int(rng.integers(1, rank + 1))})"}[op]
        yield (f"target ideal:16\nprocessors P({grid(g1)})\nprocessors Q({grid(g2)})\n"
               f"array A({grid(src_shape)}) of int32 {random_mapping(rng, src_shape, 'P', g1)}\n"
               f"array B({grid(shape)}) of int32 {random_mapping(rng, shape, 'Q', g2)}\n"
               f"B = {rhs}\n")


@pytest.mark.parametrize("source", list(random_programs(120)))
def test_byte_matrix_matches_oracle(source):
    compiled = compile_text(source)
    stmt = compiled.communications[0]
    commset = CommSet(stmt)
    assert (commset.byte_matrix == brute_force(stmt)).all(), source
    for p in range(commset.nprocs):  # the sections are exactly the counted elements
        for q in range(commset.nprocs):
            assert commset.section(p, q).count * 4 == commset.byte_matrix[p, q]


@pytest.mark.parametrize("source", list(random_programs(40))[::4])
def test_random_programs_run_and_verify(source):
    from phalanx.runtime.simulate import simulate

    assert simulate(compile_text(source), seed=5).verified


def test_runs_are_maximal():
    compiled = compile_text("target ideal:4\nprocessors P(3)\narray A(12, 4) of byte distribute "
                            "(CYCLIC(2), *) onto P\narray B(12, 4) of byte distribute (BLOCK, *) "
                            "onto P\nB = A\n")
    section = CommSet(compiled.communications[0]).section(0, 0)
    assert section.runs() == (((0, 2),), ((0, 4),))
