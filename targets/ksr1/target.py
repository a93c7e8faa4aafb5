"""`ksr1:N` — the KSR-1 of seed 002_1e1cb805508c9dd7.txt: N cells (up to 1088) on ring:0s of 32.

Algorithms per kind (docs/targets_ksr1.md): the Sec. 5 collectives by their numbers, each
also with `-prefetch` (Sec. 3.4: several reads in flight), a poststore broadcast, and the
generic `direct` (and `reads`: one phase of remote reads) for every pattern, and the
algorithm library's trees, rings and pipelines (compiler/library: a transfer is a read by
its destination from its source). `auto` picks the least time of the analytic model in
cost.py, which times any schedule.
"""

from __future__ import annotations

from phalanx.compiler.algorithms import direct_schedule
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.offer import Library
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.requirements import complete_group, every_member_receives
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, with_overrides
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.engine import Engine
from phalanx.targets.ksr1 import cost
from phalanx.targets.ksr1.network import KsrNetwork
from phalanx.targets.ksr1.params import KsrParams
from phalanx.targets.ksr1.schedules import phases_of
from phalanx.targets.ksr1.tags import ReadMode

BASE_ALGORITHMS = {
    Kind.BROADCAST: ("broadcast",),
    Kind.CSHIFT: ("cshift",),
    Kind.PERMUTATION: ("reads",),
    Kind.GATHER: ("gather-seq", "gather-tree"),
    Kind.REDUCE: ("gather-seq", "gather-tree"),
    Kind.ALLREDUCE: ("gather-seq-bcast", "gather-tree-bcast"),
    Kind.ALLGATHER: ("allgather-seq-bcast", "allgather-tree-bcast", "allgather-cshift"),
    Kind.ALLTOALL: ("reads",),
    Kind.ALLTOALLV: ("reads",),
    Kind.SCATTER: ("reads",),
    Kind.SPARSE: ("reads",),
}
MAX_CELLS = 1088  # 002_1e1cb805508c9dd7.txt Sec. 2: two ring levels support up to 1088 processors


def split_mode(algorithm: str) -> tuple[str, ReadMode]:
    """`gather-seq-prefetch` -> ("gather-seq", ReadMode.PREFETCH)."""
    for mode in (ReadMode.PREFETCH, ReadMode.POSTSTORE):
        if algorithm.endswith("-" + mode):
            return algorithm[: -len(mode) - 1], mode
    return algorithm, ReadMode.READ


