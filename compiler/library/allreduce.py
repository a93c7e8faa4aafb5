"""Allreduce of long partials: a reduce-scatter of their pieces, then an allgather of the
reduced pieces (Thakur, Rabenseifner and Gropp 2005, Sec. 4.4; Patarasuk and Yuan 2009).

Each member's partial block is cut between elements into n pieces (n members by virtual rank,
members.group_order), piece j bound to end fully reduced at member j. The reduce-scatter moves
piece j of every origin towards member j, as one combined message per step (cost.combined_bytes:
the partials of one piece for one destination combine on the wire); its transfers name member j
as their final, so at member j they are delivered and elsewhere kept to be forwarded. The
allgather then sends each reduced piece to every other member f as the pieces of the blocks
(o, f) of every origin o but f, whose own partial never leaves it: it is copied into f's result
piece by piece, each piece in the phase in which the others' reduced piece arrives (member j's
own piece j in the first), so that merging it (the port model charges a merge per element,
cost.py) overlaps that phase's message rather than holding up the first.

- `ring_phases`: the textbook ring, any n: n - 1 reduce-scatter steps, then n - 1 allgather
  steps, each step one message of a piece per member. Partials of one element cannot be cut:
  they go whole round the ring, in step s member v passing member v - s + 1's partial to v + 1.
- `rabenseifner_phases`: 2^d members; the reduce-scatter by recursive halving (with mask
  1, 2, ..., n/2 member v sends its partner v XOR mask the half of its range of pieces on the
  partner's side, so that it ends with the piece of v's bits reversed), the allgather by
  recursive doubling (with mask n/2, ..., 1 the partners swap all the reduced pieces they hold).
- `cut_halving_phases`: 2^d members; Rabenseifner's cut short: the halving over the lowest k
  rank bits only (2^k pieces), recursive doubling of each member's piece over the other bits,
  doubling back over the k bits; k from cost.halving_doubling_s (0: recursive doubling).
- `radix_halving_doubling`: the same with steps of several masks, a member exchanging with
  every other member of the masks' subcube in one step (radix 2^d; interleaved.py's
  quad_cut_halving_phases takes the first two masks so on the tori).
"""

from __future__ import annotations

from phalanx.compiler.library import cost, group
from phalanx.compiler.library.members import contributors, group_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.requirements import partial_blocks
from phalanx.compiler.library.rooted import element_pieces
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


class Pieces:
    """The pieces of a collective's partials over its members: transfers that carry them
    (`count` pieces; one per member by default)."""

    def __init__(self, coll: Collective, count: int | None = None, order: list[int] | None = None):
        self.coll = coll
        self.order = group_order(coll) if order is None else order
        self.pieces = element_pieces(coll, len(self.order) if count is None else count)
        self.origins = contributors(coll)

    def toward(self, v: int, w: int, j: int, origins: list[int], owner: int | None = None
               ) -> list[Transfer]:
        """Member v's piece j of the partials of `origins` to member w, bound for the member
        that reduces piece j (`owner`; member j where not given)."""
        return self._piece(v, w, j, origins, self.order[j if owner is None else owner])

    def exchanged(self, v: int, w: int, j: int, origins: list[int]) -> list[Transfer]:
        """Member v's piece j of the partials of `origins` to member w, for w itself."""
        return self._piece(v, w, j, origins, self.order[w])

    def reduced(self, v: int, w: int, j: int) -> list[Transfer]:
        """Member v's reduced piece j to member w, for w: every origin's but w's own."""
        return self._piece(v, w, j, self.origins, self.order[w])

    def own(self, v: int, pieces: range | list[int]) -> list[Transfer]:
        """Member v's own partial's `pieces`, copied into its result."""
        p, m = self.order[v], self.coll.byte_matrix
        return [Transfer(p, p, self.pieces[j][1], p, p, offset=self.pieces[j][0])
                for j in pieces if m[p][p]]

    def phases(self, phases: list[list[Transfer]]) -> list[Phase]:
        return [Phase.of(p) for p in phases]

    def _piece(self, v: int, w: int, j: int, origins: list[int], final: int) -> list[Transfer]:
        m, (offset, nbytes) = self.coll.byte_matrix, self.pieces[j]
        return [Transfer(self.order[v], self.order[w], nbytes, o, final, COMBINED, offset)
                for o in origins if o != final and m[o][final]]


