"""Who takes part in a collective and in which order trees and rings visit them.

Rooted kinds (broadcast, scatter, gather, reduce) have a root and the other members; group
kinds (allgather, allreduce) have members that all exchange. Virtual rank 0 is the root;
on 2^d members numbered 0..2^d-1 the virtual rank of r is r XOR root, so a binomial tree's
edges are single hypercube dimensions (the e-cube spanning binomial tree).
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Transfer

ROOTED = (Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.REDUCE)
OUTWARD = (Kind.BROADCAST, Kind.SCATTER)  # the root sends; gather and reduce receive at the root
REDUCTIONS = (Kind.REDUCE, Kind.ALLREDUCE)
GROUP = (Kind.ALLGATHER, Kind.ALLREDUCE)


def local_copies(coll: Collective) -> list[Transfer]:
    m = coll.byte_matrix
    return [Transfer(p, p, m[p][p], p, p) for p in range(coll.nprocs) if m[p][p] > 0]


def root_of(coll: Collective) -> int:
    """The root of a rooted collective: the recognized owner, else the single sender/receiver."""
    if coll.root is not None:
        return coll.root
    m, n = coll.byte_matrix, coll.nprocs
    if coll.kind in OUTWARD:
        return next(p for p in range(n) if any(m[p][q] for q in range(n) if q != p))
    return next(q for q in range(n) if any(m[p][q] for p in range(n) if p != q))


def senders(coll: Collective) -> list[int]:
    m, n = coll.byte_matrix, coll.nprocs
    return [p for p in range(n) if any(m[p][q] for q in range(n) if q != p)]


def receivers(coll: Collective) -> list[int]:
    m, n = coll.byte_matrix, coll.nprocs
    return [q for q in range(n) if any(m[p][q] for p in range(n) if p != q)]


def ordered(root: int, others: list[int], nprocs: int) -> list[int]:
    """Members by virtual rank: XOR numbering on a full power of two, else by rank after the root."""
    members = sorted({root, *others})
    n = len(members)
    if n == nprocs and n & (n - 1) == 0:
        return [v ^ root for v in range(n)]
    at = members.index(root)
    return members[at:] + members[:at]


def rooted_order(coll: Collective) -> list[int]:
    """Root first, then the nodes that receive from it (or send to it)."""
    root = root_of(coll)
    others = receivers(coll) if coll.kind in OUTWARD else senders(coll)
    return ordered(root, [p for p in others if p != root], coll.nprocs)


def group_order(coll: Collective) -> list[int]:
    """Every node that sends or receives, node 0 (or the lowest) first."""
    members = sorted(set(senders(coll)) | set(receivers(coll)))
    return ordered(members[0], members, coll.nprocs) if members else []


def contributors(coll: Collective) -> list[int]:
    """Nodes whose partial result (reductions) or part (allgather) others need."""
    m, n = coll.byte_matrix, coll.nprocs
    return [p for p in range(n) if any(m[p][q] for q in range(n))]


def binomial_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Round k of the binomial tree over virtual ranks 0..n-1: (v, v + 2^k) for v < 2^k."""
    rounds, step = [], 1
    while step < n:
        rounds.append([(v, v + step) for v in range(step) if v + step < n])
        step *= 2
    return rounds


def subtree(c: int, n: int) -> range:
    """Virtual ranks below c (c included) in the tree of `binomial_rounds`: c joins in the round
    of its top bit 2^k and then serves c + 2^j for j > k, so below it are the u = c mod 2^(k+1)."""
    return range(c, n, 1 << c.bit_length())
