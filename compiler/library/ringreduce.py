"""Allreduce and reduce by bidirectional rings on a torus: a reduce-scatter round every row, then
round every column, then the allgather back (or the pieces to the root), each ring both ways at
once (issue 27).

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

A message is sent as p messages (`Grid.part_shares`), its units cut in p, so that the receiver
merges one (its processor, 50 ns an element on iWarp) while the next streams: the last part's
merge, not the whole piece's, follows a step's wire, for p - 1 more start-ups a direction. p
is the most parts whose start-ups (2 p a step, a message each way) and the step's two merges
fit in a message's wire time, so a row's pieces and a column's (8x smaller) each get their
own (torus:8x8, 128 KB: 5 for a row's, 1 for a column's). The parts shrink by r = (two
merges of a byte) / (a byte's wire), 0.5 on iWarp: a node takes a part from each side at once
and has merged both as the next pair arrives, so only the last, smallest pair's merge follows
the wire (torus:8x8, reduce of 128 KB, 2 parts: 3.190 ms even, 3.099 ms at 2/3 and 1/3; 5 parts
halving: 2.929 ms). The allgather, which merges nothing, cuts its messages the same way: its
parts stream behind each other as the reduce-scatter's do (allreduce of 128 KB: 4.08 ms, against
4.12 in as many equal parts as the wire fits and 4.69 in one part). A member copies its own
partial into its result unit by unit in the reduce-scatter's row steps, beside the message that
sends its own partial of the same units away (the copy's merge runs while the wire streams).

The data model names every origin of a reduced piece (allreduce.Pieces): the allgather moves
4 P (P - 1)^2 transfers (1.0 million on 8x8), four times the textbook ring's (four units a node).
The reduce (`bidirectional_reduce_phases`) runs the same reduce-scatter, then sends every node's
reduced units to the root: routes go along the row first, so some nodes' go through the root's
row (`relayed_nodes`), as many as even out the root's four in-links.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import contributors, rooted_order
from phalanx.compiler.library.registry import Machine, Route
from phalanx.compiler.library.rooted import element_pieces
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer

# Parts shrink by half on iWarp (Grid.part_shares), so a message's seventh part would hold
# under 1/64 of it, less than a unit: torus:8x8, 1 MB partials, the reduce 20.97, 20.77 and
# 20.63 ms with at most 4, 5 and 6 parts, 20.63 with at most 10.
MOST_PARTS = 6
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


class Grid:
    """The units of a collective's partials on the R x C grid and the transfers that move them,
    each step's message in parts (part_shares)."""

    def __init__(self, coll: Collective, machine: Machine):
        self.coll, self.machine = coll, machine
        self.rows, self.cols = machine.grid or (1, machine.nnodes)
        self.pieces = element_pieces(coll, 4 * self.rows * self.cols)
        self.origins = contributors(coll)
        self.root = rooted_order(coll)[0] if coll.kind is Kind.REDUCE else None
        # The origins whose partials of each unit each node holds to pass on (reduce_scatter).
        self.held: dict[int, dict[Unit, set[int]]] = {v: {} for v in range(self.rows * self.cols)}

    def final(self, u: Unit) -> int:
        """Where unit u's transfers are bound: its node, or a reduce's root."""
        return self.node(u[1], u[0]) if self.root is None else self.root

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
        node; the units in parts (split)."""
        m, out = self.coll.byte_matrix, []
        carried = [(u, o) for u, o in carried if o]
        for (u, origins), part in zip(carried, self.split([u for u, _ in carried])):
            offset, nbytes = self.pieces[self.index(u)]
            final = self.final(u)
            out += [Transfer(src, dst, nbytes, o, final, part, offset)
                    for o in origins if o != final and m[o][final]]
        return out

    def split(self, units: list[Unit]) -> list[int]:
        """Each unit's part (its message) of a message that carries `units`: by part_shares,
        the units in order, each in the part its middle byte falls in."""
        sizes = [self.pieces[self.index(u)][1] for u in units]
        total = sum(sizes)
        ends = list(itertools.accumulate(self.part_shares(total)))
        middles = [(done - size / 2) / total for done, size in zip(itertools.accumulate(sizes), sizes)]
        return [COMBINED + next((j for j, end in enumerate(ends) if middle < end), len(ends) - 1)
                for middle in middles]

    def part_shares(self, nbytes: int) -> list[float]:
        """The shares of a message of nbytes that its p parts carry, largest first. A node's
        step is a message each way, and it merges both messages it takes. Where its start-ups
        run beside its streams (iWarp, the torus: `streams` > 1), p is the most parts whose 2 p
        start-ups and the two merges fit in a message's wire time, so that the parts stream
        back to back; where a start-up holds the port (one stream) each part costs its
        start-up in full, and p = sqrt(merge / start-up) balances the two (at least 1, at most
        MOST_PARTS). Each part is r times the one before, r = the time the receiver takes to
        merge a byte of both messages over a byte's wire time, so that it has merged a pair of
        parts as the next pair arrives and only the last, smallest pair's merge follows the
        step's wire (module docstring)."""
        port = self.machine.port
        element_bytes = self.coll.element_bytes or nbytes or 1
        merge_s = nbytes / element_bytes * port.combine_s_per_op
        if port.hold_s <= 0 or port.s_per_byte <= 0:
            return [1.0]
        if port.streams > 1:
            fit = math.floor((nbytes * port.s_per_byte - 2 * merge_s) / (2 * port.hold_s))
        else:
            fit = round(math.sqrt(merge_s / port.startup_s)) if merge_s > port.startup_s else 1
        p = min(MOST_PARTS, max(1, fit))
        r = min(1.0, 2 * port.combine_s_per_op / element_bytes / port.s_per_byte)
        weights = [r ** j for j in range(p)]
        return [w / sum(weights) for w in weights]

    def reduced(self, src: int, dst: int, units: list[Unit]) -> list[Transfer]:
        """src's reduced units to dst, for dst: every origin's partial of them. In an allreduce
        dst's own among them: dst gave these units away in the reduce-scatter, its partial with
        them, and the sum brings it back, so a node copies its partial only of the units it
        keeps (a copy holds the tori's processor, WormholeNetwork.copy_program). A reduce's
        root keeps its partial: not dst's own there."""
        m, out = self.coll.byte_matrix, []
        for u, part in zip(units, self.split(units)):
            offset, nbytes = self.pieces[self.index(u)]
            out += [Transfer(src, dst, nbytes, o, dst, part, offset)
                    for o in self.origins if (o != dst or self.root is None) and m[o][dst]]
        return out

    def own(self, v: int, units: list[Unit]) -> list[Transfer]:
        """v's own partial of `units`, copied into its result."""
        if not self.coll.byte_matrix[v][v]:
            return []
        return [Transfer(v, v, self.pieces[self.index(u)][1], v, v, offset=self.pieces[self.index(u)][0])
                for u in units]


