"""`paired-ring` and `zigzag-ring`: ring allgathers and allreduces for one-engine nodes (issue 27).

On a machine whose node has one engine for its sends and its receives (the Paragon, SP2 and
CS-2: seed 003 Sec. 3.1), a message holds its sender's engine for the start-up, then both end
engines and its route for its wire time (targets/bokhari/network.py), taking the lower node's
engine first. In a ring step every member sends to v + 1 and receives from v - 1, so the step's
messages form a cycle through the engines: each message that got its lower engine waits for the
higher one, held by the next message, and the step's wires run in a chain, not two at a time
(`ring` on cs2:64 allgather, 1 MB: 4.94 s, 1.5x the two wire times a step).

Here step s is two phases: the members of even virtual rank send theirs first (to odd ones), then
the odd members (to even ones). Each half is a matching of the engines, so its messages take one
start-up and one wire time at once; every member's engine carries its send and its receive of the
step, each in one half. On 2m members:

    allgather:  T = 2 (2m - 1) (alpha + b beta)
    allreduce:  T = 4 (2m - 1) (alpha + n / (2m) beta) + the merges of the reduce-scatter half

(b a member's part, n a partial; the merges as `ring`'s). The allgather meets its form (tested
on cs2:16; cs2:64 16 KB 64.84 ms); the allreduce's form is a floor it stays near, not met (cs2:64
1 MB: 134.8 ms against 131.0: a member merges a piece before it passes it on, between its
half-steps; its declared gap). The busiest engine carries 2 (2m - 1)
part times, what the engines' total allows (docs/bounds.md, "Shared engines"): the schedule
meets `engine start-ups` at long parts but for its 2 (2m - 1) start-ups a member. In node order
the ring crosses each leaf switch of a fat tree once, so its one entry link from the stage above
carries one message a step (cs2:64: the entry-link queueing that holds far-first-doubling to
0.7 of the bound does not arise).

`zigzag-ring` is the plain ring over the ranks in the order 1, 0, 3, 2, ... (v XOR 1), one phase
a step. A member's two ring neighbours are then both above it or both below it in node order
(but at the wrap-around), so every message's lower engine is the one of its two ends that
the other message of that end also takes first: a message waits at most for one that holds
both its engines already, not for a chain. The steps are not kept apart, so a member's start-up
can run while its engine would otherwise wait for its receive: cs2:64 allgather 16 KB 61.10 ms
(paired: 64.84, bound 51.82), allreduce 1 MB 119.9 ms (paired 134.8), but at 128 KB parts and
above the paired ring's lockstep wins (426.1 against 432.9 ms). No closed form: how much of the
start-ups the engines' order hides is the declared gap (PORT_MODEL_GAP on these targets).

Offered where nodes share one engine for both directions, one message at a time (catalog.py
ONE_ENGINE: a separate send engine lets the plain ring run both directions at once), on an even
number of members (on an odd ring the wrap-around pair would be of one parity).
"""

from __future__ import annotations

from phalanx.compiler.library import allreduce, group
from phalanx.compiler.library.members import group_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def paired_ring_allgather_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """group.ring_phases, every step in two halves by the sender's rank parity."""
    return in_halves(group.ring_phases(coll, machine), group_order(coll))


def paired_ring_allreduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """allreduce.ring_phases, every step in two halves by the sender's rank parity."""
    return in_halves(allreduce.ring_phases(coll, machine), group_order(coll))


def zigzag_ring_allgather_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The plain ring allgather over the members in zigzag order (`zigzag_order`)."""
    return group.ring_over(coll, zigzag_order(coll))


def zigzag_ring_allreduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The plain ring allreduce over the members in zigzag order (`zigzag_order`)."""
    return allreduce.ring_over(coll, machine, zigzag_order(coll))


def zigzag_order(coll: Collective) -> list[int]:
    """The members in the order of ranks 1, 0, 3, 2, ... (v XOR 1): in node order every member's
    two ring neighbours are both above it or both below it (but at the wrap-around)."""
    order = group_order(coll)
    return [order[v ^ 1] for v in range(len(order))]


def in_halves(phases: list[Phase], order: list[int]) -> list[Phase]:
    """Each phase as two: the transfers sent by members of even virtual rank, then the others
    (a member's copy of its own data goes with its own parity's half)."""
    rank = {node: v for v, node in enumerate(order)}

    def half(transfers: tuple[Transfer, ...], parity: int) -> tuple[Transfer, ...]:
        return tuple(t for t in transfers if rank[t.src] % 2 == parity)

    return [Phase(half(p.sends, parity), half(p.recvs, parity), p.sync)
            for p in phases for parity in (0, 1)]


def even_members(coll: Collective, machine: Machine) -> str | None:
    """Precondition: an even number of members (the half-steps alternate parities round the ring)."""
    members = len(group_order(coll))
    if members % 2:
        return (f"it pairs even and odd ranks round the ring, so it needs an even number of "
                f"members, but {members} take part")
    return None
