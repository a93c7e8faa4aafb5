"""Reduce on a 2^a x 2^b torus by two halves halved at once, some pairs of their steps taken at
once in a 2 x 2 block (issue 27, branch tred5).

As crossed-halving's reduce (crossedhalving.py: ringreduce.Grid's units, each half halved over
the rings' steps, a row's and a column's in turn, eager phases), with three changes:
- both halves go across the rows first, half 1's rings rotated by one position (its first pairs
  1-2, 3-4, ... where half 0's are 0-1, 2-3, ...), so that its messages take the links of a
  node's row and column that half 0's leave free;
- a *group*: two consecutive steps of a half in different dimensions sent at once. Each node
  sends the three other nodes of its 2 x 2 block (its partner in the first step, its partner in
  the second, and the first partner's partner in the second) the units each keeps after both
  steps, its own partial of them only, in one part, and merges the three it takes: one
  start-up, one wire and one merge off the chain for a third start-up. Half 1 groups its steps
  1-2 and 3-4, half 0 its steps 2-3 (`groups`), so that half 1's levels are done first while
  half 0's first step streams its 4 KB;
- each half's reduced units go to the root on their own (the root's row and the straight ones,
  then the relays' forwards, as ringreduce.gather_to_root_phases), so that half 1's gather
  starts while half 0 still halves.
Each half's steps and gathers are one eager phase each, the halves' phases in turn, half 0's
first (`alternating_phases`). torus:8x8, 16 KB: 553.55 us (crossed-halving) -> 521.15; torus:4x4
496.7 -> 425.85; torus:4x8 514.05 -> 464.6 (docs/efficiency.md, branch tred5).
"""

from __future__ import annotations

from phalanx.compiler.library import crossedhalving
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.ringreduce import Grid, Unit, relayed_nodes
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

Step = crossedhalving.Step  # (half, dimension, index among that dimension's steps)
ROTATION = (0, 1)  # each half's rings rotated by this many positions


class GroupedGrid(crossedhalving.CrossedGrid):
    """crossed-halving's units and parts; a group's messages in one part (`whole`)."""

    whole = False

    def part_shares(self, nbytes: int) -> list[float]:
        return [1.0] if self.whole else super().part_shares(nbytes)


def ordered_steps(g: Grid, half: int) -> list[Step]:
    """A half's steps, a row's and a column's in turn, across the rows first (where one side
    has more steps, its last ones follow)."""
    across, down = crossedhalving.dimension_steps(g.cols), crossedhalving.dimension_steps(g.rows)
    out = []
    for k in range(max(len(across), len(down))):
        out += [(half, dim, k) for dim, steps in ((1, across), (0, down)) if k < len(steps)]
    return out


def groups(g: Grid, half: int) -> list[list[Step]]:
    """The half's steps in the order they are sent: half 1's steps 1-2 and 3-4 and half 0's
    steps 2-3 at once where the two are in different dimensions, the others one at a time
    (torus:8x8, 16 KB: half 1 grouped as 2, 2, 1, 1 and half 0 as 1, 2, 1, 1, 1 take 521.15 us;
    half 1 as 2, 1, 1, 1, 1: 530.35; both halves as 2, 1, 1, 1, 1: 549.2; groups in the last
    steps, whose partners are 3 apart: 527.45-562.55)."""
    steps = ordered_steps(g, half)
    starts = (0, 2) if half == 1 else (1,)
    out, i = [], 0
    while i < len(steps):
        size = 2 if i in starts and i + 1 < len(steps) and steps[i][1] != steps[i + 1][1] else 1
        out.append(steps[i:i + size])
        i += size
    return out


def partner(g: Grid, v: int, step: Step) -> int:
    """v's partner in `step` on its half's rings (crossedhalving.dimension_steps, rotated)."""
    r, c = divmod(v, g.cols)
    half, dim, k = step
    s = ROTATION[half]
    if dim == 1:
        return g.node(r, (crossedhalving.dimension_steps(g.cols)[k][0][(c - s) % g.cols] + s) % g.cols)
    return g.node((crossedhalving.dimension_steps(g.rows)[k][0][(r - s) % g.rows] + s) % g.rows, c)


def keeps(g: Grid, u: Unit, v: int, step: Step) -> bool:
    """Whether unit u stays with node v after `step`: its half's, its owner's coordinate (on
    the rotated ring) among those v's position keeps."""
    half, dim, k = step
    r, c = divmod(v, g.cols)
    s = ROTATION[half]
    if dim == 1:
        kept = crossedhalving.dimension_steps(g.cols)[k][1][(c - s) % g.cols]
        return u[2] == half and (u[0] - s) % g.cols in kept
    kept = crossedhalving.dimension_steps(g.rows)[k][1][(r - s) % g.rows]
    return u[2] == half and (u[1] - s) % g.rows in kept


