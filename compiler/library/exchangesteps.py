"""`exchange-steps`: the all-to-all's direct messages as pairwise exchanges in steps that keep
every link of the mesh to one message, each exchange one way and then back.

On the Paragon a node's one communication processor sends and receives (seed 003 Sec. 3.1), and
a message holds both end engines and every link of its row-column route for its wire time
(targets/bokhari/network.py). `engine-rounds` puts the messages in rounds of one message a node
and a link, but its rounds drift apart without a barrier after every second round, and at 16 KB
a barrier (643 us) costs 2.5 rounds (enginerounds.py).

Here a step gives a node one partner, and the pair's two messages go one after the other: the
first sender's in the step's first phase, the reply in its second, started when the first is
in. So a pair keeps itself in step: its two nodes end the step together. What makes rounds
drift is a node that starts early and takes the engine of a receiver still in the middle of
its own exchange, so the search tracks when each node is expected to end its exchanges so far
(a pair: the later of its nodes, plus two start-ups and its two blocks): the later node of a
pair sends first (its partner is then free), and a pair both of whose nodes end half an
exchange or more before the latest node waits for a later step (it would run early, on links
still in use). No two first messages of a step share a link, nor two replies, so where the
pairs stay in step a step of equal blocks takes two start-ups and two blocks:

    T <= S (2 alpha + 2 beta b) + the receive buffers' barriers        (S steps)

(paragon:8x8, 16 KB blocks: S = 94, 47.98 ms, with two barriers that the receive buffers need,
under the 49.27 of the form: a tail pair whose nodes were free starts before its step; a test).
Without the rule on who sends first, the same search's steps took 68.6 ms. An all-to-allv's
pairs end at different times, so its steps drift more, and how far swings with the search's
weights: paragon:8x8 16 KB (Fig. 9's sizes) 106-114 steps simulated at 55.4-63.5 ms.

The steps are found greedily, as engine-rounds' rounds: pairs in order of their exchange's time
(alike times together), their nodes' remaining exchanges and their busiest link's remaining
messages, under weights of the first and the last, each taken where its nodes and its two
routes' links are still free in the step, in an orientation allowed; of TRIES orders (ties
shuffled, a fixed seed, so compiles repeat) the step keeps the one whose pairs' busiest links
carry most. Where the blocks are uneven the search runs under each of a grid of weights (one
weight pair where every exchange takes one time) and keeps the steps that end first
by `estimated_s` (the messages in the steps' order on the engines and links, barriers aside;
paragon:8x8 alltoallv 16 KB: the weights (100, 1), 106 steps, estimated 54.63 ms, simulated
55.53 with two barriers, where (300, 2) gave 110 steps, 55.75 and 57.47). The mesh's middle links
bound the steps from below: a step carries at most one message each way over each of them in
each of its two phases, and 128 messages cross each, so at least 64 steps on paragon:8x8.
Offered where engine-rounds is (a mesh of one-engine nodes, at most 64).
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Hashable

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine, Route
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

SEED = 27
# A pair's order key weighs its exchange's time over the mean (size weight: pairs of alike
# durations go together, as engine-rounds), its nodes' remaining exchanges and its busiest
# link's remaining messages (link weight: the middle links bind, 64 steps at least, the engines
# 63), and of TRIES orders of the pairs a step keeps the one whose pairs' busiest links carry
# most. paragon:8x8 alltoall 16 KB: 100 steps (51.07 ms) with (300, 1) and one order, 94
# (47.98 ms) with (300, 2); 16 or 32 orders gave 100 and 99. Where the blocks are uneven the
# steps' times swing with the weights (paragon:8x8 alltoallv 16 KB: 55.4-63.5 ms simulated
# over sizes 30-200 and links 0.5-2), so the search tries a grid about (300, 2) and keeps the
# steps that `estimated_s` ends first.
WEIGHTS = tuple((size, link) for size in (300.0, 200.0, 100.0) for link in (2.0, 1.5, 1.0))
TRIES = 8
TIE_S = 1e-9  # ends closer than this are together
Pair = tuple[int, int]
Step = tuple[tuple[Pair, ...], tuple[Pair, ...]]  # (first messages, replies), as (src, dst)


@functools.lru_cache(maxsize=16)
def exchange_steps(blocks: tuple[tuple[Pair, int, int], ...], nprocs: int, route: Route,
                   startup_s: float, s_per_byte: float) -> tuple[Step, ...]:
    """The unordered pairs (p, q, bytes p -> q, bytes q -> p) in steps: of the greedy search's
    steps under each of its weights (searched_steps), those that `estimated_s` ends first (the
    first of WEIGHTS among equals)."""
    sizes = {(p, q): pq for (p, q), pq, _ in blocks} | {(q, p): qp for (p, q), _, qp in blocks}
    return min(searched_steps(blocks, nprocs, route, startup_s, s_per_byte).values(),
               key=lambda steps: estimated_s(steps, sizes, nprocs, route, startup_s, s_per_byte))


@functools.lru_cache(maxsize=16)
def searched_steps(blocks: tuple[tuple[Pair, int, int], ...], nprocs: int, route: Route,
                   startup_s: float, s_per_byte: float) -> dict[tuple[float, float], tuple[Step, ...]]:
    """The greedy search's steps under each of WEIGHTS (module docstring), in WEIGHTS' order;
    under the first alone where every exchange takes one time. Remembered: exchange_steps
    chooses among them, and its test checks the choice against each."""
    weights = WEIGHTS
    if len({pq + qp for _, pq, qp in blocks}) <= 1:  # exchanges of one time: the first weights,
        weights = WEIGHTS[:1]  # (the link weights did not better it on paragon:8x8, 8 B-1 MB)
    return {(size_weight, link_weight): _greedy_steps(blocks, nprocs, route, startup_s, s_per_byte,
                                                      size_weight, link_weight)
            for size_weight, link_weight in weights}


def estimated_s(steps: tuple[Step, ...], sizes: dict[Pair, int], nprocs: int, route: Route,
                startup_s: float, s_per_byte: float) -> float:
    """When the steps end, their messages taken in order (first messages, then replies, step by
    step) on the Paragon's model (targets/bokhari/network.py): a message's start-up holds its
    sender's engine, then its bytes hold both end engines and every link of its route, from
    when the last of them is free. Barriers aside (the target adds them)."""
    engine = [0.0] * nprocs
    link_free: dict[Hashable, float] = {}
    for half in (h for step in steps for h in step):
        for s, d in half:
            if not sizes[s, d]:
                continue
            links = route(s, d)
            start = max(engine[s] + startup_s, engine[d], *(link_free.get(x, 0.0) for x in links))
            engine[s] = engine[d] = end = start + sizes[s, d] * s_per_byte
            link_free.update((x, end) for x in links)
    return max(engine)


def _greedy_steps(blocks: tuple[tuple[Pair, int, int], ...], nprocs: int, route: Route,
                  startup_s: float, s_per_byte: float, size_weight: float,
                  link_weight: float) -> tuple[Step, ...]:
    """The greedy search of the module docstring, pairs ordered under the weights given."""
    rng = random.Random(SEED)
    pairs = [pair for pair, _, _ in blocks]
    duration = {pair: 2 * startup_s + (pq + qp) * s_per_byte for pair, pq, qp in blocks}
    mean = sum(duration.values()) / max(len(duration), 1)
    links = {(s, d): frozenset(route(s, d)) for p, q in pairs for s, d in ((p, q), (q, p))}
    exchanges, load = Counter[int](), Counter[Hashable]()
    for p, q in pairs:
        exchanges[p] += 1
        exchanges[q] += 1
        load.update(links[p, q])
        load.update(links[q, p])

    # a pair's links either way, under either orientation: busiest runs for every pair left at
    # every step of every weights' search (2M times on paragon:8x8), so it only looks them up
    both_ways: dict[Pair, tuple[Hashable, ...]] = {}
    for p, q in pairs:
        both_ways[p, q] = both_ways[q, p] = tuple(links[p, q] | links[q, p])
    count = load.__getitem__  # every link of a route is in load (0 once its messages are taken)

    def busiest(pair: Pair) -> int:
        return max(map(count, both_ways[pair]))

    # when each node is expected to end its exchanges so far: the later of a pair sends first
    # (its partner is free), and a pair both of whose nodes end half an exchange or more before
    # the latest node waits (it would run early, on links still in use)
    ready = [0.0] * nprocs
    left, steps = list(pairs), []
    while left:
        early = max(ready) - mean / 2
        best: list[Pair] = []
        best_score = -1
        # the order's key is the step's (the loads change between steps): once, not per try
        urgency = {p: -(size_weight * duration[p] / mean + exchanges[p[0]] + exchanges[p[1]]
                        + link_weight * busiest(p)) for p in left}
        for _ in range(TRIES):
            rng.shuffle(left)
            left.sort(key=urgency.__getitem__)
            firsts = _step(left, ready, early, links)
            score = sum(1 + busiest(f) for f in firsts)
            if score > best_score:
                best, best_score = firsts, score
        if not best:  # only pairs of nodes that would run early are left: let them
            ready = [max(ready)] * nprocs
            continue
        taken = set()
        for s, d in best:
            pair = (min(s, d), max(s, d))
            taken.add(pair)
            ready[s] = ready[d] = max(ready[s], ready[d]) + duration[pair]
            exchanges[s] -= 1
            exchanges[d] -= 1
            load.subtract(links[s, d])
            load.subtract(links[d, s])
        steps.append((tuple(best), tuple((d, s) for s, d in best)))
        left = [p for p in left if p not in taken]
    return tuple(steps)


def _step(left: list[Pair], ready: list[float], early: float,
          links: dict[Pair, frozenset[Hashable]]) -> list[Pair]:
    """The first messages of one step: the pairs of `left` in order, each where its nodes and
    its two routes' links are still free, in an orientation `_orientations` allows."""
    nodes: set[int] = set()
    used_first: set[Hashable] = set()
    used_reply: set[Hashable] = set()
    firsts: list[Pair] = []
    for p, q in left:
        if p in nodes or q in nodes:
            continue
        for first in _orientations(p, q, ready, early):
            reply = (first[1], first[0])
            if used_first.isdisjoint(links[first]) and used_reply.isdisjoint(links[reply]):
                nodes |= {p, q}
                used_first |= links[first]
                used_reply |= links[reply]
                firsts.append(first)
                break
    return firsts


