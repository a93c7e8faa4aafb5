"""A broadcast whose root copies its own block in pieces, each beside one of its sends.

A broadcast's root also copies its block into its own result (members.local_copies).
`rooted._with_copies` puts that copy after the last phase's messages, whole, so that it does
not hold up the root's first message. Where the copy rate is slower than the wire, that whole
copy still ends late: on the Paragon-figured hypercube a byte takes 14 ns to copy and 11 ns
to send (003_f18cb429ce0a4177.txt Table 1), so a pipelined 1 MB broadcast whose root is done
sending after 2 s of its F + 2 s slots then spends 14.7 ms copying, more than the others'
F slots of forwarding. Here the copy goes in pieces, one in each phase in which the root
sends, sized like that phase's message (its segment): a piece takes 14 ns/B x m beside a
message of alpha + 11 ns/B x m, so the copy adds nothing where each piece is shorter than
the message it runs beside (the built-in port models and SimGrid's hosts copy on the CPU
while the port streams, cost.py, simgrid_worker.py).

`two-tree-copy-beside` is the two-tree broadcast (twotree.py) so placed: its closed form is
cost.two_tree_s where every piece of the copy is shorter than its message, which the test on
ideal (no copy time) and the one on the hypercube check.

`gray-two-tree` is that broadcast on 2^d members with virtual rank v played by the member of
rank gray(v) = v XOR (v >> 1) (the root keeps rank 0). In natural order the two trees' edges
join ranks p and p +- 2^j, whose e-cube routes cross carries: on hypercube:6 two messages of
a slot share a link in 37 of the 50 slots of a 1 MB broadcast. In Gray-code order no two
messages of any slot share a link there (checked in the tests), so each moves at the port's
rate. On a crossbar (ideal) the order changes nothing: the same closed form.
"""

from __future__ import annotations

from collections.abc import Callable

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

PhasesFn = Callable[[Collective, Machine], list[Phase]]


def copy_beside_sends(phases: list[Phase], root: int) -> list[Phase]:
    """`phases` with the root's whole copy of its own block taken out and put back in pieces,
    one in each phase in which the root sends, in proportion to the bytes it sends there."""
    copy = [t for p in phases for t in p.sends if t.src == t.dst == root]
    if len(copy) != 1:
        return phases  # no own block (or already in pieces): nothing to spread
    whole = copy[0]
    sending = [k for k, p in enumerate(phases) if any(t.src == root != t.dst for t in p.sends)]
    weights = [sum(t.nbytes for t in phases[k].sends if t.src == root != t.dst) for k in sending]
    if not sending or whole.nbytes < len(sending):
        return phases
    return copy_in_pieces(phases, whole, sending, weights)


def copy_beside_receives(phases: list[Phase], root: int) -> list[Phase]:
    """A reduce's `phases` with the root's copy of its own partial (members.local_copies, first
    in rooted._with_copies) taken out and put back in pieces, one in each phase in which the
    root receives, in proportion to the bytes of the pieces it takes there: the root merges each
    piece of the sum as it comes instead of first copying its whole partial."""
    copy = [t for p in phases for t in p.sends if t.src == t.dst == root]
    if len(copy) != 1:
        return phases
    whole = copy[0]
    taking = [k for k, p in enumerate(phases) if any(t.dst == root != t.src for t in p.recvs)]
    weights = [sum(nbytes for _, _, nbytes in {(t.src, t.offset, t.nbytes) for t in phases[k].recvs
                                               if t.dst == root != t.src}) for k in taking]
    if not taking or whole.nbytes < len(taking):
        return phases
    return copy_in_pieces(phases, whole, taking, weights)


def copy_in_pieces(phases: list[Phase], whole: Transfer, at: list[int], weights: list[int]) -> list[Phase]:
    """`phases` without the local copy `whole` (where it is one of their transfers) and with it
    in pieces, one in each phase of `at` in proportion to its weight (proportional_cuts), each
    sent and received last in its phase."""
    pieces = {k: Transfer(whole.src, whole.src, nbytes, whole.origin, whole.final, 0, offset)
              for k, (offset, nbytes) in zip(at, proportional_cuts(whole.nbytes, weights)) if nbytes > 0}
    out = []
    for k, p in enumerate(phases):
        extra = (pieces[k],) if k in pieces else ()
        out.append(Phase(tuple(t for t in p.sends if t != whole) + extra,
                         tuple(t for t in p.recvs if t != whole) + extra, p.sync, p.barrier_groups))
    return out


def proportional_cuts(total: int, weights: list[int]) -> list[tuple[int, int]]:
    """(offset, nbytes) of pieces of `total` bytes in proportion to `weights` (each at least 1 byte)."""
    if sum(weights) <= 0:
        return segments(total, len(weights))
    ends, acc = [], 0
    for w in weights:
        acc += w
        ends.append(acc * total // sum(weights))
    starts = [0] + ends[:-1]
    return [(a, b - a) for a, b in zip(starts, ends)]


def copy_beside(base: PhasesFn) -> PhasesFn:
    """The broadcast of `base`, its root's copy in pieces beside its sends."""

    def phases(coll: Collective, machine: Machine) -> list[Phase]:
        return copy_beside_sends(base(coll, machine), rooted_order(coll)[0])
    return phases


def gray(rank: int) -> int:
    """The reflected binary Gray code of `rank`: neighbours differ in one bit."""
    return rank ^ (rank >> 1)


def in_gray_order(base: PhasesFn) -> PhasesFn:
    """The broadcast of `base` with virtual rank v on the member of rank gray(v), its root's
    copy beside its sends (2^d members: gray permutes 0..2^d - 1 and keeps 0 on the root)."""

    def phases(coll: Collective, machine: Machine) -> list[Phase]:
        order = rooted_order(coll)
        to = {order[v]: order[gray(v)] for v in range(len(order))}

        def moved(t: Transfer) -> Transfer:
            return t._replace(src=to.get(t.src, t.src), dst=to.get(t.dst, t.dst),
                              final=to.get(t.final, t.final))
        relabelled = [Phase(tuple(map(moved, p.sends)), tuple(map(moved, p.recvs)), p.sync,
                            p.barrier_groups) for p in base(coll, machine)]
        return copy_beside_sends(relabelled, order[0])
    return phases
