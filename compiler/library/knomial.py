"""The k-nomial reduce (MVAPICH's and Intel MPI's knomial tree): ceil(log_k P) rounds; in the
round of stride s = k^j every member v with v mod (k s) = 0 takes at once the combined partials
of its children v + i s, i = 1..k-1, each bringing the members [v + i s, v + (i + 1) s) it
gathered in the rounds before.

Receiving costs no start-up in the port models (docs/bounds.md), so a parent's k - 1 children
send at the same time and the parent pays only their bytes through its port: k = 2 is the
binomial tree (lg P start-ups, one partial each), k = P every partial straight to the root (one
start-up, P - 1 partials through its port). Between them k balances the two, as the fan-in
bound does: `radix` takes the k of least cost.knomial_reduce_s for the partial's size.

Three more rooted schedules whose shape the closed form picks: `cut_halving_phases`, a reduce by
Rabenseifner's recursive halving over the lowest k rank bits only, a binomial reduce of the
smaller pieces and a binomial gather; `halving_direct_phases`, the same with the pieces sent
straight to the root in one phase (receiving costs no start-up, so the gather's lg 2^k start-ups
become one: halving_direct_s); `cut_scatter_doubling_phases`, the broadcast's twin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import replace

from phalanx.compiler.library import cost
from phalanx.compiler.library.allreduce import halved_rounds
from phalanx.compiler.library.members import binomial_rounds, rooted_order, subtree
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import _inward, _with_copies, halving_gather, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


def radix(coll: Collective, machine: Machine, members: int) -> int:
    """The k in 2..members of the least closed-form time on the machine's port model (the
    smallest of equals)."""
    if members <= 2:
        return 2
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    element = coll.element_bytes or nbytes
    return min(range(2, members + 1), key=lambda k: (cost.knomial_reduce_s(
        members, k, nbytes, element, machine.port), k))


def knomial_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """One phase per round, strides 1, k, k^2, ...: each child sends its gathered partials to
    its parent as one combined message (rooted._inward)."""
    order = rooted_order(coll)
    n = len(order)
    k = radix(coll, machine, n)
    phases = []
    stride = 1
    while stride < n:
        phases.append([t for v in range(0, n, stride * k) for i in range(1, k)
                       if v + i * stride < n
                       for t in _inward(coll, order[v + i * stride], order[v],
                                        order[v + i * stride:min(v + (i + 1) * stride, n)])])
        stride *= k
    return _with_copies(coll, phases)


def cut_halving_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Rabenseifner's reduce with its halving cut short at k rank bits (rooted.halving_gather):
    like the k-nomial radix, k from the closed form (cost.halving_doubling_s), between the
    binomial tree (k = 0) and reduce-scatter-gather (k = lg P)."""
    return halving_gather(coll, halved_rounds(coll, machine, len(rooted_order(coll))))


def halving_direct_s(members: int, halved: int, partial_bytes: int, element_bytes: int,
                     port: PortModel) -> float:
    """halving_direct_phases on 2^d members, a closed form on a one-port machine: as
    cost.halving_doubling_s, k rounds of recursive halving (n / 2, ..., n / 2^k) and d - k
    binomial rounds of the n / 2^k piece, each alpha + m (beta + gamma / e) (twice the bytes'
    time on a shared engine: an estimate there); then, for k > 0, the 2^k - 1 other pieces of
    m = n / 2^k bytes into the root at once: one start-up, the pieces one after another through
    its port, each merged while the next arrives, alpha + m beta + (c - 1) max(m beta, m gamma / e)
    + m gamma / e (cost.knomial_reduce_s's round)."""
    d = members.bit_length() - 1
    beta, merge_s = port.s_per_byte, port.combine_s_per_op / element_bytes
    per_byte_s = beta * (2 if port.shared_engine else 1) + merge_s
    piece = partial_bytes / 2 ** halved
    halves = sum(partial_bytes / 2 ** i for i in range(1, halved + 1))
    total_s = d * port.startup_s + (halves + (d - halved) * piece) * per_byte_s
    if halved:
        others = 2 ** halved - 1
        total_s += port.startup_s + piece * (beta + (others - 1) * max(beta, merge_s) + merge_s)
    return total_s


def direct_halved_rounds(coll: Collective, machine: Machine, members: int) -> int:
    """The k in 0..lg P of least halving_direct_s for the collective's partials (the larger of
    equals)."""
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    element = coll.element_bytes or nbytes
    return min(range(members.bit_length()), key=lambda k: (
        halving_direct_s(members, k, nbytes, element, machine.port), -k))


