"""Collectives in groups: one collective per group, run in every group at once.

A statement whose byte matrix splits into independent groups (compiler/recognize.py) is its
kind `in groups`. Each group is that collective on its own members: `local` renumbers them
0..n-1 (what the target's algorithms and cost models take: a group is a machine of n nodes),
`embedded` keeps the machine's numbering with everything outside the group zero (what bounds
take: a group's bound holds wherever its members are). A grouped schedule runs the same
algorithm in every group, phase k of the whole being phase k of every group, on the real
network, so groups contend wherever they share links. `as_pattern` is the statement as the
sparse exchange it also is, for the target's sparse algorithms on the whole byte matrix.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import ROOTED, root_of
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, SyncMode, Transfer


def _sub(coll: Collective, members: tuple[int, ...]) -> np.ndarray:
    return coll.matrix[np.ix_(members, members)]


def _strided_sub(coll: Collective, members: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(coll.strided[p][q] for q in members) for p in members) if coll.strided else ()


def local(coll: Collective, members: tuple[int, ...]) -> Collective:
    """The group's collective on its own, members renumbered 0..n-1 in ascending order.
    It keeps sends_in_rank_order False, as `embedded` does: the fact is proven of the whole
    statement's local arrays, not of a group's (compiler/layout.py)."""
    rows = tuple(tuple(int(x) for x in row) for row in _sub(coll, members))
    group = Collective(coll.index, coll.kind, len(members), rows, coll.src, coll.dst, coll.line,
                       element_bytes=coll.element_bytes, strided=_strided_sub(coll, members))
    # A target's schedules read a rooted kind's root from the collective: each group's own.
    return dataclasses.replace(group, root=root_of(group)) if coll.kind in ROOTED else group


def locals_of(coll: Collective) -> list[Collective]:
    return [local(coll, members) for members in coll.groups]


def as_pattern(coll: Collective) -> Collective:
    """The statement as the sparse exchange it also is: the whole byte matrix, no groups."""
    return Collective(coll.index, Kind.SPARSE, coll.nprocs, coll.byte_matrix, coll.src, coll.dst,
                      coll.line, strided=coll.strided, sends_in_rank_order=coll.sends_in_rank_order)


def embedded(coll: Collective, members: tuple[int, ...]) -> Collective:
    """The group's collective in the machine's numbering, every other node idle."""
    m = np.zeros_like(coll.matrix)
    m[np.ix_(members, members)] = _sub(coll, members)
    rows = tuple(tuple(int(x) for x in row) for row in m)
    inside = set(members)
    strided = tuple(tuple(bits if p in inside and q in inside else 0
                          for q, bits in enumerate(row)) for p, row in enumerate(coll.strided))
    return Collective(coll.index, coll.kind, coll.nprocs, rows, coll.src, coll.dst, coll.line,
                      element_bytes=coll.element_bytes, strided=strided)


def roots(coll: Collective) -> list[int]:
    """Each group's root (global rank) for a rooted kind: the one sender of a broadcast or
    scatter, the one receiver of a gather or reduce; empty for other kinds."""
    if coll.kind not in ROOTED:
        return []
    return [members[root_of(local(coll, members))] for members in coll.groups]


def _to_global(t: Transfer, members: tuple[int, ...]) -> Transfer:
    return Transfer(members[t.src], members[t.dst], t.nbytes, members[t.origin], members[t.final],
                    t.message, t.offset)


def merge(coll: Collective, algorithm: str, schedules: list[Schedule]) -> Schedule:
    """One schedule of the whole machine: phase k holds every group's phase k (renumbered to
    the machine's ranks). A group's barrier stays the group's: phase k's barrier is scoped to
    the members of each group whose phase k is a barrier (Phase.barrier_groups), so every
    group synchronises on its own, at a barrier of its own size, as on its own communicator."""
    phases = []
    for k in range(max(len(s.phases) for s in schedules)):
        sends: list[Transfer] = []
        recvs: list[Transfer] = []
        scoped: list[tuple[int, ...]] = []
        for members, s in zip(coll.groups, schedules):
            if k >= len(s.phases):
                continue
            phase = s.phases[k]
            sends += [_to_global(t, members) for t in phase.sends]
            recvs += [_to_global(t, members) for t in phase.recvs]
            scoped += [tuple(members[i] for i in nodes) for nodes in phase.barriers(s.nprocs)]
        phases.append(Phase(tuple(sends), tuple(recvs), SyncMode.BARRIER if scoped else SyncMode.LOCAL,
                            tuple(scoped)))
    return Schedule(coll.index, coll.kind, algorithm, coll.nprocs, tuple(phases), coll.src,
                    coll.dst, coll.line)


def describe(coll: Collective) -> dict:
    """The groups as the JSON reports them: count, size (None when they differ), members and,
    for a rooted kind, each group's root."""
    sizes = {len(g) for g in coll.groups}
    out = {"count": len(coll.groups), "size": sizes.pop() if len(sizes) == 1 else None,
           "members": [list(g) for g in coll.groups]}
    found = roots(coll)
    if found:
        out["roots"] = found
    return out


def label(coll: Collective) -> str:
    """`alltoall in 8 groups of 8` (or `of 4-8` when sizes differ); the kind alone otherwise."""
    return kind_label(coll.kind, [len(g) for g in coll.groups])


def kind_label(kind: Kind, sizes: list[int]) -> str:
    """The kind, and `in N groups of S` for a collective in groups of those sizes."""
    if not sizes:
        return kind
    low, high = min(sizes), max(sizes)
    if len(sizes) == 1:
        return f"{kind} in 1 group of {low}"
    return f"{kind} in {len(sizes)} groups of {low if low == high else f'{low}-{high}'}"
