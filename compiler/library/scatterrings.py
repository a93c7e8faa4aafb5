"""`scatter-rings`: a broadcast on a torus as a scatter to every node, then an allgather round
the columns and then round the rows, every ring both ways at once (issue 27, branch tbcast3).

The bidirectional-rings reduce backwards (ringreduce.py): the block is cut in 4 R C units on
the R x C grid, node (r, c) owning units (c, r, *, *). The root scatters each node's units by
neighbour-scatter's regions and chunks (neighbourscatter.py): chunk k of a region to the root's
neighbour as one message, the four on the root's four links at once, the neighbour sending
each owner its units in the next phase. Then every column's ring passes its nodes' units both
ways (rings.ring_steps' rule, ringreduce.gather_steps), so a node holds its column's, and
every row's ring passes a column's, so a node holds the block. A ring step is a message each
way: a node drives two links out and two in, the four streams its memory serves, so the row
stage moves (C - 1) / C of the block through each node's memory at the rate the `memory fill`
bound charges (docs/bounds.md). Every phase is eager: a node starts the ring's next step once
its receives are in, while its last messages still stream, and each ring step is split by
direction (ringreduce.split_by_direction), so a chain waits only for its own side. The root
takes nothing from the rings (it holds the block) and copies its own block into its result a
piece a phase (`root_copy_beside`).

torus:8x8 (iwarp:8x8 the same), ms: 16 KB 0.861, 64 KB 1.619, 128 KB 2.984, 1 MB 21.88;
eager-turned-cut-scatter-doubling 0.754 and 1.953 at 16 and 64 KB, eager-spanning-trees 3.097
and 20.82 at 128 KB and 1 MB. Standalone, at 64 KB the scatter takes 0.576 ms (the root's
links carry 63/64 of the block, 0.40 ms of it), the columns 0.190, the rows 0.817 (4 steps of
8 KB a way); at 16 KB 0.418, 0.163 and 0.280: the scatter's 15 messages a neighbour and the
rings' 2 start-ups a step (20 us each) weigh more than their bytes.
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
    phases = [Phase.of(p, SyncMode.EAGER) for p in scatter(u, coll, machine) if p]
    phases += split_by_direction(columns, 0, R, C) + split_by_direction(rows, 1, R, C)
    return root_copy_beside(coll, u.root, phases)


def root_copy_beside(coll: Collective, root: int, phases: list[Phase]) -> list[Phase]:
    """The root's copy of its block into its result in a piece a phase beside `phases`: whole
    at the end it would follow the root's last send (a 64 KB copy takes 0.82 ms on iWarp, two
    bytes a byte at the memory's four streams), and in one phase hold up the root's next.
    torus:8x8, 64 KB: 2.162 ms whole in the last phase, 1.728 a piece a ring phase, 1.619 a
    piece a phase."""
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
