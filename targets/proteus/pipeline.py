"""`cluster-chain`: a broadcast pipelined along the clusters, its pieces queued for the cycles
(issue 27, docs/efficiency.md session 20).

The root's message goes in pieces along a chain of cluster heads: the root, then one PP of each
other cluster in turn (the PP with the root's place in its cluster). A head sends each piece on
to the next head and copies it to its own cluster's other PPs over the shared bus (Sec. 3.1), so
every cluster receives the message once and sends it once, and the cycles carry one piece per
cluster and direction (Sec. 3.2). The phases are eager: a head forwards a batch of pieces two
phases after the phase that brings it (compiler/schedule.py SyncMode.EAGER). Where there are
many pieces a batch is three, so that the two phases in flight keep a cluster controller fed for
the three cycle boundaries a packet takes from request to release (Sec. 3.3); with fewer, one
piece a phase keeps the chain's fill short (measured on proteus: 128 KB in 32 pieces 16.4 ms a
piece a phase, 19.6 two; 1 MB in 128 pieces, broadcast 101.7, 91.2, 94.8 ms and reduce 127.1,
132.9, 104.4 ms for one, two, three). Against the library's broadcasts this trades their
doubling's contended 64 KB cycles for short ones: 1 MB on 8 clusters in 8 KB pieces takes 94.8
ms where cut-scatter-doubling takes 150.5.

Pieces: a piece of p bytes costs a cycle of a control part plus p at the DMA's contended rate
(cost.cycle_s, four streams on the DP), and the chain adds three boundaries a hop, so
(B / p + 3 (C - 1)) (control + p / rate) is least at p = sqrt(B control rate / (3 (C - 1))),
rounded to a power of two between 1 KB and a packet. No closed form of the whole: the DPs'
sharing between the pieces, the release and the bus copies is left to the simulator.
"""

from __future__ import annotations

import math

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.eager import FORWARD_GAP, eager_due_next
from phalanx.compiler.library.members import local_copies, receivers, root_of, senders
from phalanx.compiler.library.rooted import segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer
from phalanx.targets.proteus.cost import dma_Bps
from phalanx.targets.proteus.params import ProteusParams
from phalanx.targets.proteus.topology import Topology, spans_machine

GAP = FORWARD_GAP  # phases from a batch's send to its forwarding (received in the next, sent the one after)
MANY_PIECES = 64  # from here a head sends three pieces a phase, below one


def pieces_a_phase(pieces: int) -> int:
    """Pieces a head sends a phase: one, or three where there are many (module docstring)."""
    return 3 if pieces >= MANY_PIECES else 1


def whole_machine(coll: Collective, topo: Topology) -> str | None:
    """Why the chain cannot serve `coll` (None: it can): a broadcast of one block from its root
    to every other PP, or a reduce of every other PP's partial of one size to its root, over
    more than one cluster."""
    if (why := spans_machine(coll, topo, (Kind.BROADCAST, Kind.REDUCE), "a broadcast or reduce")) is not None:
        return why
    root, m = root_of(coll), coll.byte_matrix
    broadcast = coll.kind is Kind.BROADCAST
    others = receivers(coll) if broadcast else senders(coll)
    if set(others) != set(range(coll.nprocs)) - {root}:
        verb = "receive the root's block" if broadcast else "send the root a partial"
        return f"{len(others)} of the {coll.nprocs - 1} other PPs {verb}"
    if len({int(m[root][d] if broadcast else m[d][root]) for d in others}) != 1:
        return "the PPs' blocks differ in size"
    if topo.nclusters < 2:
        return "the machine has one cluster: there is no chain of clusters"
    return None


def piece_bytes(block: int, topo: Topology, p: ProteusParams) -> int:
    """The piece size of the module docstring: sqrt(B control rate / (3 (C - 1))), a power of two
    from 1 KB to a packet, and no more than the block."""
    best = math.sqrt(block * p.overhead_s * dma_Bps(p) / (3.0 * (topo.nclusters - 1)))
    power = 1 << max(10, min(round(math.log2(max(best, 1.0))), int(p.packet_bytes).bit_length() - 1))
    return max(1, min(power, block))


