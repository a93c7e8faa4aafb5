"""Rooted collectives: broadcast, scatter, gather and reduce by linear, binomial tree,
scatter + allgather (van de Geijn), pipelined chain and, for a reduce of partial blocks,
reduce-scatter + gather (Rabenseifner) schedules.

Blocks are the collective's own: (root, q) for broadcast and scatter, (p, root) for gather and
reduce. A node forwards what it holds: a copy of the broadcast's content (runtime/data.py
BlockStore classes), a scatter's blocks for its subtree, its subtree's partials (combined on
the wire: one message id per destination).
"""

from __future__ import annotations

import math

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import (
    OUTWARD,
    binomial_rounds,
    local_copies,
    rooted_order,
    subtree,
)
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, WHOLE, Phase, Transfer


def _with_copies(coll: Collective, phases: list[list[Transfer]]) -> list[Phase]:
    """The phases with each node's copy of its own block into its result: first, except a
    broadcast's root's, after the last phase's messages, so that it overlaps the others'
    forwarding instead of holding up the root's first message (the root of a broadcast only
    sends; on the hypercube a 64 KB copy takes 0.9 ms, as long as a start-up and the block)."""
    phases = phases or [[]]
    if coll.kind is Kind.BROADCAST:
        phases[-1] = phases[-1] + local_copies(coll)
    else:
        phases[0] = local_copies(coll) + phases[0]
    return [Phase.of(p) for p in phases]


def _outward(coll: Collective, src: int, dst: int, finals: list[int]) -> list[Transfer]:
    """src's blocks from the root for `finals`, sent to dst as one message."""
    m, root = coll.byte_matrix, rooted_order(coll)[0]
    tag = COMBINED if len(finals) > 1 else 0
    return [Transfer(src, dst, m[root][f], root, f, tag) for f in finals if m[root][f]]


def _inward(coll: Collective, src: int, dst: int, origins: list[int]) -> list[Transfer]:
    """Blocks for the root from `origins`, held at src, sent to dst as one message."""
    m, root = coll.byte_matrix, rooted_order(coll)[0]
    return [Transfer(src, dst, m[o][root], o, root, COMBINED) for o in origins if m[o][root]]