def ring_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Reduce-scatter then allgather round the ring: in reduce-scatter step s member v sends
    piece v - s, holding the partials of members v - s + 1 .. v, to v + 1; in allgather step s
    it sends the reduced piece v - s + 1 on to v + 1. Whole one-element partials otherwise."""
    return ring_over(coll, machine, group_order(coll))


def ring_over(coll: Collective, machine: Machine, order: list[int]) -> list[Phase]:
    """The ring allreduce over the members in `order` (virtual rank v is member order[v])."""
    if partial_blocks(coll, machine) is not None:
        return group.ring_over(coll, order)
    cut = Pieces(coll, order=order)
    n, order = len(cut.order), cut.order
    phases = [[t for v in range(n) for t in cut.toward(
        v, (v + 1) % n, (v - s) % n, [order[(v - i) % n] for i in range(s)])] for s in range(1, n)]
    phases += [[t for v in range(n) for t in cut.reduced(v, (v + 1) % n, (v - s + 1) % n)
                + cut.own((v + 1) % n, [(v - s + 1) % n])] for s in range(1, n)]
    phases[0] += [t for v in range(n) for t in cut.own(v, [v])]
    return cut.phases(phases)


def rabenseifner_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Recursive halving, then recursive doubling, on 2^d members (requirements), the halving
    with masks 1, 2, ..., n/2 as MPICH's (allreduce_intra_reduce_scatter_allgather): the first
    and largest exchange is between members whose ranks differ in the lowest bit, neighbours on
    a grid's rows, under one switch of a fat tree (halving with n/2 first was 1.6-1.8x slower
    at 64 KB on paragon:8x8 and cs2:64)."""
    return halving_doubling(coll, halving_masks(len(group_order(coll))))


def cut_halving_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Rabenseifner's halving cut short on 2^d members: recursive halving over the lowest k
    rank bits only, recursive doubling of the n / 2^k piece each member then holds over the
    other d - k bits, recursive doubling back over the k bits; k (`halved_rounds`) of least
    cost.halving_doubling_s, between recursive doubling (k = 0) and Rabenseifner's (k = d)."""
    members = len(group_order(coll))
    return halving_doubling(coll, halving_masks(members), halved_rounds(coll, machine, members))


def halved_rounds(coll: Collective, machine: Machine, members: int) -> int:
    """k for Rabenseifner's halving cut short: of least cost.halving_doubling_s for the
    collective's partials on `members` members."""
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    return cost.least_halved_rounds(members, nbytes, coll.element_bytes or nbytes, machine.port)


def halving_masks(n: int) -> list[int]:
    """1, 2, 4, ... below n."""
    return [1 << k for k in range(n.bit_length() - 1)]


def halving_doubling(coll: Collective, masks: list[int], halved: int | None = None) -> list[Phase]:
    """Recursive halving with the first `halved` of `masks` (all by default), in order (with mask
    b member v keeps the half of its range of pieces on its own side of bit b and sends its
    partner v XOR b the other half), the partials cut in 2^halved pieces, so that member v ends
    with one piece, reduced over the members that differ from v in those masks' bits only (its
    block); then recursive doubling of that piece with the other masks, partners swapping all
    the partials of it they hold, so that every member of the piece's column (the members that
    hold it) has it reduced over all; then recursive doubling with the halving masks in
    reverse, partners swapping every reduced piece they hold. Each block's member that ends with
    piece j (`owner`) is the final of the halving's transfers of piece j."""
    return radix_halving_doubling(coll, [(mask,) for mask in masks], halved)


def subcube(step: tuple[int, ...]) -> list[int]:
    """The offsets v XOR u of a step's partners u (every XOR of its masks but 0), in the order
    the member sends to them: the last mask's first, its sums with the others' last."""
    offsets = [0]
    for mask in step:
        offsets += [o | mask for o in offsets]
    return sorted(offsets[1:], key=lambda o: (bin(o).count("1"), -o))


def part_of(v: int, step: tuple[int, ...]) -> int:
    """The part of a step's range that member v keeps: its bits of the step's masks, the first
    mask's the highest (so that masks one at a time keep the same part)."""
    part = 0
    for mask in step:
        part = part << 1 | (1 if v & mask else 0)
    return part


def radix_halving_doubling(coll: Collective, steps: list[tuple[int, ...]],
                           halved: int | None = None) -> list[Phase]:
    """halving_doubling with steps of several masks: in a step of d masks each member sends one
    message to each of the 2^d - 1 other members of its subcube (the XORs of the masks: a radix
    2^d exchange), cutting its range in 2^d parts in the halving and sending every reduced piece
    it holds in the doubling back. A node that streams several messages starts the messages of
    a step one start-up apart and their wires run together, where one mask a step pays a
    start-up, a wire and a merge per mask."""
    members = len(group_order(coll))
    return member_halving_doubling(coll, [steps] * members, halved)