def reduce_scatter(g: Grid) -> list[list[list[Transfer]]]:
    """Round the rows, then round the columns, every ring both ways at once: node (r, c) ends
    with units (c, r, *, *) reduced over every member. The two stages' steps, each a list of
    transfers. Each message carries every origin its
    sender holds of the owner's units (its own partial's, then what its chain brought); what
    reaches a reduce's root stays there (it is delivered, so the root forwards nothing), and
    the root's own partial never leaves it."""
    R, C = g.rows, g.cols
    held = g.held
    for o in g.origins:
        for u in g.units(list(range(C)), list(range(R))):
            if o != g.final(u) and g.coll.byte_matrix[o][g.final(u)]:
                held[o][u] = {o}
    stages_steps: list[list[list[Transfer]]] = []
    # Rows: the owner column's units; copy the own partial beside the messages that send it.
    stages = [(C, lambda line, p: g.node(line, p), range(R), 2,
               lambda line, o: g.units([o], list(range(R)))),
              (R, lambda line, p: g.node(p, line), range(C), 3,
               lambda line, o: g.units([line], [o]))]
    for stage, (length, node, lines, axis, owned) in enumerate(stages):
        if stage == 1 and halves_columns(g):
            stages_steps.append(column_halving(g))
            break
        steps = reduce_steps(length)
        phases: list[list[Transfer]] = []
        for k, sends in enumerate(steps):
            moves = []
            for line in lines:
                for i, j, o, _, half in sends:
                    src, dst = node(line, i), node(line, j)
                    units = [u for u in owned(line, o) if u in held[src]
                             and (k > 0 or length % 2 or u[axis] == half)]
                    moves.append((src, dst, [(u, sorted(held[src].pop(u))) for u in units]))
            phase = [t for src, dst, carried in moves for t in g.message(src, dst, carried)]
            for _, dst, carried in moves:
                if dst != g.root:
                    for u, origins in carried:
                        held[dst].setdefault(u, set()).update(origins)
            if stage == 0:
                phase += own_copies(g, sends, k == len(steps) - 1)
            phases.append(phase)
        if stage == 0 and not steps:
            phases.append(own_copies(g, [], True))
        stages_steps.append(phases)
    return stages_steps


