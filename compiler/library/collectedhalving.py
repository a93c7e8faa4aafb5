"""Reduce on a 2^a x 2^b torus: grouped-halving whose last step is collected, not halved
(issue 27, branch tred7).

grouped-halving (groupedhalving.py) halves each half to its end, then sends every node's reduced
units to the root, some through the node of the root's row in their column (on routes along the
row first only the root's row's messages enter the root by its row links): near the end a node
starts two messages a half (the last step's and the gather's), a relay its forwards too, and the
root's row links wait for the relays. Here each half's last group (a step's pairs of nodes, or a
group's 2 x 2 blocks: nodes that hold the same units) is not halved: the members of each block
send all they hold of the half to one *collector*, which merges them and so holds the block's
units reduced, and every collector sends them to the root in one phase. After its last halving
step every node starts one message a half: a member to its collector, a collector to the root.

The collector (`collectors`) of a block holding the root is the root; else a member in the
root's row (its message enters by a row link); else, where a member is in the root's column, the
member nearest the root; else, blocks nearest the root first, the nearest member or the node of
the root's row in that member's column (a relay, which takes the block straight from its
members, so that its forward is the block's second message as a member's would be), whichever's
last link into the root carries fewer bytes so far. The root's four in-links then carry even
loads (torus:8x8, 16 KB: 14, 16, 16 and 16 pieces of 256 B) from one start-up after the halving.
The last message doubles (a member sends its whole piece, not half of it); that pays where the
root's intake is what the end waits for: torus:8x8, 16 KB, 521.15 us (grouped-halving) ->
494.55; torus:8x4 502.95 -> 478.8; 8x8 2 KB 386.3 -> 331.15. It is slower where the last pieces
are large or the last step goes along the rows (torus:4x4 16 KB 425.85 -> 480.35, 4x8 464.6 ->
508.85, 8x8 128 KB 3.146 -> 3.192 ms): docs/efficiency.md, branch tred7.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

from phalanx.compiler.library import crossedhalving, groupedhalving
from phalanx.compiler.library.groupedhalving import GroupedGrid, Step
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.ringreduce import Grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

Block = tuple[int, ...]  # the nodes that hold the same units of a half before its last group


def blocks(g: Grid, group: list[Step]) -> list[Block]:
    """The pairs of a step, or the 2 x 2 blocks of a group, that `group` would halve."""
    seen: set[int] = set()
    out = []
    for v in range(g.rows * g.cols):
        if v in seen:
            continue
        first = groupedhalving.partner(g, v, group[0])
        members = {v, first}
        if len(group) == 2:
            members |= {groupedhalving.partner(g, v, group[1]), groupedhalving.partner(g, first, group[1])}
        seen |= members
        out.append(tuple(sorted(members)))
    return out


def distance(g: Grid, v: int) -> tuple[int, int]:
    """Node v's hops to the root down its column and along its row, round the torus."""
    (r, c), (r0, c0) = divmod(v, g.cols), divmod(g.root, g.cols)
    return min((r - r0) % g.rows, (r0 - r) % g.rows), min((c - c0) % g.cols, (c0 - c) % g.cols)


def nearest(g: Grid, nodes: Block) -> int:
    return min(nodes, key=lambda v: (sum(distance(g, v)), v))


def collectors(g: Grid, last: dict[int, list[Step]], nbytes: dict[int, int]) -> dict[tuple[int, Block], int]:
    """Each half's blocks of its `last` group (`nbytes` of the half a member holds) and the
    node that collects them (module docstring): the root, a member in the root's row or
    column; the others, nearest first, at their nearest member or at the relay of the root's
    row in its column, whichever's last link into the root carries fewer bytes so far (the
    member on a tie). Without the machine's routes, at the nearest member."""
    r0, c0 = divmod(g.root, g.cols)
    route = g.machine.route
    loads: Counter[Hashable] = Counter()
    chosen: dict[tuple[int, Block], int] = {}
    free: list[tuple[int, Block, int]] = []

    def collect(half: int, block: Block, node: int) -> None:
        chosen[(half, block)] = node
        if route is not None and node != g.root:
            loads[route(node, g.root)[-1]] += nbytes[half]

    for half, group in last.items():
        for block in blocks(g, group):
            row = [v for v in block if v // g.cols == r0]
            if g.root in block:
                collect(half, block, g.root)
            elif row:
                collect(half, block, nearest(g, tuple(row)))
            elif route is None or any(v % g.cols == c0 for v in block):
                collect(half, block, nearest(g, block))
            else:
                free.append((half, block, nearest(g, block)))
    for half, block, member in sorted(free, key=lambda f: (sum(distance(g, f[2])), f[0], f[2])):
        relay = g.node(r0, member % g.cols)
        relayed = loads[route(relay, g.root)[-1]] < loads[route(member, g.root)[-1]]
        collect(half, block, relay if relayed else member)
    return chosen


def given(g: Grid, v: int, to: int, half: int) -> list[Transfer]:
    """v sends `to` every unit of `half` it holds, with every origin it holds of it (for the
    root; what reaches the root stays there)."""
    units = sorted((u, sorted(origins)) for u, origins in g.held[v].items() if u[2] == half)
    for u, _ in units:
        del g.held[v][u]
    out = crossedhalving.carried(g, v, to, units, lambda u: g.root)
    if to != g.root:
        for u, origins in units:
            g.held[to].setdefault(u, set()).update(origins)
    return out


def collected_reduce_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """grouped-halving's steps but each half's last group, then the blocks of that group to
    their collectors, then the collectors' units to the root (module docstring)."""
    g = GroupedGrid(coll, machine)
    groupedhalving.hold_partials(g)
    halves = {half: groupedhalving.groups(g, half) for half in (0, 1)}
    chains, done = [], []
    for half in (0, 1):
        chain, steps = [], []
        for group in halves[half][:-1]:
            chain.append(groupedhalving.sent_step(g, group, steps))
            steps += group
        chains.append(chain)
        done += steps
    last = {half: halves[half][-1] for half in (0, 1)}
    member = next(v for v in range(g.rows * g.cols) if v != g.root)  # the root holds none to pass on
    held = {half: sum(g.pieces[g.index(u)][1] for u in g.held[member] if u[2] == half) for half in (0, 1)}
    chosen = collectors(g, last, held)
    for half in (0, 1):
        collect = [t for block in blocks(g, last[half]) for v in block if v != chosen[(half, block)]
                   for t in given(g, v, chosen[(half, block)], half)]
        gather = [t for v in range(g.rows * g.cols) if v != g.root for t in given(g, v, g.root, half)]
        chains[half] += [collect, gather]
    chains[0][0] = groupedhalving.root_kept(g, done) + chains[0][0]
    return groupedhalving.alternating_phases(chains)
