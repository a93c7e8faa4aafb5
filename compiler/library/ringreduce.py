"""Allreduce by bidirectional rings on a torus: a reduce-scatter round every row, then round
every column, then the allgather back, each ring both ways at once (issue 27).

Each member's partial is cut between elements into 4 R C units (R x C grid), unit (c, r, a, b)
ending reduced at node (r, c): `a` splits a row's pieces into the halves that go east and west,
`b` a column's into those that go south and north.

Reduce-scatter round a ring of L nodes, h = floor(L / 2) steps: the piece bound for the node at
position o is reduced along two chains, the h nodes west of o passing it east and the nodes
east of o passing it west, each node adding its own partial before passing the sum on. In step
k (1 <= k <= h) the node at position i sends east the piece of the node h - k + 1 places east
of it, holding the partials of the k nodes i - k + 1 .. i, and west likewise. On an even L the
node opposite o (h places away) heads both chains: it sends the piece's half `0` east and half
`1` west. Each link carries (L - 1) / 2 pieces, the least a ring allows (every piece's L - 1
partials leave their nodes once, over two links per node), in h start-ups a direction.
The rows go first on the whole partial (units by column), then the columns on the row's piece
each node then holds (units by row); the allgather is the same two stages backwards, each ring
as rings.ring_steps (in step k a node passes on what it received in step k - 1). A node drives
two links out and two in: its memory's four streams (registry.PortModel.shared_streams).

A message is sent as p messages (`parts`), its units cut in p, so that the receiver merges one
(its processor, 50 ns an element on iWarp) while the next streams: the last part's merge, not
the whole piece's, follows a step's wire, for p - 1 more start-ups a direction. A member copies its own
partial into its result unit by unit in the reduce-scatter's row steps, beside the message that
sends its own partial of the same units away (the copy's merge runs while the wire streams).

The data model names every origin of a reduced piece (allreduce.Pieces): the allgather moves
about R C (R C - 1)^2 x 2 transfers (508 thousand on 8x8), as the textbook ring does.
"""

from __future__ import annotations

import math

from phalanx.compiler.library.members import contributors
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import element_pieces
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

# More parts queue on a node's memory streams (four on iWarp, each message holding one at both
# ends): torus:8x8, 1 MB partials: 39.0, 32.6, 30.7 and 39.4 ms with 1, 2, 3 and 6 parts.
MOST_PARTS = 3
Unit = tuple[int, int, int, int]  # (column, row, row half, column half)
# (sender, receiver, owner) positions on a ring, the chain's origin positions, and the half
# of the owner's piece the chain's head (the node opposite the owner on an even ring) sends
Chain = tuple[int, int, int, list[int], int]


def reduce_steps(length: int) -> list[list[Chain]]:
    """Each reduce-scatter step's messages round a ring of `length` positions, both ways."""
    h = length // 2
    steps = []
    for k in range(1, h + 1):
        sends = []
        for i in range(length):
            sends.append((i, (i + 1) % length, (i + h - k + 1) % length,
                          [(i - j) % length for j in range(k)], 0))
            sends.append((i, (i - 1) % length, (i - h + k - 1) % length,
                          [(i + j) % length for j in range(k)], 1))
        steps.append(sends)
    return steps


def gather_steps(length: int) -> list[list[tuple[int, int, int, int | None]]]:
    """Each allgather step round a ring: (sender, receiver, the position whose bundle it
    passes on, the half of it where the node opposite gets half from each side, else None)."""
    h = length // 2
    steps = []
    for k in range(1, h + 1):
        last = 2 * k == length
        steps.append([m for i in range(length) for m in (
            (i, (i + 1) % length, (i - k + 1) % length, 0 if last else None),
            (i, (i - 1) % length, (i + k - 1) % length, 1 if last else None))])
    return steps


def grid_units(coll: Collective, machine: Machine) -> str | None:
    """The partials cut into 4 R C units of at least one element each."""
    units = 4 * machine.nnodes
    if coll.element_bytes is None:
        return "each partial is one element, which cannot be split"
    if coll.block_bytes is None:
        return "the partial blocks are not all of one size"
    if coll.block_bytes // coll.element_bytes < units:
        return (f"a partial of {coll.block_bytes // coll.element_bytes} elements is smaller than "
                f"its {units} units (four per node)")
    return None


def parts(coll: Collective, machine: Machine) -> int:
    """Messages a step's piece is sent as: a node's two pieces of a step (one each way) merge on
    its processor one after the other, each after its wire, and cut in p each leaves 2 / p of
    a piece's merge after the step's wire for 2 p start-ups: p = sqrt(merge / start-up), of the
    largest piece (a row's: the partial over the columns); at most MOST_PARTS."""
    rows, cols = machine.grid or (1, machine.nnodes)
    port = machine.port
    elements = (coll.block_bytes or 0) // (coll.element_bytes or coll.block_bytes or 1)
    merge_s = elements / max(cols if cols > 1 else rows, 1) * port.combine_s_per_op
    if port.startup_s <= 0 or merge_s <= port.startup_s:
        return 1
    return min(MOST_PARTS, max(1, round(math.sqrt(merge_s / port.startup_s))))


