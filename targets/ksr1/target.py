"""`ksr1:N` — the KSR-1 of seed 002_1e1cb805508c9dd7.txt: N cells (up to 1088) on ring:0s of 32.

Algorithms per kind (docs/targets_ksr1.md): the Sec. 5 collectives by their numbers, each
also with `-prefetch` (Sec. 3.4: several reads in flight), a poststore broadcast, and the
generic `direct` (and `reads`: one phase of remote reads) for every pattern, and the
algorithm library's trees, rings and pipelines (compiler/library: a transfer is a read by
its destination from its source), each also `-prefetch` and `-poststore`. `auto` picks the
least time of the analytic model in cost.py, which times any schedule.
"""

from __future__ import annotations

import dataclasses

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.offer import Library
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, with_overrides
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.engine import Engine
from phalanx.targets.ksr1 import cost
from phalanx.targets.ksr1.algorithms import in_read_modes, own_algorithms, subpage_bruck
from phalanx.targets.ksr1.network import KsrNetwork
from phalanx.targets.ksr1.params import KsrParams

MAX_CELLS = 1088  # 002_1e1cb805508c9dd7.txt Sec. 2: two ring levels support up to 1088 processors


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
        sec5 = own_algorithms()
        offered = Library.of(Machine(nnodes, port), own=sec5 + (subpage_bruck(params),))
        plain = tuple(a for a in offered.algorithms if a not in sec5)  # subpage-bruck and the catalog's
        variants = in_read_modes(plain, lambda coll, record: self.schedule_for(coll, record.name).phases)
        self.library = dataclasses.replace(offered, algorithms=offered.algorithms + variants)

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        """Sec. 5's collectives in their read modes (algorithms.py), then the library's."""
        return self.library.names(kind)

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        return self.library.unmet(coll, algorithm)

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        return self.library.describe(kind, algorithm)

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        return self.library.schedule(coll, algorithm, self.spec)

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        schedule = self.schedule_for(coll, algorithm)
        return cost.predict_time_s(schedule, coll.kind, self.params, self.nnodes, coll.element_bytes or 8)

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """The busiest reader's subpages or the reading-loop rounds its data needs (cost.py),
        the larger."""
        bandwidth_s = cost.lower_bound_s(coll, self.params)
        rounds_s = cost.reading_rounds_bound_s(coll, self.params)
        if rounds_s > bandwidth_s:
            return rounds_s, "reading rounds"
        return bandwidth_s, "reader bandwidth (a subpage per slot or per reading-loop turn)"

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
