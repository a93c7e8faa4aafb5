"""`proteus:groups=K,links=L,...` — the Proteus machine of 000_df708a39f4a23045.txt.

Nodes are the Pixel Processors: PP r is PP r % pps of cluster r // pps, cluster c is in
group c // clusters. Algorithms: `proteus-group` (Sec. 5) for all-to-all shapes, the
generic `direct` for every collective, Bokhari's `standard` / `multiphase:...`
equipartitions (the "Further Optimization" of Sec. 5) on 2^d PPs, to compare, and the
algorithm library (compiler/library) for the rooted and group kinds, timed and bounded
with the 4 PPs of a cluster sharing its link (Sec. 2.2) and talking in shared memory.
"""

from __future__ import annotations

from phalanx.compiler import hypercube
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bounds import needs
from phalanx.compiler.library.members import GROUP, ROOTED
from phalanx.compiler.library.offer import Library
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.recognize import KINDS, Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, with_overrides
from phalanx.grammar.diagnostics import PhalanxError, usage_error
from phalanx.runtime.engine import Engine
from phalanx.targets.proteus import cost
from phalanx.targets.proteus.algorithms import own_algorithms
from phalanx.targets.proteus.network import ProteusNetwork
from phalanx.targets.proteus.params import SEED, ProteusParams
from phalanx.targets.proteus.topology import Topology, build_topology


