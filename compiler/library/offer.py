"""What a target offers from the library: the algorithms that fit its machine, by kind.

A target keeps one `Library` and delegates to it for the kinds and names the library
serves: names, descriptions, preconditions, schedules, predicted times and lower bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.columns import PhaseColumns
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bounds import Cut, Links, Weighting, lower_bound
from phalanx.compiler.library.catalog import DIMENSIONAL, GENERIC, GRID
from phalanx.compiler.library.cost import estimate_s
from phalanx.compiler.library.estimate import columns_estimate_s, messages_estimate_s
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.library.registry import Algorithm, Machine, Route
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.grammar.diagnostics import usage_error

# Why a target whose network has links of its own (a torus, a mesh, a multistage network,
# rings, shared cluster ports) cannot rank library algorithms by estimate_s: the port model
# leaves those links out (cost.py), and bench/regret.py measures it at 0.05x to 30x of the
# simulated times there. Such targets return this from Target.closed_form_gap, and
# `--cost target` simulates the library's candidates. On `ideal` the port model is the network.
PORT_MODEL_GAP = ("the library's port model leaves out the links inside the network, on which "
                  "the target's simulator queues messages")


def bisection_cuts(rows: int, cols: int, wrap: bool) -> tuple[Cut, ...]:
    """The two half-cuts of a rows x cols grid (row-major): a torus ring crosses each twice."""
    per = 2 if wrap else 1
    cuts = []
    if cols > 1:
        cuts.append(Cut(frozenset(r * cols + c for r in range(rows) for c in range(cols // 2)),
                        per * rows))
    if rows > 1:
        cuts.append(Cut(frozenset(range((rows // 2) * cols)), per * cols))
    return tuple(cuts)


def grid_links(rows: int, cols: int, wrap: bool) -> Links:
    """A rows x cols mesh's or torus's links (row-major nodes): the fewest hops between two
    nodes are the rows plus the columns apart (the shorter way round a torus's rings); a mesh
    has two link directions between each pair of neighbours, a torus four out of every node."""
    def apart(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
        d = np.abs(a - b)
        return np.minimum(d, size - d) if wrap else d

    def hops(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return apart(src // cols, dst // cols, rows) + apart(src % cols, dst % cols, cols)

    return Links(hops, 4 * rows * cols if wrap else 2 * (rows * (cols - 1) + cols * (rows - 1)),
                 grid_weightings(rows, cols, wrap))


def grid_weightings(rows: int, cols: int, wrap: bool) -> tuple[Weighting, ...]:
    """The weightings the weighted link-load bound tries on a grid: a square grid's diagonals,
    and on a torus each ring's two directions (docs/bounds.md, "Weighted links")."""
    return diagonal_weightings(rows, cols, wrap) + (ring_weightings(rows, cols) if wrap else ())


@functools.lru_cache(maxsize=16)
def ring_weightings(rows: int, cols: int) -> tuple[Weighting, ...]:
    """On a rows x cols torus (row-major nodes), for each dimension of n > 1 nodes and each
    d in 1..n - 1: the + direction's links weigh n - d, the - direction's d, every other link
    0. A path from s to t moves p steps + and q steps - along the ring with p - q = delta
    (mod n), delta = t - s along it, so it weighs at least min((n - d) delta, d (n - delta)):
    + all the way or - all the way. Bytes over this least weight, divided by the weights' sum,
    is a lower bound whose largest over all ratios of the two weights is at one of these n - 1
    (between two of them it is monotone): a shift by one needs (n - 1) / n of its block on
    some link direction, where the half-cut counts 1/2 (docs/bounds.md, "Weighted links")."""
    nodes = np.arange(rows * cols)
    out = []
    for coord, size in ((nodes % cols, cols), (nodes // cols, rows)):
        delta = (coord[None, :] - coord[:, None]) % size  # [s, t]: t's coordinate less s's
        for d in range(1, size):
            plus, minus = size - d, d
            distances = np.minimum(plus * delta, minus * ((size - delta) % size)).astype(np.float64)
            out.append(Weighting(distances, float(rows * cols * (plus + minus))))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def diagonal_weightings(rows: int, cols: int, wrap: bool) -> tuple[Weighting, ...]:
    """On a square grid, the link directions with an end on the main diagonal (column - row = 0,
    modulo the side on a torus) weigh 2, the others 1; and the same for the anti-diagonal
    (row + column = side - 1). A transpose's shortest routes all cross the diagonal, so this
    weighs what the uniform count cannot: on torus:8x8 the busiest link's least load under any
    routing, 1.1 blocks (docs/bounds.md, "Weighted links"). None on other grids."""
    if rows != cols or rows < 2:
        return ()
    n = rows

    def on_diagonal(r: int, c: int, anti: bool) -> bool:
        level = c + r - (n - 1) if anti else c - r
        return (level % n if wrap else level) == 0

    out = []
    for anti in (False, True):
        weight = np.full((n * n, n * n), np.inf)
        np.fill_diagonal(weight, 0.0)
        total = 0.0
        for r in range(n):
            for c in range(n):
                for r2, c2 in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if not wrap and not (0 <= r2 < n and 0 <= c2 < n):
                        continue
                    r2, c2 = r2 % n, c2 % n
                    w = 2.0 if on_diagonal(r, c, anti) or on_diagonal(r2, c2, anti) else 1.0
                    weight[r * n + c, r2 * n + c2] = w
                    total += w
        for k in range(n * n):  # Floyd and Warshall: the least weight of a path
            weight = np.minimum(weight, weight[:, k:k + 1] + weight[k:k + 1, :])
        out.append(Weighting(weight, total))
    return tuple(out)


def cube_cuts(dimension: int) -> tuple[Cut, ...]:
    """A hypercube's halves along each bit: 2^(d-1) links cross each way."""
    n = 1 << dimension
    return tuple(Cut(frozenset(p for p in range(n) if not p >> bit & 1), n // 2)
                 for bit in range(dimension))


def cube_links(dimension: int) -> Links:
    """A hypercube's links: the fewest hops are the bits two nodes differ in; d directions a node."""
    def hops(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        differ = src ^ dst
        return sum((differ >> bit & 1 for bit in range(dimension)), np.zeros_like(differ))

    return Links(hops, dimension << dimension)


def entry_cuts(nnodes: int, route: Route) -> tuple[Cut, ...]:
    """Entry cuts of a fixed routing: each link whose routes' destinations S are entered by every
    route from a node outside S through that one link (a CS-2 leaf switch's link from the stage
    above, which `destination digit above` routing takes into the leaf from anywhere else).
    Every byte into S from outside, however relayed, rides routes into S: it passes that link.
    A node's own links (S one node, or all but one) are left out: its port bounds say as much."""
    through: dict[Hashable, set[tuple[int, int]]] = {}
    for src in range(nnodes):
        for dst in range(nnodes):
            if src != dst:
                for link in route(src, dst):
                    through.setdefault(link, set()).add((src, dst))
    sides: set[frozenset[int]] = set()
    for pairs in through.values():
        side = frozenset(d for _, d in pairs)
        entering = sum(1 for s, d in pairs if s not in side)
        if 1 < len(side) < nnodes - 1 and entering == len(side) * (nnodes - len(side)):
            sides.add(side)
    return tuple(Cut(side, 1, into=True) for side in sorted(sides, key=sorted))


@dataclass(frozen=True)
class Library:
    machine: Machine
    algorithms: tuple[Algorithm, ...]
    cuts: tuple[Cut, ...] = ()
    links: Links | None = None

    @staticmethod
    def of(machine: Machine, cuts: tuple[Cut, ...] = (), leave_out: tuple[str, ...] = (),
           links: Links | None = None) -> Library:
        """Every generic algorithm, the grid ones on a torus or mesh, the dimensional ones on a
        torus, mesh or hypercube, less `leave_out` names; `cuts` and `links` of the network for
        the bounds."""
        chosen = GENERIC + (GRID if machine.grid else ()) + (DIMENSIONAL if machine.dimensions else ())
        return Library(machine, tuple(a for a in chosen if a.name not in leave_out), cuts, links)

    def names(self, kind: Kind) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.name for a in self.algorithms if kind in a.kinds))

    def find(self, kind: Kind, name: str) -> Algorithm | None:
        return next((a for a in self.algorithms if kind in a.kinds and a.name == name), None)

    def describe(self, kind: Kind, name: str) -> str:
        found = self.find(kind, name)
        return found.description if found else ""

    def unmet(self, coll: Collective, name: str) -> str | None:
        found = self.find(coll.kind, name)
        if found is None:
            return f"'{name}' is not an algorithm for a {coll.kind} in the library"
        return found.unmet(coll, self.machine)

    def schedule(self, coll: Collective, name: str, spec: str) -> Schedule:
        reason = self.unmet(coll, name)
        if reason is not None:
            raise usage_error(f"algorithm '{name}' cannot lower this {coll.kind} on {spec}: "
                              f"{reason}", "use algorithm auto, which only picks algorithms "
                              "that can run")
        found = self.find(coll.kind, name)
        assert found is not None
        return found.schedule(coll, self.machine)

    def predict_s(self, schedule: Schedule, element_bytes: int | None = None) -> float:
        return estimate_s(schedule, self.machine.port, element_bytes)

    def estimate_s(self, coll: Collective, name: str, schedule: Callable[[], Schedule]) -> float:
        """predict_s of the algorithm's schedule for `coll`: from its messages or columns
        where it builds them (estimate.py, the same time without its transfers), else of
        `schedule()` (the target's, remembered)."""
        found = self.find(coll.kind, name)
        if found is not None and found.unmet(coll, self.machine) is None and not coll.groups:
            port = self.machine.port
            if found.messages is not None and coll.kind not in REDUCTIONS:
                return messages_estimate_s(found.messages(coll, self.machine), coll.nprocs, port)
            columns = found.phase_columns(coll, self.machine)
            if columns is not None:
                return columns_estimate_s(columns, coll.nprocs, coll.kind, port, coll.element_bytes)
        return self.predict_s(schedule(), coll.element_bytes)

    def columns(self, coll: Collective, name: str) -> PhaseColumns | None:
        """The algorithm's phases for `coll` as columns (the empty ones left out), where it
        builds them so and can run."""
        found = self.find(coll.kind, name)
        if found is None or coll.groups or found.unmet(coll, self.machine) is not None:
            return None
        return found.phase_columns(coll, self.machine)

    def bound(self, coll: Collective) -> tuple[float, str]:
        """The largest of bounds.py's bounds; the relays' bound where each pair has one fixed
        route (not where an adapter spreads messages over several, the SP2)."""
        route = self.machine.route if self.machine.adapter is None else None
        return lower_bound(coll, self.machine.port, self.cuts, self.links, route)
