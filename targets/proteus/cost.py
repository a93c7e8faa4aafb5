"""Proteus cost model (what `auto` minimises) and lower bound.

A busy cycle moves one packet per cluster and direction while the DP also stages and
releases one: four streams share the DP, so the DMA runs at min(link, DP/4) (Sec. 3.2:
4.0 ms per 64 KB) after the 0.1 ms control part (Sec. 5). A request is forwarded at the
boundary after it is posted and transmitted one cycle later, so a step that waits for
its packets pays two control-only cycles of latency on top of its busy cycles.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache
from itertools import islice

import numpy as np

from phalanx.compiler import hypercube
from phalanx.compiler.recognize import Collective
from phalanx.targets.proteus.exchange import group_slots
from phalanx.targets.proteus.params import ProteusParams
from phalanx.targets.proteus.topology import Topology


def dma_Bps(p: ProteusParams, streams: float = 4.0) -> float:
    """The DMA's rate while `streams` share the DP equally, capped by the link."""
    return min(p.link_Bps, p.dp_Bps / max(streams, 1.0))


def cycle_s(p: ProteusParams, packet_bytes: float, streams: float = 4.0) -> float:
    """A cycle carrying `packet_bytes` while `streams` share the DP (Sec. 5: four streams,
    4.0+0.1 ms for 64 KB; two streams: the link's 3.125 ms)."""
    busy = p.overhead_s + packet_bytes / dma_Bps(p, streams)
    return max(busy, p.fixed_cycle_s) if p.fixed_cycle_s else busy


def idle_cycle_s(p: ProteusParams) -> float:
    return p.fixed_cycle_s or p.overhead_s


def streams(busy_fraction: float) -> float:
    """DMA out and in, plus staging and release in the share of cycles a cluster is busy."""
    return 2.0 + 2.0 * min(busy_fraction, 1.0)


@lru_cache(maxsize=32)
def plan_cycles(topo: Topology) -> int:
    return len(group_slots(topo))


