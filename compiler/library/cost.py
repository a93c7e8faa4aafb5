"""The generic cost model: a schedule's time under a machine's port model (registry.PortModel).

Each node runs its phases in order (a `barrier` phase ends when the last node of the
barrier's set is done: every node, or each group's own, Phase.barriers). A
message holds its sender for the start-up, then moves its bytes through one of the sender's
and one of the receiver's streams (the same engine on a shared-engine machine), which it may
have to wait for. Links inside the network are not modelled: the target's simulator adds
their contention; the model is what `auto` ranks algorithms by.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from phalanx.compiler.library import trees, twotree
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.schedule import Schedule, SyncMode, Transfer

Barriers = tuple[tuple[int, ...], ...]  # Phase.barriers: the node sets that wait for their last


def combined_bytes(group: tuple[Transfer, ...] | list[Transfer]) -> int:
    """Wire bytes of one message of reduction partials: partials bound for one destination
    combine element-wise on the way (the sender applies the reduction first), so the message
    carries one partial's bytes per destination (one element, or a dim reduction's block), or
    per piece of it where an algorithm moves pieces (Transfer.offset)."""
    largest: dict[tuple[int, int], int] = {}
    for t in group:
        key = (t.final, t.offset)
        if t.nbytes > largest.get(key, 0):
            largest[key] = t.nbytes
    return sum(largest.values())


def combine_operations(nbytes: int, finals: int, element_bytes: int | None) -> int:
    """Elements a receiver merges into its own partials from a message of `nbytes` combined
    bytes: one per final when each partial is one element, else the message's elements."""
    return finals if element_bytes is None else nbytes // element_bytes


def messages(transfers: tuple[Transfer, ...], reduction: bool) -> list[tuple[int, int, int, int]]:
    """(src, dst, wire bytes, finals) of each network message of a phase in order, then each
    local copy in order: a node starts its messages before its copies, as the simulators do
    (compiler/plan_walk.py `messages`). Partials travelling together to one destination
    combine (combined_bytes). A
    transfer of message 0 is a message of its own, sized on the spot: most of a big
    schedule's are, and grouping them first took most of the estimate's time."""
    sizes: list[tuple[int, int, int, int]] = []
    grouped: dict[tuple[int, int, int], int] = {}  # (src, dst, message) -> its place in sizes
    members: list[list[Transfer]] = []  # the transfers of each grouped message, by place
    places: list[int] = []
    for t in transfers:
        if not t.message:
            sizes.append((t.src, t.dst, t.nbytes, 1))
            continue
        key = (t.src, t.dst, t.message)
        place = grouped.get(key)
        if place is None:
            grouped[key] = len(members)
            members.append([t])
            places.append(len(sizes))
            sizes.append(key + (0,))  # a placeholder, sized below
        else:
            members[place].append(t)
    for place, group in zip(places, members):
        nbytes = combined_bytes(group) if reduction else sum(t.nbytes for t in group)
        sizes[place] = (group[0].src, group[0].dst, nbytes, len({t.final for t in group}))
    return [m for m in sizes if m[0] != m[1]] + [m for m in sizes if m[0] == m[1]]


def estimate_s(schedule: Schedule, port: PortModel, element_bytes: int | None = None) -> float:
    """The schedule's time: per phase, each node's messages in order, start-up then streaming.
    `element_bytes`: a reduction's partials are blocks of such elements (Collective)."""
    reduction = schedule.kind in REDUCTIONS
    ready = [0.0] * schedule.nprocs
    for sends, barriers in estimated_phases(schedule):
        ready = phase_ends(messages(sends, reduction), barriers, ready, port, reduction, element_bytes)
    return max(ready, default=0.0)


def estimated_phases(schedule: Schedule) -> Iterator[tuple[tuple[Transfer, ...], Barriers]]:
    """The sends and barriers of each phase the model follows: the schedule's phases, except
    that eager phases whose sends the next eager phase receives (a ring step split in two,
    ringreduce.split_step_phases) are followed as one phase, as the model waits for a node's
    receives in the phase that sends them."""
    phases = schedule.phases
    group: tuple[Transfer, ...] = ()
    for k, phase in enumerate(phases):
        after = phases[k + 1] if k + 1 < len(phases) else None
        if phase.sync != SyncMode.EAGER or after is None or after.sync != SyncMode.EAGER or \
                phase.recvs is phase.sends and after.recvs is after.sends:  # Phase.of: no split
            yield (group + tuple(phase.sends) if group else phase.sends), phase.barriers(schedule.nprocs)
            group = ()
            continue
        sends = group + tuple(phase.sends)
        # the next phase's receives start with these sends where a generator split a step
        # (cheap to compare: the same Transfer objects); a set test otherwise
        if sends and (after.recvs[:len(sends)] == sends or set(sends) <= set(after.recvs)):
            group = sends
            continue
        yield sends, phase.barriers(schedule.nprocs)
        group = ()


