"""`grid-direct`: the all-to-all's direct messages in phases that spread every link's load.

On a torus or mesh whose routes go along one dimension, then the other (the Paragon's
row-column routing, a torus's dimension-ordered e-cube), the P - 1 direct messages of a node
go in rows x cols phases: in phase (a, b) node (r, c) sends its block for (tau_b(r),
sigma_a(c)), with sigma_0..sigma_{cols-1} the permutations of a Latin square on the row line
(each column reaches each other column in exactly one of them) and tau likewise on the
column line. A message's row leg then stays in its source's row and its column leg in its
destination's column (or the other way round), so in phase (a, b) a row link carries what
sigma_a alone puts on it in that row and a column link what tau_b puts on it: the busiest
link of a phase is the busiest of the two line permutations.

A line's Latin square is chosen to spread its links evenly: each permutation puts at most L
messages on any link direction, L the least whole number the line's busiest link allows
(its messages over the n permutations; on a line of 8, 16 crossings of the middle in 8
permutations: L = 2). `direct`'s XOR pairing puts 4 on the middle links of a line of 8 in half
of its steps (every node of one half to the other half), so on the 8x8 Paragon mesh 48 of its
63 phases have 4 messages on a bisection link. The square is found by a deterministic local
search (`balanced_square`): start from the cyclic square (node i's colour-k partner i + k mod
n) and swap two colours along Kempe chains (alternating paths of the two colours, which keep
every colour a permutation) while the excess over L falls, or, at random with a fixed seed,
does not rise much. Where the search meets no square within L in its budget, L grows by one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from functools import lru_cache

import numpy as np

from phalanx.compiler.columns import PhaseColumns, rows
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode

Square = tuple[tuple[int, ...], ...]  # square[k][i]: node i's partner in permutation k
SEARCH_STEPS_PER_NODE = 2_000  # Kempe swaps per line node before L grows (line of 8: 62 needed)
# The search's cost grows fast with the line (measured on the shared machine: 8 nodes 0.03 s,
# 16 nodes 10 s, 32 about a minute), and `auto` builds the schedule of every candidate.
LONGEST_LINE = 8


class _Search:
    """A Latin square on n nodes as an edge colouring of the complete bipartite graph (sender i,
    receiver j; the colour a permutation), with every colour's load on every link."""

    def __init__(self, routes: Sequence[Sequence[Sequence[int]]], most: int):
        n = len(routes)
        self.n, self.routes, self.most = n, routes, most
        links = 1 + max((x for row in routes for route in row for x in route), default=-1)
        self.colour = [[(j - i) % n for j in range(n)] for i in range(n)]
        self.partner = [[(i + k) % n for k in range(n)] for i in range(n)]  # sender i, colour k
        self.sender = [[(j - k) % n for k in range(n)] for j in range(n)]  # receiver j, colour k
        self.load = [[0] * links for _ in range(n)]
        self.excess = 0
        for i in range(n):
            for j in range(n):
                self.excess += self._move(i, j, self.colour[i][j], 1)

    def _move(self, i: int, j: int, colour: int, step: int) -> int:
        """Add (step 1) or take away (-1) edge i -> j in `colour`: the change of the excess."""
        load, change = self.load[colour], 0
        for link in self.routes[i][j]:
            before = load[link]
            load[link] = before + step
            change += max(0, before + step - self.most) - max(0, before - self.most)
        return change

    def chain(self, start: int, a: int, b: int) -> list[tuple[int, int]]:
        """The a/b path from sender `start` by its colour-a edge (a cycle: the graph is complete)."""
        path: list[tuple[int, int]] = []
        i = start
        while True:
            j = self.partner[i][a]
            i = self.sender[j][b]
            path += [(self.sender[j][a], j), (i, j)]
            if i == start:
                return path

    def swap(self, path: list[tuple[int, int]], a: int, b: int) -> int:
        """Swap colours a and b on `path`: the change of the excess."""
        change = 0
        for i, j in path:
            old = self.colour[i][j]
            new = b if old == a else a
            change += self._move(i, j, old, -1) + self._move(i, j, new, 1)
            self.colour[i][j] = new
        for i, j in path:
            self.partner[i][self.colour[i][j]] = j
            self.sender[j][self.colour[i][j]] = i
        return change

    def square(self) -> Square:
        return tuple(tuple(self.partner[i][k] for i in range(self.n)) for k in range(self.n))


