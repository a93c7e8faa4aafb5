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
from phalanx.compiler.library.bounds import Cut, Links, LinkWeighting, Weighting, lower_bound
from phalanx.compiler.library.catalog import BESIDE_EXCHANGE_FAMILY, DIMENSIONAL, GENERIC, GRID, ONE_ENGINE
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


def grid_weightings(rows: int, cols: int, wrap: bool) -> tuple[LinkWeighting, ...]:
    """The weightings the weighted link-load bound tries on a grid: a square grid's diagonals,
    and on a torus each ring's two directions (docs/bounds.md, "Weighted links")."""
    return diagonal_weightings(rows, cols, wrap) + ((ring_weightings(rows, cols),) if wrap else ())


@dataclass(frozen=True)
class RingWeighting:
    """Along a ring of `size` nodes, the + direction's links weigh size - d, the - direction's
    d (every other link 0); `total`: the weights' sum over the torus's link directions."""

    size: int
    d: int
    total: float

    @property
    def by_delta(self) -> np.ndarray:
        """The least weight of a path between nodes delta apart along the ring (delta =
        0 .. size - 1): + all the way or - all the way."""
        delta = np.arange(self.size)
        return np.minimum((self.size - self.d) * delta,
                          self.d * ((self.size - delta) % self.size)).astype(np.float64)


