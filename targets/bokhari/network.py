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
    ColumnOp,
    FailedLink,
    Hold,
    Layout,
    Network,
    NoRoute,
    PairRoundRobin,
    ProgramColumns,
    Release,
    TransferProgram,
    play,
)
from phalanx.targets.bokhari import route_columns
from phalanx.targets.bokhari.params import BokhariParams, ParagonParams, barrier_us
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

    def __init__(self, engine: Engine, params: BokhariParams, nnodes: int, route: Routing,
                 link_MBps: float | None = None):
        self.engine, self.params, self.hops = engine, params, route
        self.routing = route
        self.packet_bytes = float(params.packet_bytes)
        self.shared = bool(params.shared_engine)
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
        self.next_route: dict[tuple[int, int], int] = {}  # the adapter's round-robin counters (take_turn)
        # A worm moves at the slower of the end-to-end rate (Table 1 tau) and the link rate.
        link_us_per_byte = 1.0 / link_MBps if link_MBps else 0.0
        self.wire_s_per_byte = max(params.us_per_byte, link_us_per_byte) * 1e-6
        self.startup_s = params.startup_us * 1e-6
        self.startup = Hold(self.startup_s)
        # the programs' ops, one of each: acquire and release per resource, wire hold per size
        self.acquires: dict[Resource, Acquire] = {}
        self.releases: dict[Resource, Release] = {}
        self.wire_holds: dict[int, Hold] = {}

    def path(self, src: int, dst: int) -> list[Resource]:
        """The pair's first route (the only one where the route function has no alternatives)."""
        key = (src, dst)
        if key not in self.routes:
            self.routes[key] = [self._link(hop) for hop in self.hops(src, dst)]
        return self.routes[key]

    def paths(self, src: int, dst: int) -> list[list[Resource]]:
        """Every alternative route of the pair, the first route first."""
        if self.routing.most_routes() == 1:
            return [self.path(src, dst)]
        key = (src, dst)
        if key not in self.route_sets:
            self.route_sets[key] = [[self._link(hop) for hop in hops]
                                    for hops in self.routing.all(src, dst)]
        return self.route_sets[key]

    def route(self, src: int, dst: int) -> list[str]:
        """Names of the link resources of the pair's first route, in order (report hook); a
        multi-route adapter also spreads messages over `paths(src, dst)`."""
        return [link.name for link in self.path(src, dst)]

    def take_turn(self, t: Transfer) -> int:
        """The pair's round-robin counter as t's process starts, then advanced past t's packets
        (`packet_steps`; modulo the pair's routes). The pair's messages take the sender's engine
        first, in the order they start (FIFO), so this is the count the adapter reaches them at."""
        routes = len(self.paths(t.src, t.dst))
        if routes == 1:
            return 0
        turn = self.next_route.get((t.src, t.dst), 0)
        size = int(self.packet_bytes)  # as packet_steps, for one message
        self.next_route[(t.src, t.dst)] = (turn + (max(1, -(-t.nbytes // size)) if size > 0 else 1)) % routes
        return turn

    def packet_steps(self, nbytes: np.ndarray) -> np.ndarray:
        """How far each message advances its pair's counter: its packets, one for a message of
        at most one packet (or none: an empty message; or where packets are not modelled)."""
        size = int(self.packet_bytes)
        if size <= 0:
            return np.ones(len(nbytes), np.int64)
        return np.maximum(1, -(-nbytes // size)).astype(np.int64)

    def packet_pieces(self, nbytes: int, turn: int, routes: int) -> list[tuple[int, int]]:
        """(route, bytes) per route a message's packets take, in the order the adapter sends
        them: packet k of the message on route (turn + k) mod `routes`."""
        if routes == 1 or self.packet_bytes <= 0 or nbytes <= self.packet_bytes:
            return [(turn % routes, nbytes)]
        npackets = -(-nbytes // int(self.packet_bytes))
        sizes = [0] * routes
        for k in range(npackets):
            last = k == npackets - 1
            size = nbytes - k * int(self.packet_bytes) if last else int(self.packet_bytes)
            sizes[(turn + k) % routes] += size
        order = [(turn + i) % routes for i in range(routes)]
        return [(r, sizes[r]) for r in order if sizes[r] > 0]

    def pieces(self, t: Transfer) -> list[tuple[list[Resource], int]]:
        """(route, bytes) per route t's packets take, its turn taken (`take_turn`)."""
        routes = self.paths(t.src, t.dst)
        return [(routes[r], size) for r, size in self.packet_pieces(t.nbytes, self.take_turn(t), len(routes))]

    def _link(self, hop: Hop) -> Resource:
        if hop not in self.links:
            self.links[hop] = Resource(self.engine, link_name(hop))
        return self.links[hop]

    def program(self, t: Transfer, turn: int) -> TransferProgram:
        """t's transfer as a program, its packets from route `turn` of the pair's on
        (`packet_pieces`), each piece holding its route for its wire time.

        With one engine per node for both directions the sender's engine runs the start-up,
        then both end engines (lower node first) and the route carry the wire time. The
        sender lets its engine go between the two (an incoming message may take it): two nodes
        sending to each other would otherwise each hold their own engine and wait for the
        other's. Taking end engines in node order before any link keeps the waits acyclic. A
        message spread over several routes takes and lets go of the end engines and the route
        once per piece, so nothing is held between pieces. With separate engines the sender's
        send engine is held throughout, and each piece holds its route and the receiver's
        receive engine. (Made message by message from one op per resource: a pair's ops kept
        took 800 MB more on sp2:512.)
        """
        acquire, release = self._acquire, self._release
        routes = self.paths(t.src, t.dst)
        if self.shared:
            sender = self.send_ports[t.src]
            ends = [self.send_ports[n] for n in sorted({t.src, t.dst})]
            ops = [acquire(sender), self.startup, release(sender)]
            for route, nbytes in self.packet_pieces(t.nbytes, turn, len(routes)):
                path = routes[route]
                ops += [*map(acquire, ends), *map(acquire, path), self._wire(nbytes),
                        *map(release, reversed(path)), *map(release, reversed(ends))]
            return tuple(ops)
        send, recv = self.send_ports[t.src], self.recv_ports[t.dst]
        ops = [acquire(send), self.startup]
        for route, nbytes in self.packet_pieces(t.nbytes, turn, len(routes)):
            path = routes[route]
            ops += [*map(acquire, path), acquire(recv), self._wire(nbytes), release(recv),
                    *map(release, reversed(path))]
        ops.append(release(send))
        return tuple(ops)

    def _acquire(self, resource: Resource) -> Acquire:
        op = self.acquires.get(resource)
        if op is None:
            op = self.acquires[resource] = Acquire(resource)
        return op

    def _release(self, resource: Resource) -> Release:
        op = self.releases.get(resource)
        if op is None:
            op = self.releases[resource] = Release(resource)
        return op

    def _wire(self, nbytes: int) -> Hold:
        wire = self.wire_holds.get(nbytes)
        if wire is None:
            wire = self.wire_holds[nbytes] = Hold(self.wire_s_per_byte * nbytes)
        return wire

    def transfer_program(self, t: Transfer) -> TransferProgram | None:
        """The transfer as a program where the pair has one route; None where the adapter
        spreads packets over several routes round robin (the program depends on the pair's
        counter: `round_robin`)."""
        if len(self.paths(t.src, t.dst)) > 1:
            return None
        return self.program(t, 0)

    def round_robin(self) -> PairRoundRobin | None:
        """The adapter's counters where the routing offers pairs several routes (the default SP2)."""
        if self.routing.most_routes() == 1:
            return None
        return PairRoundRobin(self.next_route, self.routing.route_counts, self.packet_steps,
                              self._program_columns)

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """Where the routing gives its routes as columns and a program depends on the message
        alone (no round robin)."""
        return self.routing.gives_columns() and self.round_robin() is None

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns | None:
        """transfer_program of many messages at once, from the routes as columns; None where
        the routing gives none or pairs have several routes (their programs depend on the
        round robin's counters: `round_robin`)."""
        if not self.programs_as_columns(message):
            return None
        return self._program_columns(src, dst, nbytes, np.zeros(len(src), np.int64))

    def _program_columns(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                         turn: np.ndarray) -> ProgramColumns:
        """`program` of many messages at once (message i from route turn[i] of its pair's
        on), from the routes as columns. The links of every route of each pair are made in
        the order pairs first come, a pair's routes in order, as `paths` makes them message
        by message."""
        nroutes = self.routing.route_counts(src, dst)
        links = self._pair_links(src, dst, nroutes)
        owner, route, piece_bytes, offsets = self._piece_columns(nbytes, turn, nroutes)
        routes = self.routing.columns(src[owner], dst[owner], route)
        assert routes is not None, "programs_as_columns and round_robin need the routes as columns"
        ends = tuple(self.send_ports) if self.shared else (*self.send_ports, *self.recv_ports)
        link_index = len(ends) + links[1][np.searchsorted(links[0], routes.keys)]
        resources = (*ends, *links[2])
        each = ProgramColumns.each

        def once(kind: type[ColumnOp], values: np.ndarray, where: np.ndarray) -> ProgramColumns:
            """One op per message (values[i]: message i's) on its piece `where` marks, none on
            the others: the message's head on its first piece, its tail on its last."""
            ops = np.zeros(len(where) + 1, np.int64)
            np.cumsum(where, out=ops[1:])
            return ProgramColumns.run(kind, ops, values)

        first, last = np.zeros(len(owner), bool), np.zeros(len(owner), bool)
        first[offsets[:-1]], last[offsets[1:] - 1] = True, True
        wire = each(Hold, self.wire_s_per_byte * piece_bytes)
        startup = once(Hold, np.full(len(src), self.startup_s), first)
        if self.shared:  # as `program`: the sender's start-up, each piece's ends lower first
            low, high = np.minimum(src[owner], dst[owner]), np.maximum(src[owner], dst[owner])
            before = [once(Acquire, src, first), startup, once(Release, src, first), each(Acquire, low),
                      each(Acquire, high)]
            middle, after = [wire], [each(Release, high), each(Release, low)]
        else:
            recv = len(self.send_ports) + dst[owner]
            before = [once(Acquire, src, first), startup]
            middle, after = [each(Acquire, recv), wire, each(Release, recv)], [once(Release, src, last)]
        pieces = route_columns.route_programs(routes, link_index, before, middle, after, resources)
        # a message's pieces one after another (its head on the first, its tail on the last):
        # the pieces' ops, offsets at the messages' first pieces
        return ProgramColumns(pieces.offsets[offsets], pieces.kinds, pieces.resource, pieces.hold_s,
                              resources)

    def _pair_links(self, src: np.ndarray, dst: np.ndarray,
                    nroutes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Resource]]:
        """The links of every route of the messages' pairs, made in the order `paths` makes
        them (pairs as they first come, their routes in order, hops in path order): their
        keys sorted, each key's index in the links, the links."""
        pair = src * (int(max(src.max(initial=0), dst.max(initial=0))) + 1) + dst
        first = np.sort(np.unique(pair, return_index=True)[1])
        count = nroutes[first]
        which = np.repeat(np.arange(len(first)), count)
        alternative = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
        every = self.routing.columns(src[first][which], dst[first][which], alternative)
        assert every is not None
        keys, first_at = np.unique(every.keys, return_index=True)
        order = np.argsort(first_at, kind="stable")
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        return keys, rank, [self._link(every.hop(int(key))) for key in keys[order].tolist()]

    def _piece_columns(self, nbytes: np.ndarray, turn: np.ndarray,
                       nroutes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`packet_pieces` of many messages at once: per piece its message, its route and its
        bytes, a message's pieces in order, and where each message's pieces start (one more
        than messages). Piece i of a message of n packets takes route (turn + i) mod R and
        packets i, i + R, ... below n, the last one shorter."""
        size = max(int(self.packet_bytes), 1)
        one = (nroutes == 1) | (self.packet_bytes <= 0) | (nbytes <= self.packet_bytes)
        npackets = np.where(one, 1, -(-nbytes // size))
        npieces = np.minimum(npackets, nroutes)
        offsets = np.zeros(len(nbytes) + 1, np.int64)
        np.cumsum(npieces, out=offsets[1:])
        owner = np.repeat(np.arange(len(nbytes)), npieces)
        i = np.arange(offsets[-1]) - offsets[owner]
        routes, packets, whole = nroutes[owner], npackets[owner], nbytes[owner]
        count = (packets - i + routes - 1) // routes
        short = np.where((packets - 1) % routes == i, packets * size - whole, 0)
        piece_bytes = np.where(one[owner], whole, count * size - short)
        return owner, (turn[owner] + i) % routes, piece_bytes, offsets

    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        yield from play(self.engine, self.program(t, self.take_turn(t)))

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

    def __init__(self, engine: Engine, params: ParagonParams, rows: int, cols: int):
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
