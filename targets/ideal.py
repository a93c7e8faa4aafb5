"""`ideal:P` — P fully connected nodes, each with one full-duplex network port.

Not a machine of the seeds: the reference machine that the others are compared with.
Port model (the simulator, runtime resources): a message from s to d first holds s's
send port for the start-up time alpha, then holds both s's send port and d's receive
port for beta * m. So a node sends one message at a time and receives one at a time;
two messages into one receive port serialise their beta * m parts.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.algorithms import direct_partner
from phalanx.compiler.columns import PhaseColumns
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import GROUP, ROOTED
from phalanx.compiler.library.offer import Library
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.recognize import KINDS, Collective
from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.compiler.target import Target, TargetEntry, parse_count, with_overrides
from phalanx.runtime.backends.platforms import Platform, crossbar_platform, only_target_routing
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.network import (
    Acquire,
    Hold,
    Network,
    PortsShape,
    ProgramColumns,
    Release,
    TransferProgram,
    play,
)


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
        self.startup = Hold(params.alpha_us * 1e-6)
        self.acquire_send = [Acquire(port) for port in self.send_ports]
        self.release_send = [Release(port) for port in self.send_ports]
        self.acquire_recv = [Acquire(port) for port in self.recv_ports]
        self.release_recv = [Release(port) for port in self.recv_ports]
        self.wire_holds: dict[int, Hold] = {}  # per message size

    def transfer_program(self, t: Transfer) -> TransferProgram:
        """Hold the sender's port for the start-up, then both ports for the wire time."""
        wire = self.wire_holds.get(t.nbytes)
        if wire is None:
            wire = self.wire_holds[t.nbytes] = Hold(self.params.beta_us_per_byte * 1e-6 * t.nbytes)
        return (self.acquire_send[t.src], self.startup, self.acquire_recv[t.dst], wire,
                self.release_recv[t.dst], self.release_send[t.src])

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """Every message has a program of one shape."""
        return True

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns:
        """transfer_program of many messages: one shape, ports indexed send ports then receive."""
        recv = len(self.send_ports) + dst
        wire_s = self.params.beta_us_per_byte * 1e-6 * nbytes  # as transfer_program's float
        return ProgramColumns.of_shape((Acquire, Hold, Acquire, Hold, Release, Release),
                                       (src, np.full(len(src), self.startup.time_s), recv, wire_s, recv, src),
                                       (*self.send_ports, *self.recv_ports))

    def program_shape(self, message: np.ndarray) -> PortsShape:
        """Every message's program has the ports shape (transfer_program)."""
        return PortsShape(tuple(self.send_ports), tuple(self.recv_ports), self.startup.time_s, self._data_s)

    def _data_s(self, nbytes: np.ndarray) -> np.ndarray:
        return self.params.beta_us_per_byte * 1e-6 * nbytes  # as transfer_program's float

    def transfer(self, t: Transfer):
        yield from play(self.engine, self.transfer_program(t))

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

    def algorithms(self, kind: Kind) -> tuple[str, ...]:
        return self.library.names(kind) if kind in KINDS else ()

    def unmet(self, coll: Collective, algorithm: str) -> str | None:
        return self.library.unmet(coll, algorithm)

    def describe_algorithm(self, kind: Kind, algorithm: str) -> str:
        return self.library.describe(kind, algorithm)

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        return self.library.schedule(coll, algorithm, self.spec)

    def schedule_columns(self, coll: Collective, algorithm: str) -> PhaseColumns | None:
        return self.library.columns(coll, algorithm)

    def transfer_events(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> int:
        """Every message is one hop: message_events is 2."""
        return 2 * len(src)

    def message_time_s(self, nbytes: int) -> float:
        return (self.params.alpha_us + self.params.beta_us_per_byte * nbytes) * 1e-6

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """The library's port-model estimate of the schedule; for `direct` and `colouring` on
        the exchange kinds the simulator's port model followed message by message
        (direct_time_s, followed_time_s)."""
        if coll.kind in ROOTED + GROUP or algorithm not in ("direct", "colouring"):
            return self.library.estimate_s(coll, algorithm, lambda: self.schedule_for(coll, algorithm))
        if algorithm == "colouring":
            return self.colouring_time_s(coll)
        return self.direct_time_s(coll)

    def colouring_time_s(self, coll: Collective) -> float:
        """`colouring` followed message by message: its phases send and receive at most one
        message per node (colouring.py), as direct's do."""
        m, n = coll.byte_matrix, coll.nprocs
        copy_s = self.params.copy_us_per_byte * 1e-6
        work: list[list[tuple[int, int, int, int, float]]] = [[] for _ in range(n)]
        for k, phase in enumerate(self.schedule_for(coll, "colouring").phases):
            sends = {t.src: t for t in phase.sends if t.src != t.dst}
            came = {t.dst: t.src for t in sends.values()}
            for r in range(n):
                copy = copy_s * m[r][r] if k == 0 else 0.0
                if r in sends or r in came or copy:
                    to = sends[r].dst if r in sends else -1
                    work[r].append((k, to, sends[r].nbytes if r in sends else 0,
                                    came.get(r, -1), copy))
        return self.followed_time_s(work)

    def direct_time_s(self, coll: Collective) -> float:
        """`direct` under the port model of IdealNetwork, followed message by message.

        No barrier separates direct's phases: a node enters its next phase once its own send
        and the receive due to it in this one are done, so a phase with nothing for a node
        costs it nothing (a shift's or a sparse pattern's nodes do not wait for the others'
        phases). A message asks for its receiver's port a start-up after its sender entered
        the phase and holds it for beta * m; a port serves its requests first come, first
        served. Requests are taken in time order, so every port's queue is known when it is
        served. Two requests for one port at the same instant are served in (phase, sender)
        order, the simulator's in the order of its events: the one thing not followed. Exact on
        shift, permutation and sparse statements (tests/targets/test_ideal_direct.py); on
        random byte matrices 231 of 240 exact, the rest 0.90x-1.06x (bench/ideal_direct.py)."""
        uniform = self.uniform_direct_time_s(coll)
        return uniform if uniform is not None else self.followed_direct_time_s(coll)

    def followed_direct_time_s(self, coll: Collective) -> float:
        """direct_time_s for any byte matrix: each node's phases that hold something for it."""
        m, n = coll.matrix.tolist(), coll.nprocs
        copy_s = [self.params.copy_us_per_byte * 1e-6 * m[p][p] for p in range(n)]
        if n == 1:
            return copy_s[0]
        work: list[list[tuple[int, int, int, int, float]]] = [[] for _ in range(n)]
        for step in range(1, n):
            for r in range(n):
                to, came = direct_partner(r, step, n), direct_partner(r, step, n, to=False)
                sends, due = m[r][to], m[came][r]
                copy = copy_s[r] if step == 1 else 0.0
                if sends or due or copy:
                    work[r].append((step, to if sends else -1, sends, came if due else -1, copy))
        return self.followed_time_s(work)

    def uniform_direct_time_s(self, coll: Collective) -> float | None:
        """direct_time_s of a complete exchange of one block size (and one local block size),
        None for any other pattern. Every node then does the same in every step: it enters at
        the same time, its receive port serves one request, a start-up after the step began,
        behind the step before's, and it leaves when its message and the one due to it are in.
        So one node's steps, followed with direct_time_s's own float operations in its order,
        give its time in O(P), not P^2 messages."""
        m, n = coll.matrix, coll.nprocs
        block = coll.complete_block_bytes
        if block is None or (np.diagonal(m) != m[0, 0]).any():
            return None
        alpha = self.params.alpha_us * 1e-6
        beta = self.params.beta_us_per_byte * 1e-6
        copy_s = self.params.copy_us_per_byte * 1e-6 * int(m[0, 0])
        start = free = 0.0
        for step in range(1, n):
            end = start + (copy_s if step == 1 else 0.0)
            free = max(start + alpha, free) + beta * block
            start = max(end, free)
        return start

    def followed_time_s(self, work: list[list[tuple[int, int, int, int, float]]]) -> float:
        """Phases of at most one send and one receive per node under IdealNetwork's port model;
        `work[node]`: the node's phases that hold something for it, in order, as (phase,
        receiver or -1, bytes, sender due or -1, local copy seconds)."""
        n = len(work)
        alpha, beta = self.params.alpha_us * 1e-6, self.params.beta_us_per_byte * 1e-6
        start = [0.0] * n  # when the node entered its current phase
        end = [0.0] * n  # when what it has done so far in that phase is done
        waiting = [0] * n  # messages of the current phase not yet done
        at = [0] * n  # index into work[node]
        arrived: dict[tuple[int, int], float] = {}  # (sender, phase) -> arrival
        requests: list[tuple[float, int, int, int, int]] = []  # (time, phase, sender, to, bytes)
        free = [0.0] * n  # when each receive port is next free

        def enter(node: int) -> None:
            """Run the node's phases from `at` until one waits for a message."""
            while at[node] < len(work[node]):
                step, to, nbytes, came, copy = work[node][at[node]]
                now = start[node]
                end[node] = now + copy
                waiting[node] = 0
                if to >= 0:
                    heapq.heappush(requests, (now + alpha, step, node, to, nbytes))
                    waiting[node] += 1
                if came >= 0:
                    if (came, step) in arrived:
                        end[node] = max(end[node], arrived[came, step])
                    else:
                        waiting[node] += 1
                if waiting[node]:
                    return
                at[node] += 1
                start[node] = end[node]

        def done(node: int, time_s: float) -> None:
            end[node] = max(end[node], time_s)
            waiting[node] -= 1
            if not waiting[node]:
                at[node] += 1
                start[node] = end[node]
                enter(node)

        for node in range(n):
            enter(node)
        while requests:
            asked, step, sender, to, nbytes = heapq.heappop(requests)
            free[to] = max(asked, free[to]) + beta * nbytes
            arrived[sender, step] = free[to]
            done(sender, free[to])
            if at[to] < len(work[to]) and work[to][at[to]][0] == step:
                done(to, free[to])  # the receiver is in this phase, waiting for it
        return max(end, default=0.0)

    def lower_bound_s(self, coll: Collective) -> float:
        return self.binding_bound(coll)[0]

    def binding_bound(self, coll: Collective) -> tuple[float, str]:
        """The library's bounds for every kind (bounds.py: start-up rounds and the last
        block, the busiest port)."""
        return self.library.bound(coll)

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