def own_copies(g: Grid, sends: list, last: bool) -> list[Transfer]:
    """The copies of each node's own partial into its result in a row step of the
    reduce-scatter (`sends`: its ring sends, `last`: the stage's last step). A reduce's root
    copies its partial of the units it sends away beside the message that sends them, and of
    its column's in the last step. An allreduce's node copies only the units it keeps (its
    own column's, its own row's), in the last step: the others come back reduced
    (Grid.reduced)."""
    R, C = g.rows, g.cols
    if g.root is None:
        return [t for r in range(R) for i in range(C) for t in g.own(g.node(r, i), g.units([i], [r]))] \
            if last else []
    return [t for r in range(R) for i in range(C) for t in g.own(g.node(r, i), g.units(
        sorted({o for x, _, o, _, _ in sends if x == i} | ({i} if last else set())), list(range(R))))]


def halves_columns(g: Grid) -> bool:
    """Whether the columns go by recursive halving (and the allreduce's allgather back by
    recursive doubling) instead of rings: where a node streams several messages, R is a power
    of two whose lg R steps are fewer than a ring's R / 2 (R >= 8), and a column ring's message
    streams in less than the two start-ups its step costs a node (a piece of 1 / (R C) of the
    partial), so that the processor, not the wire, binds the rings' steps and halving's one
    start-up a step wins (torus:8x8, 16 KB: the reduce 642.5 -> 617.7 us, the allreduce 1013.5
    -> 954.6; at 128 KB, 2 KB pieces against 40 us of start-ups, the rings stay: halving took
    3.21 ms against 2.87; torus:4x4, two steps either way: the allreduce of 16 KB 0.803 ms by
    rings, 0.856 by halving, whose second step's messages share a link)."""
    port, rows = g.machine.port, g.rows
    piece = (g.coll.block_bytes or 0) / (rows * g.cols)
    return port.streams > 1 and rows >= 8 and rows & (rows - 1) == 0 and \
        piece * port.s_per_byte < 2 * port.hold_s


def column_halving(g: Grid) -> list[list[Transfer]]:
    """The columns' reduce-scatter by recursive halving, nearest partner first (masks 1, 2, 4,
    ...: the largest messages between neighbours): with mask m node (r, c) sends its partner
    (r XOR m, c) the units of its column whose owner row agrees with the partner's on bit m,
    every origin it holds of them, so that node (r, c) ends with units (c, r, *, *). As in the
    rings, what reaches a reduce's root stays there."""
    held, steps = g.held, []
    m = 1
    while m < g.rows:
        moves = []
        for c in range(g.cols):
            for r in range(g.rows):
                src, dst = g.node(r, c), g.node(r ^ m, c)
                units = sorted(u for u in held[src] if (u[1] & m) == ((r ^ m) & m))
                moves.append((src, dst, [(u, sorted(held[src].pop(u))) for u in units]))
        steps.append([t for src, dst, carried in moves for t in g.message(src, dst, carried)])
        for _, dst, carried in moves:
            if dst != g.root:
                for u, origins in carried:
                    held[dst].setdefault(u, set()).update(origins)
        m *= 2
    return steps


def column_doubling(g: Grid) -> list[list[Transfer]]:
    """The columns' allgather after column_halving, by recursive doubling back (masks ..., 2,
    1): node (r, c) sends its partner (r XOR m, c) the reduced units (c, r', *, *) of every row
    r' it holds so far."""
    have = {g.node(r, c): [r] for r in range(g.rows) for c in range(g.cols)}
    steps = []
    m = g.rows // 2
    while m >= 1:
        step, grown = [], {}
        for c in range(g.cols):
            for r in range(g.rows):
                src, dst = g.node(r, c), g.node(r ^ m, c)
                step += g.reduced(src, dst, g.units([c], have[src]))
                grown[dst] = sorted(have[dst] + have[src])
        have = grown
        steps.append(step)
        m //= 2
    return steps


