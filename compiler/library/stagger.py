"""Permutations and shifts on a multi-route adapter, each message's route rotation staggered.

The SP2's adapter spreads a message's packets over the pair's routes round robin (packet k
of the pair's stream on route k mod R, R = 4 between switch boards), and the simulator moves
the packets of one route as one piece, route after route (registry.Adapter,
targets/bokhari/network.py `RoutedNetwork.packet_pieces`). Every pair's stream starts on route 0,
so in a permutation where each node sends one message at once all messages go through their
routes in the same order at the same time: in slot i (the i-th quarter of the wire time)
every message is on its route i. Under the SP2's D-mod-k routes the four nodes of a leaf
switch sending a transpose's blocks pick the same up-port (their destinations share the
digit the rule reads), so all four wait for one link in every slot while the leaf's three
other up-links idle; a piece holds both end engines while it waits for its links, so the
waits chain (sp2:64 transpose at 128 KB: 24.0 ms where the engines need 11.3 ms).

`staggered` moves each message's start on its routes: a message with offset k first sends a
lead-in of k packets (one packet on each of routes 0..k-1; offset 0 a lead-in of R packets, so
that every pair's rest starts alike), then the rest of its block, which starts on route k;
in slot i it is on route (k + i) mod R. The offsets are chosen so that few messages hold one
link in one slot, or in the slots beside it (a message delayed by part of a slot meets
those): greedily, longest routes first, each message the offset whose slots' links carry
fewest others, then passes that re-place each message, ties drawn at random (a fixed seed).
The model is the slots alone: the pieces of a pair's two messages take turns on the shared
engines, and which goes first is the simulator's; measured, sp2:64's transpose goes from 0.47
to 0.69-0.73 of its bound at 16 KB-1 MB, sp2:16's from 0.68 to 0.94-0.99
(docs/efficiency.md, branch relayperm). The lead-ins go in a phase before the rests, so a
node's rest starts once its own lead-in has gone and its partner's has come (one start-up
more). Where a block has fewer than 2R packets, the message goes whole (offset 0).

`staggered-halves` keeps the lead-ins but sends the rests in two phases (three where a cycle
of the permutation is odd) in which no node both sends and receives: the messages alternate
along each cycle (a transpose's pairs: one way, then the other). A shared engine carries a
node's send and its receive one after the other anyway, so nothing waits for that; what
changes is that a phase's messages no longer take turns with their partners' on the engines,
so each goes through its slots at once, and its offsets can be chosen so that no two messages
of the phase hold one link in one slot (apart_offsets: a min-conflicts search, exact where
choose_offsets weighs crowding). On sp2:64's transpose such offsets exist for both phases;
each phase then takes one start-up and one block's wire time: with the lead-ins 3 start-ups
and 2 blocks, where the bound is 1 start-up and 2 blocks (docs/efficiency.md, branch perm).

It assumes every pair's round robin starts at route 0, as in a fresh network: earlier
messages of a pair (an earlier collective) leave the pair's pointer elsewhere, and the
offsets are then off by as much (the data still arrive; only the time changes).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Sequence

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

MAX_PASSES = 16  # re-placement passes after the greedy placement


def multi_route_adapter(coll: Collective, machine: Machine) -> str | None:
    """The machine's adapter spreads a message over several routes (registry.Adapter)."""
    if machine.adapter is None:
        return ("the machine sends each message on one route: there is no round robin over "
                "routes to stagger")
    return None


def one_message_each(coll: Collective, machine: Machine) -> str | None:
    """Each node sends at most one message and receives at most one (a permutation or shift)."""
    m, n = coll.byte_matrix, coll.nprocs
    for p in range(n):
        out = [q for q in range(n) if q != p and m[p][q]]
        into = [q for q in range(n) if q != p and m[q][p]]
        if len(out) > 1 or len(into) > 1:
            way = f"sends to {len(out)}" if len(out) > 1 else f"receives from {len(into)}"
            return f"node {p} {way} nodes: the staggered slots assume one message each way"
    return None