def member_halving_doubling(coll: Collective, steps: list[list[tuple[int, ...]]],
                            halved: int | None = None, order: list[int] | None = None
                            ) -> list[Phase]:
    """radix_halving_doubling with each member's own steps (`steps[v]`, v by virtual rank in
    `order`, group_order by default): partners in a step must take the same masks in it, so
    members whose masks differ only meet in the steps they share (interleaved.py's
    classed_quad_cut_halving_phases: after a radix-4 first step the four quarters' members
    halve and double over the other masks in orders of their own). Each member halves over its
    first `halved` steps; a piece's block is the members that differ from its owner in the
    owner's halving masks only."""
    cut_steps = steps[0][:len(steps[0]) if halved is None else halved]
    halved = len(cut_steps)
    bits = sum(len(step) for step in cut_steps)
    count = 1 << bits
    cut = Pieces(coll, count, order)
    n, order = len(cut.order), cut.order
    assert len(steps) == n and all(
        sum(len(step) for step in own[:halved]) == bits for own in steps)
    assert all(steps[v ^ o][i] == step for v in range(n) for i, step in enumerate(steps[v])
               for o in subcube(step)), "partners in a step take the same masks in it"
    lo, hi = [0] * n, [count] * n
    ranges = []  # per halving step: each member's given pieces, by partner offset
    for i in range(halved):
        given = []
        for v in range(n):
            step = steps[v][i]
            size = (hi[v] - lo[v]) >> len(step)
            parts = {o: range(lo[v] + part_of(v ^ o, step) * size, lo[v] + (part_of(v ^ o, step) + 1) * size)
                     for o in subcube(step)}
            given.append(parts)
            lo[v] += part_of(v, step) * size
            hi[v] = lo[v] + size
        ranges.append(given)
    halving_bits = [sum(mask for step in steps[v][:halved] for mask in step) for v in range(n)]
    owner = {(v & ~halving_bits[v], lo[v]): v for v in range(n)}  # (block, piece) -> its member
    piece_bits = {lo[v]: halving_bits[v] for v in range(n)}  # a piece's owner's halving masks
    own = set(cut.origins)
    held = [{(order[v], j) for j in range(count)} if order[v] in own else set() for v in range(n)]
    phases = []
    # The first half of the pieces a member gives away in a halving step: its own partial's
    # copy of them into its result runs beside that halving message, the rest beside the
    # doubling message that brings them back reduced, so that no copy outlasts its message
    # where copying is slower than the wire (003 Table 1: 14 ns/B against 11 on the Paragon).
    def first_half(parts: dict[int, range]) -> list[int]:
        pieces = sorted(j for part in parts.values() for j in part)
        return pieces[:len(pieces) // 2]
    early = [{j for given in ranges for j in first_half(given[v])} for v in range(n)]
    for given in ranges:
        moves = []  # (member, partner, the pieces it gives), all decided before any moves
        for v in range(n):
            for o, part in given[v].items():
                moves.append((v, v ^ o, {(w, j) for w, j in held[v] if j in part}))
        phases.append([t for v, w, tokens in moves for j in sorted({j for _, j in tokens})
                       for t in cut.toward(v, w, j, sorted(o for o, k in tokens if k == j),
                                           owner[(v & ~piece_bits[j], j)])]
                      + [t for v in range(n)
                         for t in cut.own(v, [j for part in given[v].values() for j in part
                                              if j in early[v]])])
        for v, w, tokens in moves:
            held[v] -= tokens
            held[w] |= tokens
    for i in range(halved, len(steps[0])):
        phases.append([t for v in range(n) for o in subcube(steps[v][i])
                       for t in cut.exchanged(v, v ^ o, lo[v], sorted(w for w, _ in held[v]))])
        held = [set().union(held[v], *(held[v ^ o] for o in subcube(steps[v][i])))
                for v in range(n)]
    phases = phases or [[]]
    phases[0] += [t for v in range(n) for t in cut.own(v, [lo[v]])]
    span = [[lo[v]] for v in range(n)]  # the reduced pieces each member holds
    for i in reversed(range(halved)):
        offsets = [subcube(steps[v][i]) for v in range(n)]
        phases.append([t for v in range(n) for o in offsets[v] for j in span[v]
                       for t in cut.reduced(v, v ^ o, j)]
                      + [t for v in range(n)
                         for t in cut.own(v, [j for o in offsets[v] for j in span[v ^ o]
                                              if j not in early[v]])])
        span = [sorted(j for o in [0] + offsets[v] for j in span[v ^ o]) for v in range(n)]
    return cut.phases(phases)
