"""Permutations on a hypercube in XOR-translation rounds: every message in pieces, each piece
direct or through one relay, every round a translation of the cube, so that no two messages
of a round share a link or a port.

E-cube routes (targets/bokhari/routing.py) commute with translations: the route from a to
a XOR m flips the bits of m from the lowest up, and at its j-th hop it is at a XOR (the bits of
m below j), so two messages with the same mask m from different nodes never take one link.
A round in which every sending node sends to itself XOR m is therefore free of link waits, and
each node sends one message and receives one.

A transpose onto a transposed grid sends node (r, c) to (c, r): its mask is (x, x), x = r XOR
c, and the masks with 0 form a subspace V of 2^h elements (h the bits of r). The mask is the
same all over each coset a XOR V (the row and column move by the same x). `xor-relay` runs
one round per non-zero mask y of V, in increasing order, and cuts each block of mask d into
|V|/2 pieces: one goes direct in round d; the other masks of V come in pairs {y, y XOR d},
and one piece goes to the relay a XOR y in the earlier round of its pair and on from there to
a XOR d in the later (the relay's second leg is y XOR d). In each round every sending node
then sends exactly one piece: its direct piece (round d), the first leg of one of its own
pieces, or the second leg of a piece of the node it relays for, whose mask is also d. So the
schedule takes (|V| - 1) rounds of a piece of b / (|V| / 2) bytes:

    T = (|V| - 1) (alpha + beta 2 b / |V|)       (hypercube:6: 7 alpha + 1.75 b beta)

where e-cube routing puts 4 messages of the transpose on one link (`direct` about 5 b beta
on hypercube:6, docs/bounds.md "Fixed routes"). Among schedules whose rounds are translations
within V the total 1.75 b is the least (docs/bounds.md, "Rounds on fixed routes"); the relay
ports bound is 1.31 b at 1 MB. Measured (docs/efficiency.md, branch permhyper): hypercube:6's
transpose at 1 MB 57.7 -> 20.7 ms, the closed form.

It needs a hypercube, the collective on every node, one message per node each way, the masks
with 0 a subspace of at least 4 elements, each mask the same over its node's coset.
"""

from __future__ import annotations

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def destinations(coll: Collective) -> dict[int, int] | str:
    """Each sending node's one destination; the reason where a node sends or receives more."""
    m, n = coll.byte_matrix, coll.nprocs
    out: dict[int, int] = {}
    into: dict[int, int] = {}
    for p in range(n):
        for q in range(n):
            if p == q or not m[p][q]:
                continue
            if p in out:
                return f"node {p} sends to more than one node: a round carries one message a node"
            if q in into:
                return f"node {q} receives from more than one node: a round carries one message a node"
            out[p], into[q] = q, p
    return out


def mask_space(masks: set[int]) -> set[int] | None:
    """The masks with 0, where they are closed under XOR (a subspace); else None."""
    space = masks | {0}
    if any(a ^ b not in space for a in space for b in space):
        return None
    return space


def xor_rounds(coll: Collective, machine: Machine) -> str | None:
    """A hypercube with fixed routes, the collective on all its nodes, a permutation whose masks
    (source XOR destination) with 0 form a subspace V of at least 4 elements, each node's mask
    the same as every node of its coset (node XOR V)."""
    if not machine.cube or machine.route is None:
        return "the machine is not a hypercube with fixed routes: there are no translations to round"
    if coll.nprocs != machine.nnodes:
        return (f"it needs all {machine.nnodes} nodes of the hypercube, but the collective has "
                f"{coll.nprocs} processors")
    dests = destinations(coll)
    if isinstance(dests, str):
        return dests
    mask = {p: p ^ q for p, q in dests.items()}
    space = mask_space(set(mask.values()))
    if space is None or len(space) < 4:
        return ("the messages' masks (source XOR destination) with 0 do not form a subspace of at "
                "least 4 elements: no pairs of rounds to relay through")
    for p in range(coll.nprocs):
        for v in space:
            if mask.get(p, 0) != mask.get(p ^ v, 0):
                return (f"node {p} and node {p ^ v} are a mask of the rounds apart but send with "
                        "different masks: a relay would carry two pieces in one round")
    return None


def xor_relay_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase per non-zero mask of V (xor_rounds holds), as the module docstring says."""
    dests = destinations(coll)
    assert not isinstance(dests, str)
    space = mask_space({p ^ q for p, q in dests.items()})
    assert space is not None
    rounds = sorted(space - {0})
    phase_of = {y: k for k, y in enumerate(rounds)}
    count = len(space) // 2  # pieces a block goes in: one direct, one per pair of masks
    out: list[list[Transfer]] = [[] for _ in rounds]
    out[0].extend(local_copies(coll))
    m = coll.byte_matrix
    for p, q in dests.items():
        d, nbytes = p ^ q, m[p][q]
        firsts = sorted(y for y in rounds if y != d and y < y ^ d)  # the earlier mask of each pair
        size = nbytes // count
        for k, first in enumerate([d, *firsts]):
            offset = k * size
            part = nbytes - offset if k == count - 1 else size
            if part <= 0:
                continue
            if first == d:
                out[phase_of[d]].append(Transfer(p, q, part, p, q, 0, offset))
                continue
            via = p ^ first
            out[phase_of[first]].append(Transfer(p, via, part, p, q, 0, offset))
            out[phase_of[first ^ d]].append(Transfer(via, q, part, p, q, 0, offset))
    return [Phase.of(p) for p in out]
