"""Four edge-disjoint spanning trees of a square torus: a broadcast and a reduce that keep every
link of a node busy (after Johnsson and Ho 1989, "Optimum broadcasting and personalized
communication in hypercubes", IEEE Trans. Computers 38(9): one spanning tree per link of a
node, each carrying its share of the message, pipelined).

On an n x n torus (row-major nodes) tree 0 from the root, in (row, column) offsets from it:
east along the root's row, (0, c) -> (0, c + 1) for c < n - 1; up every other column from the
root's row, (r, c) -> (r + 1, c) for c > 0 and r < n - 1; and into the root's column by the
east link that wraps round, (r, n - 1) -> (r, 0) for r > 0. Trees 1, 2, 3 are tree 0 turned
by 90, 180 and 270 degrees about the root ((r, c) -> (c, -r)). Tree 0 takes east and north
links, tree 1 north and west, tree 2 west and south, tree 3 south and east, and no directed
link is in two trees: tree 0's north links are the columns' inner ones, tree 1's the root's
column's and the wrapping ones of the other columns (`directed_links` is checked by the tests
for n = 3..9). A node's sends and receives of one phase therefore each take a different link.
Depth 2n - 1 (the far corner of the root's column).

- broadcast: the block in four parts, part k down tree k in `count` segments, segment j
  crossing the edge into a node of depth d in phase j + d - 1;
- reduce: the same phases backwards, part k of every partial up tree k, each node merging its
  subtree's segment before it sends it on (its transfers name the origins below it).

An allreduce as this reduce then this broadcast took 6.76 ms for 64 KB partials on torus:8x8,
where the turned Rabenseifner allreduce takes 3.63 ms: it is not offered.

On a mesh the wrapping edges take routes across the row or column (data still correct, the
links then shared). Segments: the count of least `(count + depth - 1) x a phase`, where a
phase starts a node's four messages one after another on its processor and streams their
bytes (and its four receives', on streams a node's sends and receives share) at once.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

TREES = 4  # one per link of a torus node
MAX_SEGMENTS = 512
Edge = tuple[int, int]  # (parent, child) nodes


def tree_offsets(n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Tree 0's edges as (row, column) offsets from the root, parents before children."""
    row = [((0, c), (0, c + 1)) for c in range(n - 1)]
    up = [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(1, n)]
    wrap = [((r, n - 1), (r, 0)) for r in range(1, n)]
    return row + up + wrap


def spanning_trees(n: int, root: int) -> list[list[Edge]]:
    """The four trees of an n x n torus from `root`, each's edges parents first."""
    r0, c0 = divmod(root, n)

    def node(r: int, c: int) -> int:
        return (r0 + r) % n * n + (c0 + c) % n

    trees = []
    edges = tree_offsets(n)
    for _ in range(TREES):
        trees.append([(node(*a), node(*b)) for a, b in edges])
        edges = [((a[1], -a[0]), (b[1], -b[0])) for a, b in edges]
    return trees


def directed_links(n: int, tree: list[Edge]) -> list[tuple[int, str]]:
    """Each edge as (node, direction it leaves by): 'E', 'W', 'N' (row + 1) or 'S'."""
    out = []
    for a, b in tree:
        (ra, ca), (rb, cb) = divmod(a, n), divmod(b, n)
        step = {(0, 1): "E", (0, n - 1): "W", (1, 0): "N", (n - 1, 0): "S"}
        out.append((a, step[((rb - ra) % n, (cb - ca) % n)]))
    return out


def depths(tree: list[Edge], root: int) -> dict[int, int]:
    """Each node's depth in a tree whose edges come parents first."""
    depth = {root: 0}
    for a, b in tree:
        depth[b] = depth[a] + 1
    return depth


def below(tree: list[Edge], root: int) -> dict[int, list[int]]:
    """Each node and the nodes of its subtree (itself first)."""
    under: dict[int, list[int]] = {root: [root]}
    for _, b in tree:
        under[b] = [b]
    for a, b in reversed(tree):
        under[a] += under[b]
    return under