def linear_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The root talks to each member in turn, one phase each."""
    order = rooted_order(coll)
    root = order[0]
    step = (lambda q: _outward(coll, root, q, [q])) if coll.kind in OUTWARD else \
        (lambda q: _inward(coll, q, root, [q]))
    return _with_copies(coll, [step(q) for q in order[1:]])


def binomial_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """ceil(log2 n) rounds; in round k every holder v < 2^k serves v + 2^k (a scatter carries the
    child's whole subtree, a gather or reduce brings it back, combined)."""
    order = rooted_order(coll)
    n = len(order)
    rounds = binomial_rounds(n)
    phases = []
    if coll.kind in OUTWARD:
        for pairs in rounds:
            phases.append([t for v, c in pairs for t in _outward(
                coll, order[v], order[c], [order[c]] if coll.kind is Kind.BROADCAST
                else [order[u] for u in subtree(c, n)])])
    else:
        for pairs in reversed(rounds):
            phases.append([t for v, c in pairs for t in _inward(
                coll, order[c], order[v], [order[u] for u in subtree(c, n)])])
    return _with_copies(coll, phases)


def segments(total: int, count: int) -> list[tuple[int, int]]:
    """(offset, nbytes) of `count` pieces of `total` bytes, as even as can be."""
    cuts = [i * total // count for i in range(count + 1)]
    return [(cuts[i], cuts[i + 1] - cuts[i]) for i in range(count)]


def chain_segments(coll: Collective, machine: Machine, members: int,
                   nbytes: int | None = None) -> int:
    """Pieces of a pipelined chain of `nbytes` (the block's by default): sqrt((n - 2) beta B /
    alpha) balances pipeline fill (n - 2 extra steps) against start-ups per piece; at most one
    per byte."""
    block, port = nbytes or coll.block_bytes or 1, machine.port
    if members <= 2 or port.startup_s <= 0:
        return 1
    best = math.sqrt((members - 2) * port.s_per_byte * block / port.startup_s)
    return max(1, min(block, round(best), 4096))


def chain_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """A pipelined chain root -> v1 -> v2 ...: a broadcast's block goes in pieces, each node
    forwarding piece i while the next arrives; a reduce sends the running partials back up."""
    order = rooted_order(coll)
    n, m, root = len(order), coll.byte_matrix, order[0]
    if coll.kind is Kind.REDUCE:
        return _with_copies(coll, [_inward(coll, order[v], order[v - 1], order[v:])
                                   for v in range(n - 1, 0, -1)])
    pieces = segments(coll.block_bytes or 0, chain_segments(coll, machine, n))
    phases = []
    for t in range(len(pieces) + n - 2):
        sends = []
        for v in range(n - 1):
            i = t - v
            if 0 <= i < len(pieces):
                dst = order[v + 1]
                offset, nbytes = pieces[i]
                if len(pieces) == 1:
                    sends.append(Transfer(order[v], dst, m[root][dst], root, dst))
                else:
                    sends.append(Transfer(order[v], dst, nbytes, root, dst, offset=offset))
        phases.append(sends)
    return _with_copies(coll, phases)


def scatter_allgather_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """van de Geijn's broadcast: the block in n pieces, scattered down a binomial tree (piece j
    to member j), then a ring allgather of the pieces (the root only sends)."""
    order = rooted_order(coll)
    n, root = len(order), order[0]
    pieces = segments(coll.block_bytes or 0, n)

    def piece(src: int, dst: int, j: int, final: int, tag: int = 0) -> Transfer:
        offset, nbytes = pieces[j]
        return Transfer(src, dst, nbytes, root, final, tag, offset)

    phases = [[piece(order[v], order[c], j, order[j], COMBINED) for v, c in pairs
               for j in subtree(c, n)] for pairs in binomial_rounds(n)]
    for s in range(1, n):
        phases.append([piece(order[v], order[v + 1], (v - s + 1) % n, order[v + 1])
                       for v in range(n - 1)])
    return _with_copies(coll, phases)


def scatter_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """MPICH's scatter_recursive_doubling_allgather broadcast on 2^d members: the binomial
    scatter of scatter_allgather_phases (member j ends with piece j), then recursive doubling
    with masks n/2, ..., 1, partners v and v XOR mask swapping every piece they hold, so the
    last and largest swap (half of the block) is between ranks that differ in the lowest bit:
    lg p start-ups where the ring takes p - 1."""
    return scatter_doubling_over(coll, rooted_order(coll))


def scatter_doubling_over(coll: Collective, order: list[int]) -> list[Phase]:
    """scatter_doubling_phases with the members by virtual rank in `order` (the root first)."""
    n, root = len(order), order[0]
    pieces = segments(coll.block_bytes or 0, n)

    def piece(src: int, dst: int, j: int, final: int) -> Transfer:
        offset, nbytes = pieces[j]
        return Transfer(src, dst, nbytes, root, final, COMBINED, offset)

    phases = [[piece(order[v], order[c], j, order[j]) for v, c in pairs for j in subtree(c, n)]
              for pairs in binomial_rounds(n)]
    held = [[v] for v in range(n)]
    mask = n >> 1
    while mask:
        phases.append([piece(order[v], order[v ^ mask], j, order[v ^ mask])
                       for v in range(n) for j in held[v] if v ^ mask])
        held = [sorted(held[v] + held[v ^ mask]) for v in range(n)]
        mask >>= 1
    return _with_copies(coll, phases)


def element_pieces(coll: Collective, count: int) -> list[tuple[int, int]]:
    """(offset, nbytes) of `count` pieces of a partial block, cut between elements."""
    element = coll.element_bytes or coll.block_bytes or 1
    return [(offset * element, n * element)
            for offset, n in segments((coll.block_bytes or 0) // element, count)]


def reduce_scatter_gather_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Rabenseifner's reduce (MPICH's reduce_scatter_gather) on 2^d members by virtual rank, root
    0: each partial block in 2^d pieces, piece j bound for member j; a reduce-scatter by
    recursive halving (with mask 1, 2, ..., 2^(d-1), member v keeps the half of its pieces on
    v's side and sends its partner v XOR mask the other half of every partial it holds,
    combined), then a binomial gather of the reduced pieces to the root. A piece that reaches
    the root stays there: the root's own partial never moves, and it forwards nothing."""
    return halving_gather(coll, len(rooted_order(coll)).bit_length() - 1)


class Halving:
    """Recursive halving of a reduce's partials over the lowest `halved` = k rank bits (members by
    virtual rank, the root 0; the partials in 2^k pieces): the state the reduces that start with
    it share (halving_gather, halvingfanin.py). `held[v]` is the (origin, piece) pairs member v
    holds, combined; `send` moves them and gives the transfers."""

    def __init__(self, coll: Collective, halved: int):
        self.order = rooted_order(coll)
        self.n, self.root, self.count = len(self.order), self.order[0], 1 << halved
        self.halved = halved
        self.pieces = element_pieces(coll, self.count)
        m = coll.byte_matrix
        self.held: list[set[tuple[int, int]]] = [set() for _ in range(self.n)]
        for v in range(1, self.n):
            if m[self.order[v]][self.root]:
                self.held[v] = {(self.order[v], j) for j in range(self.count)}

    def send(self, v: int, to: int, tokens: set[tuple[int, int]]) -> list[Transfer]:
        """Member v's `tokens` to member `to` (the root keeps what it receives), combined."""
        self.held[v] -= tokens
        if to:
            self.held[to] |= tokens
        return [Transfer(self.order[v], self.order[to], self.pieces[j][1], o, self.root, COMBINED,
                         self.pieces[j][0] if self.count > 1 else WHOLE) for o, j in sorted(tokens)]

    def rounds(self) -> list[list[Transfer]]:
        """The k halving rounds: with mask 1, 2, ..., 2^(k-1) member v keeps the half of its
        pieces on v's side and sends its partner v XOR mask the other half of all it holds."""
        phases = []
        lo, hi = [0] * self.n, [self.count] * self.n
        for mask in (1 << b for b in range(self.halved)):
            moves = []
            for v in range(self.n):
                mid = (lo[v] + hi[v]) // 2
                keep, give = ((lo[v], mid), (mid, hi[v])) if not v & mask else ((mid, hi[v]), (lo[v], mid))
                moves.append((v, v ^ mask, {(o, j) for o, j in self.held[v] if give[0] <= j < give[1]}))
                lo[v], hi[v] = keep
            phases.append([t for v, to, tokens in moves for t in self.send(v, to, tokens)])
        return phases


def halving_gather(coll: Collective, halved: int, direct: bool = False) -> list[Phase]:
    """Recursive halving over the lowest `halved` = k rank bits (the partials in 2^k pieces:
    member v ends with the piece of its k low bits, reduced over the members that differ from it
    in those bits only), then a binomial reduce over the other bits, lowest first (member v with
    its lowest set bit among them at b sends all it holds to v - b: one piece, combined), then a
    binomial gather over the k bits to the root (k = d: Rabenseifner's reduce; k = 0: the
    binomial tree), or, `direct`, one phase in which members 1 .. 2^k - 1 each send their piece
    straight to the root (knomial.halving_direct_phases)."""
    halving = Halving(coll, halved)
    n, count, send, held = halving.n, halving.count, halving.send, halving.held
    phases = halving.rounds()
    for mask in (1 << b for b in range(halved, n.bit_length() - 1)):  # each piece's column
        phases.append([t for v in range(n) if v & ~(count - 1) & (2 * mask - 1) == mask
                       for t in send(v, v - mask, set(held[v]))])
    if direct:  # the pieces, now at members 0 .. 2^k - 1, straight to the root
        phases.append([t for v in range(1, count) for t in send(v, 0, set(held[v]))])
        return _with_copies(coll, phases)
    for mask in (1 << b for b in range(halved)):
        phases.append([t for v in range(mask, count, 2 * mask) for t in send(v, v - mask, set(held[v]))])
    return _with_copies(coll, phases)
