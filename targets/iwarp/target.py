"""`iwarp:NxN` (the seed's machine) and `torus:RxC` (the same wormhole torus, what-if parameters).

Algorithms for alltoall, alltoallv, sparse, cshift and permutation (any byte matrix): phased,
phased-global, phased-unswitched (n x n, n a multiple of 8; the last for blocks of one size),
message-passing, message-passing-random, store-forward, two-stage (all nodes taking part),
direct; and the library's for those kinds (Bruck's and its dimension-wise form for all-to-alls,
the edge colouring on the torus's e-cube links for the others). Broadcast, scatter, gather,
allgather, reduce and allreduce: the algorithm library (compiler/library), `dim-ordered`
along the torus's rows then columns included, timed by the node's port model (one message
overhead at a time on the processor, four link streams) and bounded by start-ups, the
node's four streams and the bisection (two ring links per row or column each way).
"""

from __future__ import annotations

import re

import numpy as np

from phalanx.compiler.columns import PhaseColumns
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bounds import (
    ONE_DESTINATION_KINDS,
    fixed_routes_bound_s,
    memory_rounds_bound_s,
    startup_bound_s,
)
from phalanx.compiler.library.directrelay import direct_or_relayed_bound_s
from phalanx.compiler.library.members import GROUP, ROOTED
from phalanx.compiler.library.offer import Library, bisection_cuts, grid_links
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.streamflow import streamflow_s
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule
from phalanx.compiler.target import Target, TargetEntry, with_overrides
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.backends.platforms import Platform
from phalanx.runtime.engine import Engine
from phalanx.targets.iwarp import cost
from phalanx.targets.iwarp.algorithms import PHASED, own_algorithms, phased_torus
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.platform import torus_platform
from phalanx.targets.iwarp.topology import Torus
from phalanx.targets.iwarp.wormhole import WormholeNetwork


