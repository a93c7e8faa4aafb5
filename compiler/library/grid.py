"""Collectives on a torus or mesh: dimension-ordered (along the rows first, then the columns),
and a broadcast down four spiral chains that keeps a node's four links busy.

A dimension-ordered scatter sends each column's blocks in one message to that column's node in
the root's row, nearest first and alternating east and west so that the root's two row links
carry at once; those nodes then send each node of their column its block (a gather: the
same backwards; a reduce too, each node of the root's row combining its column's partials).
The root starts rows + cols - 2 messages, not P - 1.

Nodes are row-major on a rows x cols grid (targets/iwarp/topology.py, targets/bokhari's mesh):
node r * cols + c. Each stage stays inside one row or one column, so its messages use that
ring's (or line's) links only; the column stage carries what the row stage gathered.
"""

from __future__ import annotations

from phalanx.compiler.library.group import carry
from phalanx.compiler.library.members import OUTWARD, binomial_rounds, contributors, rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import (
    _inward,
    _outward,
    _with_copies,
    chain_segments,
    segments,
)
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def _lines(machine: Machine) -> tuple[list[list[int]], list[list[int]]]:
    rows, cols = machine.grid or (1, machine.nnodes)
    return ([[r * cols + c for c in range(cols)] for r in range(rows)],
            [[r * cols + c for r in range(rows)] for c in range(cols)])


def _tree(coll: Collective, line: list[int], start: int) -> list[list]:
    """A binomial broadcast of the root's block along one line, from `start`."""
    at = line.index(start)
    order = line[at:] + line[:at]
    return [[t for v, c in pairs for t in _outward(coll, order[v], order[c], [order[c]])]
            for pairs in binomial_rounds(len(order))]


def broadcast_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Binomial along the root's row, then binomial down every column from that row."""
    root = rooted_order(coll)[0]
    rows, cols = _lines(machine)
    row = next(r for r in rows if root in r)
    phases = _tree(coll, row, root)
    down = [_tree(coll, col, next(p for p in col if p in row)) for col in cols]
    phases += [[t for tree in down for t in tree[k]] for k in range(len(down[0]))]
    return _with_copies(coll, phases)


def nearest_first(line: list[int], start: int) -> list[int]:
    """The other nodes of a ring or line by distance from `start`, alternating sides: +1, -1,
    +2, -2, ... (on a ring of even length the far node last)."""
    at, size = line.index(start), len(line)
    steps = sorted(range(1, size), key=lambda k: (min(k, size - k), k))
    return [line[(at + k) % size] for k in steps]


def scatter_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Scatter: the root sends each other column's blocks to that column's node in its row,
    then every node of the root's row sends each node of its column its block. Gather and
    reduce: the same backwards, each column into the root's row, then the row into the root
    (a reduce's messages combined: rooted._inward)."""
    root = rooted_order(coll)[0]
    rows, cols = _lines(machine)
    row = next(r for r in rows if root in r)
    column_of = {p: col for col in cols for p in col}
    heads = nearest_first(row, root)
    pairs = [(head, q) for head in [root, *heads] for q in nearest_first(column_of[head], head)]
    if coll.kind in OUTWARD:
        return _with_copies(coll, [
            [t for head in heads for t in _outward(coll, root, head, column_of[head])],
            [t for head, q in pairs for t in _outward(coll, head, q, [q])]])
    return _with_copies(coll, [
        [t for head, q in pairs for t in _inward(coll, q, head, [q])],
        [t for head in heads for t in _inward(coll, head, root, column_of[head])]])


def gather_all_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Allgather or allreduce: a ring along every row (each node ends with its row's parts), then
    a ring along every column carrying whole rows."""
    rows, cols = _lines(machine)
    own = set(contributors(coll))
    phases = []
    for s in range(1, len(rows[0])):
        phases.append([t for row in rows for v in range(len(row)) for t in carry(
            coll, row[v], row[(v + 1) % len(row)], [row[(v - s + 1) % len(row)]] if
            row[(v - s + 1) % len(row)] in own else [])])
    for s in range(1, len(cols[0])):
        phases.append([t for col in cols for v in range(len(col)) for t in carry(
            coll, col[v], col[(v + 1) % len(col)], [o for o in rows[(v - s + 1) % len(col)]
                                                      if o in own])])
    return _with_copies(coll, phases)


def spirals(root: int, rows: int, cols: int) -> list[list[int]]:
    """Four paths from `root` through every node of a rows x cols torus: always east, moving
    north a row after each lap (so row i starts i columns west of the root's column); always
    west moving south; always north moving east; always south moving west."""
    r0, c0 = divmod(root, cols)
    return [
        [((r0 + i) % rows) * cols + (c0 - i + k) % cols for i in range(rows) for k in range(cols)],
        [((r0 - i) % rows) * cols + (c0 + i - k) % cols for i in range(rows) for k in range(cols)],
        [((r0 - j + k) % rows) * cols + (c0 + j) % cols for j in range(cols) for k in range(rows)],
        [((r0 + j - k) % rows) * cols + (c0 - j) % cols for j in range(cols) for k in range(rows)],
    ]


def spiral_chains_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The block in four quarters, each pipelined down its own spiral (`spirals`) in segments
    (rooted.chain_segments of a quarter): a node's four links carry the four chains at once."""
    root = rooted_order(coll)[0]
    rows, cols = machine.grid or (1, machine.nnodes)
    block, m = coll.block_bytes or 0, coll.byte_matrix
    quarters = segments(block, 4)
    count = chain_segments(coll, machine, machine.nnodes, block // 4)
    phases: dict[int, list] = {}
    for (start, size), path in zip(quarters, spirals(root, rows, cols)):
        for j, (offset, nbytes) in enumerate(segments(size, count)):
            for v in range(len(path) - 1):
                dst = path[v + 1]
                if m[root][dst]:
                    phases.setdefault(j + v, []).append(Transfer(
                        path[v], dst, nbytes, root, dst, offset=start + offset))
    return _with_copies(coll, [phases.get(t, []) for t in range(max(phases, default=-1) + 1)])