def _orientations(p: int, q: int, ready: list[float], early: float) -> tuple[Pair, ...]:
    """Who may send first: the node that ends its exchanges so far later (its partner is then
    free; the earlier one would take the engine of a node in the middle of its exchange), either
    where they end together; no one where both end before `early`."""
    if max(ready[p], ready[q]) < early:
        return ()
    if ready[p] > ready[q] + TIE_S:
        return ((p, q),)
    if ready[q] > ready[p] + TIE_S:
        return ((q, p),)
    return ((p, q), (q, p))


def exchange_steps_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Two local phases per step (first messages, replies); each node's own block copied in
    the first phase."""
    assert machine.route is not None
    m, n = coll.byte_matrix, coll.nprocs
    blocks = tuple(((p, q), int(m[p][q]), int(m[q][p])) for p in range(n) for q in range(p + 1, n)
                   if m[p][q] or m[q][p])
    steps = exchange_steps(blocks, n, machine.route, machine.port.startup_s, machine.port.s_per_byte)
    out: list[list[Transfer]] = []
    for firsts, replies in steps:
        for half in (firsts, replies):
            out.append([Transfer(s, d, int(m[s][d]), s, d) for s, d in half if m[s][d]])
    if not out:
        out = [[]]
    out[0].extend(local_copies(coll))
    return [Phase.of(p) for p in out]