def _search(routes: Sequence[Sequence[Sequence[int]]], most: int, seed: int) -> Square | None:
    """A Latin square with at most `most` messages of a permutation on a link, or None."""
    state = _Search(routes, most)
    n, rng, temperature = state.n, random.Random(seed), 1.0
    for _ in range(SEARCH_STEPS_PER_NODE * n):
        if state.excess == 0:
            return state.square()
        a, b = rng.sample(range(n), 2)
        path = state.chain(rng.randrange(n), a, b)
        change = state.swap(path, a, b)
        if change > 0 and rng.random() >= math.exp(-change / temperature):
            state.swap(path, a, b)  # undo: the same swap again
        else:
            state.excess += change
        temperature = max(0.05, temperature * 0.99995)
    return None


@lru_cache(maxsize=32)
def balanced_square(routes: tuple[tuple[tuple[Hashable, ...], ...], ...]) -> tuple[Square, int]:
    """A Latin square on a line (routes[i][j]: the links from i to j) and the most messages
    any of its permutations puts on one link."""
    n = len(routes)
    names: dict[Hashable, int] = {}
    numbered = [[[names.setdefault(link, len(names)) for link in routes[i][j]] for j in range(n)]
                for i in range(n)]
    total = [0] * len(names)
    for row in numbered:
        for route in row:
            for link in route:
                total[link] += 1
    most = max((-(-t // n) for t in total), default=0)
    while True:
        found = _search(numbered, most, seed=n)
        if found is not None:
            return found, most
        most += 1


def line_squares(machine: Machine) -> tuple[Square, Square]:
    """The balanced Latin squares of a row (on the columns) and of a column (on the rows),
    from the links of the machine's routes along row 0 and column 0."""
    assert machine.grid is not None and machine.route is not None
    rows_, cols = machine.grid
    route = machine.route
    row = tuple(tuple(tuple(route(i, j)) for j in range(cols)) for i in range(cols))
    column = tuple(tuple(tuple(route(i * cols, j * cols)) for j in range(rows_))
                   for i in range(rows_))
    return balanced_square(row)[0], balanced_square(column)[0]


def grid_direct_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """rows x cols phases, phase (a, b) node (r, c) to (tau_b(r), sigma_a(c)); local blocks are
    copied in the first phase, empty blocks send nothing."""
    assert machine.grid is not None
    n_rows, cols = machine.grid
    sigma, tau = (np.array(s, dtype=np.int64) for s in line_squares(machine))
    m = coll.matrix
    ranks = np.arange(coll.nprocs, dtype=np.int64)
    r, c = ranks // cols, ranks % cols
    # dst[a * rows + b, p]: p's partner in phase (a, b)
    dst = (tau[None, :, r] * cols + sigma[:, None, c]).reshape(cols * n_rows, coll.nprocs)
    src = np.broadcast_to(ranks, dst.shape)
    nbytes = m[src, dst]
    sent = (nbytes > 0) & (src != dst)
    own = ranks[np.diagonal(m) > 0]
    s, d = np.concatenate((own, src[sent])), np.concatenate((own, dst[sent]))
    table = rows(s, d, np.concatenate((m[own, own], nbytes[sent])), s, d)
    offsets = np.concatenate(([0], len(own) + np.cumsum(sent.sum(axis=1))))
    return PhaseColumns(table, offsets, (SyncMode.LOCAL,) * (len(offsets) - 1))


def grid_direct_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(grid_direct_columns(coll, machine).phases())


def mesh_lines(coll: Collective, machine: Machine) -> str | None:
    """The squares are searched for the lines of a mesh whose routes name their links, of at
    most LONGEST_LINE nodes (precondition; a torus's rings are left to its own exchanges)."""
    if machine.route is None or machine.grid is None:
        return "the machine does not name its routes' links"
    rows, cols = machine.grid
    if len(machine.route(0, cols - 1)) != cols - 1 or len(machine.route(0, (rows - 1) * cols)) != rows - 1:
        return "its rows and columns are rings, not the lines of a mesh"
    if max(rows, cols) > LONGEST_LINE:
        return (f"it searches balanced Latin squares for lines of at most {LONGEST_LINE} nodes, "
                f"not {max(rows, cols)}")
    return None
