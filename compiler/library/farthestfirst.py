"""Sparse patterns in one phase, each node's messages farthest first (issue 27, branch ta2a).

On a machine whose nodes stream several messages at once (iWarp, the tori) a node's start-ups
are its processor's, one at a time, while the worms they launch stream on their own. In a
sparse pattern of a few destinations a node (every node to the first eighth: 8 of them on
torus:8x8) can start all its messages in one phase; the schedule then ends at a node's last
start-up plus the time that last message takes to arrive. So each node sends to its farthest
destinations (the most links of their fixed routes) first and to its nearest last: the long
worms leave while the links are still free, and the last message is the one delivered
soonest. `direct`'s pairwise steps instead wait, step by step, for each step's partner.
Ties go by destination, so compiles repeat.
"""

from __future__ import annotations

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def named_routes(coll: Collective, machine: Machine) -> str | None:
    """The order is by the hops of the machine's fixed routes, so it needs them."""
    if machine.route is None:
        return "the machine names no fixed routes to order a node's messages by their length"
    return None


def farthest_first_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase: the local copies, then each node's messages, most route hops first."""
    route = machine.route
    assert route is not None  # named_routes holds
    m, n = coll.byte_matrix, coll.nprocs
    transfers = local_copies(coll)
    for src in range(n):
        dsts = [dst for dst in range(n) if dst != src and m[src][dst] > 0]
        dsts.sort(key=lambda dst: (-len(route(src, dst)), dst))
        transfers += [Transfer(src, dst, m[src][dst], src, dst) for dst in dsts]
    return [Phase.of(transfers)]