class ProteusTarget(Target):
    name = "proteus"

    def __init__(self, topo: Topology, params: ProteusParams):
        self.topo, self.params = topo, params
        self.nnodes = topo.nnodes
        self.clock_hz = params.clock_MHz * 1e6
        # A message between clusters takes a communication cycle (sync + set-up, Sec. 3.2, 5)
        # and moves at the link rate; the PPs of a cluster share the link and flush to each
        # other through shared memory (Sec. 3.1).
        port = PortModel(params.overhead_s, 1 / params.link_Bps, 1 / (params.arith_MFLOPS * 1e6),
                         copy_s_per_byte=1 / params.flush_Bps,
                         port_of=tuple(r // int(params.pps) for r in range(topo.nnodes)))
        self.own = own_algorithms(topo, params)
        self.library = Library.of(Machine(topo.nnodes, port), own=self.own)

    @property
    def spec(self) -> str:
        return f"proteus:groups={self.topo.groups},links={self.topo.links}"

    def _family(self, coll: Collective | None = None, kind: Kind | None = None) -> tuple[str, ...]:
        d = hypercube.log2_exact(coll.nprocs if coll else self.nnodes)
        if kind != Kind.ALLTOALL or d is None or d < 2:
            return ()
        names = [hypercube.algorithm_name(p) for p in hypercube.partitions(d)
                 if hypercube.is_equipartition(p) and len(p) > 1]
        return tuple(dict.fromkeys(names))

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        """The own records (algorithms.py), Bokhari's family on 2^d PPs, then the library's."""
        if kind not in KINDS:
            return ()
        own = tuple(a.name for a in self.own if kind in a.kinds)
        return tuple(dict.fromkeys(own + self._family(kind=kind) + self.library.names(kind)))

    def _family_member(self, kind: Kind, algorithm: str) -> bool:
        """Whether `algorithm` is of Bokhari's family (no record: its names are partitions)."""
        return self.library.find(kind, algorithm) is None

    def closed_form_gap(self, coll: Collective, algorithm: str) -> str | None:
        """The library's algorithms are timed by the port model, which does not see the GCI's
        synchronous cycles; Proteus's own closed forms (its records', Bokhari's family's) follow
        its simulator."""
        if self._family_member(coll.kind, algorithm):
            return None
        return self.library.closed_form_gap(coll, algorithm)

    def grouped_gap(self, coll: Collective, algorithm: str) -> str | None:
        """The closed forms time an exchange that owns the GCI; groups share its cycles and the
        group links (issue 29: off by 3.6-6x, and 0 for a reduce whose groups sit in clusters)."""
        return ("Proteus's closed forms time one collective owning the machine's cycles; groups "
                "running at once share the cycles and the group links")

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        if not self._family_member(coll.kind, algorithm):
            return self.library.unmet(coll, algorithm)
        d = hypercube.log2_exact(coll.nprocs)
        if coll.kind is not Kind.ALLTOALL or d is None or coll.block_bytes is None:
            return f"Bokhari's exchanges need a uniform all-to-all on 2^d PPs, not {coll.nprocs}"
        try:
            hypercube.parse_partition(algorithm, d)
        except PhalanxError:
            return f"its partition is not one of d = {d} for the collective's {coll.nprocs} PPs"
        return None

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        if not self._family_member(kind, algorithm):
            return self.library.describe(kind, algorithm)
        return "Bokhari's exchange family on 2^d PPs (003 Sec. 2.3), for comparison (Sec. 5)"

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        if not self._family_member(coll.kind, algorithm):
            return self.library.schedule(coll, algorithm, self.spec)
        if coll.kind is not Kind.ALLTOALL or hypercube.log2_exact(coll.nprocs) is None:
            raise usage_error(f"'{algorithm}' cannot lower this {coll.kind} on {coll.nprocs} "
                              "processors", "Bokhari's exchanges need an all-to-all on 2^d "
                              "processors; use proteus-group or direct")
        return hypercube.multiphase_schedule(coll, algorithm)

    def choose(self, coll: Collective, algorithm: str = "auto", cost: str = "target") -> str:
        if algorithm.startswith("multiphase:") and coll.kind is Kind.ALLTOALL and not coll.groups:
            d = hypercube.log2_exact(coll.nprocs)
            if d is not None:
                return hypercube.algorithm_name(hypercube.parse_partition(algorithm, d))
        return super().choose(coll, algorithm, cost)

    def schedule_problems(self, schedule: Schedule) -> list[str]:
        """The proofs the algorithm's record asks of its schedules (proteus-group's plan:
        conflict-free, Table 2 pairs, l links, Latin shifts)."""
        return self.library.problems(schedule)

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        if not self._family_member(coll.kind, algorithm):
            return self.library.time_s(coll, algorithm, lambda: self.schedule_for(coll, algorithm))
        d, block = hypercube.log2_exact(coll.nprocs), coll.block_bytes
        if coll.kind is not Kind.ALLTOALL or d is None or block is None:
            return float("inf")  # Bokhari's family needs a uniform exchange on 2^d PPs
        try:
            parts = hypercube.parse_partition(algorithm, d)
        except PhalanxError:
            return float("inf")  # named for another machine size: never chosen by auto
        return float(cost.family_time_s(parts, block, self.topo, self.params))

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """The library's bounds (rooted and group kinds) or the links' and DPs' (the exchanges),
        the communication cycles a cluster's data needs to spread or to gather (cost.py
        `cycles_bound_s`) and the dual-port memories every crossing byte passes four times
        (`memories_bound_s`): the largest."""
        if coll.kind in ROOTED + GROUP:
            found = self.library.bound(coll)
        else:
            found = float(cost.lower_bound_s(coll, self.topo, self.params)), "link, DP and group links"
        cluster_out, cluster_in = needs(coll, self.library.machine.port)
        bounds = [found,
                  (cost.cycles_bound_s(coll, self.topo, self.params, cluster_out, cluster_in),
                   "communication cycles"),
                  (cost.memories_bound_s(self.params, cluster_out, cluster_in), "dual-port memories")]
        return max(bounds, key=lambda bound: bound[0])

    def build_network(self, engine: Engine) -> ProteusNetwork:
        return ProteusNetwork(engine, self.topo, self.params)

    def describe(self) -> dict:
        out = super().describe()
        out["params"] |= {"clusters_total": self.topo.nclusters, "dimensions": self.topo.dims}
        return out


def make_proteus(positional: str | None, overrides: dict[str, str]) -> ProteusTarget:
    params = with_overrides(ProteusParams(), overrides, "proteus")
    if params.cycle_ms and params.cycle_ms * 1e-3 <= params.overhead_s:
        raise usage_error(f"proteus:cycle_ms={params.cycle_ms:g} leaves no time for data after "
                          f"the {params.overhead_s * 1e3:g} ms sync and set-up ({SEED} Sec. 3.2)",
                          "use cycle_ms=0 (sized per cycle) or e.g. cycle_ms=4.1 for 64 KB")
    if params.error_rate >= 1:
        raise usage_error(f"proteus:error_rate={params.error_rate:g} would corrupt every packet",
                          "give a probability below 1, e.g. error_rate=0.01")
    if positional is not None:
        per_group = int(params.clusters * params.pps)
        if not positional.isdigit() or int(positional) % per_group:
            raise usage_error(f"bad PP count '{positional}' for target 'proteus'",
                              f"give a multiple of {per_group} PPs (one group), or groups=K")
        params = with_overrides(params, {"groups": str(int(positional) // per_group)}, "proteus")
    return ProteusTarget(build_topology(params), params)


# The targets this module defines; phalanx.targets.register_targets() registers them.
ENTRIES = (
    TargetEntry("proteus", "Proteus clusters of 4 PPs, GCI crossbar groups in a hypercube, "
                "synchronous circuit-switched cycles (seed 000)", make_proteus,
                "proteus:groups=2,links=2"),
)
