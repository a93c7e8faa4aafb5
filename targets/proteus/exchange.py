"""`proteus-group`: the complete exchange of 000_df708a39f4a23045.txt Sec. 5.

1. The blocks of a cluster's 4 PPs for one destination cluster form ONE cluster message
   (the PPs share memory); the schedule marks them with one message id per cluster pair
   and the CC packs them into one DP packet (control.py).
2. Groups exchange by the e-cube permutations of Table 2 (number n: g -> g XOR (k-1-n));
   the links of permutations n and k-1-n are disjoint, so each such pair is merged into
   one cycle, and l parallel links per dimension carry l pairs (or, when k/2 < l, the
   c^2 cluster messages of one pair in l / (k/2) lanes) in the same cycle.
3. Inside a pair the c x c cluster messages go out as c Latin-square shifts
   x -> x + a (mod c): in each cycle every stream uses a different source and a
   different destination cluster (shift v of the stream), so a cluster sends and
   receives at most one packet per cycle.

That gives c^2 k / (2 l) cycles for k > 1 groups and c - 1 for one group (Sec. 5). The
plan is the order in which each cluster's PPs post their messages: every PP holds a part
of every cluster message, so whichever PP has the CC's round-robin priority, its oldest
request is the plan's next message; the CC forwards one per cycle and the GCI grants
them. Intra-cluster blocks go through shared memory in the same phase.
"""

from __future__ import annotations

from collections import Counter

from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.targets.proteus.topology import Topology

Slot = list[tuple[int, int]]  # (source cluster, destination cluster) pairs of one cycle


def table2(k: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Table 2 of the seed for k groups: (number, mask, from->to pairs), mask = k-1-number."""
    return [(n, k - 1 - n, [(g, g ^ (k - 1 - n)) for g in range(k)]) for n in range(k)]


def merged_pairs(k: int) -> list[tuple[int, int]]:
    """Masks of the permutation pairs (n, k-1-n) whose links are disjoint: (7,0), (6,1), ..."""
    return [(k - 1 - n, n) for n in range(k // 2)]


def effective_links(topo: Topology) -> int:
    """Parallel links the plan fills: the largest power of two <= l (lanes split c evenly)."""
    return 1 << (topo.links.bit_length() - 1)


def group_slots(topo: Topology) -> list[Slot]:
    """Cycle by cycle, the cluster messages of the whole exchange (see the module doc)."""
    c, k = topo.clusters, topo.groups
    if k == 1:
        shifts = range(c - 1, 0, -1) if c & (c - 1) == 0 else range(1, c)
        xor = c & (c - 1) == 0
        return [[(x, x ^ a if xor else (x + a) % c) for x in range(c)] for a in shifts]
    links = effective_links(topo)
    per_step = min(links, k // 2)
    lanes = links // per_step
    pairs = merged_pairs(k)
    slots: list[Slot] = []
    for step in range(len(pairs) // per_step):
        masks = [m for pair in pairs[step * per_step:(step + 1) * per_step] for m in pair]
        streams = [(mask, q + z * (c // lanes)) for z in range(lanes) for q, mask in enumerate(masks)]
        for t in range(c * c // lanes):
            a = t // (c // lanes)
            slot = []
            for mask, v in streams:
                x = (t + v) % c
                for g in range(k):
                    src, dst = g * c + x, (g ^ mask) * c + (x + a) % c
                    if src != dst:
                        slot.append((src, dst))
            slots.append(slot)
    return slots


def slot_problems(slots: list[Slot], topo: Topology) -> list[str]:
    """The plan's proof: every cluster pair once, one send and one receive per cluster per
    cycle, at most l circuits per directed group link per cycle (e-cube routes)."""
    problems = []
    seen = Counter(pair for slot in slots for pair in slot)
    n = topo.nclusters
    missing = [(a, b) for a in range(n) for b in range(n) if a != b and seen[(a, b)] != 1]
    if missing:
        problems.append(f"cluster pairs not sent exactly once, e.g. {missing[0]}")
    for i, slot in enumerate(slots):
        senders = Counter(a for a, _ in slot)
        receivers = Counter(b for _, b in slot)
        hops = Counter(h for a, b in slot
                       for h in topo.group_route(topo.group_of(a), topo.group_of(b)))
        if max(senders.values(), default=0) > 1 or max(receivers.values(), default=0) > 1:
            problems.append(f"cycle {i}: a cluster sends or receives twice")
        if max(hops.values(), default=0) > topo.links:
            problems.append(f"cycle {i}: a group link carries more than {topo.links} circuits")
    return problems


def cluster_message(src_cluster: int, dst_cluster: int, topo: Topology) -> int:
    """The message id that makes the CC pack a cluster's blocks for one cluster in one packet."""
    return src_cluster * topo.nclusters + dst_cluster + 1


def in_memory(coll: Collective, topo: Topology) -> list[Transfer]:
    """The blocks that stay in a cluster (its PPs share memory), own blocks included."""
    m, n, pps = coll.byte_matrix, coll.nprocs, topo.pps
    return [Transfer(a, b, m[a][b], a, b) for a in range(n) for b in range(n)
            if m[a][b] > 0 and a // pps == b // pps]


def queued_phase(coll: Collective, topo: Topology) -> Phase:
    """`queued`: every block posted at once, each PP's its own packet (packing a cluster's
    blocks into one, as proteus-group does, holds back the PPs that finish first in a
    pipeline: Fig. 10's pieces); the CCs forward one a cycle in their PPs' round robin and the
    GCI orders them (Sec. 3.2-3.3)."""
    m, n, pps = coll.byte_matrix, coll.nprocs, topo.pps
    crossing = [Transfer(a, b, m[a][b], a, b) for a in range(n) for b in range(n)
                if m[a][b] > 0 and a // pps != b // pps]
    return Phase.of(in_memory(coll, topo) + crossing)


def proteus_group_schedule(coll: Collective, topo: Topology) -> Schedule:
    """One phase: shared-memory blocks first, then the cluster messages in plan order."""
    m, n, pps = coll.byte_matrix, coll.nprocs, topo.pps
    sends = in_memory(coll, topo)
    for slot in group_slots(topo):
        for src, dst in slot:
            message = cluster_message(src, dst, topo)
            sends += [Transfer(a, b, m[a][b], a, b, message)
                      for a in range(src * pps, min((src + 1) * pps, n))
                      for b in range(dst * pps, min((dst + 1) * pps, n)) if m[a][b] > 0]
    return Schedule(coll.index, coll.kind, "proteus-group", n, (Phase.of(sends),), coll.src,
                    coll.dst, coll.line)
