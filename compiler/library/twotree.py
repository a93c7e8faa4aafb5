"""The two-tree broadcast (Sanders, Speck and Traff 2009, "Two-tree algorithms for full bandwidth
broadcast, reduction and scan", Parallel Computing 35(12)).

The m = n - 1 members past the root are the positions 0..m-1 of two binary trees in which no
member is inside (has children in) both: T1 is in-order with the even positions its leaves; T2
is T1 mirrored (position i at m - 1 - i) when m is even, or shifted (i at i + 1 mod m) when m is
odd. The root sends half A of the block down T1 and half B down T2, each in s segments, so every
member receives 2 s segments and forwards at most 2 s: the block crosses each port about once,
where a single binary tree sends it twice (trees.py).

The slots (phases: a node sends at most one message and receives at most one in each) come from
the paper's colouring: each tree edge is coloured 0 or 1 so that a node's two incoming edges and
its two outgoing edges differ, and an edge of colour c is used in the slots of c's parity.

The two-tree reduce (the paper's Sec. 4) runs the broadcast's slots backwards: half h of every
partial comes up tree h in segments, each member merging its children's segment of a half into
its own before it sends the sum to its parent, so every port carries the partial about once.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.library.trees import _descendants, best_segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

Edges = list[tuple[int, int]]  # (parent, child), parents before their children


def _in_order(lo: int, hi: int) -> tuple[int, Edges]:
    """A full binary tree over positions lo..hi (both even): the odd ones inside, the even ones
    its leaves, each inner node the odd position nearest the middle of its range. (root, edges)."""
    if lo == hi:
        return lo, []
    root = lo + 1 + 2 * ((hi - lo) // 4)
    left, left_edges = _in_order(lo, root - 1)
    right, right_edges = _in_order(root + 1, hi)
    return root, [(root, left), (root, right)] + left_edges + right_edges


def two_trees(m: int) -> tuple[tuple[int, Edges], tuple[int, Edges]]:
    """(root, edges) of T1 and T2 over positions 0..m-1 (m >= 1), edges in breadth-first order."""
    if m % 2:
        root, edges = _in_order(0, m - 1)
        image = {i: (i + 1) % m for i in range(m)}
    else:  # position m - 1 (odd) on top, above the full tree over 0..m-2
        inner, below = _in_order(0, m - 2)
        root, edges = m - 1, [(m - 1, inner)] + below
        image = {i: m - 1 - i for i in range(m)}
    edges = _breadth_first(root, edges)
    return (root, edges), (image[root], [(image[a], image[b]) for a, b in edges])


def _breadth_first(root: int, edges: Edges) -> Edges:
    """The same edges, parents level by level from the top."""
    children: dict[int, list[int]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
    out, level = [], [root]
    while level:
        out += [(a, b) for a in level for b in children.get(a, [])]
        level = [b for a in level for b in children.get(a, [])]
    return out


def _colours(edges: list[tuple[int, int, int]]) -> list[int]:
    """A colour 0 or 1 for each edge (tree, sender, receiver) such that a node's (at most two)
    outgoing edges differ and its (at most two) incoming edges differ: an edge colouring of the
    bipartite graph of senders and receivers, whose components are paths and even cycles."""
    ends: dict[tuple[str, int], list[int]] = {}
    for e, (_, a, b) in enumerate(edges):
        ends.setdefault(("out", a), []).append(e)
        ends.setdefault(("in", b), []).append(e)
    colour = [-1] * len(edges)
    # Walk each path from an end (a vertex of one edge), then each remaining cycle.
    starts = [v for v, es in ends.items() if len(es) == 1] + list(ends)
    for v in starts:
        at, c = v, 0
        while True:
            free = [e for e in ends[at] if colour[e] < 0]
            if not free:
                break
            e = free[0]
            colour[e] = c
            _, a, b = edges[e]
            at, c = (("in", b) if at == ("out", a) else ("out", a)), 1 - c
    return colour


def _slots(n: int, count: int) -> list[tuple[int, int, int, int, int]]:
    """(slot, sender, receiver, half, segment) over virtual ranks 0..n-1: the root 0 sends each
    half's segments to its tree's top (members are positions + 1). An edge of colour c carries
    one segment in each slot t = c mod 2, the next once its sender holds it, so a node sends at
    most one message and receives at most one in every slot (the paper's schedule)."""
    (r1, e1), (r2, e2) = two_trees(n - 1)
    edges = [(half, a + 1, b + 1) for half, (r, es) in enumerate(((r1, e1), (r2, e2)))
             for a, b in [(-1, r)] + es]
    colour = _colours(edges)
    held: dict[tuple[int, int, int], int] = {}  # (node, half, segment) -> slot it arrived in
    last = [-1] * len(edges)
    out = []
    for j in range(count):
        for e, (half, src, dst) in enumerate(edges):
            t = max(held.get((src, half, j), -1), last[e]) + 1
            t += (t - colour[e]) % 2
            last[e] = held[(dst, half, j)] = t
            out.append((t, src, dst, half, j))
    return out


def fill_slots(n: int) -> int:
    """Slots until every member of an n-member two-tree broadcast holds both halves' segment 0."""
    return max((t for t, *_ in _slots(n, 1)), default=-1) + 1


def two_tree_segments(coll: Collective, machine: Machine) -> int:
    """Segments per half: the binary tree's optimum (trees.best_segments) with this fill; for a
    reduce, of each half's elements, a segment's merge added to its bytes' time."""
    port, fill = machine.port, fill_slots(len(rooted_order(coll)))
    if coll.kind is Kind.REDUCE:
        element = coll.element_bytes or 1
        return best_segments(fill, port.s_per_byte * element + port.combine_s_per_op,
                             port.startup_s, (coll.block_bytes or 2) // element // 2)
    return best_segments(fill, port.s_per_byte, port.startup_s, (coll.block_bytes or 2) // 2)


def _below(n: int) -> list[dict[int, list[int]]]:
    """For each tree, each virtual rank and the ranks below it (itself included)."""
    out = []
    for root, edges in two_trees(n - 1):
        children: dict[int, list[int]] = {}
        for a, b in [(-1, root)] + edges:
            children.setdefault(a + 1, []).append(b + 1)
        out.append(_descendants(children))
    return out


def two_tree_phases(coll: Collective, machine: Machine) -> list[Phase]:
    order = rooted_order(coll)
    n, root = len(order), order[0]
    if n < 2:
        return _with_copies(coll, [])
    block, m = coll.block_bytes or 0, coll.byte_matrix
    count = two_tree_segments(coll, machine)
    element = (coll.element_bytes or 1) if coll.kind is Kind.REDUCE else 1
    elements = block // element
    halves = [(0, elements // 2), (elements // 2, elements - elements // 2)]
    parts = [[((h0 + off) * element, size * element) for off, size in segments(length, count)]
             for h0, length in halves]
    slots = _slots(n, count)
    last = max(t for t, *_ in slots)
    phases: dict[int, list[Transfer]] = {}
    if coll.kind is Kind.REDUCE:  # backwards: each segment from the child up to its parent
        below = _below(n)
        for t, src, dst, half, j in slots:
            offset, nbytes = parts[half][j]
            phases.setdefault(last - t, []).extend(
                Transfer(order[dst], order[src], nbytes, order[o], root, COMBINED, offset)
                for o in below[half][dst] if m[order[o]][root])
    else:
        for t, src, dst, half, j in slots:
            offset, nbytes = parts[half][j]
            phases.setdefault(t, []).append(Transfer(order[src], order[dst], nbytes, root,
                                                     order[dst], offset=offset))
    return _with_copies(coll, [phases.get(t, []) for t in range(last + 1)])
