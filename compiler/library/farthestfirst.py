"""Sparse patterns in one phase, each node's messages farthest first (issue 27, branch ta2a).

On a machine whose nodes stream several messages at once (iWarp, the tori) a node's start-ups
are its processor's, one at a time, while the worms they launch stream on their own. In a
sparse pattern of a few destinations a node (every node to the first eighth: 8 of them on
torus:8x8) can start all its messages in one phase; the schedule then ends at a node's last
start-up plus the time that last message takes to arrive. So each node sends to its farthest
destinations (the most links of their fixed routes) first and to its nearest last: the long
worms leave while the links are still free, and the last message is the one delivered
soonest. Among destinations of one route length a node takes first the one that the fewest
nodes before it (by id) address at that place of their order: the senders' k-th start-ups then
end at about the same time, and their messages spread over the receivers rather than meeting at
one receiver's links and memory streams (torus:8x8, every node to row 0, 128 B: 0.1738 ms,
against 0.1885 with ties by destination). Remaining ties go by destination, so compiles repeat.
`direct`'s pairwise steps instead wait, step by step, for each step's partner.
"""

from __future__ import annotations

from collections import Counter

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.requirements import whole_grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def named_routes(coll: Collective, machine: Machine) -> str | None:
    """The order is by the hops of the machine's fixed routes, so it needs them, and the
    collective on every node of the grid (its processors are then the routes' nodes)."""
    if (why := whole_grid(coll, machine)) is not None:
        return why
    if machine.route is None:
        return "the machine names no fixed routes to order a node's messages by their length"
    return None


def farthest_first_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase: the local copies, then each node's messages, most route hops first, ties
    to the destination least addressed at that place so far (module docstring)."""
    route = machine.route
    assert route is not None  # named_routes holds
    m, n = coll.byte_matrix, coll.nprocs
    addressed: Counter[tuple[int, int]] = Counter()  # (place in a node's order, destination)
    transfers = local_copies(coll)
    for src in range(n):
        hops = {dst: len(route(src, dst)) for dst in range(n) if dst != src and m[src][dst] > 0}
        for place in range(len(hops)):
            dst = min(hops, key=lambda d: (-hops[d], addressed[place, d], d))
            addressed[place, dst] += 1
            del hops[dst]
            transfers.append(Transfer(src, dst, m[src][dst], src, dst))
    return [Phase.of(transfers)]
