"""`postal-tree` reduce: the tree of least time when every member sends its combined partial
once (Bar-Noy and Kipnis's optimal broadcast tree of the postal model, run backwards).

Receiving costs no start-up in the port models (docs/bounds.md), so a parent's children may
send at once; their partials then pass its port one after another. A member done (every
child's partial in and merged) by t can have children done by

    t - merge - i max(move, merge) - (alpha + move),   i = 0, 1, ...

(child i's partial arrives i partial times before the last one, which is merged last), so the
most members a tree done by t can hold is N(t) = 1 + sum over i of N(that child's deadline),
N(t) = 1 for t < alpha + move + merge. `postal_tree_s`, the least t with N(t) >= P, is the
closed form; the tree gives each child as many members as its deadline allows, the latest
deadline first. Between the k-nomial tree (every parent of a round takes the same number of
children, who all wait for the round's slowest) and the direct reduce, children that are ready
early send early: on cs2:64 at 2 KB (alpha 105 us, a partial's wire 51.2 us) 0.67 ms where
knomial takes 0.78. Issue 27's reduces on the shared-engine machines; docs/efficiency.md
(branch reducesingle).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import _inward, _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase

BISECTIONS = 60


def _costs(partial_bytes: int, element_bytes: int, port: PortModel) -> tuple[float, float, float]:
    """(start-up, a partial's wire, its merge) in seconds."""
    move_s = partial_bytes * port.s_per_byte / port.streams
    merge_s = port.combine_s_per_op * max(1, partial_bytes // element_bytes)
    return port.startup_s, move_s, merge_s


def _capacity(startup_s: float, move_s: float, merge_s: float, most: int) -> Callable[[float], int]:
    """N(t), up to `most`: the most members of a tree done by t (module docstring)."""
    gap_s = max(move_s, merge_s)

    @functools.cache
    def capacity(t_s: float) -> int:
        members, child = 1, 0
        while members < most and (deadline := t_s - merge_s - child * gap_s - startup_s - move_s) >= 0:
            members += capacity(round(deadline, 15))
            child += 1
        return min(members, most)
    return capacity


def postal_tree_s(members: int, partial_bytes: int, element_bytes: int, port: PortModel) -> float:
    """The least t at which a postal tree of `members` is done (module docstring; 0 for one)."""
    if members <= 1:
        return 0.0
    capacity = _capacity(*_costs(partial_bytes, element_bytes, port), members)
    lo, hi = 0.0, sum(_costs(partial_bytes, element_bytes, port)) * members
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if capacity(round(mid, 15)) < members else (lo, mid)
    return hi


def postal_tree_parents(members: int, partial_bytes: int, element_bytes: int,
                        port: PortModel) -> list[int]:
    """Each virtual rank's parent (the root, 0, its own), ranks in depth-first order: every
    member's children in turn take as many members as their deadlines allow, latest first, and
    are ranked in the order they send, earliest first, so that a parent's one-member children
    follow it (on the CS-2 they share its leaf switch, whose one link from above then carries
    the messages of one receiver at a time)."""
    startup_s, move_s, merge_s = _costs(partial_bytes, element_bytes, port)
    capacity = _capacity(startup_s, move_s, merge_s, members)
    parents = [0] * members
    gap_s = max(move_s, merge_s)

    def place(rank: int, t_s: float, count: int) -> None:
        children, left = [], count - 1
        while left > 0:
            deadline = round(t_s - merge_s - len(children) * gap_s - startup_s - move_s, 15)
            size = min(capacity(deadline), left)
            children.append((deadline, size))
            left -= size
        next_rank = rank + 1
        for deadline, size in reversed(children):
            parents[next_rank] = rank
            place(next_rank, deadline, size)
            next_rank += size
    place(0, round(postal_tree_s(members, partial_bytes, element_bytes, port), 15), members)
    return parents


def postal_tree_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Every member sends its subtree's combined partial to its parent in the phase of its
    height (leaves first), so a parent sends once all its children's partials are in."""
    order = rooted_order(coll)
    n = len(order)
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    parents = postal_tree_parents(n, nbytes, coll.element_bytes or nbytes, machine.port)
    height, subtree = [0] * n, [[v] for v in range(n)]
    for v in range(n - 1, 0, -1):  # children have higher ranks than their parents
        height[parents[v]] = max(height[parents[v]], height[v] + 1)
        subtree[parents[v]] += subtree[v]
    phases: list[list] = [[] for _ in range(max(height[1:], default=0) + 1)] if n > 1 else []
    for v in range(1, n):
        phases[height[v]] += _inward(coll, order[v], order[parents[v]], [order[u] for u in subtree[v]])
    return _with_copies(coll, phases)
