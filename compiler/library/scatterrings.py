"""`scatter-rings`: a broadcast on a torus as a scatter to every node, then an allgather round
the columns and then round the rows, every ring both ways at once (issue 27, branch tbcast3).

The bidirectional-rings reduce backwards (ringreduce.py): the block is cut in 4 R C units on
the R x C grid, node (r, c) owning units (c, r, *, *). The root scatters each node's units by
neighbour-scatter's regions and chunks (neighbourscatter.py): chunk k of a region to the root's
neighbour as one message, the four on the root's four links at once, the neighbour sending
each owner its units in the next phase. Then every column's ring passes its nodes' units both
ways (rings.ring_steps' rule, ringreduce.gather_steps), so a node holds its column's, and
every row's ring passes a column's, so a node holds the block. A ring step is a message each
way: a node drives two links out and two in, the four streams its memory serves, and the row
stage moves (C - 1) / C of the block through each node's memory at that rate, what the memory
bound counts. Every phase is eager: a node starts the ring's next step once its receives are
in, while its last messages still stream, and the ring steps are split by direction
(ringreduce.split_step_phases) so a chain waits only for its own side.
"""

from __future__ import annotations

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.neighbourscatter import chunk_count, regions
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.ringreduce import gather_steps, split_by_direction
from phalanx.compiler.library.rooted import segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer

Unit = tuple[int, int, int, int]  # (column, row, row half, column half)


class Units:
    """The broadcast's block in 4 R C units, unit (c, r, a, b) owned by node (r, c)."""

    def __init__(self, coll: Collective, machine: Machine):
        self.rows, self.cols = machine.grid or (1, machine.nnodes)
        self.root = rooted_order(coll)[0]
        self.pieces = segments(coll.block_bytes or 0, 4 * self.rows * self.cols)

    def node(self, r: int, c: int) -> int:
        return r * self.cols + c

    def of(self, cols: list[int], rows: list[int], a: int | None = None,
           b: int | None = None) -> list[Unit]:
        return [(c, r, x, y) for c in cols for r in rows for x in (0, 1) for y in (0, 1)
                if a in (None, x) and b in (None, y)]

    def owned(self, v: int) -> list[Unit]:
        r, c = divmod(v, self.cols)
        return self.of([c], [r])

    def message(self, src: int, dst: int, units: list[Unit], final: int | None = None) -> list[Transfer]:
        """`units` from src to dst as one message, bound for `final` (dst by default); none
        into the root, which holds the block."""
        if dst == self.root:
            return []
        out = []
        for c, r, a, b in units:
            offset, nbytes = self.pieces[((c * self.rows + r) * 2 + a) * 2 + b]
            if nbytes:
                out.append(Transfer(src, dst, nbytes, self.root, dst if final is None else final,
                                    COMBINED, offset))
        return out


def scatter(u: Units, coll: Collective, machine: Machine) -> list[list[Transfer]]:
    """neighbour-scatter's phases with each node's units for its block: in phase k the root
    sends each neighbour its region's chunk k, and the neighbour sends chunk k - 1's on."""
    served = regions(coll, machine)
    share = 4 * (u.pieces[0][1] if u.pieces else 0)
    chunks = chunk_count(max(len(members) for members in served.values()), share, machine.port)
    phases: list[list[Transfer]] = [[] for _ in range(chunks + 1)]
    for n, members in served.items():
        for k in range(chunks):
            chunk = members[k * len(members) // chunks:(k + 1) * len(members) // chunks]
            phases[k] += [t for v in chunk for t in u.message(u.root, n, u.owned(v), v)]
            phases[k + 1] += [t for v in chunk if v != n for t in u.message(n, v, u.owned(v))]
    return phases


def scatter_rings_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The scatter, the columns' rings, the rows' rings (module docstring), every phase eager."""
    u = Units(coll, machine)
    R, C = u.rows, u.cols
    columns = [[t for c in range(C) for i, j, p, half in sends
                for t in u.message(u.node(i, c), u.node(j, c), u.of([c], [p], b=half))]
               for sends in gather_steps(R)]
    rows = [[t for r in range(R) for i, j, p, half in sends
             for t in u.message(u.node(r, i), u.node(r, j), u.of([p], list(range(R)), a=half))]
            for sends in gather_steps(C)]
    phases = [Phase.of(p, SyncMode.EAGER) for p in scatter(u, coll, machine)]
    rings = split_by_direction(columns, 0, R, C) + split_by_direction(rows, 1, R, C)
    return phases + root_copy_beside(coll, u.root, rings)


def root_copy_beside(coll: Collective, root: int, phases: list[Phase]) -> list[Phase]:
    """The root's copy of its block into its result in a piece a phase beside `phases`: whole
    at the end it would follow the root's last send (a 64 KB copy takes 0.82 ms on iWarp, two
    bytes a byte at the memory's four streams), and in one phase hold up the root's next."""
    nbytes = coll.byte_matrix[root][root]
    if not nbytes:
        return phases
    out = []
    for phase, (offset, size) in zip(phases, segments(nbytes, len(phases))):
        copy = (Transfer(root, root, size, root, root, 0, offset),) if size else ()
        out.append(Phase(phase.sends + copy, phase.recvs + copy, phase.sync))
    return out


def four_units_a_node(coll: Collective, machine: Machine) -> str | None:
    """The block cut in 4 R C units of at least a byte each (precondition)."""
    units = 4 * machine.nnodes
    if coll.block_bytes is None:
        return "the blocks are not all of one size"
    if coll.block_bytes < units:
        return f"the {coll.block_bytes}-byte block is smaller than its {units} units (four per node)"
    return None
