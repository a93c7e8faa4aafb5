"""`hilbert-two-tree`: the two-tree broadcast with its ranks along a Hilbert curve of the grid.

Sanders, Speck and Traff's two trees (twotree.py) number their members in order: a node's
children are ranks near its own, and the deeper the level, the nearer. In node order on a
mesh, rank v + 1 is the next column but rank v + 8 the next row, so a subtree spans whole rows
and the trees' routes share links (paragon:8x8, 1 MB, the `simgrid` flow model: 24.21 ms in
node order, 24.39 in Gray-code order). Along a Hilbert curve (Hilbert 1891) ranks that are near
are near on the grid in both dimensions (any 4^k consecutive ranks fill a 2^k x 2^k square),
so a subtree's routes stay inside its square: 18.66 ms predicted. The curve is turned so that
the root is its rank 0 (virtual rank v on the curve's point (v + h) mod P, h the root's place);
the root's copy of its own block goes beside its sends (rootcopy.py).

Closed form: the schedule is the two-tree's relabelled, so on a network without links of its
own it is the two-tree's; on the mesh the links it still shares are its declared gap.
"""

from __future__ import annotations

from phalanx.compiler.library import twotree
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rootcopy import copy_beside_sends
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def hilbert_point(d: int, side: int) -> tuple[int, int]:
    """(row, col) of the d-th point of the Hilbert curve over a side x side grid (side 2^k),
    starting at (0, 0): the iterative form, a quadrant (two bits of d) per level."""
    row = col = 0
    s, t = 1, d
    while s < side:
        rx, ry = 1 & (t // 2), 1 & (t ^ (1 & (t // 2)))
        if ry == 0:
            if rx == 1:
                row, col = s - 1 - row, s - 1 - col
            row, col = col, row
        col, row = col + s * rx, row + s * ry
        t //= 4
        s *= 2
    return row, col


def square_power_of_two_grid(coll: Collective, machine: Machine) -> str | None:
    """A Hilbert curve fills a 2^k x 2^k grid (precondition)."""
    if machine.grid is None:
        return "the machine is not a torus or mesh"
    rows, cols = machine.grid
    if rows != cols or rows & (rows - 1) or rows < 2:
        return f"a Hilbert curve needs a square grid of 2^k x 2^k nodes, not {rows}x{cols}"
    return None


def hilbert_two_tree_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The two-tree broadcast with virtual rank v on the Hilbert curve's point (v + h) mod P."""
    assert machine.grid is not None
    side = machine.grid[1]
    order = rooted_order(coll)
    nodes = [row * side + col for row, col in (hilbert_point(d, side) for d in range(side * side))]
    start = nodes.index(order[0])
    to = {order[v]: nodes[(v + start) % len(nodes)] for v in range(len(order))}

    def moved(t: Transfer) -> Transfer:
        return t._replace(src=to[t.src], dst=to[t.dst], final=to[t.final])

    relabelled = [Phase(tuple(map(moved, p.sends)), tuple(map(moved, p.recvs)), p.sync,
                        p.barrier_groups) for p in twotree.two_tree_phases(coll, machine)]
    return copy_beside_sends(relabelled, order[0])
