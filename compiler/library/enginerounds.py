"""`engine-rounds`: the all-to-all's direct messages in rounds that keep both a node's one
engine and every link of the mesh to one message, a barrier after every second round.

On the Paragon a node's one communication processor sends and receives (seed 003 Sec. 3.1),
and a message holds both end engines and every link of its row-column route for its wire time
(targets/bokhari/network.py). The engines' bound is 63 start-ups and 126 wire times a node
(docs/bounds.md, `start-ups or relays`); the mesh's bisection 128 wire times a link direction
(`cut`). `grid-direct`'s phases are permutations (each node sends one block and receives one),
which a shared engine runs in two or three message times and whose messages still meet on
links; its phases drift apart, a message waiting for an engine holds the other, and it takes
2.5x the engines' bound at 128 KB.

Here every round is a set of messages no two of which share an end node or a link, so a round
takes one start-up and one block's wire time, and a barrier after every second round keeps the
rounds in step:

    T = R (alpha + beta b) + floor((R - 1) / 2) barrier     (R = 159 rounds on paragon:8x8)

which the simulator meets exactly (paragon:8x8: 16 KB 91.38 ms, 128 KB 291.97, 1 MB 1896.68;
a test). For an all-to-allv a round takes its longest block; on the Paragon the receive buffers
add barriers where three blocks exceed a node's 440,640 bytes (targets/bokhari/buffers.py).

The rounds are found greedily: round after round, the remaining messages largest first (an all-
to-allv's round takes its longest message's time), then in order of their end nodes' remaining
messages plus their busiest link's remaining messages (the two loads that bound what is left),
each taken where its nodes and links are still free in the round (a fixed seed breaks ties, so
compiles repeat). The mesh's middle links carry 128 messages each (`cut`), so no such rounds
are fewer than 128; the search finds 159 on paragon:8x8. Without barriers the rounds drift
apart in local phases, as `grid-direct`'s phases do (a node's next message can start before its
receiver's earlier one and take that receiver's engine; where the time goes was not traced
further), and from the third round after a barrier on: measured on paragon:8x8 alltoall with a
barrier after every g-th round, g = 1, 2, 3, 5 and none: 1 MB 1947, 1897, 2177, 2406 and 3549
ms; 128 KB 342.8, 292.0, 310.3, 310.4 and 307.2 (the receive buffers' barriers alone); 16 KB
142.2, 91.4, 77.1, 66.8 and 62.0, where a barrier (643 us) is 2.5 rounds and `grid-direct`'s
58.7 ms stays ahead. So a barrier ends every second round; the schedule wins from 128 KB. A
node's copy of its own block goes in two pieces in its first two idle rounds.

Offered on meshes (their fixed routes name every link) whose nodes have one engine for both
directions, one message at a time, up to MAX_NODES nodes (the greedy search takes 0.6-3 s on 64
nodes on the shared machine).
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Hashable

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine, Route
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

MAX_NODES = 64
SEED = 27
# A round takes its longest message's time, so the search takes messages of alike sizes
# together: a block's size (over the mean) outweighs 300 messages of its end nodes' and its
# busiest link's loads (paragon:8x8 alltoallv, blocks in [B/2, 3B/2]: 128 KB 383.7 ms with
# sizes left out, 331.9 with weight 10, 314.6 with 300, 313.5 with 3000; uniform blocks: the
# same rounds whatever the weight).
SIZE_WEIGHT = 300.0
ROUNDS_PER_BARRIER = 2  # from the third round after a barrier on, the rounds drift (docstring)
Pair = tuple[int, int]


@functools.lru_cache(maxsize=16)
def engine_rounds(pairs: tuple[Pair, ...], sizes: tuple[float, ...],
                  route: Route) -> tuple[tuple[Pair, ...], ...]:
    """The pairs (src, dst) in rounds, no two messages of a round sharing a node or a link, by
    the greedy search of the module docstring; `sizes`: each pair's bytes over the mean."""
    rng = random.Random(SEED)
    size = dict(zip(pairs, sizes, strict=True))
    links: dict[Pair, frozenset[Hashable]] = {p: frozenset(route(*p)) for p in pairs}
    messages, load = Counter[int](), Counter[Hashable]()
    for src, dst in pairs:
        messages[src] += 1
        messages[dst] += 1
        load.update(links[src, dst])
    left, rounds = list(pairs), []
    while left:
        rng.shuffle(left)
        left.sort(key=lambda p: -(SIZE_WEIGHT * size[p] + messages[p[0]] + messages[p[1]]
                                  + max(load[x] for x in links[p])))
        nodes: set[int] = set()
        used: set[Hashable] = set()
        taken: list[Pair] = []
        rest: list[Pair] = []
        for src, dst in left:
            route_links = links[src, dst]
            if src in nodes or dst in nodes or not used.isdisjoint(route_links):
                rest.append((src, dst))
                continue
            nodes |= {src, dst}
            used |= route_links
            taken.append((src, dst))
            messages[src] -= 1
            messages[dst] -= 1
            load.subtract(route_links)
        rounds.append(tuple(taken))
        left = rest
    return tuple(rounds)


def shared_engine_mesh(coll: Collective, machine: Machine) -> str | None:
    """Precondition: a mesh or torus whose fixed routes name their links, one engine a node for
    both directions and one message at a time, every node taking part, at most MAX_NODES."""
    if machine.route is None or machine.adapter is not None:
        return "the machine names no one fixed route per pair to keep apart in rounds"
    if not machine.port.shared_engine or machine.port.streams > 1:
        return ("its rounds keep a node to one message sent or received, for machines whose "
                "nodes have one engine for both directions")
    if coll.nprocs != machine.nnodes:
        return (f"it needs all {machine.nnodes} nodes of the machine (its processors are then the "
                f"routes' nodes), but the collective has {coll.nprocs} processors")
    if coll.nprocs > MAX_NODES:
        return f"its greedy search of rounds is offered up to {MAX_NODES} nodes ({coll.nprocs} here)"
    return None


def engine_rounds_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase per round of engine_rounds, a barrier after every second; each node's own block
    copied in two pieces in its first two rounds without a message."""
    assert machine.route is not None
    m, n = coll.byte_matrix, coll.nprocs
    pairs = tuple((p, q) for p in range(n) for q in range(n) if p != q and m[p][q])
    mean = sum(int(m[p][q]) for p, q in pairs) / max(len(pairs), 1)
    rounds = engine_rounds(pairs, tuple(int(m[p][q]) / mean for p, q in pairs), machine.route)
    rounds = rounds or ((),)  # only local copies: one phase of them
    out = [[Transfer(src, dst, int(m[src][dst]), src, dst) for src, dst in r] for r in rounds]
    for copy in local_copies(coll):
        idle = [k for k, r in enumerate(rounds) if all(copy.src not in pair for pair in r)][:2] or [0]
        size = copy.nbytes // len(idle)
        for j, k in enumerate(idle):
            part = copy.nbytes - j * size if j == len(idle) - 1 else size
            if part > 0:
                out[k].append(Transfer(copy.src, copy.dst, part, copy.origin, copy.final, 0, j * size))
    last = len(out) - 1
    return [Phase.of(p, SyncMode.BARRIER if (k + 1) % ROUNDS_PER_BARRIER == 0 and k < last
                     else SyncMode.LOCAL) for k, p in enumerate(out)]