def phase_ends(sizes: list[tuple[int, int, int, int]], barriers: tuple[tuple[int, ...], ...],
               ready: list[float], port: PortModel, reduction: bool,
               element_bytes: int | None) -> list[float]:
    """When each node is done with one phase of `messages` (in order), having entered it at
    `ready`; `barriers`: the node sets that wait for their last node (Phase.barriers)."""
    cpu, ends, arith = list(ready), list(ready), list(ready)
    groups = {port.port(p) for p in range(len(ready))}
    out = {g: [0.0] * port.streams for g in groups}
    inn = out if port.shared_engine else {g: [0.0] * port.streams for g in groups}
    for src, dst, nbytes, finals in sizes:
        # The receiver merges the message's elements into its own partials, one at a time.
        combine_s = (port.combine_s_per_op * combine_operations(nbytes, finals, element_bytes)
                     if reduction else 0.0)
        if port.port(src) == port.port(dst):  # a local copy, or within a shared port's node
            cpu[src] += port.copy_s_per_byte * nbytes
            arith[dst] = max(arith[dst], cpu[src]) + combine_s
            ends[src] = max(ends[src], cpu[src], arith[dst])
            continue
        a, b = port.port(src), port.port(dst)
        if port.streams == 1:  # one port: the start-up holds it too
            cpu[src] = max(cpu[src], out[a][0])
        cpu[src] += port.startup_s
        if port.shared_engine:
            out[a][0] = max(out[a][0], cpu[src])
        begin = max(heapq.heappop(out[a]), cpu[src], ready[dst])
        begin = max(heapq.heappop(inn[b]), begin)
        done = begin + port.s_per_byte * nbytes
        heapq.heappush(out[a], done)
        heapq.heappush(inn[b], done)
        arith[dst] = max(arith[dst], done) + combine_s
        ends[src], ends[dst] = max(ends[src], done), max(ends[dst], done, arith[dst])
    for nodes in barriers:  # each set waits for its last node
        last = max(ends[p] for p in nodes) + port.barrier_s
        for p in nodes:
            ends[p] = last
    return ends


def one_message_s(nbytes: int, port: PortModel) -> float:
    """The textbook time of one message: a start-up, then its bytes at the port's rate. A
    shift or permutation of one message per node, all sent at once on disjoint ports and
    links, takes just this (the `colouring` algorithm's one phase)."""
    return port.startup_s + port.s_per_byte * nbytes


def bruck_alltoall_s(nprocs: int, block_bytes: int, port: PortModel) -> float:
    """Bruck et al. 1997 (IEEE TPDS 8(11), Sec. 3, radix 2): an all-to-all of `block_bytes`
    blocks in ceil(log2 P) rounds; round k's message carries the n_k blocks whose distance j
    in 1..P-1 has bit k set (P/2 of them where P is a power of two), packed first at the copy
    rate. Plus the copy of each node's own block. On one port per node the rounds follow each
    other: sum over k of (alpha + (copy + beta) n_k b). Where the port deposits
    (PortModel.deposits) a round packs only the n'_k blocks no earlier round moved (bit k the
    lowest set): copy n'_k b + beta n_k b."""
    total_s = port.copy_s_per_byte * block_bytes
    for k in range((nprocs - 1).bit_length()):
        blocks = sum(j >> k & 1 for j in range(1, nprocs))
        packs = sum(j >> k & 1 and not j & ((1 << k) - 1) for j in range(1, nprocs)) \
            if port.deposits else blocks
        total_s += port.startup_s + (port.copy_s_per_byte * packs + port.s_per_byte * blocks) * block_bytes
    return total_s
# Closed forms of the pipelined trees (trees.py) on a one-port machine whose message of m bytes
# takes alpha + beta m: predictions the simulator is checked against (tests), not what `auto`
# ranks by (estimate_s above follows any schedule).

def binary_tree_s(members: int, segments: int, block_bytes: int, startup_s: float,
                  s_per_byte: float) -> float:
    """A pipelined binary tree broadcast: a node sends each segment twice, one slot each, so
    the last segment leaves the root in slot 2s - 1 and the deepest node (`binary_fill_slots`
    F slots down) holds it after F + 2 (s - 1) slots of alpha + beta B / s."""
    slots = trees.binary_fill_slots(members) + 2 * (segments - 1)
    return slots * (startup_s + s_per_byte * block_bytes / segments)


def split_binary_s(members: int, segments: int, block_bytes: int, startup_s: float,
                   s_per_byte: float) -> float:
    """A split-binary tree broadcast: each half in s segments down its tree, F + 2 (s - 1)
    slots of alpha + beta B / (2 s), then one swap of the halves, alpha + beta B / 2."""
    slots = trees.split_fill_slots(members) + 2 * (segments - 1)
    return (slots * (startup_s + s_per_byte * block_bytes / (2 * segments))
            + startup_s + s_per_byte * block_bytes / 2)