def halving_direct_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Rabenseifner's halving over the lowest k rank bits and a binomial reduce over the others
    (cut_halving_phases), then the 2^k reduced pieces straight to the root in one phase; k of
    least halving_direct_s (k = 0: the binomial tree)."""
    members = len(rooted_order(coll))
    return halving_gather(coll, direct_halved_rounds(coll, machine, members), direct=True)


def cut_scatter_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """scatter-doubling cut short, the broadcast's twin of the reduce's cut halving: the block
    in 2^k pieces scattered down a binomial tree over members 0 .. 2^k - 1 (member j ends with
    piece j), each piece broadcast down a binomial tree over its column (the members with the
    same k low rank bits), then recursive doubling over the k low bits in every block of 2^k,
    the largest swap between ranks that differ in the lowest bit; k of least
    cost.halving_doubling_s without merges (k = lg P: scatter-doubling; k = 0: binomial). The
    scatter goes farthest member first (MPICH's) where that loads the machine's routes less
    (far_scatter_loads_less)."""
    order = rooted_order(coll)
    halved = cut_bits(coll, machine, len(order))
    return cut_scatter_doubling_over(coll, order, halved,
                                     far_first=far_scatter_loads_less(machine, order, halved))


def far_scatter_loads_less(machine: Machine, order: list[int], halved: int) -> bool:
    """Whether the scatter over members 0 .. 2^k - 1 farthest first (the root's first message
    to member 2^(k-1), half the block) puts fewer bytes on the busiest link of its rounds,
    summed over the rounds, than nearest first (binomial_rounds: member 1 first), under the
    machine's fixed routes. A round takes at least its busiest link's bytes (a worm holds its
    route's links for its whole wire time), and only the scatter's order is free: the column
    trees and the doubling are the same either way. On the CS-2's fat tree of 4x4 crossbars
    (003_f18cb429ce0a4177.txt Sec. 3.2, Fig. 8; up by the destination's digit above, as
    targets/bokhari/params.py CS2.up_route says why) nearest first ends with rounds whose four
    senders of a leaf switch all send to one other leaf, on one up-link; farthest first has
    one sender a leaf in every round that leaves it. Without routes, or with alike loads,
    nearest first, as before."""
    if machine.route is None:
        return False
    count = 1 << halved

    def load(rank: Callable[[int], int]) -> float:
        return sum(_busiest_link(machine, [(order[rank(v)], order[rank(c)], len(subtree(c, count)))
                                           for v, c in pairs]) for pairs in binomial_rounds(count))

    return load(lambda v: _reversed_bits(v, halved)) < load(lambda v: v)


def _busiest_link(machine: Machine, messages: list[tuple[int, int, int]]) -> float:
    """The most units of (src, dst, units) `messages` on one link of the machine's routes
    (an adapter's routes share a message's units evenly)."""
    assert machine.route is not None
    loads: Counter[Hashable] = Counter()
    for src, dst, units in messages:
        routes = machine.adapter.routes(src, dst) if machine.adapter else [machine.route(src, dst)]
        for route in routes:
            for link in route:
                loads[link] += units / len(routes)
    return max(loads.values(), default=0.0)


def _reversed_bits(rank: int, bits: int) -> int:
    """`rank`'s lowest `bits` bits in reverse order: nearest-first binomial ranks relabelled so
    that the root's first message goes to the farthest member."""
    return int(format(rank, f"0{bits}b")[::-1], 2) if bits else 0


def cut_bits(coll: Collective, machine: Machine, members: int) -> int:
    """The k of cut scatter-doubling: cost.halving_doubling_s's least, without merges."""
    no_merges = replace(machine.port, combine_s_per_op=0.0)
    return cost.least_halved_rounds(members, coll.block_bytes or 1, 1, no_merges)


def cut_scatter_doubling_over(coll: Collective, order: list[int], halved: int,
                              far_first: bool = False) -> list[Phase]:
    """cut_scatter_doubling_phases over `order`, the members by virtual rank (the root first),
    cut at k = `halved` rank bits; `far_first`: the scatter's root sends to member 2^(k-1)
    first (binomial_rounds with the k bits reversed), else to member 1 first."""
    n, root = len(order), order[0]
    count = 1 << halved
    pieces = segments(coll.block_bytes or 0, count)
    scattered = (lambda rank: _reversed_bits(rank, halved)) if far_first else (lambda rank: rank)

    def piece(src: int, dst: int, j: int, final: int) -> Transfer:
        offset, nbytes = pieces[j]
        return Transfer(order[src], order[dst], nbytes, root, order[final], COMBINED, offset)

    phases = [[piece(scattered(v), scattered(c), scattered(j), scattered(j))
               for v, c in pairs for j in subtree(c, count)]
              for pairs in binomial_rounds(count)]
    phases += [[piece(v * count + j, c * count + j, j, c * count + j) for v, c in pairs
                for j in range(count)] for pairs in binomial_rounds(n // count)]
    held = [[v % count] for v in range(n)]
    mask = count >> 1
    while mask:
        phases.append([piece(v, v ^ mask, j, v ^ mask) for v in range(n) for j in held[v] if v ^ mask])
        held = [sorted(held[v] + held[v ^ mask]) for v in range(n)]
        mask >>= 1
    return _with_copies(coll, phases)
