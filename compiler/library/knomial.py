"""The k-nomial reduce (MVAPICH's and Intel MPI's knomial tree): ceil(log_k P) rounds; in the
round of stride s = k^j every member v with v mod (k s) = 0 takes at once the combined partials
of its children v + i s, i = 1..k-1, each bringing the members [v + i s, v + (i + 1) s) it
gathered in the rounds before.

Receiving costs no start-up in the port models (docs/bounds.md), so a parent's k - 1 children
send at the same time and the parent pays only their bytes through its port: k = 2 is the
binomial tree (lg P start-ups, one partial each), k = P every partial straight to the root (one
start-up, P - 1 partials through its port). Between them k balances the two, as the fan-in
bound does: `radix` takes the k of least cost.knomial_reduce_s for the partial's size.

`cut_halving_phases`, also a reduce whose shape the closed form picks: Rabenseifner's recursive
halving over the lowest k rank bits only, a binomial reduce of the smaller pieces, a gather.
"""

from __future__ import annotations

from phalanx.compiler.library import cost
from phalanx.compiler.library.allreduce import halved_rounds
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _inward, _with_copies, halving_gather
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase


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
