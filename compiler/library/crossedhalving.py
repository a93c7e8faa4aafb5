"""Allreduce and reduce on a 2^a x 2^b torus by recursive halving of two halves at once, one
across the rows first, the other down the columns first (issue 27, branch tallred).

The partials are cut into ringreduce.Grid's 4 R C units, unit (c, r, x, y) reduced at node
(r, c). Half 0 (x = 0) is halved over a row's steps and a column's in turn (across, down,
across, ...), half 1 the other way round, so that in every step a node sends one message across
its row and one down its column and takes one from each: its memory's four streams, where
halving one dimension at a time uses two. A ring's steps (ring_halving) pair neighbours in the
first two (0-1, 2-3, ... then 1-2, 3-4, ...) and nodes 3 and 5 apart after that, where bit
masks pair them 2 and then 4 apart and put two or four messages on a link (torus:8x8, allreduce
of 16 KB, every step halved, one part a message: 1089.9 us with masks 1, 2, 4 over a row's bits
and then a column's, 856.3 with these steps, the dimensions in turn). Each step's
message carries half of what the node holds of its half: 16 KB partials on 8x8, 4 KB, 2 KB,
1 KB, 512 B, 256 B and 128 B, six start-ups a half where bidirectional-rings takes 4 + 3 a
direction.

Each step is two eager phases, half 0's messages then half 1's, each received in the phase after
the one that sends it (as ringreduce.split_step_phases): a node starts half 0's next message once
half 0's last one is in and merged, while half 1's still streams. The allreduce's last pair of
steps goes by recursive doubling where its pieces are short (halved_pairs), then recursive
doubling back over the halving steps, each half the reverse of its halving; the reduce sends
every node's reduced units to the root as ringreduce.bidirectional_reduce_phases does after its
rings. The long messages go in two parts (CrossedGrid.part_shares).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.ringreduce import Grid, Unit, gather_to_root_phases, grid_units
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

# A halving step: the half it reduces, the dimension its partners differ in (1: the column,
# partners across the row; 0: the row, partners down the column) and its index among that
# dimension's steps (dimension_steps).
Step = tuple[int, int, int]


class CrossedGrid(Grid):
    """ringreduce's units, each message in at most two parts (part_shares)."""

    def part_shares(self, nbytes: int) -> list[float]:
        """Two parts, the second r times the first (r as ringreduce's: two merges of a byte over
        its wire, 0.5 on iWarp), where the step's four start-ups (two parts of each half's
        message) take less than a chain's step in one part, a start-up, the wire and the merge:
        the receiver merges the first part while the second streams. Else one. (torus:8x8,
        allreduce of 16 KB: 816.3 us in one part, 798.6 with the 4 KB and 2 KB messages in two,
        829.3 with the 4 KB ones in three and the 2 KB ones in two.)"""
        port = self.machine.port
        element_bytes = self.coll.element_bytes or nbytes or 1
        merge_s = nbytes / element_bytes * port.combine_s_per_op
        if port.s_per_byte <= 0 or 3 * port.hold_s >= nbytes * port.s_per_byte + merge_s:
            return [1.0]
        r = min(1.0, 2 * port.combine_s_per_op / element_bytes / port.s_per_byte)
        return [1 / (1 + r), r / (1 + r)]


def power_of_two_grid(coll: Collective, machine: Machine) -> str | None:
    """Both sides of the grid powers of two, at least 2 (the halving's partners), and the
    partials in Grid's units (ringreduce.grid_units)."""
    rows, cols = machine.grid or (1, machine.nnodes)
    if rows < 2 or cols < 2 or rows & (rows - 1) or cols & (cols - 1):
        return f"the grid's sides must be powers of two of at least 2, not {rows} x {cols}"
    return grid_units(coll, machine)