class IWarpTarget(Target):
    def __init__(self, name: str, torus: Torus, params: IWarpParams):
        self.name, self.torus, self.params = name, torus, params
        self.nnodes = torus.nnodes
        # Sec. 3.1: ~400 cycles of processor overhead per message and at least one hop; data
        # at link rate on up to four streams at once (four links; memory_streams of memory).
        port = PortModel(params.overhead_s + params.hop_s, 1 / params.link_Bps,
                         1 / (params.arith_MFLOPS * 1e6),
                         streams=int(min(params.inject_channels, params.memory_streams)),
                         copy_s_per_byte=params.copy_s(1.0), link_s_per_byte=1 / params.link_Bps,
                         latency_s=params.hop_s, shared_streams=shared_streams(params),
                         deposits=True)  # Sec. 3.1: the deposit library
        self.library = Library.of(Machine(self.nnodes, port, (torus.rows, torus.cols),
                                          route=torus.links),
                                  bisection_cuts(torus.rows, torus.cols, wrap=True),
                                  links=grid_links(torus.rows, torus.cols, wrap=True),
                                  own=own_algorithms(torus, params))

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.torus.rows}x{self.torus.cols}"

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        """The machine's own exchanges (algorithms.py, the phased ones on n x n tori, n a
        multiple of 8), then the library's (Bruck's, the edge colouring)."""
        names = self.library.names(kind)
        return names if phased_torus(self.torus) else tuple(a for a in names if a not in PHASED)

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        return self.library.unmet(coll, algorithm)

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        return self.library.describe(kind, algorithm)

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        return self.library.schedule(coll, algorithm, self.spec)

    def schedule_problems(self, schedule: Schedule) -> list[str]:
        """The proofs the algorithm's record asks of its schedules (the phased construction's)."""
        return self.library.problems(schedule)

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """The machine's closed form where the algorithm has one (its own exchanges,
        targets/iwarp/cost.py), else the library's port model."""
        return self.library.time_s(coll, algorithm, lambda: self.schedule_for(coll, algorithm))

    def busiest_link_s(self, matrix: np.ndarray) -> float:
        """The torus's busiest directed link under e-cube routing, at link rate (001 Sec. 3.1)."""
        m = np.zeros((self.nnodes, self.nnodes), dtype=np.int64)  # fewer processors than nodes
        m[:len(matrix), :len(matrix)] = matrix
        return self.params.data_s(float(self.torus.link_loads(m).max()))

    def closed_form_gap(self, coll: Collective, algorithm: str) -> str | None:
        """The own exchanges' closed forms follow the wormhole simulator where their records say
        (the phased ones within 2% on complete all-to-alls, bench/results_regret.json;
        phased-unswitched within 3% on 8x8 at 128 B - 16 KB); the others, and the library's
        algorithms, are simulated by `--cost target`."""
        return self.library.closed_form_gap(coll, algorithm)

    def contention_estimate_s(self, coll: Collective, algorithm: str) -> float | None:
        """The library's algorithms (whose port model leaves out the links and that a node's
        memory streams carry its sends and receives together): each message followed through
        the node's streams and its route's links (compiler/library/streamflow.py); None for
        this machine's own algorithms (their closed forms stand in) and collectives in groups."""
        if coll.groups or self.library.has_closed_form(coll, algorithm):
            return None
        memo = self.__dict__.setdefault("_contention_estimates", {})  # asked for time and source
        if (coll, algorithm) not in memo:
            memo[(coll, algorithm)] = streamflow_s(self.schedule_for(coll, algorithm),
                                                   self.library.machine, coll.element_bytes)
        return memo[(coll, algorithm)]

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        if coll.kind in ROOTED + GROUP:
            return self.library.bound(coll)
        m = np.zeros((self.nnodes, self.nnodes), dtype=np.int64)  # fewer processors than nodes
        m[:coll.nprocs, :coll.nprocs] = coll.matrix
        bounds = cost.lower_bounds(self.params, self.torus, m)
        bounds["start-up"] = startup_bound_s(coll, self.library.machine.port)
        memory_rounds_s = memory_rounds_bound_s(coll, self.library.machine.port)
        if memory_rounds_s > 0:  # the all-to-alls (MEMORY_ROUNDS_KINDS)
            bounds["memory rounds"] = memory_rounds_s
        direct_or_relayed_s = direct_or_relayed_bound_s(coll, self.library.machine.port, self.torus.links)
        if direct_or_relayed_s > 0:  # a permutation or shift: its blocks on the e-cube routes' links
            bounds["direct or relayed"] = direct_or_relayed_s
        name = max(bounds, key=lambda k: bounds[k])
        return bounds[name], name

    def fixed_routes_bound_s(self, coll: Collective) -> float | None:
        """Each directed link's bytes under e-cube routing (Torus.link_loads)."""
        if coll.kind not in ONE_DESTINATION_KINDS:
            return None
        m = np.zeros((self.nnodes, self.nnodes), dtype=np.int64)  # fewer processors than nodes
        m[:coll.nprocs, :coll.nprocs] = coll.network_matrix
        return fixed_routes_bound_s(self.library.machine.port, self.torus.link_loads(m))

    def route_hops(self, src: int, dst: int) -> int:
        return self.torus.hops(src, dst)

    def transfer_events(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> int:
        """message_events (its hops and a start-up) of every transfer, from the hop matrix."""
        return int((self.torus.hop_matrix[src, dst] + 1).sum())

    def schedule_columns(self, coll: Collective, algorithm: str) -> PhaseColumns | None:
        """The columns of the algorithms whose records build them (direct, phased,
        message-passing, the library's all-to-all family)."""
        return self.library.columns(coll, algorithm)

    def build_network(self, engine: Engine) -> WormholeNetwork:
        return WormholeNetwork(engine, self.params, self.torus)

    def simgrid_platform(self, pairs: list[tuple[int, int]], routing: str) -> Platform:
        return torus_platform(self.torus, self.params, self.build_network(Engine()), pairs, routing)

    def describe(self) -> dict:
        out = super().describe()
        out["params"] |= {"rows": self.torus.rows, "cols": self.torus.cols}
        return out


def shared_streams(params: IWarpParams) -> int:
    """Every message streams through the memory of both its ends (wormhole.py
    `_stream_resources`), so a node's sends and receives share `memory_streams` where that is
    fewer than its injection channels and its four incoming links together (001 Sec. 1, 4.1:
    memory for four of the eight streams store-and-forward needs); 0 where it is not."""
    links = min(params.inject_channels, 4.0)
    return max(int(params.memory_streams), 1) if params.memory_streams < 2 * links else 0


_SHAPE = re.compile(r"^(\d+)x(\d+)$")


def parse_shape(name: str, positional: str | None, default: str) -> Torus:
    text = positional or default
    match = _SHAPE.match(text)
    if match is None or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise usage_error(f"bad torus shape '{text}' for target '{name}'",
                          f"write ROWSxCOLS, e.g. {name}:{default}")
    return Torus(int(match.group(1)), int(match.group(2)))


def make_iwarp(positional: str | None, overrides: dict[str, str]) -> IWarpTarget:
    torus = parse_shape("iwarp", positional, "8x8")
    if torus.rows != torus.cols:
        raise usage_error(f"iwarp:{positional} is not square: iWarp's AAPC needs an n x n torus",
                          "write iwarp:NxN (e.g. iwarp:8x8), or torus:RxC for other shapes")
    return IWarpTarget("iwarp", torus, with_overrides(IWarpParams(), overrides, "iwarp"))


def make_torus(positional: str | None, overrides: dict[str, str]) -> IWarpTarget:
    torus = parse_shape("torus", positional, "8x8")
    params = with_overrides(IWarpParams(), _link_override(overrides), "torus")
    return IWarpTarget("torus", torus, params)


def _link_override(overrides: dict[str, str]) -> dict[str, str]:
    """`link_MBps=80` (the what-if knob of ARCHITECTURE.md) sets cycles_per_word to match."""
    out = dict(overrides)
    if "link_MBps" in out:
        text = out.pop("link_MBps")
        try:
            rate = float(text)
        except ValueError:
            raise usage_error(f"parameter link_MBps={text!r} of target 'torus' is not a number",
                              "write e.g. link_MBps=80") from None
        if not rate > 0:
            raise usage_error(f"parameter link_MBps={text} of target 'torus' must be > 0")
        clock = float(out.get("clock_MHz", IWarpParams.clock_MHz))
        word = float(out.get("word_bytes", IWarpParams.word_bytes))
        out["cycles_per_word"] = str(word * clock / rate)
    return out


# The targets this module defines; phalanx.targets.register_targets() registers them.
ENTRIES = (
    TargetEntry("iwarp", "iWarp n x n wormhole torus (40 MB/s links, e-cube, synchronizing "
                "switch for phased AAPC)", make_iwarp, "iwarp:8x8"),
    TargetEntry("torus", "R x C wormhole torus with iWarp's router, parameters overridable "
                "(link_MBps, overhead_cycles, clock_MHz, ...)", make_torus,
                "torus:8x8,link_MBps=80"),
)