@dataclass(frozen=True)
class RingWeightings:
    """On a rows x cols torus (row-major nodes), for each dimension of n > 1 nodes and each
    d in 1..n - 1: the + direction's links weigh n - d, the - direction's d, every other link
    0. A path from s to t moves p steps + and q steps - along the ring with p - q = delta
    (mod n), delta = t - s along it, so it weighs at least min((n - d) delta, d (n - delta)):
    + all the way or - all the way. Bytes over this least weight, divided by the weights' sum,
    is a lower bound whose largest over all ratios of the two weights is at one of these n - 1
    (between two of them it is monotone): a shift by one needs (n - 1) / n of its block on
    some link direction, where the half-cut counts 1/2 (docs/bounds.md, "Weighted links").
    A weight depends only on delta along one dimension, so the bytes are summed by delta
    once per dimension (no nodes x nodes matrix per weighting: 126 of 134 MB at 64x64)."""

    rows: int
    cols: int

    @property
    def x(self) -> tuple[RingWeighting, ...]:
        return self._along(self.cols)

    @property
    def y(self) -> tuple[RingWeighting, ...]:
        return self._along(self.rows)

    def _along(self, size: int) -> tuple[RingWeighting, ...]:
        return tuple(RingWeighting(size, d, float(self.rows * self.cols * size)) for d in range(1, size))

    def load(self, m: np.ndarray) -> float:
        nodes = np.arange(len(m))
        best = 0.0
        for coord, members in ((nodes % self.cols, self.x), (nodes // self.cols, self.y)):
            if not members:
                continue
            size = members[0].size
            delta = (coord[None, :] - coord[:, None]) % size  # [s, t]: t's coordinate less s's
            by_delta = np.bincount(delta.ravel(), weights=m.ravel(), minlength=size)
            best = max(best, *(float(w.by_delta @ by_delta) / w.total for w in members))
        return best


@functools.lru_cache(maxsize=16)
def ring_weightings(rows: int, cols: int) -> RingWeightings:
    return RingWeightings(rows, cols)


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
    row, col = np.divmod(np.arange(n * n), n)
    out = []
    for anti in (False, True):
        level = col + row - (n - 1) if anti else col - row
        on_diagonal = (level % n if wrap else level) == 0
        links = grid_in_links(n, wrap, on_diagonal)
        total = float(sum(weight[neighbour >= 0].sum() for neighbour, weight in links))
        distances = torus_distances(n, anti, links) if wrap else mesh_distances(n, level)
        out.append(Weighting(distances, total))
    return tuple(out)


def mesh_distances(n: int, level: np.ndarray) -> np.ndarray:
    """The least weights on an n x n mesh, diagonal links weighing 2, from each node's diagonal
    `level` (0 on the diagonal): the hops, + 1 for each end on the diagonal, + 2 between the
    two sides (docs/bounds.md, "Weighted links": every hop moves the level by one, so a path
    between the sides passes a diagonal node; one that moves each coordinate one way, the moves
    that take the level away from 0 first, touches the diagonal no more than that)."""
    row, col = np.divmod(np.arange(n * n), n)
    on = (level == 0).astype(np.float64)
    dist = (np.abs(row[:, None] - row[None, :]) + np.abs(col[:, None] - col[None, :])
            + on[:, None] + on[None, :] + 2.0 * (level[:, None] * level[None, :] < 0))
    np.fill_diagonal(dist, 0.0)
    return dist


def grid_in_links(n: int, wrap: bool, on_diagonal: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The link directions of an n x n grid into each node (row-major), one array pair for each
    of the four neighbours: the neighbour (-1 past a mesh's edge) and the link's weight, 2
    where either end is on the diagonal, else 1 (links weigh the same both ways)."""
    row, col = np.divmod(np.arange(n * n), n)
    links = []
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        r2, c2 = row + dr, col + dc
        inside = np.ones(n * n, bool) if wrap else (r2 >= 0) & (r2 < n) & (c2 >= 0) & (c2 < n)
        neighbour = np.where(inside, r2 % n * n + c2 % n, -1)
        weight = np.where(on_diagonal | on_diagonal[neighbour % (n * n)], 2.0, 1.0)
        links.append((neighbour, weight))
    return links


def least_weights(sources: np.ndarray, links: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The least weight of a path from each of `sources` to every node (sources x nodes) of a
    torus (every node has its four links): Bellman and Ford, every link relaxed at once until
    nothing changes (as many rounds as the most links on a lightest path, about the diameter).
    The weights are small integers, so every sum is exact and the order of relaxing does not
    change a distance."""
    dist = np.full((len(links[0][0]), len(sources)), np.inf)  # nodes x sources: rows gathered
    dist[sources, np.arange(len(sources))] = 0.0
    changed = True
    while changed:
        changed = False
        for neighbour, weight in links:
            through = dist[neighbour] + weight[:, None]
            if (through < dist).any():
                np.minimum(dist, through, out=dist)
                changed = True
    return dist.T


def torus_distances(n: int, anti: bool, links: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """least_weights from every node of an n x n torus, found from the n nodes of row 0: moving
    every node one row down and one column right (left for the anti-diagonal) keeps each
    node's diagonal level, so it keeps every link's weight and every distance. The node
    (r, c) is such a move r times of (0, c - r) ((0, c + r)), and so is every destination."""
    from_row_0 = least_weights(np.arange(n), links)
    turn = 1 if anti else -1  # the column's move per row
    cols = np.arange(n)
    row2, col2 = np.divmod(np.arange(n * n), n)
    dist = np.empty((n * n, n * n))
    for r in range(n):
        moved = (row2 - r) % n * n + (col2 + turn * r) % n  # each destination moved back r times
        dist[r * n:(r + 1) * n] = from_row_0[(cols + turn * r) % n][:, moved]
    return dist


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
           links: Links | None = None, exchange_family: bool = False,
           own: tuple[Algorithm, ...] = ()) -> Library:
        """The target's `own` algorithms first (a name of the catalog's among them takes that
        record's place for their kinds), then every generic algorithm, the grid ones on a torus
        or mesh, the dimensional ones on a torus, mesh or hypercube, the one-engine ones where a
        node's one engine sends and receives one message at a time, the generic direct exchange
        under its own name where the target's exchange family takes the name `direct`
        (`exchange_family`), less `leave_out` names; `cuts` and `links` of the network for the
        bounds."""
        one_engine = machine.port.shared_engine and machine.port.streams == 1
        chosen = GENERIC + (GRID if machine.grid else ()) + (DIMENSIONAL if machine.dimensions else ()) \
            + (ONE_ENGINE if one_engine else ()) + (BESIDE_EXCHANGE_FAMILY if exchange_family else ())
        return Library(machine, own + tuple(a for a in chosen if a.name not in leave_out), cuts, links)

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

    def time_s(self, coll: Collective, name: str, schedule: Callable[[], Schedule]) -> float:
        """The record's closed form where it has one (a machine's own algorithm), else
        estimate_s (the port model)."""
        found = self.find(coll.kind, name)
        if found is not None and found.closed_form is not None:
            return found.closed_form(coll, self.machine)
        return self.estimate_s(coll, name, schedule)

    def closed_form_gap(self, coll: Collective, name: str) -> str | None:
        """Why `time_s` cannot follow the machine's simulator for `name` on `coll`: the record's
        own reason where it has a closed form (None: it follows), else the port model's."""
        found = self.find(coll.kind, name)
        if found is None or found.closed_form is None:
            return PORT_MODEL_GAP
        return None if found.closed_form_gap is None else found.closed_form_gap(coll)

    def has_closed_form(self, coll: Collective, name: str) -> bool:
        found = self.find(coll.kind, name)
        return found is not None and found.closed_form is not None

    def problems(self, schedule: Schedule) -> list[str]:
        """The proofs the schedule's algorithm's record asks of it (none where it asks none)."""
        found = self.find(schedule.kind, schedule.algorithm)
        return [] if found is None or found.problems is None else found.problems(schedule)

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
