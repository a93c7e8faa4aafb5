"""Allgather and allreduce: every member ends with every contributor's part (or partial).

A message from a to b carries the blocks (o, b) for the origins o whose data a holds, as one
message (an allreduce's partials combine on the wire to one partial). Members by virtual rank
(members.group_order); any member count.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import binomial_rounds, contributors, group_order, local_copies, subtree
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


def carry(coll: Collective, a: int, b: int, origins, final: int | None = None) -> list[Transfer]:
    """a's blocks (o, final) for `origins` (final: b itself by default), as one message to b."""
    m, f = coll.byte_matrix, b if final is None else final
    return [Transfer(a, b, m[o][f], o, f, COMBINED) for o in origins if o != f and m[o][f]]


def ring_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """n - 1 steps round a ring: in step s member v passes member v - s + 1's part to v + 1."""
    return ring_over(coll, group_order(coll))


def ring_over(coll: Collective, order: list[int]) -> list[Phase]:
    """The ring allgather over the members in `order` (virtual rank v is member order[v])."""
    n = len(order)
    return _with_copies(coll, [[t for v in range(n) for t in carry(
        coll, order[v], order[(v + 1) % n], [order[(v - s + 1) % n]])] for s in range(1, n)])


def recursive_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """log2 n exchanges with partner v XOR 2^k, each sending all it holds. On n not a power of
    two the members past the largest power 2^j first hand their part to v - 2^j and get the
    result back from it at the end."""
    return recursive_doubling_over(coll, group_order(coll))


def far_first_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Recursive doubling over the members with their virtual ranks' bits reversed (2^d members):
    exchange k pairs ranks 2^(d - 1 - k) apart, so the first, one-part exchanges span the
    largest rank distance and the last, half-of-the-parts one is between ranks 1 apart. On a
    fat tree in node order (the SP2, CS-2) the big exchanges then stay under a first-stage
    switch and only the small ones cross the top stage, whose links share routes
    (docs/efficiency.md, branch permhyper). The same exchanges, relabelled: same closed form."""
    order = group_order(coll)
    bits = len(order).bit_length() - 1
    return recursive_doubling_over(coll, [order[reversed_bits(v, bits)] for v in range(len(order))])


def reversed_bits(value: int, bits: int) -> int:
    """`value`'s lowest `bits` bits in reverse order."""
    return sum(1 << (bits - 1 - k) for k in range(bits) if value >> k & 1)


def recursive_doubling_over(coll: Collective, order: list[int]) -> list[Phase]:
    """Recursive doubling over the members in `order` (virtual rank v is member order[v])."""
    n = len(order)
    low = 1 << (n.bit_length() - 1) if n else 0
    own = set(contributors(coll))
    held = [{order[v]} & own for v in range(n)]
    phases = [[t for r in range(low, n) for t in carry(coll, order[r], order[r - low], held[r])]
              for _ in range(low < n)]  # none on 2^d members: their copies join the first exchange
    for r in range(low, n):
        held[r - low] |= held[r]
    step = 1
    while step < low:
        phases.append([t for v in range(low) for t in carry(coll, order[v], order[v ^ step],
                                                             sorted(held[v]))])
        held[:low] = [held[v] | held[v ^ step] for v in range(low)]
        step *= 2
    phases.append([t for r in range(low, n) for t in carry(coll, order[r - low], order[r],
                                                           sorted(held[r - low]))])
    busy = [k for k, p in enumerate(phases) if p]
    if coll.kind is Kind.ALLGATHER and busy:
        # Each member's copy of its own part goes beside the last (largest) exchange, after its
        # messages: beside the first, a part's copy outlasts the message of one part where
        # copying is slower than the wire (003 Table 1: 14 ns/B against 11 on the Paragon).
        phases[busy[-1]] = phases[busy[-1]] + local_copies(coll)
        return [Phase.of(p) for p in phases]
    return _with_copies(coll, phases)


def bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """ceil(log2 n) steps for any n: in step k member v sends the parts of v .. v + d - 1
    (d = 2^k, at most n - d of them) to member v - d."""
    order = group_order(coll)
    n, phases, d = len(order), [], 1
    while d < n:
        count = min(d, n - d)
        phases.append([t for v in range(n) for t in carry(
            coll, order[v], order[(v - d) % n], [order[(v + i) % n] for i in range(count)])])
        d *= 2
    return _with_copies(coll, phases)


def _to_root_and_back(coll: Collective, tree: bool) -> list[Phase]:
    """Everything to member 0 (linearly or up a binomial tree), then everything back out."""
    order = group_order(coll)
    n, root, own = len(order), order[0], contributors(coll)
    rounds = binomial_rounds(n) if tree else [[(0, c)] for c in range(1, n)]
    span = (lambda c: subtree(c, n)) if tree else (lambda c: [c])
    up = [[t for v, c in pairs for t in carry(coll, order[c], order[v],
                                              [order[u] for u in span(c)], root)]
          for pairs in reversed(rounds)]
    down = [[t for v, c in pairs for t in carry(coll, order[v], order[c], own)] for pairs in rounds]
    return _with_copies(coll, up + down)


def gather_broadcast_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Linear: every member sends to member 0, which then sends the whole result to each."""
    return _to_root_and_back(coll, tree=False)


def tree_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Binomial: up a binomial tree to member 0 (combining), then down the same tree."""
    return _to_root_and_back(coll, tree=True)
