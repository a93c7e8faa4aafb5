"""Permutations on fixed routes in a few whole-block rounds, each block direct or through one
relay, no two messages of a round on one link and one message a port each way.

Where the machine routes every pair on one fixed path (e-cube on the hypercube, row-column
on the Paragon, dimension order on the tori), a transpose's direct messages crowd the links
next to the diagonal (4 on one hypercube:6 or torus:8x8 link, 7 on paragon:8x8's: docs/bounds.md,
"Fixed routes"), so `direct` takes 4-7 message times. If the messages can be put in R rounds
so that within a round no link carries two of them and no node sends or receives more than one
(a shared engine: one message, sent or received), each round takes one
start-up and one block's wire time, and the whole takes

    T = R (alpha + beta b)        (a prediction; R = 2 on hypercube:6, 4 on paragon:8x8)

On machines whose nodes stream several messages at once (iWarp, the tori) it is not offered:
there a round of one message a node leaves streams idle (torus:8x8's transpose took 3 rounds
and 4 blocks' time, no faster than `direct`).

A block that fits no round goes through a relay: to a node v in round t1 and from v to its
destination in a later round t2, v's port free to receive in t1 and to send in t2 and both
legs' links free.

The rounds are found greedily: the blocks of the longest routes first, each direct in the
first round (in a random order) that takes it, else through the relay whose two legs are
shortest among those that fit, ties drawn at random (a fixed seed, so compiles repeat).
R = 2, 3, ... MAX_ROUNDS, each tried ATTEMPTS times; the first plan found is the schedule. Where
none is found, the algorithm is refused with that reason. The search tries every relay for each
block, so it is offered up to MAX_NODES nodes.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine, PortModel, Route
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

MAX_ROUNDS = 5
ATTEMPTS = 8  # greedy placements tried per round count (paragon:4x4's 2 rounds need more than 4)
MAX_NODES = 128
SEED = 27


@dataclass
class Round:
    """What one round has taken so far: each node's sends and receives, and the links."""

    sends: set[int]
    recvs: set[int]
    links: set[Hashable]

    def fits(self, src: int, dst: int, links: frozenset[Hashable], port: PortModel) -> bool:
        """Whether one more message src -> dst keeps the round within ports and links: a
        node sends one message and receives one, on a shared engine one of the two."""
        if self.links & links or src in self.sends or dst in self.recvs:
            return False
        return not port.shared_engine or not ({src, dst} & (self.sends | self.recvs))

    def take(self, src: int, dst: int, links: frozenset[Hashable]) -> None:
        self.sends.add(src)
        self.recvs.add(dst)
        self.links |= links


# A leg of a plan: (round, src, dst, origin, final)
Leg = tuple[int, int, int, int, int]


def place(pairs: list[tuple[int, int]], route: Route, port: PortModel, nnodes: int, rounds: int,
          rng: random.Random) -> list[Leg] | None:
    """One greedy placement of the pairs' blocks in `rounds` rounds (the module docstring), or
    None where a block fits neither direct nor through a relay."""
    paths: dict[tuple[int, int], frozenset[Hashable]] = {}

    def links(a: int, b: int) -> frozenset[Hashable]:
        if (a, b) not in paths:
            paths[a, b] = frozenset(route(a, b))
        return paths[a, b]

    taken = [Round(set(), set(), set()) for _ in range(rounds)]
    order = list(pairs)
    rng.shuffle(order)
    order.sort(key=lambda pair: -len(links(*pair)))
    legs: list[Leg] = []
    for src, dst in order:
        direct = links(src, dst)
        free = [t for t in rng.sample(range(rounds), rounds) if taken[t].fits(src, dst, direct, port)]
        if free:
            taken[free[0]].take(src, dst, direct)
            legs.append((free[0], src, dst, src, dst))
            continue
        best: tuple[float, int, int, int] | None = None
        for first in range(rounds - 1):
            for via in range(nnodes):
                if via in (src, dst) or not taken[first].fits(src, via, links(src, via), port):
                    continue
                for then in range(first + 1, rounds):
                    if taken[then].fits(via, dst, links(via, dst), port):
                        score = len(links(src, via)) + len(links(via, dst)) + rng.random()
                        if best is None or score < best[0]:
                            best = (score, first, then, via)
        if best is None:
            return None
        _, first, then, via = best
        taken[first].take(src, via, links(src, via))
        taken[then].take(via, dst, links(via, dst))
        legs += [(first, src, via, src, dst), (then, via, dst, src, dst)]
    return legs