def bidirectional_allreduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Reduce-scatter round the rows then the columns, allgather round the columns then the rows,
    every ring both ways at once (module docstring), each stage's steps as stage_phases."""
    g = Grid(coll, machine)
    R, C = g.rows, g.cols
    every_row = list(range(R))
    rows, columns = reduce_scatter(g)
    # Allgather round the columns (each node's own units), then round the rows (its column's).
    halved = halves_columns(g)
    up = column_doubling(g) if halved else \
        [[t for c in range(C) for i, j, p, half in sends
          for t in g.reduced(g.node(i, c), g.node(j, c), g.units([c], [p], b=half))]
         for sends in gather_steps(R)]
    across = [[t for r in range(R) for i, j, p, half in sends
               for t in g.reduced(g.node(r, i), g.node(r, j), g.units([p], every_row, a=half))]
              for sends in gather_steps(C)]
    columns_phases = posted_part_by_part(columns + up, eager_where_streams(g)) if halved else \
        stage_phases(g, columns, R, 0) + stage_phases(g, up, R, 0)
    return stage_phases(g, rows, C, 1) + columns_phases + stage_phases(g, across, C, 1)


def stage_phases(g: Grid, steps: list[list[Transfer]], length: int, axis: int) -> list[Phase]:
    """A stage's ring steps (rings of `length` along the rows, axis 1, or the columns, axis 0)
    as phases. Where a node streams several messages at once (iWarp, the torus), every message
    of the stage is one part and the ring has two directions, each step in two eager phases
    (split_step_phases); else each step one phase, its messages posted part by part. On one
    stream (the Paragon's mesh) the split is slower: its engine carries the message west's
    start-up into the message east's wire (paragon:8x8, allreduce of 16 KB: 4.50 -> 5.21 ms)."""
    if g.machine.port.streams > 1 and length > 2 and \
            all(t.message == COMBINED or t.src == t.dst for step in steps for t in step):
        return split_step_phases(g, steps, axis)
    return posted_part_by_part(steps)


def split_step_phases(g: Grid, steps: list[list[Transfer]], axis: int) -> list[Phase]:
    """Each ring step in two eager phases: first the messages forward round the ring (east, or
    south; a node's own copies with them), then those backward, each received in the phase after
    the one that sends it (the stage's last step: both in its second phase). The chains that
    pass east and those that pass west never meet before the stage ends (a step's message east
    holds what the step before brought from the west), so a node starts its next message east
    once the last one from the west is in and merged, while its message west still streams: a
    step costs a chain one start-up, the piece's wire and its merge, where in one phase it
    waited for both directions' (torus:8x8, reduce of 16 KB: the rows 384.6 -> 356.6 us)."""
    return split_by_direction(steps, axis, g.rows, g.cols)


def split_by_direction(steps: list[list[Transfer]], axis: int, rows: int, cols: int) -> list[Phase]:
    """split_step_phases on a rows x cols grid (axis 1: rings along the rows, 0: the columns)."""
    size = cols if axis else rows
    place = [divmod(v, cols)[axis] for v in range(rows * cols)]  # each node's place on its ring

    def forward(t: Transfer) -> bool:
        return t.src == t.dst or (place[t.dst] - place[t.src]) % size == 1

    out: list[Phase] = []
    late: list[Transfer] = []
    for k, step in enumerate(steps):
        step = sorted(step, key=lambda t: t.message)
        ahead: list[Transfer] = []
        back: list[Transfer] = []
        for t in step:
            (ahead if forward(t) else back).append(t)
        last = k == len(steps) - 1
        out.append(Phase(tuple(ahead), tuple(late), SyncMode.EAGER))
        out.append(Phase(tuple(back), tuple(ahead + back if last else ahead), SyncMode.EAGER))
        late = back
    return out


def posted_part_by_part(phases: list[list[Transfer]], sync: SyncMode = SyncMode.LOCAL) -> list[Phase]:
    """The phases, each node's first parts (east, west, north, south) posted before its second
    ones: a node starts its messages in the order of their transfers, so that each side's
    second part queues behind its first on the link instead of the other side's first behind
    both (torus:8x8, reduce of 128 KB: 3.099 -> 3.067 ms)."""
    return [Phase.of(sorted(p, key=lambda t: t.message), sync) for p in phases if p]


