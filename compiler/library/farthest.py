"""`farthest-binomial`: the binomial broadcast (and scatter) farthest first, as MPICH's binomial
tree sends.

Phalanx's `binomial` (rooted.binomial_phases) serves virtual rank v + 2^k in round k, nearest
first: the root's first message goes to rank 1, its last to rank P/2. MPICH's
MPIR_Bcast_intra_binomial goes the other way: with relative ranks, a node's first child is
2^(ceil(lg P) - 1) ahead, its last 1 ahead. The two trees have the same rounds and the same
messages, so on a network without links of its own (ideal, a crossbar) they take the same
ceil(lg P) (alpha + beta m). On a mesh in node order they differ: nearest first, the last round
(32 messages on 64 nodes) goes 4 rows apart, 4 messages on one column link at once; farthest
first, the last round's 32 messages go between neighbours and no round of the 8x8 mesh puts
two messages on a link (each holder's next child is in its own row or column segment).
A separate record, so that `binomial`'s published times stay as they are.

The same tree scatters (issue 27, branch tbc): a child's message carries the blocks of the
ranks it serves later, c .. c + s - 1. On paragon:8x8 the root's first message (32 blocks) goes
4 rows down, and the rounds' messages share no link, where `binomial`'s last round puts four
on a column link: 2 KB 1.869 ms against 2.583 (`dim-ordered` 2.469), 128 B 0.5387 (0.5767),
which meets the `scatter relays` bound (6 alpha + 63 b beta, docs/bounds.md).
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _outward, _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase


def farthest_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Rounds of the binomial tree over virtual ranks 0..n-1 farthest first: with step s from
    the largest power of two below n down to 1, every holder v (a multiple of 2s) serves v + s."""
    rounds, step = [], 1 << max(n - 1, 0).bit_length() >> 1
    while step >= 1:
        rounds.append([(v, v + step) for v in range(0, n, 2 * step) if v + step < n])
        step //= 2
    return rounds


def farthest_binomial_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """ceil(log2 n) rounds, the root's first message to the member farthest in virtual rank; a
    scatter's message carries the child's subtree, the ranks c .. c + s - 1 it serves later
    (s the round's step)."""
    order = rooted_order(coll)
    n = len(order)

    def finals(c: int, step: int) -> list[int]:
        below = range(c, min(c + step, n)) if coll.kind is Kind.SCATTER else range(c, c + 1)
        return [order[u] for u in below]

    return _with_copies(coll, [[t for v, c in pairs
                                for t in _outward(coll, order[v], order[c], finals(c, c - v))]
                               for pairs in farthest_rounds(n)])
