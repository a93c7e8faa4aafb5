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
takes nothing from the rings (it holds the block) and copies its own block into its result in
pieces beside its ring sends (`root_copy_beside`; fan-scatter-rings' a piece a phase).

`fan-scatter-rings` scatters the units down fan-scatter's tree instead (fanscatter.py: a
holder starts its messages largest subtree first, the subtrees runs of a Hilbert curve; its
closed form picks the fan-outs for a node's share of 4 units) and passes the columns' units by
recursive doubling, farthest first (lg R start-ups a node where the ring takes R / 2 steps of
two): where a unit is short the start-ups, not the bytes, bind both stages. Only half the rows
own units (`owner_rows`, issue 27, branch r2bc): four units of twice the bytes on the root's
row and the nearest ones, one of each pair that the doubling's first step (mask R / 2) joins,
so that step carries an owner's units one way and the tree scatters to P / 2 nodes, each
message one of two shares: torus:8x8 16 KB 0.686 -> 0.640 ms (the scatter's last node 293 ->
230 us, the columns' last 407 -> 371). On 2^k x 2^k tori.

Closed forms (`scatter_rings_s`, `fan_scatter_rings_s`): the scatter's own (neighbour-scatter's
T(c) for a node's share of B / P bytes; fan-scatter's f(P / 2) for an owner's two), then the
column stage (rings: floor(R / 2) steps of a start-up and a share, the last on an even R half
of one; doubling: lg R start-ups and R shares on one link, the owners' two, then 2, 4, ...,
R / 2), then the row rings (floor(C / 2) steps of a start-up and R shares), one after
another. Declared gap: the simulator takes 0.98-1.27 T for scatter-rings (torus:8x8, 4x4, 3x4,
2 KB-1 MB; 1.06 at 64 KB on 8x8) and 1.05-1.25 T for fan-scatter-rings up to 16 KB (1.10 at 16
KB, 1.21 at 2 KB on 8x8, 1.14 on 4x4, 1.07 on 2x2); from 64 KB 1.3-2.4 T (1.41 at 64 KB), the
fan's largest subtrees' messages sharing a root link and the root's memory, which f does not
count.

torus:8x8 (iwarp:8x8 the same), ms:

| block | scatter-rings | fan-scatter-rings (every row owning, branch tbcast3) | the grid's best before |
|---|---|---|---|
| 2 KB | 0.691 | 0.361 (0.381) | eager-interleaved-cut-scatter-doubling 0.291 |
| 16 KB | 0.861 | 0.640 (0.686) | eager-turned-cut-scatter-doubling 0.754 |
| 64 KB | 1.619 | 1.998 (2.017) | eager-turned-cut-scatter-doubling 1.953 |
| 128 KB | 2.984 | 5.159 (4.996) | eager-spanning-trees 3.097 |
| 1 MB | 21.88 | (37.83) | eager-spanning-trees 20.82 |

Standalone (each stage alone from its start), at 64 KB neighbour-scatter's scatter takes 0.576
ms (the root's links carry 63/64 of the block, 0.40 ms of it; the fan tree's 0.870, its
largest subtrees' messages sharing a root link), the column rings 0.190, the row rings 0.817
(4 steps of 8 KB a way). At 16 KB: the scatters 0.418 (a neighbour starts 15 messages) and
0.293 (the fan tree), the column rings 0.163 (doubling, in the whole schedule, 0.11), the row
rings 0.280: 4 steps of a start-up (20 us) and 2 KB on the wire (51 us), one after the other,
since a node passes on what the step before brought.
"""

from __future__ import annotations

import dataclasses
import math

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.fanscatter import fan_out, fan_scatter_phases
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.neighbourscatter import chunk_count, regions
from phalanx.compiler.library.registry import Generator, Machine, PortModel
from phalanx.compiler.library.ringreduce import gather_steps, split_by_direction
from phalanx.compiler.library.rootcopy import copy_in_pieces
from phalanx.compiler.library.rooted import segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer

Unit = tuple[int, int, int, int]  # (column, row, row half, column half)


def owner_rows(rows: int, root_row: int) -> set[int]:
    """fan-scatter-rings' half of the rows that own the block (rows a power of two): row r
    with offset o = r XOR root_row owns if o's bits R / 2 and R / 4 agree (on 8 rows the
    offsets 0, 1, 6, 7: the root's row and the three nearest it, one of each pair the
    doubling's first step, mask R / 2, joins; on 2 rows the root's)."""
    top = rows // 2
    return {r for r in range(rows) if bool((r ^ root_row) & top) == bool((r ^ root_row) & (top // 2))}


class Units:
    """The broadcast's block in 4 R C units, unit (c, r, a, b) owned by node (r, c)."""

    def __init__(self, coll: Collective, machine: Machine, half_rows: bool = False):
        """Every node owns four units of the block, or with `half_rows` only the nodes of
        `owner_rows` (four units of twice the bytes), the others' units empty."""
        self.rows, self.cols = machine.grid or (1, machine.nnodes)
        self.root = rooted_order(coll)[0]
        owners = owner_rows(self.rows, self.root // self.cols) if half_rows else set(range(self.rows))
        owned = [r in owners for c in range(self.cols) for r in range(self.rows) for _ in range(4)]
        shares = iter(segments(coll.block_bytes or 0, sum(owned)))
        self.pieces = [next(shares) if mine else (0, 0) for mine in owned]

    def node(self, r: int, c: int) -> int:
        return r * self.cols + c

    def of(self, cols: list[int], rows: list[int], a: int | None = None,
           b: int | None = None) -> list[Unit]:
        return [(c, r, x, y) for c in cols for r in rows for x in (0, 1) for y in (0, 1)
                if a in (None, x) and b in (None, y)]

    def owned(self, v: int) -> list[Unit]:
        r, c = divmod(v, self.cols)
        return self.of([c], [r])

    def share(self, v: int) -> int:
        """The bytes of v's units."""
        return sum(self.pieces[((c * self.rows + r) * 2 + a) * 2 + b][1] for c, r, a, b in self.owned(v))

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


def scatter_as_units(u: Units, coll: Collective, machine: Machine,
                     scatter_phases: Generator) -> list[list[Transfer]]:
    """A scatter algorithm's phases for the scatter of each node's units from the root: the
    scatter of a node's share (4 units) a node, each of its blocks (root, v) as v's units, each
    of its messages one message."""
    n = coll.nprocs
    matrix = tuple(tuple(u.share(q) if p == u.root and q != u.root else 0 for q in range(n))
                   for p in range(n))
    scatter_coll = dataclasses.replace(coll, kind=Kind.SCATTER, byte_matrix=matrix, root=u.root,
                                       strided=())
    out = []
    for phase in scatter_phases(scatter_coll, machine):
        ids: dict[tuple[int, int, int], int] = {}
        sends = []
        for i, t in enumerate(phase.sends):
            key = (t.src, t.dst, t.message or -1 - i)  # a transfer of message 0 goes alone
            ids.setdefault(key, COMBINED + len(ids))
            sends += [x._replace(message=ids[key])
                      for x in u.message(t.src, t.dst, u.owned(t.final), t.final)]
        out.append(sends)
    return out


def column_rings(u: Units) -> list[Phase]:
    """Every column's ring both ways: node (r, c) passes on the units of the node it took from
    in the step before, so it ends with units (c, *, *, *)."""
    steps = [[t for c in range(u.cols) for i, j, p, half in sends
              for t in u.message(u.node(i, c), u.node(j, c), u.of([c], [p], b=half))]
             for sends in gather_steps(u.rows)]
    return split_by_direction(steps, 0, u.rows, u.cols)


def column_doubling(u: Units) -> list[Phase]:
    """Every column by recursive doubling over the row bits, farthest first (masks R / 2, ...,
    1: the smallest messages the farthest): with mask m node (r, c) sends (r XOR m, c) the units
    of the rows it holds, so it ends with units (c, *, *, *) (R a power of two)."""
    have = {u.node(r, c): [r] for r in range(u.rows) for c in range(u.cols)}
    phases = []
    mask = u.rows // 2
    while mask:
        step, grown = [], {}
        for v, rows in have.items():
            r, c = divmod(v, u.cols)
            partner = u.node(r ^ mask, c)
            step += u.message(v, partner, u.of([c], rows))
            grown[partner] = sorted(have[partner] + rows)
        have = grown
        phases.append(Phase.of(step, SyncMode.EAGER))
        mask //= 2
    return phases


def row_rings(u: Units) -> list[Phase]:
    """Every row's ring both ways, passing a column's units: every node ends with the block."""
    steps = [[t for r in range(u.rows) for i, j, p, half in sends
              for t in u.message(u.node(r, i), u.node(r, j), u.of([p], list(range(u.rows)), a=half))]
             for sends in gather_steps(u.cols)]
    return split_by_direction(steps, 1, u.rows, u.cols)


def eager_phases(phases: list[list[Transfer]]) -> list[Phase]:
    return [Phase.of(p, SyncMode.EAGER) for p in phases if p]


def scatter_rings_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """neighbour-scatter's regions and chunks, the columns' rings, the rows' rings (module
    docstring), every phase eager."""
    u = Units(coll, machine)
    scattering = eager_phases(scatter(u, coll, machine))
    return root_copy_beside(coll, u.root, scattering + column_rings(u) + row_rings(u), len(scattering))


def fan_scatter_rings_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """fan-scatter's tree, the columns by recursive doubling, the rows' rings (module
    docstring), every phase eager."""
    u = Units(coll, machine, half_rows=True)
    phases = eager_phases(scatter_as_units(u, coll, machine, fan_scatter_phases))
    phases += column_doubling(u) + row_rings(u)
    return root_copy_beside(coll, u.root, phases)


def root_copy_beside(coll: Collective, root: int, phases: list[Phase],
                     scattering: int | None = None) -> list[Phase]:
    """The root's copy of its block into its result in pieces beside `phases`: with
    `scattering` None, an equal piece a phase; else beside its sends after its scatter (the
    first `scattering` phases), each piece in proportion to the bytes the root sends in its
    phase. The copy holds the root's processor (the tori's, WormholeNetwork.copy_program) and
    runs after the phase's start-ups, so it holds up the root's next start-up unless a long worm
    of its own streams beside it; in a scatter phase that start-up is one every ring waits for.
    Whole at the end it would follow the root's last send (a 64 KB copy takes 0.82 ms on iWarp,
    two bytes a byte at the memory's four streams). torus:8x8, scatter-rings, 64 KB: 1.868 ms a
    piece a phase, 1.689 after the scatter by bytes sent (1.619 while a copy held no
    processor); 128 KB: 3.514 and 3.017 ms. fan-scatter-rings' root idles in the phases after
    its fan's first: at 16 KB 0.640 ms a piece a phase, 0.661 after the scatter by bytes."""
    nbytes = coll.byte_matrix[root][root]
    if not nbytes:
        return phases
    first = 0 if scattering is None or scattering >= len(phases) else scattering
    weights = [1 if scattering is None else sum(t.nbytes for t in p.sends if t.src == root != t.dst)
               for p in phases[first:]]
    return copy_in_pieces(phases, Transfer(root, root, nbytes, root, root), list(range(first, len(phases))),
                          weights)


def ring_stage_s(port: PortModel, length: int, bundle_bytes: float) -> float:
    """A ring stage's chain (ringreduce.gather_steps, split by direction): floor(L / 2) steps,
    each a start-up and the bundle a node passes on, the last on an even L half of one."""
    step_s = port.startup_s + bundle_bytes * port.s_per_byte
    steps = length // 2
    if length % 2 or not steps:
        return steps * step_s
    return (steps - 1) * step_s + port.startup_s + bundle_bytes / 2 * port.s_per_byte


def scatter_rings_s(machine: Machine, nbytes: int) -> float:
    """T of scatter-rings (module docstring): neighbour-scatter's T(c) for a node's share, then
    the column rings (a node's share a step) and the row rings (a column's), one after another."""
    assert machine.grid is not None
    rows, cols = machine.grid
    port, share = machine.port, nbytes / (rows * cols)
    blocks = math.ceil((rows * cols - 1) / 4)
    chunk = math.ceil(blocks / chunk_count(blocks, share, port))
    count = math.ceil(blocks / chunk)
    scatter_s = 2 * port.startup_s + count * max(4 * port.hold_s, chunk * share * port.s_per_byte) + \
        chunk * port.hold_s + share * port.s_per_byte
    return scatter_s + ring_stage_s(port, rows, share) + ring_stage_s(port, cols, rows * share)


def fan_scatter_rings_s(machine: Machine, nbytes: int) -> float:
    """T of fan-scatter-rings: fan-scatter's f(P / 2) for an owner's share (two nodes' worth;
    f(P) on one row), the columns' lg R doubling steps (a start-up each, then 2 + 2 + 4 + ...
    + R / 2 = R shares on one link: the first step an owner's two), then the row rings."""
    assert machine.grid is not None
    rows, cols = machine.grid
    port, share = machine.port, nbytes / (rows * cols)
    owners = len(owner_rows(rows, 0))
    scatter_s = fan_out(owners * cols, share * rows / owners, port)[0]
    doubling_s = (rows.bit_length() - 1) * port.startup_s + \
        (rows if owners < rows else rows - 1) * share * port.s_per_byte
    return scatter_s + doubling_s + ring_stage_s(port, cols, rows * share)


def four_units_a_node(coll: Collective, machine: Machine) -> str | None:
    """The block cut in 4 R C units of at least a byte each (precondition)."""
    units = 4 * machine.nnodes
    if coll.block_bytes is None:
        return "the blocks are not all of one size"
    if coll.block_bytes < units:
        return f"the {coll.block_bytes}-byte block is smaller than its {units} units (four per node)"
    return None