def cluster_matrix(coll: Collective, topo: Topology) -> np.ndarray:
    """Bytes between distinct clusters (intra-cluster traffic is shared memory)."""
    n, pps = coll.nprocs, topo.pps
    used = -(-n // pps)
    m = np.zeros((used * pps, used * pps), dtype=np.int64)
    m[:n, :n] = coll.matrix
    c = m.reshape(used, pps, used, pps).sum(axis=(1, 3))
    np.fill_diagonal(c, 0)
    return c


def proteus_group_time_s(coll: Collective, topo: Topology, p: ProteusParams) -> float:
    """Plan cycles times the cycle of the largest cluster message, plus the latency."""
    c = cluster_matrix(coll, topo)
    largest = int(c.max(initial=0))
    if largest == 0:
        return 0.0
    pieces = math.ceil(largest / p.packet_bytes)
    cycles = plan_cycles(topo) * pieces
    busy = (c > 0).sum(axis=1).max() * pieces / cycles
    return 2 * idle_cycle_s(p) + cycles * cycle_s(p, min(largest, p.packet_bytes), streams(busy))


def step_time_s(p: ProteusParams, topo: Topology, src: np.ndarray, dst: np.ndarray,
                message_bytes: float, packed: bool) -> float:
    """One step in which PP src[i] sends `message_bytes` to PP dst[i]: the busiest cluster
    port or group link sets the cycles (`packed`: the CC packs messages to one cluster)."""
    sc, dc = src // topo.pps, dst // topo.pps
    inter = sc != dc
    flush = np.bincount(sc[~inter]).max(initial=0) * message_bytes / p.flush_Bps
    if not inter.any():
        return float(flush)
    pairs, count = np.unique(np.stack([sc[inter], dc[inter]]), axis=1, return_counts=True)
    per_packet = max(int(p.packet_bytes // message_bytes), 1) if packed else 1
    packets = np.ceil(count / per_packet) * math.ceil(message_bytes / p.packet_bytes)
    load = max(np.bincount(pairs[0], packets).max(), np.bincount(pairs[1], packets).max())
    hops: dict[tuple[int, int], float] = {}
    for a, b, k in zip(pairs[0].tolist(), pairs[1].tolist(), packets.tolist()):
        for hop in topo.group_route(topo.group_of(a), topo.group_of(b)):
            hops[hop] = hops.get(hop, 0.0) + k
    cycles = max(load, max(hops.values(), default=0.0) / topo.links)
    packet = min(per_packet, int(count.max())) * min(message_bytes, p.packet_bytes)
    busy = float(np.bincount(pairs[0], packets).mean()) / cycles
    return max(float(flush), 2 * idle_cycle_s(p) + cycles * cycle_s(p, packet, streams(busy)))


def family_time_s(parts: tuple[int, ...], block_bytes: float, topo: Topology,
                  p: ProteusParams) -> float:
    """Bokhari's standard / multiphase exchange run on Proteus, step by step."""
    d, total, top = sum(parts), 0.0, sum(parts)
    ranks = np.arange(1 << d)
    for width in parts:
        top -= width
        size = block_bytes * (1 << (d - width))
        total += sum(step_time_s(p, topo, ranks, ranks ^ (j << top), size, True)
                     for j in range(1, 1 << width))
        total += p.overhead_s  # the barrier before the phase
    return total + block_bytes * (1 + hypercube.shuffle_blocks(parts)) / p.flush_Bps


def direct_time_s(coll: Collective, topo: Topology, p: ProteusParams) -> float:
    """Generic direct exchange (one message per PP pair, never packed), step by step."""
    m, n = coll.matrix, coll.nprocs
    ranks = np.arange(n)
    total = 0.0
    for step in range(1, n):
        partners = ranks ^ step if n & (n - 1) == 0 else (ranks + step) % n
        sizes = m[ranks, partners]
        if sizes.any():
            keep = sizes > 0
            total += step_time_s(p, topo, ranks[keep], partners[keep], int(sizes.max()), False)
    return total


def lower_bound_s(coll: Collective, topo: Topology, p: ProteusParams) -> float:
    """Busiest link, busiest DP (each byte crosses both ends' DP twice) or the group links
    (e-cube-free: every inter-group byte crosses at least its Hamming distance of links)."""
    c = cluster_matrix(coll, topo)
    if not c.any():
        return 0.0
    out, into = c.sum(axis=1), c.sum(axis=0)
    link_s = max(out.max(), into.max()) / p.link_Bps
    dp_s = 2 * (out + into).max() / p.dp_Bps
    groups = np.arange(len(c)) // topo.clusters
    hamming = np.vectorize(lambda x: bin(int(x)).count("1"))(groups[:, None] ^ groups[None, :])
    links = topo.groups * topo.dims * topo.links
    group_s = float((c * hamming).sum()) / (links * p.link_Bps) if links else 0.0
    return max(link_s, dp_s, group_s) + p.overhead_s


def memories_bound_s(p: ProteusParams, cluster_out: np.ndarray, cluster_in: np.ndarray) -> float:
    """Dual-port memories (docs/bounds.md, "Proteus's dual-port memories"): every byte that
    crosses between clusters passes its sender's DP twice (staging, then the DMA out) and its
    receiver's twice (the DMA in, then release), relayed or not, and a DP moves at most dp_Bps
    among all its streams (memory.py); no stream runs before the first cycle's control part.
    `cluster_out`, `cluster_in`: what each cluster must send and receive at least (distinct
    data once, one partial of a reduction): the busiest cluster's DP carries at least twice its
    own, and the DPs together four times what must cross, max(sum out, sum in), so
    T >= control part + max(2 max(out + in), 4 max(sum out, sum in) / clusters) / dp_Bps."""
    own = 2.0 * float((cluster_out + cluster_in).max(initial=0))
    crossing = 4.0 * float(max(cluster_out.sum(), cluster_in.sum())) / max(len(cluster_out), 1)
    busiest = max(own, crossing)
    return p.overhead_s + busiest / p.dp_Bps if busiest > 0 else 0.0


def _reached() -> Iterator[int]:
    """r_0, r_1, ...: the most clusters holding some of one cluster's data by each cycle
    boundary (clusters_reached)."""
    reached: list[int] = []
    while True:
        reached.append(1 + sum(reached[:max(len(reached) - 2, 0)]))
        yield reached[-1]


def clusters_reached(boundaries: int) -> int:
    """The most clusters that can hold some of one cluster's data by the `boundaries`-th cycle
    boundary, that cluster included; also the most clusters whose data one cluster can hold by
    then (docs/bounds.md, "Proteus's cycles"). A cluster's controller forwards one packet a
    boundary, a packet forwarded at boundary j is released at j + 2 at the earliest, and what is
    released at j can be forwarded from j + 1 on: r_k = 1 + (r_0 + ... + r_(k-3)), r_0 = 1."""
    return next(islice(_reached(), boundaries, None))


def boundaries_to_reach(clusters: int) -> int:
    """The fewest cycle boundaries after which `clusters` clusters can be reached (0 for one)."""
    return next(k for k, reached in enumerate(_reached()) if reached >= clusters)


def cycles_bound_s(coll: Collective, topo: Topology, p: ProteusParams, cluster_out: np.ndarray,
                   cluster_in: np.ndarray) -> float:
    """Communication cycles (docs/bounds.md, "Proteus's cycles"): the data of a cluster that
    n - 1 other clusters need, or the data of n - 1 other clusters that one cluster needs, is
    all there no sooner than the boundary k = `boundaries_to_reach(n)`. The first boundary is
    at the first post at the earliest, and each cycle lasts its control part and then its
    longest transmission (at least the fixed cycle, where there is one), a cluster sending one
    packet and receiving one a cycle at no more than the link rate: so the k - 1 cycles also
    carry the busiest cluster's bytes out or in (`cluster_out`, `cluster_in`: what each must
    send and receive at least), T >= (k - 1) control parts + those bytes at the link rate. PPs
    of one cluster share data in memory (no cycle)."""
    pattern = cluster_matrix(coll, topo) > 0
    widest = 1 + int(max(pattern.sum(axis=1).max(initial=0), pattern.sum(axis=0).max(initial=0)))
    if widest < 2:
        return 0.0
    cycles = boundaries_to_reach(widest) - 1
    busiest = float(max(cluster_out.max(initial=0), cluster_in.max(initial=0)))
    carried_s = cycles * p.overhead_s + busiest / p.link_Bps
    return max(carried_s, cycles * p.fixed_cycle_s) if p.fixed_cycle_s else carried_s
