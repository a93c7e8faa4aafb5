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

import numpy as np

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
    ProgramColumns,
    Release,
    TransferProgram,
    play,
)
from phalanx.targets.bokhari import route_columns
from phalanx.targets.bokhari.params import barrier_us
from phalanx.targets.bokhari.route_columns import Hop
from phalanx.targets.bokhari.routing import MeshRoute, Routing


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

    def __init__(self, engine: Engine, params: Any, nnodes: int, route: Routing,
                 link_MBps: float | None = None):
        self.engine, self.params, self.hops = engine, params, route
        self.routing = route
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

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """Where the routing gives its routes as columns."""
        return self.routing.gives_columns()

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns | None:
        """transfer_program of many messages at once, from the routes as columns; None where
        the routing gives none (pairs with several routes). The route's links are made in the
        order messages first take them, as transfer_program message by message makes them."""
        routes = self.routing.columns(src, dst)
        if routes is None:
            return None
        keys, first_at, which = np.unique(routes.keys, return_index=True, return_inverse=True)
        order = np.argsort(first_at, kind="stable")
        links = [self._link(routes.hop(int(key))) for key in keys[order].tolist()]
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        ends = tuple(self.send_ports) if self.shared else (*self.send_ports, *self.recv_ports)
        link_index = len(ends) + rank[which.reshape(-1)]
        each = ProgramColumns.each
        startup = each(Hold, np.full(len(src), self.startup_s))
        wire = each(Hold, self.wire_s_per_byte * nbytes)
        if self.shared:  # as _program_parts: the sender's start-up, both ends lower first
            low, high = np.minimum(src, dst), np.maximum(src, dst)
            head = [each(Acquire, src), startup, each(Release, src), each(Acquire, low), each(Acquire, high)]
            middle, tail = [wire], [each(Release, high), each(Release, low)]
        else:
            recv = len(self.send_ports) + dst
            head = [each(Acquire, src), startup]
            middle, tail = [each(Acquire, recv), wire, each(Release, recv)], [each(Release, src)]
        return route_columns.route_programs(routes, link_index, head, middle, tail, (*ends, *links))

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
        super().__init__(engine, params, rows * cols, MeshRoute(cols), params.link_MBps)
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

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """As RoutedNetwork's, but message by message while routes avoid failed links."""
        return self.avoiding is None and super().programs_as_columns(message)

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns | None:
        """As RoutedNetwork's, but message by message while routes avoid failed links."""
        if self.avoiding is not None:
            return None
        return super().transfer_programs(src, dst, nbytes, message)

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
