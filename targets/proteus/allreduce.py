"""`cluster-allreduce`: an allreduce in three levels, the clusters' shared bus, then recursive
doubling between clusters, then the bus again (issue 27, docs/efficiency.md session 21).

A step between clusters costs three cycle boundaries (Sec. 3.3: a request posted in cycle q is
forwarded at q + 1, transmitted in q + 2 and released at q + 3), and a cluster sends one packet a
cycle (Sec. 3.2); the library's doublings and halvings take five steps over the 32 PPs, three of
them between clusters with four PPs' packets each. Here the PPs of a cluster first reduce over
the bus (Sec. 3.1), so that each step between clusters is one packet a cluster:

- partials of at least one element a PP: a reduce-scatter over the bus (PP i of a cluster gets
  its mates' piece i, the partial cut in `pps` pieces), recursive doubling of piece i between
  the PPs of place i of the clusters (the four PPs' messages to one cluster one packet: one
  message id), then an allgather of the pieces over the bus;
- smaller partials: the cluster's PPs send theirs to its first PP (its head), the heads double,
  and each head sends the result to its PPs.

The doubling's steps exchange over cluster masks 1, 2, 4, ... one at a time, or, where a
packet's data takes less than half a cycle's control part, the first two masks' three partners
at once (radix 4): its three packets go in consecutive cycles, so the step costs two busy cycles
more and three boundaries fewer than two steps. 2 KB partials on 32 PPs: 1.29 ms where
cut-halving takes 1.65; 128 B: 0.83 ms (radix 4) where recursive doubling takes 0.97.

No closed form (`auto` simulates it).
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library import group
from phalanx.compiler.library.rooted import element_pieces
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer
from phalanx.targets.proteus.cost import dma_Bps
from phalanx.targets.proteus.params import ProteusParams
from phalanx.targets.proteus.topology import Topology, spans_machine


def whole_allreduce(coll: Collective, topo: Topology) -> str | None:
    """Why `cluster-allreduce` cannot serve `coll` (None: it can): an allreduce of every PP of
    the machine, partials of one size, on 2^k clusters of more than one."""
    if (why := spans_machine(coll, topo, (Kind.ALLREDUCE,), "an allreduce")) is not None:
        return why
    if coll.block_bytes is None:
        return "the partials are not all of one size"
    clusters = topo.nclusters
    if clusters < 2 or clusters & (clusters - 1):
        return f"its doubling needs 2^k clusters, not {clusters}"
    return None


def doubling_steps(clusters: int, packet_bytes: int, p: ProteusParams) -> list[list[int]]:
    """The cluster masks of each doubling step (module docstring): radix 4 first where two
    more busy cycles of the packet cost less than the control part it saves."""
    masks = [1 << k for k in range(clusters.bit_length() - 1)]
    if len(masks) >= 2 and 2 * packet_bytes / dma_Bps(p) < p.overhead_s:
        return [[masks[0], masks[1], masks[0] | masks[1]]] + [[m] for m in masks[2:]]
    return [[m] for m in masks]


def cluster_allreduce_phases(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    """The pieces' three levels where every PP gets at least an element, else the heads'."""
    pps = topo.pps
    if (coll.block_bytes or 0) // (coll.element_bytes or 1) >= pps:
        return _pieces(coll, topo, p)
    return _heads(coll, topo, p)


def _pieces(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    n, pps = coll.nprocs, topo.pps
    pieces = element_pieces(coll, pps)

    def piece(src: int, dst: int, origin: int, final: int, j: int) -> Transfer:
        offset, nbytes = pieces[j]
        return Transfer(src, dst, nbytes, origin, final, COMBINED, offset)

    def mates(pp: int) -> list[int]:
        return [pp - pp % pps + j for j in range(pps) if pp - pp % pps + j != pp]

    phases = [[piece(a, b, a, b, b % pps) for a in range(n) for b in mates(a)]]  # reduce-scatter
    held = {a: {a, *mates(a)} for a in range(n)}  # origins whose piece a % pps a holds, combined
    largest = max(nbytes for _, nbytes in pieces) * pps  # a cluster's packet of pieces
    for masks in doubling_steps(topo.nclusters, largest, p):
        sends, now = [], {}
        for a in range(n):
            cluster, place = divmod(a, pps)
            partners = [(cluster ^ mask) * pps + place for mask in masks]
            sends += [piece(a, b, o, b, place) for b in partners for o in sorted(held[a])]
            now[a] = held[a].union(*(held[b] for b in partners))
        held = now
        phases.append(sends)
    gathered = [piece(a, b, o, b, a % pps) for a in range(n) for b in mates(a) for o in range(n) if o != b]
    own = [piece(a, a, a, a, j)._replace(message=0) for a in range(n) for j in range(pps)]
    return [Phase.of(sends) for sends in phases + [gathered + own]]


def _heads(coll: Collective, topo: Topology, p: ProteusParams) -> list[Phase]:
    n, pps, m = coll.nprocs, topo.pps, coll.byte_matrix

    def carry(src: int, dst: int, origins: set[int]) -> list[Transfer]:
        return group.carry(coll, src, dst, sorted(origins))

    heads = range(0, n, pps)
    phases = [[t for a in range(n) if a % pps for t in carry(a, a - a % pps, {a})]]
    held = {h: set(range(h, h + pps)) for h in heads}
    for masks in doubling_steps(topo.nclusters, int(coll.block_bytes or 0), p):
        sends, now = [], {}
        for h in heads:
            partners = [(h // pps ^ mask) * pps for mask in masks]
            sends += [t for b in partners for t in carry(h, b, held[h])]
            now[h] = held[h].union(*(held[b] for b in partners))
        held = now
        phases.append(sends)
    phases.append([t for a in range(n) if a % pps for t in carry(a - a % pps, a, held[a - a % pps])]
                  + [Transfer(a, a, int(m[a][a]), a, a) for a in range(n) if m[a][a]])  # each its own
    return [Phase.of(sends) for sends in phases]