def square_grid(coll: Collective, machine: Machine) -> str | None:
    """The trees are one tree turned four times about the root: a square grid of 3 x 3 or more."""
    if machine.grid is None:
        return "the machine is not a torus or mesh"
    rows, cols = machine.grid
    if rows != cols or rows < 3:
        return f"it needs a square grid of at least 3 x 3 (four turned trees), not {rows}x{cols}"
    return None


def tree_segments(machine: Machine, units: int, unit_bytes: int, depth: int,
                  merge_s_per_unit: float = 0.0) -> int:
    """Segments of each tree's part of `units` units (bytes, or a partial's elements): the count
    of least (count + depth - 1) x phase. A node enters its next phase only when its sends and
    receives are done (runtime/interpreter.py), and its last receive is a neighbour's fourth
    message, started after that neighbour's TREES start-ups one after another on its processor:
    a phase is twice TREES start-ups (and the merges of what it receives), then the bytes of
    TREES sends and TREES receives on its streams. Measured on torus:8x8 at 1 MB: 16 segments
    22.8 ms, 24 23.1 ms, 48 24.0 ms, 80 26.7 ms (flat near the optimum)."""
    port = machine.port

    def time_s(count: int) -> float:
        seg_s = units / count * unit_bytes * port.s_per_byte
        data_s = TREES * seg_s / port.streams
        if port.engine_streams:
            data_s = max(data_s, 2 * TREES * seg_s / port.engine_streams)
        cpu_s = TREES * (2 * port.hold_s + units / count * merge_s_per_unit)
        return (count + depth - 1) * (cpu_s + data_s + port.latency_s)

    return min(range(1, max(1, min(units, MAX_SEGMENTS)) + 1), key=time_s)


def _parts(coll: Collective, machine: Machine, depth: int) -> list[list[tuple[int, int]]]:
    """(offset, bytes) of each segment of each tree's part of the block (between elements)."""
    reduction = coll.kind is Kind.REDUCE
    unit = (coll.element_bytes or 1) if reduction else 1
    units = (coll.block_bytes or 0) // unit
    merge_s = machine.port.combine_s_per_op if reduction else 0.0
    count = tree_segments(machine, max(1, units // TREES), unit, depth, merge_s)
    return [[((start + off) * unit, size * unit) for off, size in segments(length, count)]
            for start, length in segments(units, TREES)]


def _down(coll: Collective, trees: list[list[Edge]], root: int,
          parts: list[list[tuple[int, int]]]) -> list[list[Transfer]]:
    """Every part's segments down its tree: segment j into a node of depth d in phase j + d - 1."""
    m, phases = coll.byte_matrix, {}
    for tree, part in zip(trees, parts):
        depth = depths(tree, root)
        for a, b in tree:
            for j, (offset, nbytes) in enumerate(part):
                if m[root][b] and nbytes:
                    phases.setdefault(j + depth[b] - 1, []).append(
                        Transfer(a, b, nbytes, root, b, offset=offset))
    return [phases.get(t, []) for t in range(max(phases, default=-1) + 1)]


def _up(coll: Collective, trees: list[list[Edge]], root: int,
        parts: list[list[tuple[int, int]]]) -> list[list[Transfer]]:
    """Every part's segments up its tree to `root`, each carrying its subtree's partials, in the
    broadcast's phases backwards."""
    m, phases = coll.byte_matrix, {}
    for tree, part in zip(trees, parts):
        depth, under = depths(tree, root), below(tree, root)
        for a, b in tree:
            for j, (offset, nbytes) in enumerate(part):
                phases.setdefault(j + depth[b] - 1, []).extend(
                    Transfer(b, a, nbytes, o, root, COMBINED, offset)
                    for o in under[b] if o != root and m[o][root] and nbytes)
    last = max(phases, default=-1)
    return [phases.get(last - t, []) for t in range(last + 1)]


def spanning_trees_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """A broadcast down the four trees from the root, or a reduce up them to it."""
    n = (machine.grid or (1, 1))[0]
    root = rooted_order(coll)[0]
    trees = spanning_trees(n, root)
    parts = _parts(coll, machine, max(depths(trees[0], root).values()))
    if coll.kind is Kind.BROADCAST:
        return _with_copies(coll, _down(coll, trees, root, parts))
    return _with_copies(coll, _up(coll, trees, root, parts))
