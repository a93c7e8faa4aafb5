"""Uneven all-to-alls in phases of even sizes: open-shop scheduling of the traffic matrix.

`direct` sends in step s from r to r XOR s: each step lasts about as long as its largest block,
and with Fig. 9's uneven sizes (uniform in [B/2, 3B/2]) the 63 steps' largest blocks add up to
1.36x the busiest port's bytes on 64 nodes (the `port bandwidth` bound; ideal:64, 16 KB).

An open shop (Gonzalez and Sahni 1976): each node's sends and each node's receives are
machines, every block a job on one of each. Here without splitting a block: the off-diagonal
pairs are the edges of a (P - 1)-regular bipartite graph between senders and receivers, so by
König's theorem they fall into P - 1 perfect matchings, each a phase in which every node sends
one block and receives one. The phases are taken greedily, each the perfect matching of the
remaining edges whose largest block is least (a bottleneck matching: the least threshold, found
by bisection over the remaining sizes, at which the edges no larger still hold a perfect
matching, Kuhn's augmenting paths). Removing a perfect matching leaves a regular graph, so the
next phase always exists. Each phase then holds blocks of about one size: on ideal:64 at 16 KB
the phases' largest blocks add up to 1.036x the busiest port's bytes (XOR steps: 1.36x). The
phases run in that order, smallest first; each is local (a node goes on once its send is
delivered and its receive is in), as direct's are.

Declared gap: the time is the phases' largest blocks plus a start-up per phase where the nodes
keep in step, less where a node whose phase ends early starts its next (local phases do not wait
for the others); no closed form is claimed, the simulator decides (`auto` by the cost model).
On fixed-route networks a phase's routes may share links (its pairs are not XOR translations),
which the simulator charges; the link-aware phases there are not built (docs/efficiency.md).
"""

from __future__ import annotations

import numpy as np

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

# Members the matchings are searched for at compile time: P - 1 phases, each a bisection of
# about log2(P^2) Kuhn searches of O(P^3) steps (64 members: 0.5 s; 128: about 8 s).
MAX_MEMBERS = 128


def every_pair(coll: Collective, machine: Machine) -> str | None:
    """Precondition: an exchange among all nodes (every node a sender and a receiver), of at most
    MAX_MEMBERS nodes."""
    m, n = coll.byte_matrix, coll.nprocs
    if n > MAX_MEMBERS:
        return f"open-shop searches its phases for at most {MAX_MEMBERS} nodes, not {n}"
    for p in range(n):
        if not any(m[p][q] for q in range(n) if q != p):
            return f"node {p} sends nothing: open-shop's phases are perfect matchings of all nodes"
        if not any(m[q][p] for q in range(n) if q != p):
            return f"node {p} receives nothing: open-shop's phases are perfect matchings of all nodes"
    return None


def perfect_matching(allowed: np.ndarray) -> list[int] | None:
    """A receiver per sender over the allowed (sender, receiver) pairs, each receiver once, or None
    when there is none (Kuhn's augmenting paths)."""
    n = len(allowed)
    receivers = [list(np.flatnonzero(row)) for row in allowed]
    sender_of = [-1] * n
    receiver_of = [-1] * n

    def augment(sender: int, seen: list[bool]) -> bool:
        for receiver in receivers[sender]:
            if not seen[receiver]:
                seen[receiver] = True
                if sender_of[receiver] < 0 or augment(sender_of[receiver], seen):
                    sender_of[receiver], receiver_of[sender] = sender, receiver
                    return True
        return False

    for sender in range(n):
        if not augment(sender, [False] * n):
            return None
    return receiver_of


def bottleneck_matching(sizes: np.ndarray, remaining: np.ndarray) -> list[int]:
    """The perfect matching of the remaining pairs whose largest size is least."""
    thresholds = np.unique(sizes[remaining])
    low, high = 0, len(thresholds) - 1
    best = perfect_matching(remaining)
    assert best is not None, "a regular bipartite graph has a perfect matching (König)"
    while low < high:
        middle = (low + high) // 2
        found = perfect_matching(remaining & (sizes <= thresholds[middle]))
        if found is None:
            low = middle + 1
        else:
            best, high = found, middle
    return best


def open_shop_matchings(sizes: np.ndarray) -> list[list[int]]:
    """P - 1 permutations without fixed points covering every off-diagonal pair once, each the
    bottleneck matching of the pairs the earlier ones left."""
    n = len(sizes)
    remaining = ~np.eye(n, dtype=bool)
    phases = []
    for _ in range(n - 1):
        receiver_of = bottleneck_matching(sizes, remaining)
        remaining[np.arange(n), receiver_of] = False
        phases.append(receiver_of)
    return phases


def open_shop_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The blocks in the P - 1 open-shop phases; local copies in the first."""
    m, n = coll.byte_matrix, coll.nprocs
    sizes = np.array(m, dtype=np.int64).reshape(n, n)
    phases = [[Transfer(p, q, int(sizes[p, q]), p, q) for p, q in enumerate(receiver_of)
               if sizes[p, q]] for receiver_of in open_shop_matchings(sizes)]
    if not phases:
        phases = [[]]
    phases[0] = local_copies(coll) + phases[0]
    return [Phase.of(p) for p in phases]
