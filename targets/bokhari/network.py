"""Network models of the Paragon mesh, the SP2 / CS-2 multistage switch and the hypercube.

One model for all three, differing only in routing (the simulator, runtime resources):
a message from s to d holds s's communication engine for the start-up lambda, then claims
every directed link of its deterministic route in path order plus d's engine, and holds
them all for its wire time (wormhole / circuit switching: the worm occupies its whole path
until the tail has passed). Two messages that share a link, a switch port or an end point
therefore serialise their wire times: edge contention (seed 003_f18cb429ce0a4177.txt
Fig. 7) and switch contention (Sec. 3.2) come out of the resources, not out of a factor.
Routes claim links in a fixed global order (row then column; e-cube bits upward; fat tree
up then down), so hold-and-wait cannot close a cycle.

Engines: the Paragon, SP2 and CS-2 have one communication processor per node (003
Abstract: "dedicated communication processors"; Sec. 3.1: one of the Paragon node's two
i860s), which both sends and receives, so a node's outgoing and incoming wire times
serialise (`shared_engine`). The theory's hypercube sends and receives at once (separate
send and receive engines). A lone message takes lambda + tau m either way (Table 1).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from phalanx.compiler.schedule import Transfer
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.engine import Engine, Event, Resource
from phalanx.runtime.network import (
    DIRECTIONS,
    Acquire,
    FailedLink,
    Hold,
    Layout,
    Network,
    NoRoute,
    Release,
    TransferProgram,
    play,
)
from phalanx.targets.bokhari.params import barrier_us

Hop = tuple[Any, Any]  # a directed link between two routing points


def mesh_route(cols: int) -> Callable[[int, int], list[Hop]]:
    """Row-column routing on a mesh without wraparound (003 Sec. 3.1): along the row first."""

    def route(src: int, dst: int) -> list[Hop]:
        (r, c), (r2, c2) = divmod(src, cols), divmod(dst, cols)
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

    return route


def ecube_route(src: int, dst: int) -> list[Hop]:
    """E-cube: fix the differing bits from the lowest up (003 Sec. 2: 0010->0011->0001->1001)."""
    hops, at, diff, bit = [], src, src ^ dst, 0
    while diff >> bit:
        if diff >> bit & 1:
            hops.append((at, at ^ (1 << bit)))
            at ^= 1 << bit
        bit += 1
    return hops


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


class FatTreeRoutes:
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

    def up_port(self, s: list[int], t: list[int], level: int) -> int:
        """The up-port route 0 takes from a level-`level` switch."""
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


class RoutedNetwork(Network):
    """Send and receive engines per node plus one Resource per directed link of a route.

    Where the route function also offers alternatives (`route.all(src, dst)`, as
    FatTreeRoutes does with `routes_per_pair` > 1), the node's adapter spreads each
    message's packets (`params.packet_bytes` each, the last one shorter) over the pair's
    routes in turn, round robin per source-destination pair, continuing from where the
    pair's previous message stopped. The model groups a message's packets by route: the
    piece on each route holds that route (and both end engines) for tau times its bytes,
    the pieces one after another, so a lone message still takes lambda + tau m and the
    end engines still carry every byte, but messages that share a link on one route can
    use the others. With one route (or one packet) a message is one piece, as before.
    """

    def __init__(self, engine: Engine, params: Any, nnodes: int,
                 route: Callable[[int, int], list[Hop]], link_MBps: float | None = None):
        self.engine, self.params, self.hops = engine, params, route
        self.alternatives: Callable[[int, int], list[list[Hop]]] | None = getattr(route, "all", None)
        self.packet_bytes = float(getattr(params, "packet_bytes", 0.0) or 0.0)
        self.shared = bool(getattr(params, "shared_engine", 0))
        if self.shared:
            self.send_ports = [Resource(engine, f"node {i} communication processor")
                               for i in range(nnodes)]
            self.recv_ports = self.send_ports
        else:
            self.send_ports = [Resource(engine, f"node {i} send engine") for i in range(nnodes)]
            self.recv_ports = [Resource(engine, f"node {i} receive engine") for i in range(nnodes)]
        self.links: dict[Hop, Resource] = {}
        self.routes: dict[tuple[int, int], list[Resource]] = {}
        self.route_sets: dict[tuple[int, int], list[list[Resource]]] = {}
        self.next_route: dict[tuple[int, int], int] = {}  # the adapter's round-robin pointer
        # A worm moves at the slower of the end-to-end rate (Table 1 tau) and the link rate.
        link_us_per_byte = 1.0 / link_MBps if link_MBps else 0.0
        self.wire_s_per_byte = max(params.us_per_byte, link_us_per_byte) * 1e-6
        self.startup_s = params.startup_us * 1e-6
        self.startup = Hold(self.startup_s)
        # transfer_program's parts per pair (None: several routes) and wire holds per size
        self.program_parts: dict[tuple[int, int], tuple[TransferProgram, TransferProgram] | None] = {}
        self.wire_holds: dict[int, Hold] = {}

    def path(self, src: int, dst: int) -> list[Resource]:
        """The pair's first route (the only one where the route function has no alternatives)."""
        key = (src, dst)
        if key not in self.routes:
            self.routes[key] = [self._link(hop) for hop in self.hops(src, dst)]
        return self.routes[key]

    def paths(self, src: int, dst: int) -> list[list[Resource]]:
        """Every alternative route of the pair, the first route first."""
        if self.alternatives is None:
            return [self.path(src, dst)]
        key = (src, dst)
        if key not in self.route_sets:
            self.route_sets[key] = [[self._link(hop) for hop in hops]
                                    for hops in self.alternatives(src, dst)]
        return self.route_sets[key]

    def route(self, src: int, dst: int) -> list[str]:
        """Names of the link resources of the pair's first route, in order (report hook); a
        multi-route adapter also spreads messages over `paths(src, dst)`."""
        return [link.name for link in self.path(src, dst)]

    def pieces(self, t: Transfer) -> list[tuple[list[Resource], int]]:
        """(route, bytes) per route a message's packets take, in the order the adapter
        sends them: packet k of the pair's stream on route k mod (number of routes)."""
        routes = self.paths(t.src, t.dst)
        if len(routes) == 1 or self.packet_bytes <= 0 or t.nbytes <= self.packet_bytes:
            start = self.next_route.get((t.src, t.dst), 0) % len(routes)
            self.next_route[(t.src, t.dst)] = start + 1
            return [(routes[start], t.nbytes)]
        npackets = -(-t.nbytes // int(self.packet_bytes))
        start = self.next_route.get((t.src, t.dst), 0)
        self.next_route[(t.src, t.dst)] = (start + npackets) % len(routes)
        sizes = [0] * len(routes)
        for k in range(npackets):
            last = k == npackets - 1
            size = t.nbytes - k * int(self.packet_bytes) if last else int(self.packet_bytes)
            sizes[(start + k) % len(routes)] += size
        order = [(start + i) % len(routes) for i in range(len(routes))]
        return [(routes[r], sizes[r]) for r in order if sizes[r] > 0]

    def _link(self, hop: Hop) -> Resource:
        if hop not in self.links:
            self.links[hop] = Resource(self.engine, link_name(hop))
        return self.links[hop]

    def transfer_program(self, t: Transfer) -> TransferProgram | None:
        """The transfer as a program where the pair has one route (`transfer` below, or with a
        shared engine `_shared_transfer`); None where the adapter spreads packets over several
        routes round robin (state carried from message to message)."""
        key = (t.src, t.dst)
        if key not in self.program_parts:
            self.program_parts[key] = self._program_parts(t.src, t.dst)
        parts = self.program_parts[key]
        if parts is None:
            return None
        wire = self.wire_holds.get(t.nbytes)
        if wire is None:
            wire = self.wire_holds[t.nbytes] = Hold(self.wire_s_per_byte * t.nbytes)
        return (*parts[0], wire, *parts[1])

    def _program_parts(self, src: int, dst: int) -> tuple[TransferProgram, TransferProgram] | None:
        """A pair's program before and after its wire time (made once per pair)."""
        routes = self.paths(src, dst)
        if len(routes) > 1:
            return None
        path = routes[0]
        take_links, free_links = [Acquire(link) for link in path], [Release(link) for link in reversed(path)]
        if self.shared:
            engines = self.send_ports
            ends = [engines[n] for n in sorted({src, dst})]
            return ((Acquire(engines[src]), self.startup, Release(engines[src]),
                     *[Acquire(e) for e in ends], *take_links),
                    (*free_links, *[Release(e) for e in reversed(ends)]))
        send, recv = self.send_ports[src], self.recv_ports[dst]
        return ((Acquire(send), self.startup, *take_links, Acquire(recv)),
                (Release(recv), *free_links, Release(send)))

    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        program = self.transfer_program(t)
        if program is not None:
            yield from play(self.engine, program)
            return
        if self.shared:
            yield from self._shared_transfer(t)
            return
        send, recv = self.send_ports[t.src], self.recv_ports[t.dst]
        yield send.request()
        yield self.engine.timeout(self.startup_s, "start-up")
        for path, nbytes in self.pieces(t):
            for link in path:
                yield link.request()
            yield recv.request()
            yield self.engine.timeout(self.wire_s_per_byte * nbytes, "wire")
            recv.release()
            for link in reversed(path):
                link.release()
        send.release()

    def _shared_transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        """One engine per node for both directions: the sender's engine runs the start-up,
        then both end engines (lower node first) and the route carry the wire time.

        The sender lets its engine go between the two (an incoming message may take it):
        two nodes sending to each other would otherwise each hold their own engine and
        wait for the other's. Taking end engines in node order before any link keeps the
        waits acyclic. A message spread over several routes takes and lets go of the end
        engines and the route once per piece, so nothing is held between pieces.
        """
        engines = self.send_ports
        yield engines[t.src].request()
        yield self.engine.timeout(self.startup_s, "start-up")
        engines[t.src].release()
        ends = [engines[n] for n in sorted({t.src, t.dst})]
        for path, nbytes in self.pieces(t):
            for res in ends:
                yield res.request()
            for link in path:
                yield link.request()
            yield self.engine.timeout(self.wire_s_per_byte * nbytes, "wire")
            for link in reversed(path):
                link.release()
            for res in reversed(ends):
                res.release()

    def copy_time_s(self, nbytes: int) -> float:
        return self.params.copy_us_per_byte * 1e-6 * nbytes

    def barrier_time_s(self, nnodes: int) -> float:
        return barrier_us(self.params, nnodes) * 1e-6

    def combine_time_s(self, operations: int) -> float:
        return operations / (self.params.arith_MFLOPS * 1e6)

    def resources(self) -> list[Resource]:
        ends = self.send_ports if self.shared else self.send_ports + self.recv_ports
        return ends + list(self.links.values())


def link_name(hop: Hop) -> str:
    """`link (0,1)->(0,2)`: no spaces inside coordinates, as the report's grid expects."""
    return f"link {hop[0]}->{hop[1]}".replace(", ", ",")


class MeshNetwork(RoutedNetwork):
    """The Paragon mesh: a RoutedNetwork whose every link is known, so reports can draw it."""

    def __init__(self, engine: Engine, params: Any, rows: int, cols: int):
        super().__init__(engine, params, rows * cols, mesh_route(cols), params.link_MBps)
        self.rows, self.cols = rows, cols
        self.avoiding: MeshDetour | None = None  # routes around failed links (--faults)
        for r in range(rows):  # create every link up front: idle ones belong in the heatmap too
            for c in range(cols):
                for r2, c2 in ((r, c + 1), (r + 1, c), (r, c - 1), (r - 1, c)):
                    if 0 <= r2 < rows and 0 <= c2 < cols:
                        self._link(((r, c), (r2, c2)))

    def layout(self) -> Layout:
        """Node r*cols+c at (c, r)."""
        positions = {r * self.cols + c: (float(c), float(r))
                     for r in range(self.rows) for c in range(self.cols)}
        links = {res.name: (a[0] * self.cols + a[1], b[0] * self.cols + b[1])
                 for (a, b), res in self.links.items()}
        return Layout(positions, links)

    def avoid_links(self, failed: tuple[FailedLink, ...], spec: str) -> None:
        """Row-column routing falls back to column-row when a failed link is on the way."""
        self.avoiding = MeshDetour(self.hops, self.rows, self.cols, failed, spec)
        self.hops = self.avoiding.route

    def check_route(self, t: Transfer) -> None:
        if self.avoiding is not None:
            self.avoiding.route(t.src, t.dst)

    def rerouted_pairs(self) -> int:
        return len(self.avoiding.rerouted) if self.avoiding is not None else 0


class MeshDetour:
    """Mesh routes that avoid failed links: row-column, else column-row."""

    def __init__(self, route: Callable[[int, int], list[Hop]], rows: int, cols: int,
                 failed: tuple[FailedLink, ...], spec: str):
        self.row_column, self.cols = route, cols
        self.rerouted: set[tuple[int, int]] = set()
        self.down: set[Hop] = set()
        for node, direction in failed:
            r, c = divmod(node, cols)
            dc, dr, _ = DIRECTIONS[direction]
            if node >= rows * cols or not (0 <= r + dr < rows and 0 <= c + dc < cols):
                raise usage_error(f"failed link {node}:{direction} is not a link of the {rows}x{cols} "
                                  f"mesh of {spec}", "name a node and a direction that has a neighbour")
            self.down.add(((r, c), (r + dr, c + dc)))

    def column_row(self, src: int, dst: int) -> list[Hop]:
        (r, c), (r2, c2) = divmod(src, self.cols), divmod(dst, self.cols)
        hops = []
        while r != r2:
            step = 1 if r2 > r else -1
            hops.append(((r, c), (r + step, c)))
            r += step
        while c != c2:
            step = 1 if c2 > c else -1
            hops.append(((r, c), (r, c + step)))
            c += step
        return hops

    def route(self, src: int, dst: int) -> list[Hop]:
        first = self.row_column(src, dst)
        for hops in (first, self.column_row(src, dst)):
            if not self.down.intersection(hops):
                if hops is not first:
                    self.rerouted.add((src, dst))
                return hops
        (a, b) = next(h for h in first if h in self.down)
        raise NoRoute.blocked(src, dst, f"link {a}->{b}".replace(", ", ","))