def two_tree_s(members: int, segments: int, block_bytes: int, startup_s: float,
               s_per_byte: float) -> float:
    """The two-tree broadcast: each half in s segments, an edge used every other slot, so after
    the F slots (`twotree.fill_slots`) that bring the first segments to every member, the rest
    follow in 2 (s - 1) slots of alpha + beta B / (2 s): about beta B plus start-ups."""
    slots = twotree.fill_slots(members) + 2 * (segments - 1)
    return slots * (startup_s + s_per_byte * block_bytes / (2 * segments))


# Closed forms of the reduce-scatter-based reductions (rooted.py, allreduce.py) on a one-port
# machine: Thakur, Rabenseifner and Gropp 2005's, with the merges as this port model charges
# them (docs/bounds.md, "Textbook cases"): a receiver merges every element a reduction message
# brings, also the reduced pieces it only stores in the gather or allgather half, so gamma is
# charged on both halves where the paper charges it on the reduce-scatter alone.

def rabenseifner_s(members: int, partial_bytes: int, element_bytes: int, port: PortModel) -> float:
    """Recursive halving, then a binomial gather (reduce) or recursive doubling (allreduce), on
    2^d members: 2 lg P alpha + 2 (P - 1) / P (beta n + gamma n / e), e bytes per element."""
    share = (members - 1) / members
    return (2 * (members.bit_length() - 1) * port.startup_s
            + 2 * share * (port.s_per_byte * partial_bytes
                           + port.combine_s_per_op * (partial_bytes // element_bytes)))


def halving_doubling_s(members: int, halved: int, partial_bytes: int, element_bytes: int,
                       port: PortModel) -> float:
    """Rabenseifner's halving cut short (allreduce.halving_doubling, rooted.cut_halving_phases)
    on 2^d members: `halved` = k rounds of recursive halving (pieces of n / 2, ..., n / 2^k),
    d - k rounds on the n / 2^k piece each member ends with, k rounds of doubling or gathering
    back (n / 2^k, ..., n / 2); a round of m bytes is alpha + m (beta + gamma / e), twice the
    bytes' time where one engine carries both directions of the exchange (an estimate there).
    k = d: rabenseifner_s; k = 0: recursive doubling, d (alpha + n beta + e gamma)."""
    d = members.bit_length() - 1
    per_byte_s = port.s_per_byte * (2 if port.shared_engine else 1) \
        + port.combine_s_per_op / element_bytes
    halves = sum(partial_bytes / 2 ** i for i in range(1, halved + 1))
    return ((halved * 2 + d - halved) * port.startup_s
            + (2 * halves + (d - halved) * partial_bytes / 2 ** halved) * per_byte_s)


def least_halved_rounds(members: int, partial_bytes: int, element_bytes: int, port: PortModel) -> int:
    """The k in 0..lg P of least halving_doubling_s (the larger of equals: fewer bytes a round)."""
    return min(range(members.bit_length()), key=lambda k: (
        halving_doubling_s(members, k, partial_bytes, element_bytes, port), -k))


def ring_allreduce_s(members: int, partial_bytes: int, element_bytes: int, port: PortModel) -> float:
    """Reduce-scatter then allgather round a ring of P members: 2 (P - 1) steps, each one
    start-up and a piece of ceil(n / (e P)) elements, moved and merged."""
    piece = -(-(partial_bytes // element_bytes) // members)
    return 2 * (members - 1) * (port.startup_s + piece * (port.s_per_byte * element_bytes
                                                          + port.combine_s_per_op))


def two_tree_reduce_s(members: int, segments: int, partial_bytes: int, element_bytes: int,
                      port: PortModel) -> float:
    """The two-tree reduce: the broadcast's slots backwards, each slot's segment also merged at
    gamma per element (two_tree_s at beta + gamma / e per byte). An estimate from above: a
    member off the critical path starts a slot as soon as its own work allows."""
    return two_tree_s(members, segments, partial_bytes, port.startup_s,
                      port.s_per_byte + port.combine_s_per_op / element_bytes)


def knomial_reduce_s(members: int, radix: int, partial_bytes: int, element_bytes: int,
                     port: PortModel) -> float:
    """The k-nomial reduce (knomial.py) on a one-port machine: in the round of stride s the root
    takes c = min(k - 1, ceil(P / s) - 1) children's partials one after another through its
    port, merging each (e elements at gamma) while the next arrives: alpha + n beta + (c - 1)
    max(n beta, e gamma) + e gamma. Every other parent has at most the root's children, so the
    rounds follow each other on the root's clock."""
    move_s = port.s_per_byte * partial_bytes / port.streams
    merge_s = port.combine_s_per_op * max(1, partial_bytes // element_bytes)
    total_s, stride = 0.0, 1
    while stride < members:
        children = min(radix - 1, -(-members // stride) - 1)
        total_s += port.startup_s + move_s + (children - 1) * max(move_s, merge_s) + merge_s
        stride *= radix
    return total_s