def ring_halving(positions: list[int],
                 segments: list[int]) -> list[tuple[dict[int, int], dict[int, frozenset[int]]]]:
    """A reduce-scatter by halving round a ring of 2^k `positions` (in ring order) of the
    `segments` (as many): each step's partners and the segments each position keeps after it.
    The first two steps pair neighbours, (0, 1), (2, 3), ... then (1, 2), (3, 4), ...: after
    them the two nodes of window i = (2i + 1, 2i + 2) hold the two quarters of half i mod 2,
    reduced over the four positions 2i .. 2i + 3, and the holders of one quarter (every other
    window's first or second node, alternately, so that they lie 3 and 5 apart rather than 4 and
    4) cover the ring: each such class goes on by the same construction over its quarter."""
    n = len(positions)
    if n == 1:
        return []
    if n == 2:
        a, b = positions
        return [({a: b, b: a}, {a: frozenset(segments[:1]), b: frozenset(segments[1:])})]
    halves = [segments[:n // 2], segments[n // 2:]]
    first: dict[int, int] = {}
    second: dict[int, int] = {}
    kept_first: dict[int, frozenset[int]] = {}
    kept_second: dict[int, frozenset[int]] = {}
    classes: dict[tuple[int, int], list[int]] = {}
    for i in range(n // 2):
        first[positions[2 * i]], first[positions[2 * i + 1]] = positions[2 * i + 1], positions[2 * i]
        a, b = positions[2 * i + 1], positions[(2 * i + 2) % n]
        half = halves[i % 2]
        kept_first[a] = kept_first[b] = frozenset(half)
        second[a], second[b] = b, a
        for j, v in enumerate((a, b) if (i // 2) % 2 == 0 else (b, a)):
            kept_second[v] = frozenset(half[j * len(half) // 2:(j + 1) * len(half) // 2])
            classes.setdefault((i % 2, j), []).append(v)
    steps = [(first, kept_first), (second, kept_second)]
    subs = [ring_halving(members, sorted(kept_second[members[0]]))
            for _, members in sorted(classes.items())]
    for k in range(len(subs[0])):
        steps.append(({v: w for sub in subs for v, w in sub[k][0].items()},
                      {v: kept for sub in subs for v, kept in sub[k][1].items()}))
    return steps


@functools.cache
def dimension_steps(length: int) -> list[tuple[dict[int, int], dict[int, frozenset[int]]]]:
    """ring_halving round a dimension of `length`, its segments named by the position each ends
    at (so that a unit's segment is its owner's coordinate)."""
    steps = ring_halving(list(range(length)), list(range(length)))
    if not steps:
        return []
    ends = {v: next(iter(kept)) for v, kept in steps[-1][1].items()}  # segment -> ... by position
    name = {segment: v for v, segment in ends.items()}
    return [(partners, {v: frozenset(name[s] for s in kept) for v, kept in keeps.items()})
            for partners, keeps in steps]


def halving_steps(g: Grid) -> list[tuple[Step, Step]]:
    """Each step's two halvings: half 0 across a row, then down a column, in turn, half 1 the
    other way round (where one side has more steps, its last ones follow)."""
    across, down = dimension_steps(g.cols), dimension_steps(g.rows)

    def turns(a: list, b: list, dims: tuple[int, int]) -> list[tuple[int, int]]:
        out = []
        for k in range(max(len(a), len(b))):
            out += [(dim, k) for dim, steps in zip(dims, (a, b)) if k < len(steps)]
        return out

    first = [(0, dim, k) for dim, k in turns(across, down, (1, 0))]
    second = [(1, dim, k) for dim, k in turns(down, across, (0, 1))]
    return list(zip(first, second))


def partner(g: Grid, v: int, step: Step) -> int:
    r, c = divmod(v, g.cols)
    _, dim, k = step
    if dim == 1:
        return g.node(r, dimension_steps(g.cols)[k][0][c])
    return g.node(dimension_steps(g.rows)[k][0][r], c)


def keeps(g: Grid, u: Unit, v: int, step: Step) -> bool:
    """Whether unit u stays with node v after `step`: its half's, its owner's coordinate among
    those v's position keeps."""
    half, dim, k = step
    r, c = divmod(v, g.cols)
    if dim == 1:
        return u[2] == half and u[0] in dimension_steps(g.cols)[k][1][c]
    return u[2] == half and u[1] in dimension_steps(g.rows)[k][1][r]


def holder(g: Grid, u: Unit, v: int, steps: list[Step]) -> int:
    """The node that holds unit u after `steps` of halving, from node v (who holds it now)."""
    for step in steps:
        if u[2] == step[0] and not keeps(g, u, v, step):
            v = partner(g, v, step)
    return v


def carried(g: Grid, src: int, dst: int, units: list[tuple[Unit, list[int]]],
            final: Callable[[Unit], int]) -> list[Transfer]:
    """A message: each unit with the origins whose partials of it it carries, bound for
    final(u) (where they are delivered; elsewhere kept to be forwarded); in parts (Grid.split)."""
    m, out = g.coll.byte_matrix, []
    units = [(u, o) for u, o in units if o]
    for (u, origins), part in zip(units, g.split([u for u, _ in units])):
        (offset, nbytes), to = g.pieces[g.index(u)], final(u)
        out += [Transfer(src, dst, nbytes, o, to, part, offset) for o in origins if o != to and m[o][to]]
    return out


def halving(g: Grid, step: Step, later: list[Step]) -> list[Transfer]:
    """One halving step of one half: every node sends its partner the units of the half the
    partner keeps, with every origin it holds of them, bound for the node that holds them
    after the `later` halving steps (a reduce's root; what reaches it stays there). A reduce's
    root copies its own partial of the units it gives away into its result beside the message
    (an allreduce's nodes get theirs back in the reduced units, Grid.reduced)."""
    held, moves, out = g.held, [], []
    steps = [s for pair in halving_steps(g) for s in pair if s[0] == step[0]]
    done = steps[:steps.index(step)]  # the half's steps before this one
    half = g.units(list(range(g.cols)), list(range(g.rows)), a=step[0])
    for v in range(g.rows * g.cols):
        p = partner(g, v, step)
        units = sorted(u for u in held[v] if u[2] == step[0] and keeps(g, u, p, step))
        moves.append((v, p, [(u, sorted(held[v].pop(u))) for u in units]))
        if g.root is not None:  # a reduce's root keeps its partial (an allreduce's comes back: reduced)
            out += g.own(v, [u for u in half
                             if keeps(g, u, p, step) and all(keeps(g, u, v, s) for s in done)])
    for v, p, units in moves:
        out += carried(g, v, p, units,
                       lambda u, p=p: g.root if g.root is not None else holder(g, u, p, later))
        if p != g.root:
            for u, origins in units:
                held[p].setdefault(u, set()).update(origins)
    return out


def exchange(g: Grid, step: Step) -> list[Transfer]:
    """One recursive doubling step of one half after the halving: every node sends its partner
    every origin it holds of the units it holds, for the partner itself."""
    held = g.held
    moves = [(v, partner(g, v, step), sorted((u, sorted(o)) for u, o in held[v].items() if u[2] == step[0]))
             for v in range(g.rows * g.cols)]
    out = []
    for v, p, units in moves:
        out += carried(g, v, p, units, lambda u, p=p: p)
        for u, origins in units:
            held[p][u] = held[p].get(u, set()) | set(origins)
    return out


def reduce_scatter(g: Grid, halved: int) -> list[tuple[list[Transfer], list[Transfer]]]:
    """The first `halved` of halving_steps' pairs, then recursive doubling over the others
    (exchange), both halves at once: with every pair halved (a reduce's), node (r, c) ends with
    units (c, r, *, *) reduced over every member. Each member copies its own partial of the
    units it keeps into its result in the first step."""
    for o in g.origins:
        for u in g.units(list(range(g.cols)), list(range(g.rows))):
            if o != g.root and g.coll.byte_matrix[o][g.final(u)]:
                g.held[o][u] = {o}
    pairs = halving_steps(g)
    halves = [[s for pair in pairs[:halved] for s in pair if s[0] == h] for h in (0, 1)]
    steps = []
    for k, (a, b) in enumerate(pairs[:halved]):
        later = [[s for s in halves[h] if s not in pairs[:k + 1]] for h in (0, 1)]
        steps.append((halving(g, a, later[0]), halving(g, b, later[1])))
    steps += [(exchange(g, a), exchange(g, b)) for a, b in pairs[halved:]]
    kept = [t for v in range(g.rows * g.cols) for t in g.own(v, kept_units(g, v, halves[0] + halves[1]))]
    steps[0] = (kept + steps[0][0], steps[0][1])
    return steps


def kept_units(g: Grid, v: int, steps: list[Step]) -> list[Unit]:
    """The units node v holds after the halving `steps` (of either half)."""
    return [u for u in g.units(list(range(g.cols)), list(range(g.rows)))
            if all(keeps(g, u, v, s) for s in steps if s[0] == u[2])]


def doubling(g: Grid, halved: int) -> list[tuple[list[Transfer], list[Transfer]]]:
    """The allgather back by recursive doubling over the first `halved` pairs of halving
    steps in reverse: a node sends its partner every reduced unit of the half it has so far."""
    pairs = halving_steps(g)[:halved]
    done = [s for pair in pairs for s in pair]
    have = {v: {h: [u for u in kept_units(g, v, done) if u[2] == h] for h in (0, 1)}
            for v in range(g.rows * g.cols)}
    out = []
    for pair in reversed(pairs):
        sends = []
        for step in pair:
            half = step[0]
            grown = {}
            transfers = []
            for v in range(g.rows * g.cols):
                p = partner(g, v, step)
                transfers += g.reduced(v, p, sorted(have[v][half]))
                grown[p] = have[p][half] + have[v][half]
            for v, units in grown.items():
                have[v][half] = units
            sends.append(transfers)
        out.append((sends[0], sends[1]))
    return out


def crossed_phases(steps: list[tuple[list[Transfer], list[Transfer]]]) -> list[Phase]:
    """Each step in two eager phases, half 0's messages then half 1's, each received in the
    phase after the one that sends it (the last step's both in its second phase)."""
    out: list[Phase] = []
    late: list[Transfer] = []
    for k, (first, second) in enumerate(steps):
        last = k == len(steps) - 1
        out.append(Phase(tuple(first), tuple(late), SyncMode.EAGER))
        out.append(Phase(tuple(second), tuple(first + second if last else first), SyncMode.EAGER))
        late = second
    return out


def halved_pairs(g: Grid) -> int:
    """The pairs of halving steps before the exchange: all but the last where a member's
    exchange message then (twice the last halving's, 1 / P of the partial) streams in less
    than a start-up, so that one exchange step replaces a halving and a doubling step of a
    start-up each (torus:8x8, allreduce of 16 KB, 4, 5 and 6 pairs halved: 843.1, 816.3 and
    856.3 us; the exchanges of 512 B of 4 pairs go between nodes 3 apart, two a link); else all."""
    pairs = len(halving_steps(g))
    port = g.machine.port
    last = (g.coll.block_bytes or 0) / (g.rows * g.cols)
    return pairs - 1 if last * port.s_per_byte < port.hold_s else pairs


def crossed_allreduce_phases(coll: Collective, machine: Machine, halved: int | None = None) -> list[Phase]:
    """The two halves' halving (the first `halved` pairs of steps, halved_pairs by default),
    recursive doubling over the rest, then the doubling back (module docstring)."""
    g = CrossedGrid(coll, machine)
    halved = halved_pairs(g) if halved is None else halved
    return crossed_phases(reduce_scatter(g, halved) + doubling(g, halved))


def crossed_reduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The two halves' halving, then every node's reduced units to the root."""
    g = CrossedGrid(coll, machine)
    return crossed_phases(reduce_scatter(g, len(halving_steps(g)))) + gather_to_root_phases(g)
