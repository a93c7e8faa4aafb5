"""Permutations on fixed routes in rounds of pieces, for machines whose nodes stream several
messages at once (iWarp, the tori): each block cut in q pieces, each piece direct or through one
relay, no two pieces of a round on one link and no node's streams oversubscribed.

A transpose of a torus turns every dimension-ordered route at a diagonal node, so `direct` puts
4 blocks on the links next to the diagonal (torus:8x8). Every hop of a torus changes a node's
diagonal (column - row) by one, and shortest routes of a transpose's messages all cross the
links next to the main diagonal, 24 blocks over 16 links each way: 1.5 blocks a link for any
routing over shortest paths (docs/bounds.md, "Weighted links"). Routes through one relay (the
source's route to the relay, then the relay's to the destination) are staircases with up to
three turns, or detours of up to DETOUR more hops. Here the pieces go in R rounds in which no
link carries two pieces, a node's sends and receives together take at most its memory's streams
(`PortModel.engine_streams`, else `streams` each way), and a relayed piece's second leg comes in
a later round than its first; a barrier closes every round but the last, since a node that
runs ahead would start its next round's pieces on links another node's pieces still hold (local
sync: 9.9 ms on torus:8x8 at 128 KB, barriers 5.3 ms). Each round then takes about one piece's
wire time plus its nodes' start-ups:

    T ~= R (k alpha + beta b / q) + (R - 1) barrier   (a prediction; k <= 4 start-ups a node;
                             on torus:8x8 q = 2, R = 3: 1.5 blocks' wire time and 2 barriers)

The rounds are found by min-conflicts repair (a fixed seed, so compiles repeat): the pieces of
the longest routes first, each put where it displaces the fewest pieces already placed (direct
in any round, or through any relay whose legs fit two rounds in order, direct preferred at equal
cost, ties drawn at random), the displaced ones queued again; for each (q, R) of PLANS, fewest
rounds per piece first, ATTEMPTS searches of STEPS placements. The first plan found is the
schedule, else the algorithm is refused with that reason.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Hashable

from phalanx.compiler.library.registry import Machine, PortModel, Route
from phalanx.compiler.library.relayrounds import rounds_with_local_copies, search_unmet
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

# (pieces per block, rounds), tried in this order: rounds per piece ascending.
PLANS = ((2, 3), (2, 4))
ATTEMPTS = 2
STEPS = 10000
SEED = 27
RELAY_COST = 0.5  # a relay's second start-up and store and forward: direct wins a tie
DETOUR = 2  # hops a relayed piece's path may add to its shortest (2: a (2, 3) plan on torus:8x8)


# A leg of a plan: (round, src, dst, origin, final, piece)
Leg = tuple[int, int, int, int, int, int]
# A piece: (origin, final, piece index)
Piece = tuple[int, int, int]


class Rounds:
    """The rounds' links and streams, and which piece holds each."""

    def __init__(self, rounds: int, port: PortModel):
        self.port = port
        self.links: list[dict[Hashable, Piece]] = [{} for _ in range(rounds)]
        self.sends: list[dict[int, list[Piece]]] = [{} for _ in range(rounds)]
        self.recvs: list[dict[int, list[Piece]]] = [{} for _ in range(rounds)]

    def conflicts(self, t: int, src: int, dst: int, links: frozenset[Hashable],
                  rng: random.Random) -> set[Piece]:
        """The pieces to take out of round t so that a leg src -> dst on `links` fits: those on
        its links, and one at each end whose streams are full (each way, or both ways together
        where the memory shares them)."""
        held = self.links[t]
        out = {held[link] for link in links if link in held}
        streams, shared = self.port.streams, self.port.engine_streams
        for node, own, other in ((src, self.sends, self.recvs), (dst, self.recvs, self.sends)):
            users, others = own[t].get(node, ()), other[t].get(node, ())
            if len(users) < streams and (not shared or len(users) + len(others) < shared):
                continue  # room for one more even with every piece there kept
            users = [p for p in users if p not in out]
            both = users + [p for p in others if p not in out]
            while len(users) >= streams or (shared and len(both) >= shared):
                gone = rng.choice(users if len(users) >= streams else both)
                out.add(gone)
                users = [p for p in users if p != gone]
                both = [p for p in both if p != gone]
        return out

    def take(self, t: int, src: int, dst: int, links: frozenset[Hashable], piece: Piece) -> None:
        for link in links:
            self.links[t][link] = piece
        self.sends[t].setdefault(src, []).append(piece)
        self.recvs[t].setdefault(dst, []).append(piece)

    def drop(self, t: int, src: int, dst: int, links: frozenset[Hashable], piece: Piece) -> None:
        for link in links:
            del self.links[t][link]
        self.sends[t][src].remove(piece)
        self.recvs[t][dst].remove(piece)


