"""`paragon:RxC`, `sp2:N`, `cs2:N` and `hypercube:d`: Bokhari's machines as Phalanx targets.

All four lower an all-to-all with the hypercube exchange family (compiler/hypercube.py):
`standard`, `direct` and `multiphase:<partition>`. The cost model is Bokhari's
contention-free hypercube theory with the machine's Table 1 figures (seed
003_f18cb429ce0a4177.txt Sec. 2.3, 4); it knows that only equipartitions can be optimal,
so `auto` picks among those, per message size. The simulator runs the schedule on the
machine's real network (network.py), so the report shows prediction and contention side
by side.

The Paragon's receive-buffer limit (Sec. 5, Fig. 12) is checked in `generate`: the bytes a
node must post receives for between two barriers are known when the schedule is built,
so an impossible schedule is refused at compile time with the node, the bytes and the
limit (a usage error: the algorithm choice is the user's), and `auto` skips it. A
run-time failure would only say the same thing later and less clearly.
"""

from __future__ import annotations

from typing import Any

from phalanx.compiler import hypercube
from phalanx.compiler.algorithms import direct_schedule
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, parse_count, with_overrides
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.backends.platforms import Platform, only_target_routing, routed_platform
from phalanx.runtime.engine import Engine
from phalanx.targets.bokhari import network
from phalanx.targets.bokhari.params import (
    CS2,
    SP2,
    HypercubeParams,
    MultistageParams,
    ParagonParams,
    barrier_us,
)

KINDS = ("alltoall", "sparse")


class BokhariTarget(Target):
    """A machine of seed 003: its parameters, a routing function and the exchange family."""

    def __init__(self, name: str, nnodes: int, params: Any, size_text: str,
                 route: network.Callable[[int, int], list[network.Hop]],
                 mesh: tuple[int, int] | None = None):
        self.name, self.nnodes, self.params = name, nnodes, params
        self.size_text, self.route, self.mesh = size_text, route, mesh

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.size_text}"

    def algorithms(self, kind: str) -> tuple[str, ...]:
        if kind not in KINDS:
            return ()
        d = hypercube.log2_exact(self.nnodes)
        return hypercube.family(d) if kind == "alltoall" and d is not None else ("direct",)

    def cost(self, nprocs: int) -> hypercube.ExchangeCost:
        p = self.params
        return hypercube.ExchangeCost(p.startup_us, p.us_per_byte, p.copy_us_per_byte,
                                      barrier_us(p, nprocs))

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        if coll.kind != "alltoall" or hypercube.log2_exact(coll.nprocs) is None:
            if algorithm != "direct":
                raise usage_error(f"'{algorithm}' cannot lower this {coll.kind} on {coll.nprocs} "
                                  "processors", "the hypercube family needs an all-to-all on 2^d "
                                  "processors; use algorithm direct")
            return direct_schedule(coll)
        schedule = hypercube.multiphase_schedule(coll, algorithm)
        self.check_receive_buffers(schedule)
        return schedule

    def check_receive_buffers(self, schedule: Schedule) -> None:
        """Refuse a schedule that posts more receive bytes at once than a node can buffer.

        Receives are posted for everything a node gets between two barriers.
        """
        limit = getattr(self.params, "recv_buffer_bytes", 0.0)
        if not limit:
            return
        windows, posted = [], [0] * schedule.nprocs
        for phase in schedule.phases:
            if phase.sync == "barrier":
                windows.append(posted)
                posted = [0] * schedule.nprocs
            for t in phase.recvs:
                if t.src != t.dst:
                    posted[t.dst] += t.nbytes
        worst = max(windows + [posted], key=max)
        if max(worst) > limit:
            node = worst.index(max(worst))
            raise usage_error(
                f"{schedule.algorithm} on {self.spec} needs node {node} to post receives for "
                f"{worst[node]} bytes at once, more than its receive-buffer limit of "
                f"{int(limit)} bytes (seed 003 Sec. 5: 255 receives of 1728 bytes)",
                "use a partition with smaller parts (e.g. multiphase:4,4 or standard), smaller "
                "messages, or algorithm auto")

    def fits(self, coll: Collective, algorithm: str) -> bool:
        """Whether `algorithm` stays within the receive buffers (cheap for uniform blocks)."""
        limit = getattr(self.params, "recv_buffer_bytes", 0.0)
        d = hypercube.log2_exact(coll.nprocs)
        if not limit or d is None or coll.kind != "alltoall":
            return True
        parts = hypercube.parse_partition(algorithm, d)
        return max(hypercube.phase_receive_bytes(parts, coll.block_bytes or 0)) <= limit

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """Bokhari's contention-free hypercube time; for other shapes, the direct exchange."""
        d = hypercube.log2_exact(coll.nprocs)
        block = coll.block_bytes
        if coll.kind == "alltoall" and d is not None and block is not None:
            parts = hypercube.parse_partition(algorithm, d)
            return hypercube.multiphase_time_s(parts, block, self.cost(coll.nprocs))
        p, m = self.params, coll.network_matrix
        busiest = int(max(m.sum(axis=1).max(), m.sum(axis=0).max())) if m.size else 0
        return ((coll.nprocs - 1) * p.startup_us + p.us_per_byte * busiest) * 1e-6

    def choose(self, coll: Collective, algorithm: str = "auto", cost: str = "target") -> str:
        """`auto`: least predicted time among the feasible equipartitions (Sec. 2.3)."""
        known = self.algorithms(coll.kind)
        d = hypercube.log2_exact(coll.nprocs)
        if algorithm != "auto":
            if algorithm.startswith("multiphase:") and d is not None and coll.kind == "alltoall":
                return hypercube.algorithm_name(hypercube.parse_partition(algorithm, d))
            return super().choose(coll, algorithm, cost)
        if coll.kind != "alltoall" or d is None:
            return "direct"
        names = [hypercube.algorithm_name(p) for p in hypercube.partitions(d)
                 if hypercube.is_equipartition(p)]
        feasible = [a for a in names if self.fits(coll, a)]
        if not feasible:
            raise usage_error(f"no exchange fits the receive buffers of {self.spec} for "
                              f"{coll.block_bytes}-byte blocks", "use smaller messages")
        return min(feasible, key=lambda a: (self.predict(coll, a, cost), known.index(a)))

    def lower_bound_s(self, coll: Collective) -> float:
        """The busiest node must inject (or absorb) its bytes after one start-up."""
        m = coll.network_matrix
        busiest = int(max(m.sum(axis=1).max(), m.sum(axis=0).max())) if m.size else 0
        if busiest == 0:
            return 0.0
        return (self.params.startup_us + self.params.us_per_byte * busiest) * 1e-6

    def route_hops(self, src: int, dst: int) -> int:
        return len(self.route(src, dst))

    @property
    def link_MBps(self) -> float | None:
        """The mesh link rate (Paragon, seed 000 Sec. 6); None where only the end points'
        rate limits a message (the multistage networks and the hypercube)."""
        return self.params.link_MBps if isinstance(self.params, ParagonParams) else None

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
                         network.mesh_route(cols), (rows, cols))


def _multistage(name: str, defaults: MultistageParams):
    def make(positional: str | None, overrides: dict[str, str]) -> BokhariTarget:
        nnodes = parse_count(name, positional, default=64)
        params = with_overrides(defaults, overrides, name)
        route = network.fat_tree_route(nnodes, by_source=params.up_route_by_source > 0,
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
    return BokhariTarget("hypercube", 1 << d, params, str(d), network.ecube_route)


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