def eager_where_streams(g: Grid) -> SyncMode:
    """The sync of the phases after the ring stages (the columns' halving and doubling, the
    reduce's gather): eager where a node streams several messages, so that a node starts its
    next message once its receives are in and merged while its last one still streams (it
    sends only what it holds then, so the data moves as in local phases; torus:8x8, 16 KB:
    the reduce 617.7 -> 596.15 us, the allreduce 954.6 -> 928.4; 128 KB: the reduce 2869.15 ->
    2866.1; branch tred), local on one stream (the Paragon's engine, where early sends take the
    engine from the receives: eager.py)."""
    return SyncMode.EAGER if g.machine.port.streams > 1 else SyncMode.LOCAL


def relayed_nodes(g: Grid, route: Route | None) -> set[int]:
    """The nodes off the root's row and column that send their pieces to the root through the
    node of the root's row in their column, so that the root's in-links carry as equal a share
    of the 63 (P - 1) pieces as one relay allows: the root's row and column send straight, then
    each other node, farthest first, takes the way whose last link into the root carries fewer
    pieces so far (straight on a tie). Routes go along the row first (e-cube, X then Y), so the
    straight ones arrive by the root's column links, the relayed ones by its row links; on 8x8
    the four links carry 15, 16, 16 and 16. Without the machine's routes: none relayed."""
    if route is None:
        return set()
    r0, c0 = divmod(g.root, g.cols)
    loads: Counter[Hashable] = Counter(route(v, g.root)[-1] for v in range(g.rows * g.cols)
                                       if v != g.root and (v // g.cols == r0 or v % g.cols == c0))

    def distance(v: int) -> tuple[int, int, int]:
        r, c = divmod(v, g.cols)
        return (min((r - r0) % g.rows, (r0 - r) % g.rows), min((c - c0) % g.cols, (c0 - c) % g.cols), v)

    relayed = set()
    for v in sorted((v for v in range(g.rows * g.cols) if v // g.cols != r0 and v % g.cols != c0),
                    key=distance, reverse=True):
        straight, through = route(v, g.root)[-1], route(g.node(r0, v % g.cols), g.root)[-1]
        relay = loads[through] < loads[straight]
        loads[through if relay else straight] += 1
        if relay:
            relayed.add(v)
    return relayed


def bidirectional_reduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The reduce-scatter (each stage's steps as stage_phases), then every node's reduced units
    to the root: in one phase the root's row's own and the others' straight, the relayed nodes'
    to the root's row (relayed_nodes), which passes them on in the next (the columns' halving
    and these two phases eager_where_streams)."""
    g = Grid(coll, machine)
    rows, columns = reduce_scatter(g)
    phases = stage_phases(g, rows, g.cols, 1) + (
        posted_part_by_part(columns, eager_where_streams(g)) if halves_columns(g)
        else stage_phases(g, columns, g.rows, 0))
    return phases + gather_to_root_phases(g)


def gather_to_root_phases(g: Grid) -> list[Phase]:
    """Every node's reduced units (g.held, after a reduce-scatter) to the root in two phases:
    in the first the root's row's own and the others' straight, the relayed nodes' to the
    root's row (relayed_nodes), which passes them on in the second (eager_where_streams)."""
    held, r0 = g.held, g.root // g.cols
    relayed = relayed_nodes(g, g.machine.route)
    first = [t for v in range(g.rows * g.cols) if v // g.cols == r0 and v != g.root
             for t in g.message(v, g.root, [(u, sorted(o)) for u, o in sorted(held[v].items())])]
    for v in range(g.rows * g.cols):
        if v // g.cols == r0:
            held[v] = {}
    for v in range(g.rows * g.cols):
        if v // g.cols == r0 or not held[v]:  # the root's row's own pieces went first
            continue
        to = g.node(r0, v % g.cols) if v in relayed else g.root
        carried = sorted(held[v].items())
        first += g.message(v, to, [(u, sorted(o)) for u, o in carried])
        if to != g.root:
            for u, origins in carried:
                held[to].setdefault(u, set()).update(origins)
            held[v] = {}
    last = [t for v in range(g.rows * g.cols) if v != g.root and v // g.cols == r0
            for t in g.message(v, g.root, [(u, sorted(o)) for u, o in sorted(held[v].items())])]
    return posted_part_by_part([first, last], eager_where_streams(g))