def sent_step(g: GroupedGrid, group: list[Step], done: list[Step]) -> list[Transfer]:
    """One step or group of a half: every node sends each other node of its pair or 2 x 2
    block the units that node keeps after the group, with every origin it holds of them, for
    the root (what reaches the root stays there); it copies its own partial of the units it
    gives away into its result beside the messages."""
    held, moves, out = g.held, [], []
    half = group[0][0]
    units = g.units(list(range(g.cols)), list(range(g.rows)), a=half)
    for v in range(g.rows * g.cols):
        block = [partner(g, v, group[0])]
        if len(group) == 2:
            block += [partner(g, v, group[1]), partner(g, block[0], group[1])]
        for w in block:
            given = sorted(u for u in held[v] if u[2] == half and all(keeps(g, u, w, s) for s in group))
            moves.append((v, w, [(u, sorted(held[v].pop(u))) for u in given]))
        out += g.own(v, [u for u in units if all(keeps(g, u, v, s) for s in done)
                         and not all(keeps(g, u, v, s) for s in group)])
    g.whole = len(group) == 2
    for v, w, carried in moves:
        out += crossedhalving.carried(g, v, w, carried, lambda u: g.root)
        if w != g.root:
            for u, origins in carried:
                g.held[w].setdefault(u, set()).update(origins)
    g.whole = False
    return out


def half_gather(g: Grid, half: int) -> tuple[list[Transfer], list[Transfer]]:
    """ringreduce.gather_to_root_phases over the units of one half: the root's row's own and
    the others' straight, the relayed nodes' to the root's row; then the root's row's forwards."""
    held, r0 = g.held, g.root // g.cols
    relayed = relayed_nodes(g, g.machine.route)

    def take(v: int) -> list[tuple[Unit, list[int]]]:
        mine = sorted((u, sorted(o)) for u, o in held[v].items() if u[2] == half)
        for u, _ in mine:
            del held[v][u]
        return mine

    nodes = range(g.rows * g.cols)
    first = [t for v in nodes if v // g.cols == r0 and v != g.root for t in g.message(v, g.root, take(v))]
    for v in nodes:
        if v // g.cols == r0:
            continue
        to = g.node(r0, v % g.cols) if v in relayed else g.root
        carried = take(v)
        first += g.message(v, to, carried)
        if to != g.root:
            for u, origins in carried:
                held[to].setdefault(u, set()).update(origins)
    last = [t for v in nodes if v // g.cols == r0 and v != g.root for t in g.message(v, g.root, take(v))]
    return first, last


def alternating_phases(chains: list[list[list[Transfer]]]) -> list[Phase]:
    """Each half's messages (its steps, then its gather's two phases; links that carry nothing
    left out) as a chain whose next link a node sends once the link before is in and merged. A
    node's order: each half's first link, then in turn (half 0 first) each half's wait for its
    last link and its next link; each run of sends and the waits after them one eager phase
    (the last phase waits for the rest)."""
    chains = [[link for link in chain if link] for chain in chains]
    events: list[tuple[bool, list[Transfer]]] = [(True, chain[0]) for chain in chains]
    for k in range(1, max(len(chain) for chain in chains) + 1):
        for chain in chains:
            if k <= len(chain):
                events.append((False, chain[k - 1]))
            if k < len(chain):
                events.append((True, chain[k]))
    phases: list[tuple[list[Transfer], list[Transfer]]] = []
    for is_send, transfers in events:
        if not phases or (is_send and phases[-1][1]):
            phases.append(([], []))
        phases[-1][0 if is_send else 1].extend(transfers)
    return [Phase(tuple(sorted(sends, key=lambda t: t.message)), tuple(recvs), SyncMode.EAGER)
            for sends, recvs in phases]


def hold_partials(g: Grid) -> None:
    """Every contributor but the root holds its own partial of every unit, to pass on (the
    root's own is copied into its result, root_kept and sent_step, never sent)."""
    for o in g.origins:
        for u in g.units(list(range(g.cols)), list(range(g.rows))):
            if o != g.root and g.coll.byte_matrix[o][g.final(u)]:
                g.held[o][u] = {o}


def root_kept(g: Grid, steps: list[Step]) -> list[Transfer]:
    """The root's own partial of the units it holds after the halving `steps` (of either
    half), copied into its result."""
    return [t for v in range(g.rows * g.cols)
            for t in g.own(v, [u for u in g.units(list(range(g.cols)), list(range(g.rows)))
                               if all(keeps(g, u, v, s) for s in steps if s[0] == u[2])])]


def grouped_reduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The two halves' steps and groups, then each half's gather (module docstring)."""
    g = GroupedGrid(coll, machine)
    hold_partials(g)
    chains = []
    for half in (0, 1):
        chain, done = [], []
        for group in groups(g, half):
            chain.append(sent_step(g, group, done))
            done += group
        chains.append(chain)
    chains[0][0] = root_kept(g, ordered_steps(g, 0) + ordered_steps(g, 1)) + chains[0][0]
    for half in (0, 1):
        chains[half] += list(half_gather(g, half))
    return alternating_phases(chains)
