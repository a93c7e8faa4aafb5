"""`cluster-allgather`: an allgather in the group exchange's cycle order, each block sent once
between two clusters (issue 27, docs/efficiency.md session 21).

Each PP sends its block to the PP with its place in every other cluster; the blocks a cluster's
PPs send one other cluster travel as one packet (the CC packs a message id's blocks,
exchange.cluster_message), and the packets go in the order of the group exchange's plan
(exchange.group_slots: every cluster sends one packet and receives one a cycle, Sec. 5), one
plan cycle an eager phase. A PP copies each block that reaches it to its cluster's three other
PPs over the shared bus (Sec. 3.1) two eager phases after it was sent (received in the next
phase, compiler/schedule.py SyncMode.EAGER), while the cycles carry the next packets. So every
block crosses between two clusters once, where the library's doublings and rings forward it
through clusters between (far-first-doubling: 7.28 ms for 2 KB blocks on 32 PPs; this: 4.86).

No closed form: the DPs' sharing between the cycles' DMA, staging, release and the bus copies is
left to the simulator, which `auto` runs, as for the cluster chain.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.eager import FORWARD_GAP, eager_due_next
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.targets.proteus.exchange import cluster_message, group_slots, in_memory
from phalanx.targets.proteus.topology import Topology, spans_machine

GAP = FORWARD_GAP  # phases from a packet's send to the copies of its blocks (received in the next)


def whole_allgather(coll: Collective, topo: Topology) -> str | None:
    """Why `cluster-allgather` cannot serve `coll` (None: it can): an allgather of every PP of
    the machine over more than one cluster."""
    if (why := spans_machine(coll, topo, (Kind.ALLGATHER,), "an allgather")) is not None:
        return why
    if topo.nclusters < 2:
        return "the machine has one cluster: there is nothing to send between clusters"
    m = coll.byte_matrix
    short = sum(1 for a in range(coll.nprocs) for b in range(coll.nprocs) if a != b and m[a][b] == 0)
    if short:  # a head copies to its mates only what it received itself
        return f"{short} pairs of PPs exchange no block"
    return None


def cluster_allgather_phases(coll: Collective, topo: Topology) -> list[Phase]:
    """Eager phases: plan cycle k's packets in phase k, their blocks' copies in phase k + GAP;
    the blocks within a cluster (own ones included) in the first phase."""
    m, pps = coll.byte_matrix, topo.pps
    slots = group_slots(topo)
    sends: list[list[Transfer]] = [[] for _ in range(len(slots) + GAP)]
    sends[0] += in_memory(coll, topo)
    for k, slot in enumerate(slots):
        for src, dst in slot:
            message = cluster_message(src, dst, topo)
            for place in range(pps):
                origin, head = src * pps + place, dst * pps + place
                if m[origin][head] > 0:
                    sends[k].append(Transfer(origin, head, int(m[origin][head]), origin, head, message))
                sends[k + GAP] += [Transfer(head, mate, int(m[origin][mate]), origin, mate)
                                   for mate in range(dst * pps, (dst + 1) * pps)
                                   if mate != head and m[origin][mate] > 0]
    return eager_due_next(sends)