def place(pairs: list[tuple[int, int]], pieces: int, route: Route, port: PortModel, nnodes: int,
          rounds: int, rng: random.Random, steps: int) -> list[Leg] | None:
    """A placement of the pairs' pieces in `rounds` rounds by min-conflicts repair (the module
    docstring), or None where `steps` placements leave some piece out."""
    paths: dict[tuple[int, int], frozenset[Hashable]] = {}

    def links(a: int, b: int) -> frozenset[Hashable]:
        if (a, b) not in paths:
            paths[a, b] = frozenset(route(a, b))
        return paths[a, b]

    vias = {(src, dst): [v for v in range(nnodes) if v not in (src, dst)
                         and len(links(src, v)) + len(links(v, dst)) <= len(links(src, dst)) + DETOUR]
            for src, dst in pairs}
    state = Rounds(rounds, port)
    placed: dict[Piece, list[tuple[int, int, int]]] = {}
    queue = [(src, dst, k) for src, dst in pairs for k in range(pieces)]
    rng.shuffle(queue)
    queue.sort(key=lambda item: len(links(item[0], item[1])))  # longest popped first
    for _ in range(steps):
        if not queue:
            return [(t, a, b, piece[0], piece[1], piece[2])
                    for piece, legs in placed.items() for t, a, b in legs]
        piece = queue.pop()
        src, dst, _k = piece
        options: list[tuple[float, list[tuple[int, int, int]], set[Piece]]] = []
        for t in range(rounds):
            hit = state.conflicts(t, src, dst, links(src, dst), rng)
            options.append((len(hit) + rng.random(), [(t, src, dst)], hit))
        for via in vias[src, dst]:
            into = [state.conflicts(t, src, via, links(src, via), rng) for t in range(rounds - 1)]
            onto = [state.conflicts(t, via, dst, links(via, dst), rng) for t in range(1, rounds)]
            for first in range(rounds - 1):
                for then in range(first + 1, rounds):
                    hit = into[first] | onto[then - 1]
                    legs = [(first, src, via), (then, via, dst)]
                    options.append((len(hit) + RELAY_COST + rng.random(), legs, hit))
        _, legs, hit = min(options, key=lambda option: option[0])
        for other in hit:
            for t, a, b in placed.pop(other):
                state.drop(t, a, b, links(a, b), other)
            queue.insert(rng.choice((0, len(queue))), other)  # placed next or last
        for t, a, b in legs:
            state.take(t, a, b, links(a, b), piece)
        placed[piece] = legs
    return None


def stream_plan(coll: Collective, machine: Machine) -> tuple[int, list[Leg]] | str:
    """(pieces per block, the legs) of the first plan found, or why there is none."""
    if machine.route is None or machine.adapter is not None:
        return "the machine names no one fixed route per pair to keep apart in rounds"
    if machine.port.streams < 2:
        return ("a node streams one message at a time: relay-rounds places whole blocks for "
                "one-stream ports")
    unmet = search_unmet(coll, machine, "piece")
    if unmet is not None:
        return unmet
    m, n = coll.byte_matrix, coll.nprocs
    pairs = tuple((p, q) for p in range(n) for q in range(n) if p != q and m[p][q])
    if not pairs:
        return "every block stays on its node: no messages to place in rounds"
    smallest = min(m[p][q] for p, q in pairs)
    if smallest < min(pieces for pieces, _ in PLANS):
        return f"a block of {smallest} B cannot be cut in {min(p for p, _ in PLANS)} pieces"
    return pairs_plan(pairs, min(smallest, max(pieces for pieces, _ in PLANS)), machine)


@functools.lru_cache(maxsize=32)
def pairs_plan(pairs: tuple[tuple[int, int], ...], most_pieces: int,
               machine: Machine) -> tuple[int, list[Leg]] | str:
    """stream_plan's search, for the pairs that exchange blocks (whatever their sizes, so one
    search serves every block size) cut in at most `most_pieces`."""
    for pieces, rounds in PLANS:
        if pieces > most_pieces:
            continue
        rng = random.Random(SEED)
        for _ in range(ATTEMPTS):
            legs = place(list(pairs), pieces, machine.route, machine.port, machine.nnodes, rounds,
                         rng, STEPS)
            if legs is not None:
                return pieces, legs
    return (f"no placement found for any of {len(PLANS)} piece and round counts in {ATTEMPTS} "
            "tries each: every piece direct or through one relay, no link twice in a round")


def stream_rounds(coll: Collective, machine: Machine) -> str | None:
    """stream_plan finds rounds for the permutation on this machine."""
    plan = stream_plan(coll, machine)
    return plan if isinstance(plan, str) else None


def stream_rounds_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase per round of stream_plan (stream_rounds holds); each local copy in one piece
    a round, so that a relay's own copy delays no round."""
    plan = stream_plan(coll, machine)
    assert not isinstance(plan, str)
    pieces, legs = plan
    out = rounds_with_local_copies(coll, 1 + max(t for t, *_ in legs))
    m = coll.byte_matrix
    for t, src, dst, origin, final, k in legs:
        nbytes = m[origin][final]
        size = nbytes // pieces
        part = nbytes - k * size if k == pieces - 1 else size
        out[t].append(Transfer(src, dst, part, origin, final, 0, k * size))
    # a barrier closes every round but the last, after which each node only waits for its own
    return [Phase.of(p, SyncMode.BARRIER if k < len(out) - 1 else SyncMode.LOCAL)
            for k, p in enumerate(out)]
