"""`paragon:RxC`, `sp2:N`, `cs2:N` and `hypercube:d`: Bokhari's machines as Phalanx targets.

All four lower an all-to-all with the hypercube exchange family (compiler/hypercube.py):
`standard`, `direct` and `multiphase:<partition>`; every other kind with the algorithm library
(compiler/library: trees, rings, pipelines; `dim-ordered` on the Paragon's mesh; on the
hypercube `binomial` is the e-cube spanning binomial tree), timed by its port model: one
start-up at a time per node and, on the Paragon, SP2 and CS-2, one engine for both
directions (Sec. 3.1). The cost model is Bokhari's
contention-free hypercube theory with the machine's Table 1 figures (seed
003_f18cb429ce0a4177.txt Sec. 2.3, 4); it knows that only equipartitions can be optimal,
so `auto` picks among those, per message size. The simulator runs the schedule on the
machine's real network (network.py), so the report shows prediction and contention side
by side.

The Paragon's receive-buffer limit (Sec. 5, Fig. 12): the bytes a node must post receives
for between two barriers are known when the schedule is built. Where an exchange's blocks
do not fit whole (`fits`), `generate` cuts every block into the fewest pieces that do
(hypercube.pieces_to_fit) and runs the exchange once per piece, each round behind a barrier,
as a pipelined statement would; the cost model times the rounds alike. `generate` still
proves every schedule within the limit, and only where not even one-byte pieces fit is an
algorithm refused (a usage error naming the node, the bytes and the limit; `auto` skips it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from phalanx.compiler import hypercube
from phalanx.compiler.algorithms import direct_partner
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bounds import ONE_DESTINATION_KINDS, fixed_routes_bound_s
from phalanx.compiler.library.lockstep import lockstep_s
from phalanx.compiler.library.members import GROUP, ROOTED
from phalanx.compiler.library.offer import (
    PORT_MODEL_GAP,
    Library,
    bisection_cuts,
    cube_cuts,
    cube_links,
    entry_cuts,
    grid_links,
)
from phalanx.compiler.library.registry import Adapter, Machine, PortModel
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, parse_count, with_overrides
from phalanx.grammar.diagnostics import PhalanxError, UsageError, usage_error
from phalanx.runtime.backends.platforms import Platform, only_target_routing, routed_platform
from phalanx.runtime.engine import Engine
from phalanx.targets.bokhari import buffers, network, routing
from phalanx.targets.bokhari.params import (
    CS2,
    SP2,
    BokhariParams,
    HypercubeParams,
    MultistageParams,
    ParagonParams,
    barrier_us,
)


class BokhariTarget(Target):
    """A machine of seed 003: its parameters, a routing function and the exchange family."""

    def __init__(self, name: str, nnodes: int, params: BokhariParams, size_text: str,
                 route: routing.Routing,
                 mesh: tuple[int, int] | None = None, cube: bool = False):
        self.name, self.nnodes, self.params = name, nnodes, params
        self.size_text, self.route, self.mesh, self.cube = size_text, route, mesh, cube
        link_MBps = params.link_MBps
        # A worm moves at the slower of Table 1's rate and the link rate and holds every link of
        # its route for its whole wire time (network.RoutedNetwork), so a link carries at most one
        # byte per worm byte time: the rate of the cut and link-load bounds (docs/bounds.md).
        worm_s_per_byte = max(params.us_per_byte, 1 / link_MBps if link_MBps else 0.0) * 1e-6
        port = PortModel(params.startup_us * 1e-6, worm_s_per_byte,
                         1 / (params.arith_MFLOPS * 1e6),
                         shared_engine=bool(params.shared_engine),
                         copy_s_per_byte=params.copy_us_per_byte * 1e-6,
                         barrier_s=barrier_us(params, nnodes) * 1e-6,
                         link_s_per_byte=worm_s_per_byte)
        d = hypercube.log2_exact(nnodes) if cube else None
        cuts = bisection_cuts(*mesh, wrap=False) if mesh else cube_cuts(d) if d is not None else ()
        if isinstance(route, routing.FatTreeRoutes) and route.routes_per_pair == 1:
            cuts = entry_cuts(nnodes, route)  # the CS-2: one route per pair (docs/bounds.md)
        links = grid_links(*mesh, wrap=False) if mesh else cube_links(d) if d is not None else None
        adapter = None
        if isinstance(route, routing.FatTreeRoutes) and route.routes_per_pair > 1:
            # the SP2's adapter: packets round robin over a pair's routes (network.RoutedNetwork)
            adapter = Adapter(route.all, int(params.packet_bytes))
        self.library = Library.of(Machine(nnodes, port, mesh, cube, route, adapter), cuts,
                                  links=links, exchange_family=True)

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.size_text}"

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        d = hypercube.log2_exact(self.nnodes)
        if kind == Kind.ALLTOALL and d is not None:
            return hypercube.family(d) + self.library_exchanges(kind)
        return self.library.names(kind)

    def library_exchanges(self, kind: Kind) -> tuple[str, ...]:
        """The library's all-to-alls beside the exchange family (Bruck's), `direct` aside."""
        return tuple(a for a in self.library.names(kind) if a != "direct")

    def _family_kind(self, coll: Collective) -> bool:
        return coll.kind is Kind.ALLTOALL and hypercube.log2_exact(self.nnodes) is not None

    def _by_family(self, coll: Collective, algorithm: str) -> bool:
        """`algorithm` lowers `coll` as one of the exchange family (not the library's)."""
        return self._family_kind(coll) and algorithm not in self.library_exchanges(coll.kind)

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        if not self._by_family(coll, algorithm):
            return self.library.unmet(coll, algorithm)
        d = hypercube.log2_exact(coll.nprocs)
        if d is None:
            return (None if algorithm == "direct" else f"the hypercube exchange family needs 2^d "
                    f"processors, the collective has {coll.nprocs}")
        try:
            hypercube.parse_partition(algorithm, d)
        except PhalanxError:
            return f"its partition is not one of d = {d} for the collective's {coll.nprocs} processors"
        if self.pieces(coll, algorithm) is None:
            return ("a node would post receives for more bytes at once than its receive-buffer "
                    f"limit of {int(self.params.recv_buffer_bytes)} bytes even with one-byte "
                    "pieces (seed 003 Sec. 5)")
        return None

    def candidates(self, coll: Collective) -> list[tuple[str, str | None]]:
        """An all-to-all on 2^d processors of a larger machine: the exchange family of its d."""
        d = hypercube.log2_exact(coll.nprocs)
        if self._family_kind(coll) and d is not None and coll.nprocs != self.nnodes:
            return [(a, self.unmet(coll, a))
                    for a in hypercube.family(d) + self.library_exchanges(coll.kind)]
        return super().candidates(coll)

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        if (kind == Kind.ALLTOALL and hypercube.log2_exact(self.nnodes) is not None
                and algorithm not in self.library_exchanges(kind)):
            return {"standard": "Johnsson-Ho standard exchange: d steps of half the blocks, "
                                "with shuffles (seed 003 Sec. 2)",
                    "direct": "Bokhari's direct exchange: P - 1 XOR steps (seed 003 Sec. 2)"
                    }.get(algorithm, "Bokhari's multiphase exchange: one phase per part of "
                                     "the partition of d (seed 003 Sec. 2.3)")
        return self.library.describe(kind, algorithm)

    def cost(self, nprocs: int) -> hypercube.ExchangeCost:
        p = self.params
        return hypercube.ExchangeCost(p.startup_us, p.us_per_byte, p.copy_us_per_byte,
                                      barrier_us(p, nprocs))

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        if not self._by_family(coll, algorithm) or hypercube.log2_exact(coll.nprocs) is None:
            if self._by_family(coll, algorithm) and algorithm != "direct":
                raise usage_error(f"'{algorithm}' cannot lower this {coll.kind} on {coll.nprocs} "
                                  "processors", "the hypercube family needs an all-to-all on 2^d "
                                  "processors; use algorithm direct")
            return self.library_schedule(coll, algorithm)
        pieces = self.pieces(coll, algorithm)
        if pieces is None:
            raise usage_error(f"{algorithm} on {self.spec} cannot stay within the receive buffers: "
                              f"{self.unmet(coll, algorithm)}", self._fitting_hint(coll))
        schedule = hypercube.multiphase_schedule(coll, algorithm, pieces)
        self.check_receive_buffers(schedule)  # the proof that the pieces fit
        return schedule

    def library_schedule(self, coll: Collective, algorithm: str) -> Schedule:
        """The library's schedule; an all-to-all's (alltoallv's too) in rounds behind barriers where its whole
        phases can stay within the receive buffers so, else, for direct messages, in the
        fewest pieces whose rounds can (buffers.py), else as it is (`fits` then keeps `auto`
        from it)."""
        schedule = self.library.schedule(coll, algorithm, self.spec)
        limit = self.params.recv_buffer_bytes
        if not limit or coll.kind not in (Kind.ALLTOALL, Kind.ALLTOALLV):
            return schedule
        fitted = buffers.rounds_within(schedule, limit) or buffers.in_fewest_pieces(schedule, limit)
        return schedule if fitted is None else fitted

    def _fitting_hint(self, coll: Collective) -> str:
        """The members of the family that fit the receive buffers (in pieces), if any."""
        d = hypercube.log2_exact(coll.nprocs)
        fitting = [a for a in hypercube.family(d) if self.pieces(coll, a) is not None] if d else []
        if not fitting:
            return "raise recv_buffer_bytes in the target spec, or use fewer processors"
        return f"use {' or '.join(fitting[:2])}, which fit in pieces, or algorithm auto"

    def check_receive_buffers(self, schedule: Schedule) -> None:
        """Refuse a schedule that posts more receive bytes at once than a node can buffer.

        Receives are posted for everything a node gets between two barriers it takes part in.
        """
        limit = self.params.recv_buffer_bytes
        if not limit:
            return
        worst = buffers.posted_bytes(schedule)
        if max(worst) > limit:
            node = worst.index(max(worst))
            raise usage_error(
                f"{schedule.algorithm} on {self.spec} needs node {node} to post receives for "
                f"{worst[node]} bytes at once, more than its receive-buffer limit of "
                f"{int(limit)} bytes (seed 003 Sec. 5: 255 receives of 1728 bytes)",
                "use algorithm auto, which cuts blocks into pieces that fit")

    def pieces(self, coll: Collective, algorithm: str) -> int | None:
        """Into how many pieces `generate` cuts every block of an exchange of the family so that
        it stays within the receive buffers: 1 where it fits whole (or the machine has no limit,
        or the collective is not the family's), None where not even one-byte pieces fit."""
        limit = self.params.recv_buffer_bytes
        d = hypercube.log2_exact(coll.nprocs)
        if not limit or d is None or coll.kind is not Kind.ALLTOALL or not self._by_family(coll, algorithm):
            return 1
        parts = hypercube.parse_partition(algorithm, d)
        return hypercube.pieces_to_fit(parts, coll.block_bytes or 0, limit)

    def fits(self, coll: Collective, algorithm: str) -> bool:
        """Whether `algorithm` stays within the receive buffers with its blocks whole (Fig. 12:
        the largest block the seed's direct exchange ran with; cheap for uniform blocks)."""
        limit = self.params.recv_buffer_bytes
        d = hypercube.log2_exact(coll.nprocs)
        exchange = coll.kind is Kind.ALLTOALLV or (coll.kind is Kind.ALLTOALL and d is not None)
        if not limit or not exchange:
            return True
        if not self._by_family(coll, algorithm):  # the library's (Bruck's): its own schedule
            try:
                self.check_receive_buffers(self.library_schedule(coll, algorithm))
            except UsageError:
                return False
            return True
        parts = hypercube.parse_partition(algorithm, d)
        return max(hypercube.phase_receive_bytes(parts, coll.block_bytes or 0)) <= limit

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """Bokhari's contention-free hypercube time; for other shapes, the direct exchange."""
        d = hypercube.log2_exact(coll.nprocs)
        block = coll.block_bytes
        if coll.kind in ROOTED + GROUP or (algorithm != "direct"
                                           and not self._by_family(coll, algorithm)):
            return self.library.estimate_s(coll, algorithm, lambda: self.schedule_for(coll, algorithm))
        if self._family_kind(coll) and d is not None and block is not None:
            # In k pieces the exchange runs k times on blocks of block / k bytes (the time is
            # affine in the block, so this is the sum over pieces of sizes within a byte).
            parts = hypercube.parse_partition(algorithm, d)
            pieces = self.pieces(coll, algorithm) or 1
            return pieces * hypercube.multiphase_time_s(parts, block / pieces, self.cost(coll.nprocs))
        p, m = self.params, coll.network_matrix
        busiest = int(max(m.sum(axis=1).max(), m.sum(axis=0).max())) if m.size else 0
        return (direct_steps(m) * p.startup_us + p.us_per_byte * busiest) * 1e-6

    def closed_form_gap(self, coll: Collective, algorithm: str) -> str | None:
        """Bokhari's contention-free time follows the circuit-switched hypercube; on a mesh or
        a multistage network the routes of one phase share links, which it leaves out. The
        library's algorithms are timed by a port model without the network's links."""
        if coll.kind in ROOTED + GROUP or (algorithm != "direct"
                                           and not self._by_family(coll, algorithm)):
            return PORT_MODEL_GAP
        if self._family_kind(coll) and self.name != "hypercube":
            return (f"Bokhari's exchange time is the contention-free hypercube's; the {self.name} "
                    "network's routes of one phase share links")
        return None

    def choose(self, coll: Collective, algorithm: str = "auto", cost: str = "target") -> str:
        """`auto`: least predicted time among the feasible equipartitions (Sec. 2.3), where
        the closed form times them; among every feasible partition where the candidates are
        simulated (`--cost simulate`, or a network the closed form does not follow); and the
        library's all-to-alls (Bruck's, simulated: their port model leaves the links out). In groups,
        the base class checks or chooses per group, each group of its own d."""
        if coll.groups:
            return super().choose(coll, algorithm, cost)
        d = hypercube.log2_exact(coll.nprocs)
        if algorithm != "auto":
            if algorithm.startswith("multiphase:") and d is not None and self._family_kind(coll):
                return hypercube.algorithm_name(hypercube.parse_partition(algorithm, d))
            return super().choose(coll, algorithm, cost)
        if not self._family_kind(coll) or d is None:
            return super().choose(coll, algorithm, cost)
        by_formula = self.by_formula(coll, "direct", cost)
        names = [hypercube.algorithm_name(p) for p in hypercube.partitions(d)
                 if hypercube.is_equipartition(p) or not by_formula]
        feasible = [a for a in names if self.pieces(coll, a) is not None]
        feasible += [a for a in self.library_exchanges(coll.kind)
                     if self.unmet(coll, a) is None and self.fits(coll, a)]
        if not feasible:
            raise usage_error(f"no exchange fits the receive buffers of {self.spec} "
                              f"({int(self.params.recv_buffer_bytes)} bytes), even in one-byte "
                              "pieces", "raise recv_buffer_bytes in the target spec, or use "
                              "fewer processors")
        return min(feasible, key=lambda a: (self.predict(coll, a, cost), feasible.index(a)))

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """The library's bounds for every kind (bounds.py: start-up rounds and the last block,
        the busiest engine, both directions on one engine where the machine has one (Sec.
        3.1), and the Paragon mesh's bisection)."""
        return self.library.bound(coll)

    def fixed_routes_bound_s(self, coll: Collective) -> float | None:
        """On the mesh and the hypercube (one route per pair): each link's bytes from the routes
        as columns (route_columns.py), summed by link key in one pass."""
        if coll.kind not in ONE_DESTINATION_KINDS or (self.mesh is None and not self.cube):
            return None
        m = coll.network_matrix
        src, dst = np.nonzero(m)
        loads = self.link_loads(src, dst, m[src, dst], np.zeros(len(src), np.int64), 1)
        if loads is None:
            return None
        return fixed_routes_bound_s(self.library.machine.port, loads[0])

    def link_loads(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, phase: np.ndarray,
                   nphases: int) -> np.ndarray | None:
        """Bytes on each directed link in each phase (a row per phase, a column per link some
        message crosses) when message i of `nbytes[i]` bytes takes the pair's route in phase
        `phase[i]`: the routes as columns (route_columns.py), summed by link key in one pass;
        None where a pair has several routes (the SP2's adapter spreads its packets)."""
        routes = self.route.columns(src, dst) if self.route.most_routes() == 1 else None
        if routes is None:
            return None
        hops = np.diff(routes.offsets)
        _, link = np.unique(routes.keys, return_inverse=True)
        nlinks = int(link.max(initial=-1)) + 1
        where = np.repeat(phase, hops) * nlinks + link.reshape(-1)
        return np.bincount(where, np.repeat(nbytes, hops),
                           minlength=nphases * nlinks).reshape(nphases, nlinks)

    def contention_estimate_s(self, coll: Collective, algorithm: str) -> float | None:
        """Where the exchange family's closed form leaves out the network's links (the mesh, a
        one-route fat tree: closed_form_gap), its schedule's phases one after another, each as
        long as its busiest engine or link under the fixed routes (compiler/library/lockstep.py);
        None elsewhere (the closed form then stands in)."""
        if (coll.groups or not self._by_family(coll, algorithm)
                or self.closed_form_gap(coll, algorithm) is None or not self.route.gives_columns()
                or self.route.most_routes() > 1):
            return None
        memo = self.__dict__.setdefault("_contention_estimates", {})  # asked for time and source
        if (coll, algorithm) not in memo:
            memo[(coll, algorithm)] = lockstep_s(self.schedule_for(coll, algorithm),
                                                 self.library.machine.port, self.link_loads)
        return memo[(coll, algorithm)]

    def route_hops(self, src: int, dst: int) -> int:
        return len(self.route(src, dst))

    def busiest_link_s(self, matrix: Any) -> float:
        """The Paragon's mesh links under row-column routing at link_MBps (seed 000 Sec. 6);
        the other machines' links are not what limits a message (link_MBps)."""
        if self.link_MBps is None:
            return 0.0
        loads: dict[routing.Hop, int] = {}
        for src, dst in zip(*matrix.nonzero()):
            for hop in self.route(int(src), int(dst)):
                loads[hop] = loads.get(hop, 0) + int(matrix[src, dst])
        return max(loads.values(), default=0) / (self.link_MBps * 1e6)

    @property
    def link_MBps(self) -> float | None:
        """The mesh link rate (Paragon, seed 000 Sec. 6); None where only the end points'
        rate limits a message (the multistage networks and the hypercube)."""
        return self.params.link_MBps or None

    def simgrid_platform(self, pairs: list[tuple[int, int]], routing: str) -> Platform:
        only_target_routing(self.name, routing)
        node_Bps = 1e6 / self.params.us_per_byte if self.params.us_per_byte > 0 else 0.0
        link_Bps = self.link_MBps * 1e6 if self.link_MBps else node_Bps
        return routed_platform(self.nnodes, self.route, node_Bps, link_Bps,
                               self.params.startup_us * 1e-6, self.build_network(Engine()), pairs)

    def build_network(self, engine: Engine) -> network.RoutedNetwork:
        if self.mesh is not None:
            return network.MeshNetwork(engine, self.params, *self.mesh)
        return network.RoutedNetwork(engine, self.params, self.nnodes, self.route, self.link_MBps)


def direct_steps(m: np.ndarray) -> int:
    """Steps of the direct exchange that carry a message (the library drops empty ones): all
    P - 1 for an all-to-all, 7 of 63 for eight 8-node groups on 64 nodes."""
    n = len(m)
    ranks = np.arange(n)
    return sum(bool(m[ranks, direct_partner(ranks, s, n)].any()) for s in range(1, n))


def parse_mesh(positional: str | None) -> tuple[int, int]:
    """`8x8` -> (rows, cols); the Paragon submeshes of Sec. 5 are 4x8, 8x8 and 16x16."""
    text = positional or "8x8"
    rows, x, cols = text.lower().partition("x")
    if not (x and rows.isdigit() and cols.isdigit() and int(rows) > 0 and int(cols) > 0):
        raise usage_error(f"bad mesh shape '{text}' for target 'paragon'",
                          "write ROWSxCOLS, e.g. paragon:8x8 (the machine is 32x16)")
    return int(rows), int(cols)


def make_paragon(positional: str | None, overrides: dict[str, str]) -> BokhariTarget:
    rows, cols = parse_mesh(positional)
    params = with_overrides(ParagonParams(), overrides, "paragon")
    return BokhariTarget("paragon", rows * cols, params, f"{rows}x{cols}",
                         routing.MeshRoute(cols), (rows, cols))


def _multistage(name: str, defaults: MultistageParams):
    def make(positional: str | None, overrides: dict[str, str]) -> BokhariTarget:
        nnodes = parse_count(name, positional, default=64)
        params = with_overrides(defaults, overrides, name)
        rules = routing.UP_ROUTE_RULES
        if params.up_route not in range(len(rules)):
            raise usage_error(f"parameter up_route={params.up_route:g} of target '{name}' is not "
                              f"one of the up-route rules 0..{len(rules) - 1}",
                              "; ".join(f"{i} = {rule}" for i, rule in enumerate(rules)))
        route = routing.fat_tree_route(nnodes, rules[int(params.up_route)],
                                       routes_per_pair=int(params.routes_per_pair))
        return BokhariTarget(name, nnodes, params, str(nnodes), route)
    return make


def make_hypercube(positional: str | None, overrides: dict[str, str]) -> BokhariTarget:
    if positional is not None and not positional.isdigit():
        raise usage_error(f"bad dimension '{positional}' for target 'hypercube'",
                          "write the dimension d (2^d nodes), e.g. hypercube:6")
    d = int(positional) if positional is not None else 6
    if d > 12:
        raise usage_error(f"hypercube dimension {d} is too large to simulate",
                          "use a dimension of at most 12 (4096 nodes)")
    params = with_overrides(HypercubeParams(), overrides, "hypercube")
    return BokhariTarget("hypercube", 1 << d, params, str(d), routing.ECubeRoute(), cube=True)


# The targets this module defines; phalanx.targets.register_targets() registers them.
ENTRIES = (
    TargetEntry("paragon", "Intel Paragon submesh, row-column wormhole routing, "
                "Table 1 of Bokhari (seed 003)", make_paragon, "paragon:8x8"),
    TargetEntry("sp2", "IBM SP2, multistage network of 4x4 crossbars (seed 003)",
                _multistage("sp2", SP2), "sp2:64"),
    TargetEntry("cs2", "Meiko CS-2, multistage network of 4x4 crossbars (seed 003)",
                _multistage("cs2", CS2), "cs2:64"),
    TargetEntry("hypercube", "circuit-switched e-cube hypercube of 2^d nodes, "
                "parameters overridable (Bokhari's theory)", make_hypercube,
                "hypercube:6,startup_us=75"),
)