class Grid:
    """The units of a collective's partials on the R x C grid and the transfers that move them,
    each step's message in `parts` messages."""

    def __init__(self, coll: Collective, machine: Machine):
        self.coll = coll
        self.rows, self.cols = machine.grid or (1, machine.nnodes)
        self.pieces = element_pieces(coll, 4 * self.rows * self.cols)
        self.origins = contributors(coll)
        self.parts = parts(coll, machine)

    def node(self, r: int, c: int) -> int:
        return r * self.cols + c

    def index(self, u: Unit) -> int:
        c, r, a, b = u
        return ((c * self.rows + r) * 2 + a) * 2 + b

    def units(self, cols: list[int], rows: list[int], a: int | None = None,
              b: int | None = None) -> list[Unit]:
        return [(c, r, x, y) for c in cols for r in rows for x in (0, 1) for y in (0, 1)
                if a in (None, x) and b in (None, y)]

    def message(self, src: int, dst: int, carried: list[tuple[Unit, list[int]]]) -> list[Transfer]:
        """Each unit with the origins whose partials of it it carries, bound for the unit's
        node; the units in `parts` messages."""
        m, out = self.coll.byte_matrix, []
        carried = [(u, o) for u, o in carried if o]
        for i, (u, origins) in enumerate(carried):
            offset, nbytes = self.pieces[self.index(u)]
            final = self.node(u[1], u[0])
            part = COMBINED + i * self.parts // len(carried)
            out += [Transfer(src, dst, nbytes, o, final, part, offset)
                    for o in origins if o != final and m[o][final]]
        return out

    def reduced(self, src: int, dst: int, units: list[Unit]) -> list[Transfer]:
        """src's reduced units to dst, for dst: every origin's partial of them but dst's own."""
        m, out = self.coll.byte_matrix, []
        for i, u in enumerate(units):
            offset, nbytes = self.pieces[self.index(u)]
            part = COMBINED + i * self.parts // len(units)
            out += [Transfer(src, dst, nbytes, o, dst, part, offset)
                    for o in self.origins if o != dst and m[o][dst]]
        return out

    def own(self, v: int, units: list[Unit]) -> list[Transfer]:
        """v's own partial of `units`, copied into its result."""
        if not self.coll.byte_matrix[v][v]:
            return []
        return [Transfer(v, v, self.pieces[self.index(u)][1], v, v, offset=self.pieces[self.index(u)][0])
                for u in units]


def bidirectional_allreduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Reduce-scatter round the rows then the columns, allgather round the columns then the rows,
    every ring both ways at once (module docstring)."""
    g = Grid(coll, machine)
    R, C = g.rows, g.cols
    every_row, every_col = list(range(R)), list(range(C))
    own = set(g.origins)
    phases: list[list[Transfer]] = []
    # Rows: the owner column's units, from the chain's nodes of this row.
    row_steps = reduce_steps(C)
    for k, sends in enumerate(row_steps):
        phase: list[Transfer] = []
        copied: dict[int, set[int]] = {i: set() for i in range(C)}  # own columns copied beside
        for i, j, o, chain, half in sends:
            opposite = chain[-1] if C % 2 == 0 else None
            for r in range(R):
                carried = [(u, [g.node(r, p) for p in chain if g.node(r, p) in own
                                and (p != opposite or u[2] == half)])
                           for u in g.units([o], every_row)]
                phase += g.message(g.node(r, i), g.node(r, j), carried)
            copied[i] |= {o, i} if k == len(row_steps) - 1 else {o}
        phase += [t for i in range(C) for r in range(R)
                  for t in g.own(g.node(r, i), g.units(sorted(copied[i]), every_row))]
        phases.append(phase)
    if not row_steps:
        phases.append([t for r in range(R) for t in g.own(g.node(r, 0), g.units([0], every_row))])
    # Columns: each column's row-reduced units, by owner row, from the chain's rows.
    for sends in reduce_steps(R):
        phase = []
        for c in range(C):
            for i, j, o, chain, half in sends:
                opposite = chain[-1] if R % 2 == 0 else None
                carried = [(u, [g.node(p, x) for p in chain for x in every_col if g.node(p, x) in own
                                and (p != opposite or u[3] == half)])
                           for u in g.units([c], [o])]
                phase += g.message(g.node(i, c), g.node(j, c), carried)
        phases.append(phase)
    # Allgather round the columns (each node's own units), then round the rows (its column's).
    for sends in gather_steps(R):
        phases.append([t for c in range(C) for i, j, p, half in sends
                       for t in g.reduced(g.node(i, c), g.node(j, c), g.units([c], [p], b=half))])
    for sends in gather_steps(C):
        phases.append([t for r in range(R) for i, j, p, half in sends
                       for t in g.reduced(g.node(r, i), g.node(r, j), g.units([p], every_row, a=half))])
    return [Phase.of(p) for p in phases if p]