class Ksr1Target(Target):
    name = "ksr1"

    def __init__(self, nnodes: int, params: KsrParams):
        self.nnodes, self.params = nnodes, params
        self.clock_hz = params.clock_MHz * 1e6
        # For the library's pipelines: a read costs an access and a hop, then per subpage a
        # slot or a turn of the reading loop, whichever is longer.
        per_subpage_s = max(params.slot_s, params.read_loop_s)
        port = PortModel(params.access_s + params.hop_s, per_subpage_s / params.subpage_bytes,
                         1 / (params.arith_MFLOPS * 1e6))
        self.library = Library.of(Machine(nnodes, port))

    def own_algorithms(self, kind: Kind) -> tuple[str, ...]:
        base = BASE_ALGORITHMS.get(kind, ())
        names = list(base) + [f"{a}-{ReadMode.PREFETCH}" for a in base]
        if kind == Kind.BROADCAST:
            names.append(f"broadcast-{ReadMode.POSTSTORE}")
        return tuple(names) + ("direct",) if kind in BASE_ALGORITHMS else ()

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.own_algorithms(kind) + self.library.names(kind)))

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        if algorithm in self.own_algorithms(coll.kind):
            if algorithm in ("direct", "reads") or split_mode(algorithm)[0] == "reads":
                return None
            # Sec. 5's collectives forward parts through every cell: each must receive.
            return complete_group(coll, self.library.machine) or every_member_receives(
                coll, self.library.machine)
        return self.library.unmet(coll, algorithm)

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        if algorithm in self.own_algorithms(kind) and algorithm != "direct":
            base, mode = split_mode(algorithm)
            return f"seed 002 Sec. 5's {base}" + (f", {mode} (Sec. 3.4)" if mode != ReadMode.READ else "")
        return self.library.describe(kind, algorithm)

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        if algorithm == "direct":
            return direct_schedule(coll)
        if algorithm not in self.own_algorithms(coll.kind) and algorithm in self.algorithms(coll.kind):
            return self.library.schedule(coll, algorithm, self.spec)
        if algorithm not in self.algorithms(coll.kind):
            raise usage_error(f"algorithm '{algorithm}' cannot lower a {coll.kind} on {self.spec}",
                              "choose one of: " + ", ".join(self.algorithms(coll.kind)))
        base, mode = split_mode(algorithm)
        return Schedule(coll.index, coll.kind, algorithm, coll.nprocs, phases_of(coll, base, mode),
                        coll.src, coll.dst, coll.line)

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        schedule = self.schedule_for(coll, algorithm)
        return cost.predict_time_s(schedule, coll.kind, self.params, self.nnodes)

    def lower_bound_s(self, coll: Collective) -> float:
        return cost.lower_bound_s(coll, self.params)

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        return self.lower_bound_s(coll), "reader bandwidth (a subpage per slot or per reading-loop turn)"

    def message_events(self, src: int, dst: int, nbytes: int) -> int:
        """The ring simulator moves a message subpage by subpage, each through a slot."""
        return 1 + -(-nbytes // int(self.params.subpage_bytes))

    def build_network(self, engine: Engine) -> KsrNetwork:
        return KsrNetwork(engine, self.params, self.nnodes)


def check_params(params: KsrParams) -> None:
    """Refuse what the ring model cannot be: a clear error naming the parameter."""
    for name in ("clock_MHz", "ring0_GBps", "ring0_slots", "cells_per_ring0", "subpage_bytes",
                 "cius_per_cell", "prefetch_outstanding"):
        if getattr(params, name) <= 0:
            raise usage_error(f"parameter {name}={getattr(params, name):g} of target 'ksr1' "
                              "must be positive", f"omit {name} to use the seed's value")
    for name in ("ring0_slots", "cells_per_ring0", "cius_per_cell", "prefetch_outstanding",
                 "ards_per_ring0"):
        if getattr(params, name) != int(getattr(params, name)):
            raise usage_error(f"parameter {name}={getattr(params, name):g} of target 'ksr1' "
                              "must be a whole number")
    if params.ards_per_ring0 != 2:
        raise usage_error("a ksr1 ring:0 has exactly 2 ARDs (an uplink and a downlink, "
                          "002 Sec. 2.1)", "omit ards_per_ring0")
    if params.ring1_cycles < params.ring0_cycles:
        raise usage_error(f"ring1_cycles={params.ring1_cycles:g} is less than ring0_cycles="
                          f"{params.ring0_cycles:g}", "a read over ring:1 cannot be faster "
                          "than one on ring:0 (Table 1: 600 vs 175 cycles)")
    if 4 * params.ard_s + params.crossing_hops * params.hop_s > \
            (params.ring1_cycles - params.ring0_cycles) * params.cycle_s:
        raise usage_error(f"ard_service_ns={params.ard_service_ns:g} does not fit in Table 1's "
                          f"ring:1 read ({params.ring1_cycles:g} cycles): a crossing read passes "
                          "four ARDs", "give a smaller ard_service_ns or omit it for the "
                          "calibrated value")


def make_ksr1(positional: str | None, overrides: dict[str, str]) -> Ksr1Target:
    text = positional if positional is not None else "32"
    if not text.isdigit() or not 1 <= int(text) <= MAX_CELLS:
        raise usage_error(f"bad cell count '{text}' for target 'ksr1'",
                          f"write ksr1:N with 1 <= N <= {MAX_CELLS} (32 cells per ring:0, up to "
                          "34 ring:0s on ring:1), e.g. ksr1:32 or ksr1:64")
    params = with_overrides(KsrParams(), overrides, "ksr1")
    check_params(params)
    nnodes = int(text)
    if nnodes > params.cells_per_ring0 * params.max_ring0s:
        raise usage_error(f"ksr1:{nnodes} needs more than {params.max_ring0s:g} ring:0s of "
                          f"{params.cells_per_ring0:g} cells", "use fewer cells")
    return Ksr1Target(nnodes, params)


# The targets this module defines; phalanx.targets.register_targets() registers them.
ENTRIES = (
    TargetEntry("ksr1", "Kendall Square KSR-1, ALLCACHE slotted rings: ring:0s of 32 cells "
                "joined by ring:1 (seed 002)", make_ksr1, "ksr1:64"),
)
