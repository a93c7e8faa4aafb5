"""The routings of Bokhari's machines: row-column on the Paragon mesh, e-cube on the hypercube,
up/down in the SP2's and CS-2's fat trees (seed 003_f18cb429ce0a4177.txt Sec. 2, 3).

Each is a `Routing`: called with (src, dst) it gives one pair's hops in path order (what
network.py's RoutedNetwork holds a message's links by); `columns` gives the same routes of
many messages at once as numpy columns (route_columns.py), for the native core's programs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from phalanx.targets.bokhari import route_columns
from phalanx.targets.bokhari.route_columns import Hop, RouteColumns


class Routing(ABC):
    """A machine's deterministic routing: `route(src, dst)` is one pair's hops in path order;
    `columns` the same routes of many messages at once (route_columns.py), or None."""

    @abstractmethod
    def __call__(self, src: int, dst: int) -> list[Hop]:
        """The hops from src to dst, in path order."""

    def all(self, src: int, dst: int) -> list[list[Hop]]:
        """The pair's alternative routes, route 0 first: the one route, unless the routing
        offers several (FatTreeRoutes)."""
        return [self(src, dst)]

    def gives_columns(self) -> bool:
        """Whether `columns` gives the routes of any messages (never None)."""
        return False

    def columns(self, src: np.ndarray, dst: np.ndarray,
                alternative: np.ndarray | None = None) -> RouteColumns | None:
        """The routes of the messages (src[i], dst[i]) as columns, route alternative[i] of
        each pair's (`route_counts`; the first where None); None: one pair at a time."""
        return None

    def route_counts(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """How many alternative routes each pair (src[i], dst[i]) has: one, unless the routing
        offers several (FatTreeRoutes)."""
        return np.ones(len(src), np.int64)

    def most_routes(self) -> int:
        """The most alternative routes any pair has."""
        return 1


class MeshRoute(Routing):
    """Row-column routing on a mesh without wraparound (003 Sec. 3.1): along the row first."""

    def __init__(self, cols: int):
        self.cols = cols

    def __call__(self, src: int, dst: int) -> list[Hop]:
        (r, c), (r2, c2) = divmod(src, self.cols), divmod(dst, self.cols)
        hops: list[Hop] = []
        while c != c2:
            step = 1 if c2 > c else -1
            hops.append(((r, c), (r, c + step)))
            c += step
        while r != r2:
            step = 1 if r2 > r else -1
            hops.append(((r, c), (r + step, c)))
            r += step
        return hops

    def gives_columns(self) -> bool:
        return True

    def columns(self, src: np.ndarray, dst: np.ndarray,
                alternative: np.ndarray | None = None) -> RouteColumns:
        return route_columns.mesh_columns(self.cols, src, dst)  # one route per pair


def ecube_route(src: int, dst: int) -> list[Hop]:
    """E-cube: fix the differing bits from the lowest up (003 Sec. 2: 0010->0011->0001->1001)."""
    hops, at, diff, bit = [], src, src ^ dst, 0
    while diff >> bit:
        if diff >> bit & 1:
            hops.append((at, at ^ (1 << bit)))
            at ^= 1 << bit
        bit += 1
    return hops


class ECubeRoute(Routing):
    """E-cube routing on the hypercube (ecube_route)."""

    def __call__(self, src: int, dst: int) -> list[Hop]:
        return ecube_route(src, dst)

    def gives_columns(self) -> bool:
        return True

    def columns(self, src: np.ndarray, dst: np.ndarray,
                alternative: np.ndarray | None = None) -> RouteColumns:
        return route_columns.ecube_columns(src, dst)  # one route per pair


def fat_tree_levels(nnodes: int, arity: int = 4) -> int:
    """Stages of 4x4 switches needed for `nnodes` (003 Fig. 8: enough stages for N)."""
    levels = 1
    while arity ** levels < nnodes:
        levels += 1
    return levels


# How a route picks its up-port when it climbs from stage l to l + 1 (before adding the
# route's alternative number r, mod 4). `params.MultistageParams.up_route` indexes this.
# Rules 1 and 2 are the two standard oblivious routings of k-ary n-trees, S-mod-k and D-mod-k
# (Rodriguez, Minkenberg et al., "Oblivious routing schemes in extended generalized fat tree
# networks", IEEE CLUSTER 2009, Sec. III); rules 0 and 3 are no published scheme.
UP_ROUTE_RULES = (
    "destination digit above",  # t[l+1]: the CS-2 as modelled (one route per pair)
    "source digit",  # s[l]: S-mod-k, a what-if
    "destination digit",  # t[l]: D-mod-k, the SP2 (see FatTreeRoutes)
    "source plus destination digit",  # (s[l] + t[l]) mod 4: a what-if, also even over links
)


def fat_tree_route(nnodes: int, up_rule: str = "destination digit above", arity: int = 4,
                   routes_per_pair: int = 1) -> FatTreeRoutes:
    """Up/down routing in a k-ary n-tree of bidirectional 4x4 switches (003 Fig. 8).

    Called as route(src, dst), the result gives the first route (the one a single static
    table would hold); `.all(src, dst)` gives every alternative route of the pair.
    """
    return FatTreeRoutes(nnodes, up_rule, arity, routes_per_pair)


class FatTreeRoutes(Routing):
    """Deterministic up/down routes in a k-ary n-tree, `routes_per_pair` of them per pair.

    A level-l switch is named by the node's digits above l (positions 1..n-1, base 4);
    going up from level l replaces digit l+1 by the up-port, chosen by `up_rule` (one of
    UP_ROUTE_RULES, from the source's digits s and the destination's digits t); going down
    restores the destination's digits. The top-stage switch (u0, u1) of a 64-node tree thus
    reaches link chip u0 of every 16-node group. Node links: ("node", p) <-> leaf switch.

    "destination digit above" (t[l+1]) makes the top switch route r climbs to name the
    destination's group (shifted by r), so each route number sends down from every top
    switch to one group only: 3/4 of the top stage's down-links carry no route of that
    number, whatever the traffic (the four route numbers together cover them). The other
    rules spread each route number's all-pairs routes evenly over every link of every stage
    (a test checks "destination digit", the SP2's).

    Alternative route r (0 <= r < routes_per_pair) adds r to the up-port at every level
    (mod 4). Route 0 is the route above; routes 1-3 leave the leaf switch by its three other
    up-ports and so share no up-link or down-link above the leaf with route 0 or with each
    other: on the SP2's 16-node switch board these are the four routes through the four
    chips of the board's other side (IBM RS/6000 SP redbook, switch-board chapter: "four
    routes between each node on a single switch board"). A pair under one leaf switch has
    one route only; any other pair has at most 4.
    """

    def __init__(self, nnodes: int, up_rule: str = "destination digit above", arity: int = 4,
                 routes_per_pair: int = 1):
        if up_rule not in UP_ROUTE_RULES:
            raise ValueError(f"unknown up-route rule {up_rule!r}")
        self.levels = fat_tree_levels(nnodes, arity)
        self.up_rule, self.arity = up_rule, arity
        self.routes_per_pair = max(int(routes_per_pair), 1)

    def digits(self, p: int) -> list[int]:
        return [p // self.arity ** i % self.arity for i in range(self.levels)]

    def __call__(self, src: int, dst: int) -> list[Hop]:
        return self.one(src, dst, 0)

    def all(self, src: int, dst: int) -> list[list[Hop]]:
        """The pair's distinct alternative routes, route 0 first."""
        s, t = self.digits(src), self.digits(dst)
        top = max((i for i in range(self.levels) if s[i] != t[i]), default=0)
        count = min(self.routes_per_pair, self.arity if top else 1)
        return [self.one(src, dst, r) for r in range(count)]

    def gives_columns(self) -> bool:
        return True

    def columns(self, src: np.ndarray, dst: np.ndarray,
                alternative: np.ndarray | None = None) -> RouteColumns:
        """Route alternative[i] (route 0 where None) of every message (`one`)."""
        return route_columns.fat_tree_columns(self.levels, self.arity, self.up_port, src, dst, alternative)

    def route_counts(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """len(all(src[i], dst[i])) of every pair: routes_per_pair, at most the arity, and one
        for a pair under one leaf switch."""
        top = route_columns.fat_tree_top(self.levels, self.arity, src, dst)
        return np.where(top > 0, self.most_routes(), 1).astype(np.int64)  # as `all`

    def most_routes(self) -> int:
        """routes_per_pair, at most the arity (a tree of one level, whose pairs all have one
        route, still counts as offering several: the adapter's model, as it was)."""
        return min(self.routes_per_pair, self.arity)

    def up_port(self, s: Any, t: Any, level: int) -> Any:
        """The up-port route 0 takes from a level-`level` switch (of digits as lists of ints,
        or as arrays of digit rows: s[i] every source's digit i)."""
        if self.up_rule == "destination digit above":
            return t[level + 1]
        if self.up_rule == "source digit":
            return s[level]
        if self.up_rule == "destination digit":
            return t[level]
        return (s[level] + t[level]) % self.arity

    def one(self, src: int, dst: int, alternative: int) -> list[Hop]:
        arity = self.arity
        s, t = self.digits(src), self.digits(dst)
        top = max((i for i in range(self.levels) if s[i] != t[i]), default=0)
        label = s[1:]
        at: Any = ("switch", 0, tuple(label))
        hops: list[Hop] = [(("node", src), at)]
        for level in range(top):  # up from `level` to `level + 1`
            label[level] = (self.up_port(s, t, level) + alternative) % arity
            nxt = ("switch", level + 1, tuple(label))
            hops.append((at, nxt))
            at = nxt
        for level in range(top, 0, -1):  # down from `level` to `level - 1`
            label[level - 1] = t[level]
            nxt = ("switch", level - 1, tuple(label))
            hops.append((at, nxt))
            at = nxt
        hops.append((at, ("node", dst)))
        return hops
