"""`ideal:P` — P fully connected nodes, each with one full-duplex network port.

Not a machine of the seeds: the reference machine that the others are compared with.
Port model (the simulator, runtime resources): a message from s to d first holds s's
send port for the start-up time alpha, then holds both s's send port and d's receive
port for beta * m. So a node sends one message at a time and receives one at a time;
two messages into one receive port serialise their beta * m parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phalanx.compiler.algorithms import direct_partner
from phalanx.compiler.library.members import GROUP, ROOTED
from phalanx.compiler.library.offer import Library
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.recognize import KINDS, Collective
from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.compiler.target import Target, TargetEntry, parse_count, with_overrides
from phalanx.runtime.backends.platforms import Platform, crossbar_platform, only_target_routing
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.network import Network


@dataclass(frozen=True)
class IdealParams:
    # Defaults chosen as a round, late-1990s-cluster-like reference, not from a seed.
    alpha_us: float = 10.0  # per-message start-up, holds the sender's port
    beta_us_per_byte: float = 0.01  # 100 MB/s per port direction
    copy_us_per_byte: float = 0.0  # local copies are free on the reference machine
    barrier_us: float = 0.0  # barrier after the last arrival
    arith_MFLOPS: float = 100.0  # reduction partials combined at 100 M operations/s


class IdealNetwork(Network):
    def __init__(self, engine: Engine, params: IdealParams, nnodes: int):
        self.engine = engine
        self.params = params
        self.send_ports = [Resource(engine, f"node {i} send port") for i in range(nnodes)]
        self.recv_ports = [Resource(engine, f"node {i} receive port") for i in range(nnodes)]

    def transfer(self, t: Transfer):
        out_port, in_port = self.send_ports[t.src], self.recv_ports[t.dst]
        yield out_port.request()
        yield self.engine.timeout(self.params.alpha_us * 1e-6, "start-up")
        yield in_port.request()
        yield self.engine.timeout(self.params.beta_us_per_byte * 1e-6 * t.nbytes, "wire")
        in_port.release()
        out_port.release()

    def copy_time_s(self, nbytes: int) -> float:
        return self.params.copy_us_per_byte * 1e-6 * nbytes

    def barrier_time_s(self, nnodes: int) -> float:
        return self.params.barrier_us * 1e-6

    def combine_time_s(self, operations: int) -> float:
        return operations / (self.params.arith_MFLOPS * 1e6)

    def resources(self) -> list[Resource]:
        return self.send_ports + self.recv_ports


class IdealTarget(Target):
    name = "ideal"

    def __init__(self, nnodes: int, params: IdealParams):
        self.nnodes = nnodes
        self.params = params
        p = params
        # The port model of the simulator above: one start-up at a time per send port.
        port = PortModel(p.alpha_us * 1e-6, p.beta_us_per_byte * 1e-6, 1 / (p.arith_MFLOPS * 1e6),
                         copy_s_per_byte=p.copy_us_per_byte * 1e-6, barrier_s=p.barrier_us * 1e-6)
        self.library = Library.of(Machine(nnodes, port))

    def algorithms(self, kind: str) -> tuple[str, ...]:
        return self.library.names(kind) if kind in KINDS else ()

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        return self.library.unmet(coll, algorithm)

    def describe_algorithm(self, kind: str, algorithm: str) -> str:
        return self.library.describe(kind, algorithm)

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        return self.library.schedule(coll, algorithm, self.spec)

    def message_time_s(self, nbytes: int) -> float:
        return (self.params.alpha_us + self.params.beta_us_per_byte * nbytes) * 1e-6

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """The library's port-model estimate of the schedule; for `direct` on the exchange kinds
        the closed form below (what it always was)."""
        if algorithm != "direct" or coll.kind in ROOTED + GROUP:
            return self.library.predict_s(self.schedule_for(coll, algorithm), coll.element_bytes)
        return self.direct_time_s(coll)

    def direct_time_s(self, coll: Collective) -> float:
        """`direct` phases run back to back; each lasts as long as its largest message
        (local copies ride in the first phase)."""
        m, n = coll.matrix, coll.nprocs
        ranks = np.arange(n)
        copy_s = self.params.copy_us_per_byte * 1e-6 * float(np.diag(m).max(initial=0))
        total = 0.0
        for step in range(1, n):
            partners = direct_partner(ranks, step, n)
            sizes = m[ranks, partners]
            longest = self.message_time_s(int(sizes.max())) if sizes.any() else 0.0
            total += max(longest, copy_s) if step == 1 else longest
        return total if n > 1 else copy_s

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """Rooted and group kinds: the library's start-up and port bounds (bounds.py); others:
        the injection bound below."""
        if coll.kind in ROOTED + GROUP:
            return self.library.bound(coll)
        return self.injection_bound_s(coll), "port bandwidth"

    def injection_bound_s(self, coll: Collective) -> float:
        """Injection bound: the busiest port must carry its bytes, plus one start-up."""
        m = coll.network_matrix
        busiest = int(max(m.sum(axis=1).max(), m.sum(axis=0).max())) if m.size else 0
        if busiest == 0:
            return 0.0
        return (self.params.alpha_us + self.params.beta_us_per_byte * busiest) * 1e-6

    def build_network(self, engine: Engine) -> IdealNetwork:
        return IdealNetwork(engine, self.params, self.nnodes)

    def simgrid_platform(self, pairs: list[tuple[int, int]], routing: str) -> Platform:
        only_target_routing(self.name, routing)
        p = self.params
        port_Bps = 1e6 / p.beta_us_per_byte if p.beta_us_per_byte > 0 else 0.0
        return crossbar_platform(self.nnodes, p.alpha_us * 1e-6, port_Bps, self.build_network(Engine()))


def make_ideal(positional: str | None, overrides: dict[str, str]) -> IdealTarget:
    nnodes = parse_count("ideal", positional, default=16)
    return IdealTarget(nnodes, with_overrides(IdealParams(), overrides, "ideal"))


# The targets this module defines; phalanx.targets.register_targets() registers them.
ENTRIES = (
    TargetEntry("ideal", "P fully connected nodes, one full-duplex port each, "
                "message time alpha + beta*m", make_ideal, "ideal:16,alpha_us=20"),
)
