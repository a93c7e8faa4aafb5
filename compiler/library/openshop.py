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

Where the machine names its routes (registry.Machine.route) a phase is first searched among
the matchings whose messages share no link: Kuhn's search taking a pair only where its route's
links are free once the message it displaces is gone (greedy: it may miss one), bisected the
same way; where it finds none, the matching on the ports alone. On hypercube:6 at 16 KB 58 of
the 63 phases share no link (the plain matchings: none).

`open-shop-barrier`: the same phases with a barrier after every k-th, k the barrier's time in
start-ups (barrier_interval: 9 on the hypercube, 0.643 ms against 75 us, seed 003 Table 1; 1 where a
barrier is free), so the barriers add about a start-up a phase. A phase's pairs are not XOR
pairs, so in local phases a node whose phase ends early sends its next block into a receiver,
and onto links, still busy with the phase before; on the hypercube that costs more than the
even phases gain (open-shop 0.52 of the bound at 128 KB against direct's 0.68); the barriers
keep the nodes within k phases of each other: 0.77 at 128 KB, 0.80 at 1 MB (a barrier after
every phase: 0.60 and 0.82). Where one engine carries a node's sends and receives (the
Paragon, SP2, CS-2) a phase's send and receive of unequal sizes share it, which the matchings
do not weigh: there `direct` (and engine-rounds) stay ahead.

Declared gap: the time is about the phases' largest blocks plus a start-up per phase (less where
a node whose phase ends early starts its next); no closed form is claimed, the simulator decides
(`auto` by the cost model). Measured on ideal:64: 0.93 of the bound at 16 KB, 0.98 at 128 KB,
where direct takes 0.67 and 0.69.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

# Members the matchings are searched for at compile time: P - 1 phases, each a bisection of
# about log2(P^2) Kuhn searches of O(P^3) steps (64 members: 1.5-3 s under load; 128: 14-37 s).
MAX_MEMBERS = 64


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


Routes = list[list[tuple[Hashable, ...]]]  # [sender][receiver]: the links its message holds


class Matching:
    """Kuhn's augmenting paths for a receiver per sender, each receiver once; with `routes`,
    only sets of messages of which no two hold one link (a path is taken only if its new
    messages find their links free once the messages it displaces are gone)."""

    def __init__(self, allowed: np.ndarray, routes: Routes | None):
        n = len(allowed)
        self.receivers = [list(np.flatnonzero(row)) for row in allowed]
        self.routes = routes
        self.sender_of, self.receiver_of = [-1] * n, [-1] * n
        self.holder: dict[Hashable, int] = {}  # link -> the sender whose message holds it

    def links(self, sender: int, receiver: int) -> tuple[Hashable, ...]:
        return self.routes[sender][receiver] if self.routes else ()

    def take(self, sender: int, receiver: int) -> None:
        self.sender_of[receiver], self.receiver_of[sender] = sender, receiver
        for link in self.links(sender, receiver):
            self.holder[link] = sender

    def drop(self, sender: int, receiver: int) -> None:
        self.sender_of[receiver], self.receiver_of[sender] = -1, -1
        for link in self.links(sender, receiver):
            del self.holder[link]

    def free(self, sender: int, receiver: int) -> bool:
        return not any(link in self.holder for link in self.links(sender, receiver))

    def augment(self, sender: int, seen: list[bool]) -> bool:
        for receiver in self.receivers[sender]:
            if seen[receiver]:
                continue
            displaced = self.sender_of[receiver]
            if displaced >= 0:
                self.drop(displaced, receiver)
            if self.free(sender, receiver):  # a receiver is closed only once reached
                seen[receiver] = True
                self.take(sender, receiver)
                if displaced < 0 or self.augment(displaced, seen):
                    return True
                self.drop(sender, receiver)
            if displaced >= 0:
                self.take(displaced, receiver)
        return False

    def perfect(self) -> list[int] | None:
        """A receiver per sender, or None where the search finds none (without routes: where
        there is none; with them the search is greedy and may miss one)."""
        for sender in range(len(self.receiver_of)):
            if not self.augment(sender, [False] * len(self.receiver_of)):
                return None
        return self.receiver_of


def bottleneck_matching(sizes: np.ndarray, remaining: np.ndarray,
                        routes: Routes | None) -> list[int] | None:
    """The perfect matching of the remaining pairs whose largest size is least (with `routes`:
    among those the search finds link-disjoint; None if it finds none)."""
    best = Matching(remaining, routes).perfect()
    if best is None:
        return None
    thresholds = np.unique(sizes[remaining])
    low, high = 0, len(thresholds) - 1
    while low < high:
        middle = (low + high) // 2
        found = Matching(remaining & (sizes <= thresholds[middle]), routes).perfect()
        if found is None:
            low = middle + 1
        else:
            best, high = found, middle
    return best


def open_shop_matchings(sizes: np.ndarray, routes: Routes | None = None) -> list[list[int]]:
    """P - 1 permutations without fixed points covering every off-diagonal pair once, each the
    bottleneck matching of the pairs the earlier ones left: link-disjoint while the search finds
    such a matching, then on the ports alone (König: one always exists)."""
    n = len(sizes)
    remaining = ~np.eye(n, dtype=bool)
    phases = []
    for _ in range(n - 1):
        receiver_of = (bottleneck_matching(sizes, remaining, routes) if routes else None) or \
            bottleneck_matching(sizes, remaining, None)
        assert receiver_of is not None, "a regular bipartite graph has a perfect matching"
        remaining[np.arange(n), receiver_of] = False
        phases.append(receiver_of)
    return phases


def open_shop_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The blocks in the P - 1 open-shop phases, each local; local copies in the first."""
    return [Phase.of(p) for p in open_shop_transfers(coll, machine)]


def barrier_interval(machine: Machine) -> int:
    """Phases between two barriers: as many as a barrier costs start-ups (at least one), so the
    barriers add at most about a start-up a phase."""
    port = machine.port
    return max(1, math.ceil(port.barrier_s / port.startup_s))


def open_shop_barrier_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The same phases with a barrier after every barrier_interval-th (not after the last):
    where a phase's messages are not XOR pairs, a node that runs ahead meets the phase before's
    messages on its links and ports; the barriers bound how far it can."""
    phases = open_shop_transfers(coll, machine)
    every = barrier_interval(machine)
    return [Phase.of(p, SyncMode.BARRIER if (k + 1) % every == 0 and k < len(phases) - 1
                     else SyncMode.LOCAL) for k, p in enumerate(phases)]


def open_shop_transfers(coll: Collective, machine: Machine) -> list[list[Transfer]]:
    """The blocks of each open-shop phase (link-disjoint where the machine names its routes);
    local copies in the first."""
    m, n = coll.byte_matrix, coll.nprocs
    sizes = np.array(m, dtype=np.int64).reshape(n, n)
    route = machine.route
    routes = [[tuple(route(p, q)) if p != q else () for q in range(n)] for p in range(n)] \
        if route else None
    phases = [[Transfer(p, q, int(sizes[p, q]), p, q) for p, q in enumerate(receiver_of)
               if sizes[p, q]] for receiver_of in open_shop_matchings(sizes, routes)]
    if not phases:
        phases = [[]]
    phases[0] = local_copies(coll) + phases[0]
    return phases
