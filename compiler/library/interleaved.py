"""Scatter-doubling on a 2^a x 2^b torus or mesh with the rank bits interleaved (issue 27).

MPICH's scatter + recursive doubling broadcast (rooted.scatter_doubling_phases) pairs virtual
ranks v and v XOR 2^k, the largest swap (half of the block) in the lowest bit. With the ranks in
node order on a mesh (node = row * cols + col) the three lowest bits are columns 1, 2 and 4 apart
and the next three rows 1, 2 and 4 apart: in the swap along a distance of 2^j every link of a
row or column carries 2^j messages at once under dimension-ordered wormhole routes, and the 4x
ones carry 8/64 and 32/64 of the block on an 8x8 mesh. Here rank bit 2i is the node's column bit
i and rank bit 2i + 1 its row bit i (the dimension that runs out first leaves the rest to the
other), so the swaps of the largest pieces are between neighbours (1x), the next two 2 apart
(2x), and only the two smallest 4 apart (4x): 8x8, links carry 32 + 16 + 2 (8 + 4) + 4 (2 + 1)
= 84 sixty-fourths of the block per row or column where node order carries 108. Virtual rank v
is node root XOR spread(v), so distances do not depend on the root.

Closed form: the schedule is scatter-doubling's relabelled, so on a network without contention
it takes the same 2 lg p alpha + 2 (p - 1) / p n beta (on one shared engine: the swaps' bytes
twice, lg p alpha + (p - 1) / p n beta for the scatter plus lg p alpha + 2 (p - 1) / p n beta
for the doubling); the links' sharing above is its declared gap from that form (paragon:8x8,
128 KB: 5.51 ms simulated against 5.16 ms of the form and 7.06 ms for node order).

`interleaved_cut_scatter_doubling_phases` (branch torusbcast) is cut-scatter-doubling
(knomial.py) over this order with the bits above the cut reversed (`far_first_order`): the 2^k
pieces are scattered and swapped back along the lowest, nearest bits, and each piece's binomial
tree starts with its farthest bit. It is cut-scatter-doubling relabelled, so without contention
it takes that closed form (cost.halving_doubling_s without merges, tested on `ideal` by
test_knomial.py); the links its rounds share on a grid are its declared gap (`PORT_MODEL_GAP`),
as for the four turned copies of it (`turned-cut-scatter-doubling`, catalog.py).
"""

from __future__ import annotations

from phalanx.compiler.library.allreduce import (
    halved_rounds,
    halving_doubling,
    member_halving_doubling,
    radix_halving_doubling,
)
from phalanx.compiler.library.group import recursive_doubling_over, reversed_bits
from phalanx.compiler.library.knomial import cut_bits, cut_scatter_doubling_over
from phalanx.compiler.library.members import group_order, root_of
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import scatter_doubling_over
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase


def spread(rank: int, rows: int, cols: int) -> int:
    """The node offset (row * cols + col) of a virtual rank: rank bits dealt to the column's bits
    and the row's in turn, lowest first, until one dimension has none left. rows, cols: 2^a, 2^b."""
    row_bits, col_bits = rows.bit_length() - 1, cols.bit_length() - 1
    row = col = 0
    bit = 0
    for i in range(max(row_bits, col_bits)):
        for dim_bits, is_col in ((col_bits, True), (row_bits, False)):
            if i >= dim_bits:
                continue
            if rank >> bit & 1:
                if is_col:
                    col |= 1 << i
                else:
                    row |= 1 << i
            bit += 1
    return row * cols + col


def interleaved_order(coll: Collective, machine: Machine) -> list[int]:
    """The members by virtual rank: node root XOR spread(v) for v = 0 .. P - 1 (the root first)."""
    assert machine.grid is not None
    rows, cols = machine.grid
    root = root_of(coll)
    return [root ^ spread(v, rows, cols) for v in range(rows * cols)]


def interleaved_scatter_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Scatter-doubling over the interleaved order (every node of the grid a member)."""
    return scatter_doubling_over(coll, interleaved_order(coll, machine))


def far_first_order(coll: Collective, machine: Machine, low_bits: int) -> list[int]:
    """interleaved_order with the rank bits above the lowest `low_bits` in reverse order. A
    binomial tree over those bits (binomial_rounds: the lowest first) then takes the farthest
    interleaved bit in its first round, with one message on the grid, and the nearest of them
    in its last round, with the most messages: each round carries the whole piece, so the
    rounds with many messages go where their routes are short and share fewest links."""
    assert machine.grid is not None
    rows, cols = machine.grid
    root, bits = root_of(coll), (rows * cols).bit_length() - 1
    low = (1 << low_bits) - 1

    def reversed_high(v: int) -> int:
        return v & low | reversed_bits(v >> low_bits, bits - low_bits) << low_bits

    return [root ^ spread(reversed_high(v), rows, cols) for v in range(rows * cols)]


def interleaved_cut_scatter_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Cut scatter-doubling (knomial.cut_scatter_doubling_phases) over the interleaved order, its
    pieces' binomial trees farthest bit first (far_first_order): the 2^k pieces' scatter and
    recursive doubling swap along the lowest interleaved bits, between neighbours and nodes 2
    apart, and each piece's tree starts across the grid's longest distances with one message."""
    k = cut_bits(coll, machine, machine.nnodes)
    return cut_scatter_doubling_over(coll, far_first_order(coll, machine, k), k)