@functools.lru_cache(maxsize=32)
def search_unmet(coll: Collective, machine: Machine, unit: str) -> str | None:
    """Why the rounds' search (of every relay of every `unit`: block or piece) is not run on
    this collective, or None: too many nodes, or not the whole machine (shared by relay-rounds
    and stream-rounds)."""
    if coll.nprocs > MAX_NODES:
        return f"it searches every relay of every {unit}, up to {MAX_NODES} nodes ({coll.nprocs} here)"
    if coll.nprocs != machine.nnodes:
        return (f"it needs all {machine.nnodes} nodes of the machine (its processors are then the "
                f"routes' nodes), but the collective has {coll.nprocs} processors")
    return None


def relay_plan(coll: Collective, machine: Machine) -> list[Leg] | str:
    """The legs of the fewest rounds found, or why there are none."""
    if machine.route is None or machine.adapter is not None:
        return "the machine names no one fixed route per pair to keep apart in rounds"
    if machine.port.streams > 1:
        return (f"a node streams {machine.port.streams} messages at once: the rounds place one "
                "message a port, for machines whose nodes send one at a time")
    unmet = search_unmet(coll, machine, "block")
    if unmet is not None:
        return unmet
    m, n = coll.byte_matrix, coll.nprocs
    pairs = [(p, q) for p in range(n) for q in range(n) if p != q and m[p][q]]
    for ends, way in ((Counter(p for p, _ in pairs), "sends"), (Counter(q for _, q in pairs), "receives")):
        node, count = ends.most_common(1)[0] if ends else (0, 0)
        if count > 1:
            return f"node {node} {way} {count} messages: the rounds place one block a node each way"
    for rounds in range(2, MAX_ROUNDS + 1):
        rng = random.Random(SEED)
        for _ in range(ATTEMPTS):
            legs = place(pairs, machine.route, machine.port, machine.nnodes, rounds, rng)
            if legs is not None:
                return legs
    return (f"no placement of at most {MAX_ROUNDS} rounds found in {ATTEMPTS} tries each: every "
            "block direct or through one relay, no link twice in a round")


def relay_rounds(coll: Collective, machine: Machine) -> str | None:
    """relay_plan finds rounds for the permutation on this machine."""
    plan = relay_plan(coll, machine)
    return plan if isinstance(plan, str) else None


def rounds_with_local_copies(coll: Collective, rounds: int) -> list[list[Transfer]]:
    """`rounds` rounds of transfers, each holding one piece of every local copy: a relay's own
    copy then delays no round (shared by relay-rounds and stream-rounds)."""
    out: list[list[Transfer]] = [[] for _ in range(rounds)]
    for copy in local_copies(coll):
        size = copy.nbytes // rounds
        for k, phase in enumerate(out):
            part = copy.nbytes - k * size if k == rounds - 1 else size
            if part > 0:
                phase.append(Transfer(copy.src, copy.dst, part, copy.origin, copy.final, 0, k * size))
    return out


def relay_rounds_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase per round of relay_plan (relay_rounds holds); each local copy in one piece a
    round, so that a node that relays does not start its next round late (a 1 MB copy takes
    14.7 ms on the Paragon's memory, a round 11.6)."""
    legs = relay_plan(coll, machine)
    assert not isinstance(legs, str)
    out = rounds_with_local_copies(coll, 1 + max(t for t, *_ in legs))
    m = coll.byte_matrix
    for t, src, dst, origin, final in legs:
        out[t].append(Transfer(src, dst, m[origin][final], origin, final))
    return [Phase.of(p) for p in out]