def cluster_chain_phases(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    """A broadcast's chain (module docstring) or a reduce's (`reduce_chain_phases`)."""
    if coll.kind is Kind.REDUCE:
        return reduce_chain_phases(coll, topo, p)
    return broadcast_chain_phases(coll, topo, p)


def chain_of_heads(coll: Collective, topo: Topology, p: ProteusParams
                   ) -> tuple[list[int], list[int], list[list[tuple[int, int]]]]:
    """The clusters from the root's on, their heads (the PP with the root's place in its
    cluster) and the block's pieces in batches (`pieces_a_phase`)."""
    root, pps = root_of(coll), topo.pps
    m = coll.byte_matrix
    other = (receivers(coll) if coll.kind is Kind.BROADCAST else senders(coll))[0]
    block = int(m[root][other] if coll.kind is Kind.BROADCAST else m[other][root])
    clusters = [(root // pps + h) % topo.nclusters for h in range(topo.nclusters)]
    heads = [c * pps + root % pps for c in clusters]
    pieces = segments(block, -(-block // piece_bytes(block, topo, p)))
    size = pieces_a_phase(len(pieces))
    return clusters, heads, [pieces[i:i + size] for i in range(0, len(pieces), size)]


def broadcast_chain_phases(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    """Eager phases: head h sends batch b in phase GAP h + b to the next head and to its
    cluster's other PPs (module docstring); the root's own copy after its last piece."""
    root, pps = root_of(coll), topo.pps
    clusters, heads, batches = chain_of_heads(coll, topo, p)
    count = len(batches) + GAP * (len(heads) - 1)
    sends: list[list[Transfer]] = [[] for _ in range(count)]
    for h, (cluster, head) in enumerate(zip(clusters, heads)):
        targets = [cluster * pps + q for q in range(pps) if cluster * pps + q != head]
        if h + 1 < len(heads):
            targets.insert(0, heads[h + 1])
        for b, batch in enumerate(batches):
            sends[GAP * h + b] += [Transfer(head, dst, nbytes, root, dst, 0, offset)
                                   for offset, nbytes in batch for dst in targets]
    sends[len(batches) - 1] += local_copies(coll)
    return eager_due_next(sends)


def reduce_chain_phases(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    """The broadcast's chain run backwards: the farthest cluster's PPs send their pieces to its
    head, which combines them and sends them on; each head combines the pieces that come with
    its own cluster's and sends them towards the root's, whose head is the root. Batch b leaves
    the head j clusters from the far end in phase GAP + GAP j + b, its cluster's PPs sending
    their own GAP phases before."""
    root, pps, m = root_of(coll), topo.pps, coll.byte_matrix
    clusters, heads, batches = chain_of_heads(coll, topo, p)
    far = len(heads) - 1
    count = GAP * far + len(batches)  # the root's cluster sends last, its PPs to the root
    sends: list[list[Transfer]] = [[] for _ in range(count)]
    for h, (cluster, head) in enumerate(zip(clusters, heads)):
        j = far - h  # clusters from the far end
        members = [cluster * pps + q for q in range(pps)]
        beyond = [x for c in clusters[h:] for x in range(c * pps, (c + 1) * pps)]  # combined at the head
        for b, batch in enumerate(batches):
            for offset, nbytes in batch:
                sends[GAP * j + b] += [Transfer(x, head, nbytes, x, root, 0, offset)
                                       for x in members if x != head]
                if h:
                    onward = heads[h - 1]
                    sends[GAP + GAP * j + b] += [Transfer(head, onward, nbytes, o, root, COMBINED, offset)
                                                 for o in beyond if m[o][root]]
    sends[0] = local_copies(coll) + sends[0]
    return eager_due_next(sends)