def farthest_first_order(coll: Collective, machine: Machine) -> list[int]:
    """The members by virtual rank for recursive doubling: rank bit k is the interleaved order's
    bit lg p - 1 - k, so the first (smallest) exchanges span the grid's longest distances and
    the last (largest) are between neighbours (every node of the grid a member)."""
    assert machine.grid is not None
    rows, cols = machine.grid
    bits = (rows * cols).bit_length() - 1
    first = group_order(coll)[0]
    return [first ^ spread(reversed_bits(v, bits), rows, cols) for v in range(rows * cols)]


def interleaved_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Recursive doubling's allgather over the farthest-first order."""
    return recursive_doubling_over(coll, farthest_first_order(coll, machine))


def interleaved_cut_halving_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The allreduce's cut-halving (allreduce.cut_halving_phases) with its masks in the
    interleaved order, a column bit then a row bit (spread(1), spread(2), ...: 1, 8, 2, 16, 4,
    32 on 8x8), every node of the grid a member in node order: the halving's largest messages
    go between neighbours and the doubling back's largest too, the 2-apart rounds (where two
    routes share a link) carry the smaller pieces; k as cut-halving's (halved_rounds).
    torus:8x8, 2 KB, in eager phases: 332.7 us against 339.25 in node order (issue 27, branch
    tred)."""
    assert machine.grid is not None
    rows, cols = machine.grid
    masks = [spread(1 << i, rows, cols) for i in range((rows * cols).bit_length() - 1)]
    return halving_doubling(coll, masks, halved_rounds(coll, machine, rows * cols))


def quad_cut_halving_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """interleaved_cut_halving_phases with its first two masks (a column bit and a row bit:
    neighbours, 1 and 8 on 8x8) taken in one radix-4 step (allreduce.radix_halving_doubling):
    a member sends a quarter of its partial to its row neighbour, its column neighbour and the
    diagonal one, three start-ups whose wires run together, where two halving steps pay two
    start-ups, two wires and two merges one after the other; the doubling back's last step
    likewise. torus:8x8, 2 KB, in eager phases (k = 3 bits): 308.7 us against 332.7 (issue 27,
    branch r2ar). Where the closed form halves over fewer than two bits, it is
    interleaved_cut_halving_phases."""
    assert machine.grid is not None
    rows, cols = machine.grid
    masks = [spread(1 << i, rows, cols) for i in range((rows * cols).bit_length() - 1)]
    halved = halved_rounds(coll, machine, rows * cols)
    if halved < 2:
        return halving_doubling(coll, masks, halved)
    return radix_halving_doubling(coll, [(masks[0], masks[1])] + [(m,) for m in masks[2:]],
                                  halved - 1)


def ring_labels(size: int) -> list[int]:
    """The position on a ring of `size` (2^b) nodes of each label: bit 0 the position's parity,
    the bits above a Gray code of the position's index among the nodes of its parity, so that
    a label's bit 0 pairs neighbours and every other bit pairs nodes 2 apart that, among the
    nodes of one parity, take routes that share no link where the parity's ring has four
    nodes (8 on a ring of 8: positions 0, 1, 2, 3, 6, 7, 4, 5)."""
    def gray_index(label: int) -> int:
        index = 0
        while label:
            index ^= label
            label >>= 1
        return index
    return [2 * gray_index(label >> 1) + (label & 1) for label in range(size)]


def classed_quad_cut_halving_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """quad_cut_halving_phases on the labels of ring_labels in each dimension, the masks after
    the radix-4 step in an order of each quarter's own: the members that keep the quarters of
    even class (the label's column bit 0 XOR its row bit 0: the node's x + y even) take a
    column bit, then a row bit, in turn; the others a row bit, then a column bit. So in each
    step a row carries the pairs of one class, a column those of the other, each 2 apart among
    the nodes of one parity, whose routes share no link on rings of 8 (where the one order for
    all pairs nodes 2 and 4 apart, two routes a link). Where the closed form halves over fewer
    than two bits, it is interleaved_cut_halving_phases."""
    assert machine.grid is not None
    rows, cols = machine.grid
    halved = halved_rounds(coll, machine, rows * cols)
    if halved < 2 or rows < 2 or cols < 2:
        return interleaved_cut_halving_phases(coll, machine)
    row_at, col_at = ring_labels(rows), ring_labels(cols)
    order = [row_at[v // cols] * cols + col_at[v % cols] for v in range(rows * cols)]
    col_masks = [1 << i for i in range(1, cols.bit_length() - 1)]
    row_masks = [cols << i for i in range(1, rows.bit_length() - 1)]

    def turns(first: list[int], second: list[int]) -> list[tuple[int, ...]]:
        masks = [m for pair in zip(first, second) for m in pair]
        longer = first if len(first) > len(second) else second
        return [(m,) for m in masks + longer[min(len(first), len(second)):]]

    quad = (1, cols)
    even = [quad] + turns(col_masks, row_masks)
    odd = [quad] + turns(row_masks, col_masks)
    steps = [odd if (v ^ v // cols) & 1 else even for v in range(rows * cols)]
    return member_halving_doubling(coll, steps, halved - 1, order)