class Slots:
    """Which messages hold each link in each slot, for the offsets chosen so far."""

    def __init__(self, routes: list[Sequence[Sequence[Hashable]]], slots: int):
        self.routes, self.slots = routes, slots
        self.use: Counter[tuple[int, Hashable]] = Counter()

    def links(self, message: int, offset: int) -> list[tuple[int, Hashable]]:
        """(slot, link) pairs the message holds when it starts on route `offset`."""
        routes = self.routes[message]
        count = len(routes)
        return [(i, link) for i in range(self.slots)
                for link in routes[(offset + i * count // self.slots) % count]]

    def crowding(self, message: int, offset: int) -> int:
        """Other messages on the links this one would hold, slot by slot, counted twice, and in
        the slots beside (a message that slips by part of a slot meets those) once."""
        return sum(2 * self.use[(i, link)] + self.use[(i - 1, link)] + self.use[(i + 1, link)]
                   for i, link in self.links(message, offset))

    def place(self, message: int, offset: int, sign: int = 1) -> None:
        for key in self.links(message, offset):
            self.use[key] += sign


def choose_offsets(routes: list[Sequence[Sequence[Hashable]]], allowed: list[list[int]]) -> list[int]:
    """An offset per message among its `allowed` (0 first), so that messages crowd each other
    little (Slots.crowding): greedy, longest routes first, then passes re-placing each message at
    its least crowded offset, a tie going to one drawn at random (sideways moves, which let the
    search leave a plateau; a fixed seed, so the schedule is the same every time), until none
    crowds another or MAX_PASSES; the best seen."""
    slots = max((len(r) for r in routes), default=1)
    table = Slots(routes, slots)
    offsets = [0] * len(routes)
    order = sorted(range(len(routes)), key=lambda e: -sum(len(r) for r in routes[e]))
    shared = 0  # the crowding summed over messages placed
    for e in order:
        offsets[e] = min(allowed[e], key=lambda k: (table.crowding(e, k), k))
        shared += table.crowding(e, offsets[e])
        table.place(e, offsets[e])
    best, best_offsets = shared, list(offsets)
    rng = random.Random(0)
    for _ in range(MAX_PASSES):
        if best == 0:
            break
        for e in order:
            table.place(e, offsets[e], -1)
            crowding = {k: table.crowding(e, k) for k in allowed[e]}
            least = min(crowding.values())
            pick = rng.choice([k for k in allowed[e] if crowding[k] == least])
            shared += least - crowding[offsets[e]]
            offsets[e] = pick
            table.place(e, offsets[e])
            if shared < best:
                best, best_offsets = shared, list(offsets)
    return best_offsets


def _messages(coll: Collective, machine: Machine):
    """The messages (src, dst, bytes), each one's routes, whether it staggers, and the packet.
    A message staggers where it has several routes and its block gives a lead-in of up to R
    packets with at least R packets after it; the others go whole, on route 0 first."""
    adapter = machine.adapter
    assert adapter is not None  # multi_route_adapter holds
    m, n, packet = coll.byte_matrix, coll.nprocs, adapter.packet_bytes
    pairs = [(p, q, m[p][q]) for p in range(n) for q in range(n) if p != q and m[p][q]]
    routes = [adapter.routes(p, q) for p, q, _ in pairs]
    staggers = [len(r) > 1 and nbytes >= 2 * len(r) * packet for (_, _, nbytes), r in zip(pairs, routes)]
    return pairs, routes, staggers, packet


def staggered_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Local copies and the lead-ins, then every message's rest (offsets: choose_offsets)."""
    pairs, routes, staggers, packet = _messages(coll, machine)
    allowed = [list(range(len(r))) if s else [0] for r, s in zip(routes, staggers)]
    leads, rests = [], []
    for (p, q, nbytes), r, k, stagger in zip(pairs, routes, choose_offsets(routes, allowed), staggers):
        if stagger:  # offset 0 takes a lead-in of R packets, so that every rest starts alike
            lead = (k or len(r)) * packet
            leads.append(Transfer(p, q, lead, p, q, 0, 0))
            rests.append(Transfer(p, q, nbytes - lead, p, q, 0, lead))
        else:
            rests.append(Transfer(p, q, nbytes, p, q))
    return [Phase.of(local_copies(coll) + leads), Phase.of(rests)]


def alternating_classes(pairs: Sequence[tuple[int, int, int]]) -> list[int]:
    """A phase per message of a permutation (each node sends at most one and receives at most
    one) such that no node sends and receives in one phase: along each path or cycle of the
    permutation the messages alternate between 0 and 1; an odd cycle's last message takes 2."""
    leaving = {p: e for e, (p, _, _) in enumerate(pairs)}  # the message node p sends
    receiving = {q for _, q, _ in pairs}
    starts = [e for e, (p, _, _) in enumerate(pairs) if p not in receiving]  # paths first
    classes = [-1] * len(pairs)
    for first in starts + list(range(len(pairs))):
        chain: list[int] = []
        e: int | None = first
        while e is not None and classes[e] < 0:
            classes[e] = len(chain) % 2
            chain.append(e)
            e = leaving.get(pairs[e][1])
        if e == first and len(chain) % 2:  # an odd cycle closes on a message of class 0
            classes[chain[-1]] = 2
    return classes


def apart_offsets(routes: Sequence[Sequence[Sequence[Hashable]]], allowed: list[list[int]],
                  steps: int = 2000, restarts: int = 20) -> list[int]:
    """An offset per message among its `allowed` such that no two messages hold one link in
    one slot, where the search finds one: min-conflicts (a message drawn at random moves to
    its offset of fewest links shared, ties drawn at random), restarted from random offsets
    with seeds 0, 1, ...; the offsets of fewest links shared seen at the end of an attempt."""
    slots = max((len(r) for r in routes), default=1)
    best: tuple[int, list[int]] | None = None
    for attempt in range(restarts):
        rng = random.Random(attempt)
        table = Slots(routes, slots)
        offsets = [rng.choice(a) for a in allowed]
        for e, k in enumerate(offsets):
            table.place(e, k)
        shared = shared_links(table)
        for _ in range(steps):
            if shared == 0:
                break
            e = rng.randrange(len(routes))
            shared -= sum(table.use[key] > 1 for key in table.links(e, offsets[e]))
            table.place(e, offsets[e], -1)
            held = {k: sum(table.use[key] for key in table.links(e, k)) for k in allowed[e]}
            least = min(held.values())
            offsets[e] = rng.choice([k for k in allowed[e] if held[k] == least])
            shared += sum(table.use[key] > 0 for key in table.links(e, offsets[e]))
            table.place(e, offsets[e])
        if best is None or shared < best[0]:
            best = (shared, offsets)
        if best[0] == 0:
            break
    return best[1] if best is not None else []


def shared_links(table: Slots) -> int:
    """Messages beyond the first on a link in a slot, summed over links and slots."""
    return sum(count - 1 for count in table.use.values() if count > 1)


def staggered_halves_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Local copies and the lead-ins, then the rests in the phases of alternating_classes, each
    phase's offsets apart (apart_offsets)."""
    pairs, routes, staggers, packet = _messages(coll, machine)
    classes = alternating_classes(pairs)
    offsets = [0] * len(pairs)
    for c in sorted(set(classes)):
        members = [e for e, ce in enumerate(classes) if ce == c]
        chosen = apart_offsets([routes[e] for e in members],
                               [list(range(len(routes[e]))) if staggers[e] else [0] for e in members])
        for e, k in zip(members, chosen):
            offsets[e] = k
    leads: list[Transfer] = []
    rests: list[list[Transfer]] = [[] for _ in range(max(classes, default=0) + 1)]
    for (p, q, nbytes), r, k, stagger, c in zip(pairs, routes, offsets, staggers, classes):
        if stagger:  # offset 0 takes a lead-in of R packets, so that every rest starts alike
            lead = (k or len(r)) * packet
            leads.append(Transfer(p, q, lead, p, q, 0, 0))
            rests[c].append(Transfer(p, q, nbytes - lead, p, q, 0, lead))
        else:
            rests[c].append(Transfer(p, q, nbytes, p, q))
    return [Phase.of(local_copies(coll) + leads), *(Phase.of(r) for r in rests)]
