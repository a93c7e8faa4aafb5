"""The wormhole network model of iWarp on the engine's resources (the simulator of the target).

A message (001_569dde0e56ec3e6f.txt Sec. 2.2.1, 3.1):
 1. the sending node's processor spends the per-message overhead (one message at a time);
 2. it takes one of the node's injection channels;
 3. the header takes the virtual channels of its e-cube route one hop at a time (hop latency
    each); a blocked header waits holding what it has. Two pools and a dateline per ring make
    the channel dependencies acyclic, so message passing cannot deadlock (topology.py);
 4. once the route is complete the data streams at link rate. The two pools share each wire,
    so streaming also takes every physical link of the route and a memory stream at both ends
    (memory sources/sinks `memory_streams` link-rate streams, Sec. 1); these are taken in one
    global order, so the streaming stage cannot deadlock either;
 5. the tail frees everything.
Messages of the deposit message passing library (Sec. 3.1; id `LIBRARY_MESSAGE`, Fig. 6's
message passing AAPC) also take one of the sender's library send slots before injection and,
once the header has reached the destination, one of its receive slots and then the receiving
processor for the receive overhead (`library_streams` each way, `receive_overhead_cycles`).
A header that meets a busy receiver waits there holding its route, as any blocked worm; a
receive slot's holder waits only for a processor and the streaming stage, so no cycle forms.
Synchronizing switch (Sec. 2.2): messages of a phased schedule carry their phase (a
`SwitchTag` in their message id); a link forwards the header of phase k only after the tails
of its phase 0..k-1 messages have passed it (the NotInMessage stop condition, Lemma 1). In a
complete phased AAPC every link carries one message per phase, so this is the paper's switch.
A phase with nothing to send on a link needs Fig. 5's empty message: a 0-byte transfer, which
pays the overhead and passes the links like any other (schedules.phased_schedule emits them
where the data layer can carry empty blocks; the fast path below always adds them).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.compiler.target import AS_PATTERN
from phalanx.runtime.engine import Engine, Pool, Resource
from phalanx.runtime.fastpath import FastPhase, FastPlan
from phalanx.runtime.network import (
    Acquire,
    FailedLink,
    Gates,
    Hold,
    Layout,
    MessageKind,
    Network,
    PassTail,
    ProgramColumns,
    ProgramOp,
    Release,
    TorusRouteShape,
    TransferProgram,
    WaitGate,
    WormholeShape,
    play,
)
from phalanx.runtime.plan_columns import distinct
from phalanx.targets.iwarp.faults import AvoidingRoutes
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.phases import construction_links, phased_torus_phases
from phalanx.targets.iwarp.topology import Torus
from phalanx.targets.iwarp.wormhole_columns import wormhole_programs

LIBRARY_MESSAGE = 1 << 39  # the message id of the deposit library's messages (Sec. 3.1)
FIRST_SWITCHED = 1 << 40  # message ids from here on are SwitchTags; below, other messages
SWITCHED_PHASES = 1 << 20  # the phases a collective's SwitchTags number


class SwitchTag(NamedTuple):
    """What a message of a phased schedule tells the synchronizing switch: the collective whose
    schedule it belongs to and its phase there (one message per pair and phase).
    `message` numbers the tags for the Transfer.message id and `of` reads one back: the only
    two places that know the numbering."""

    collective: int
    phase: int

    @property
    def message(self) -> int:
        """The message id: FIRST_SWITCHED on, collective by collective, phase by phase."""
        if not 0 <= self.phase < SWITCHED_PHASES or self.collective < 0:
            raise ValueError(f"a phased message's collective must be >= 0 and its phase in "
                             f"0..{SWITCHED_PHASES - 1}, not {self}")
        return FIRST_SWITCHED + self.collective * SWITCHED_PHASES + self.phase

    @staticmethod
    def of(message: int) -> SwitchTag | None:
        """The tag a message id carries, None for a message the switch does not gate."""
        if message < FIRST_SWITCHED:
            return None
        return SwitchTag(*divmod(message - FIRST_SWITCHED, SWITCHED_PHASES))


class WormholeNetwork(Network):
    """runtime/network.py's Network for an R x C iWarp torus."""

    def __init__(self, engine: Engine, params: IWarpParams, torus: Torus):
        self.engine, self.params, self.torus = engine, params, torus
        self.avoiding: AvoidingRoutes | None = None  # routes around failed links (--faults)
        self.routes = torus.route
        n = torus.nnodes

        def pools(what: str, units: float) -> list[Pool]:  # whole units, at least one
            return [Pool(engine, f"node {i} {what}", max(int(units), 1)) for i in range(n)]

        self.cpus = [Resource(engine, f"node {i} processor") for i in range(n)]
        self.inject = pools("injection", params.inject_channels)
        self.vcs = [Resource(engine, f"{torus.link_name(v // 2)} pool {v % 2}")
                    for v in range(2 * torus.nlinks)]
        self.wires = [Resource(engine, torus.link_name(k) + " wire") for k in range(torus.nlinks)]
        self.memory = pools("memory", params.memory_streams)
        self.library_sends = pools("library sends", params.library_streams)
        self.library_receives = pools("library receives", params.library_streams)
        self.gates = Gates(engine)
        self.messages = 0

    def packs(self, message: int) -> bool:
        """The Fx compiler's code packs library messages (pack_cycles_per_word)."""
        return message == LIBRARY_MESSAGE

    def transfer_program(self, t: Transfer) -> TransferProgram | None:
        """`program(t)` where the core can run it message by message (a plain or a library
        message); None for a phased message, whose gates run natively only by shape
        (program_shape)."""
        return None if SwitchTag.of(t.message) is not None else self.program(t)

    def program(self, t: Transfer) -> TransferProgram:
        """A message's transfer (module docstring): the overhead on the sender's processor (with
        the phase's software for a phased message), a library send slot (the library's), an
        injection channel, per hop of the route the link's gate (phased) then its virtual
        channel and the hop latency, a library receive slot and the receiver's overhead on its
        processor (the library's), the streams and the data time, every release, then a phased
        message's tail at each link of its route."""
        p, cpu, inject = self.params, self.cpus[t.src], self.inject[t.src]
        tag, library = SwitchTag.of(t.message), t.message == LIBRARY_MESSAGE
        route = self.routes(t.src, t.dst)
        vcs = [self.vcs[2 * link + pool] for link, pool in route]
        stream = self._stream_resources(t.src, t.dst, route)
        sends = (self.library_sends[t.src],) if library else ()
        receives = (self.library_receives[t.dst],) if library else ()
        receiver = self.cpus[t.dst]
        hops: list[ProgramOp] = []
        for (link, _), vc in zip(route, vcs):
            if tag is not None:
                hops.append(WaitGate(self.gates, tag.collective, link, tag.phase))
            hops += (Acquire(vc), Hold(p.hop_s))
        return (Acquire(cpu), Hold(p.overhead_s + (p.phase_software_s if tag is not None else 0.0)),
                Release(cpu), *[Acquire(s) for s in sends], Acquire(inject), *hops,
                *[op for r in receives for op in (Acquire(r), Acquire(receiver), Hold(p.receive_overhead_s),
                                                  Release(receiver))],
                *[Acquire(r) for r in stream], Hold(p.data_s(t.nbytes)),
                *[Release(r) for r in (*stream, *sends, *vcs, *receives, inject)],
                *([] if tag is None else [PassTail(self.gates, tag.collective, link) for link, _ in route]))

    def pack_program(self, t: Transfer, nbytes: int, node: int) -> TransferProgram:
        """The application's code packing (on the sender, `node` = t.src) or unpacking (on the
        receiver) `nbytes` strided bytes of a library message on the node's processor
        (params.pack_cycles_per_word); nothing for other messages or where it takes no time.
        Phased messages pay nothing here: Sec. 4.4's estimate for the phased FFT (184,400
        cycles, 21 frames/s) is the phased AAPC's own time, which already includes its per-phase
        DMA set-up (Fig. 4 line 5, phase_software_cycles)."""
        time_s = self.params.pack_s(nbytes)
        if t.message != LIBRARY_MESSAGE or time_s <= 0:
            return ()
        return Acquire(self.cpus[node]), Hold(time_s), Release(self.cpus[node])

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """Plain messages while routes take no detour: none of them the library's or phased."""
        ids = distinct(message).tolist()
        return self.avoiding is None and LIBRARY_MESSAGE not in ids and \
            all(SwitchTag.of(m) is None for m in ids)

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns | None:
        """transfer_program of many plain messages at once (wormhole_columns.py); None where a
        message is the library's or phased, and while routes avoid failed links."""
        if not self.programs_as_columns(message):
            return None
        return wormhole_programs(self, src, dst, nbytes)

    def program_shape(self, message: np.ndarray) -> TorusRouteShape | WormholeShape | None:
        """The programs' shape while routes take no detour (None otherwise): the torus's route
        shape where every message is plain, else the wormhole shape of every kind (`program`,
        and the application's packing, `pack_program`)."""
        if self.avoiding is not None:
            return None
        torus, p = self.torus, self.params
        route = TorusRouteShape(torus.rows, torus.cols, tuple(self.cpus), tuple(self.inject), tuple(self.vcs),
                                tuple(self.wires), tuple(self.memory), p.overhead_s, p.hop_s, self._data_s)
        if self.programs_as_columns(message):
            return route
        return WormholeShape(route, tuple(self.library_sends), tuple(self.library_receives),
                             p.receive_overhead_s, p.overhead_s + p.phase_software_s, p.pack_s, message_kinds)

    def _data_s(self, nbytes: np.ndarray) -> np.ndarray:
        """Each message's data time (params.data_s, as transfer_program's float)."""
        return np.broadcast_to(self.params.data_s(nbytes.astype(np.float64)), nbytes.shape)

    def transfer(self, t: Transfer):
        self.messages += 1
        yield from play(self.engine, self.program(t))

    def pack(self, t: Transfer, nbytes: int):
        """The sender's code packs a library message's strided blocks (pack_program)."""
        yield from play(self.engine, self.pack_program(t, nbytes, t.src))

    def unpack(self, t: Transfer, nbytes: int):
        """The receiver's processor unpacks a library message's strided blocks (pack_program)."""
        yield from play(self.engine, self.pack_program(t, nbytes, t.dst))

    def _stream_resources(self, src: int, dst: int, route) -> list:
        """Memory streams of both ends, then the route's wires: one global order (memory by
        node, then wires by link), so that no cycle of waits can form among streaming messages."""
        ends = [self.memory[min(src, dst)], self.memory[max(src, dst)]]
        return ends + [self.wires[k] for k in sorted(link for link, _ in route)]

    def fast_plan(self, schedule: Schedule) -> FastPlan | None:
        plan = fast_plan(self, schedule)
        return None if plan is None else dataclasses.replace(plan, book=lambda: self._book(plan))

    def _book(self, plan: FastPlan) -> None:
        """The fast path holds no resources: book the busy time its messages give the wires
        and the memory streams of both ends (their data time, as the event path holds them),
        the processors (the overhead) and the injection channels (header hops and data; the
        event path adds a header's wait at a switch gate), so utilisation reports show the
        same load on either path. A pool's busy time is per unit (engine.Pool)."""
        n = self.torus.nnodes
        wire, cpu, memory, inject = np.zeros(self.torus.nlinks), np.zeros(n), np.zeros(n), np.zeros(n)
        for ph in plan.phases:
            net = ph.src != ph.dst
            links = ph.links[net]
            used = links >= 0
            data_s = plan.data_s(ph.nbytes[net].astype(np.float64))
            np.add.at(wire, links[used], np.broadcast_to(data_s[:, None], links.shape)[used])
            np.add.at(cpu, ph.src[net], plan.overhead_s)
            np.add.at(memory, ph.src[net], data_s / self.memory[0].capacity)
            np.add.at(memory, ph.dst[net], data_s / self.memory[0].capacity)
            np.add.at(inject, ph.src[net], (used.sum(axis=1) * plan.hop_s + data_s) / self.inject[0].capacity)
            copies = ~net & (ph.nbytes > 0)  # a copy holds its processor (copy_program)
            np.add.at(cpu, ph.src[copies], plan.copy_s(ph.nbytes[copies].astype(np.float64)))
        for resources, busy in ((self.wires, wire), (self.cpus, cpu), (self.memory, memory),
                                (self.inject, inject)):
            for r, b in zip(resources, busy.tolist()):
                r.busy_s += b

    def phase_links(self) -> np.ndarray:
        return construction_links(self.torus.cols)

    def layout(self) -> Layout:
        """Nodes at their torus coordinates; each wire joins its node and the neighbour it
        leads to (the report draws wrap-around wires as stubs)."""
        positions = {v: tuple(float(c) for c in self.torus.coords(v)) for v in range(self.torus.nnodes)}
        return Layout(positions, {w.name: (k // 4, self._neighbour(k)) for k, w in enumerate(self.wires)})

    def _neighbour(self, link: int) -> int:
        x, y = self.torus.coords(link // 4)
        dx, dy = ((1, 0), (-1, 0), (0, 1), (0, -1))[link % 4]
        return self.torus.node(x + dx, y + dy)

    def route(self, src: int, dst: int) -> list[str]:
        """The wires of the route from src to dst, in order."""
        return [self.wires[link].name for link, _ in self.routes(src, dst)]

    def avoid_links(self, failed: tuple[FailedLink, ...], spec: str) -> None:
        self.avoiding = AvoidingRoutes(self.torus, failed, spec)
        self.routes = self.avoiding.route

    def check_route(self, t: Transfer) -> None:
        if self.avoiding is not None:
            self.avoiding.route(t.src, t.dst)
            if SwitchTag.of(t.message) is not None:
                self.avoiding.check_phased(t.src, t.dst)

    def rerouted_pairs(self) -> int:
        return len(self.avoiding.rerouted) if self.avoiding is not None else 0

    def copy_time_s(self, nbytes: int) -> float:
        return self.params.copy_s(nbytes)

    def copy_program(self, node: int, nbytes: int) -> TransferProgram:
        """A local copy is a load/store loop of the node's processor (the computation agent's
        memory moves at 160 MB/s, Greer and Webb 1992; params.copy_s): it holds the processor,
        so that it waits for (and delays) the start-ups and packs of the node's messages. It
        leaves the memory streams to the spools: with the streams held too, Fig. 7's
        store-and-forward (001 Sec. 4.1, about 800 MB/s) falls to 562 MB/s (docs/efficiency.md,
        "The tori's copies on the processor")."""
        cpu = self.cpus[node]
        return Acquire(cpu), Hold(self.params.copy_s(nbytes)), Release(cpu)

    def barrier_time_s(self, nnodes: int) -> float:
        return self.params.barrier_s(self.torus.rows, self.torus.cols)

    def combine_time_s(self, operations: int) -> float:
        return operations / (self.params.arith_MFLOPS * 1e6)

    def resources(self) -> list:
        return (self.cpus + self.vcs + self.wires + self.memory + self.inject + self.library_sends
                + self.library_receives)


def message_kinds(message: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each message id's (MessageKind, collective, phase) (WormholeShape.kinds): a SwitchTag's
    collective and phase for a phased message, 0 and 0 otherwise."""
    phased = message >= FIRST_SWITCHED
    kind = np.where(message == LIBRARY_MESSAGE, MessageKind.LIBRARY, MessageKind.PLAIN).astype(np.uint8)
    kind[phased] = MessageKind.PHASED
    collective, phase = np.divmod(np.where(phased, message - FIRST_SWITCHED, 0), SWITCHED_PHASES)
    return kind, collective, phase


def fast_plan(network: WormholeNetwork, schedule: Schedule) -> FastPlan | None:
    """The phased schedule as runtime/fastpath.py's plan, with Fig. 5's empty messages for every
    construction message whose block is empty; None for any other schedule."""
    torus, p = network.torus, network.params
    # `sparse:phased` is `phased` on a collective in groups' whole pattern (compiler/target.py).
    algorithm = schedule.algorithm.removeprefix(AS_PATTERN)
    if algorithm not in ("phased", "phased-global") or \
            schedule.nprocs != torus.nnodes or torus.rows != torus.cols or torus.cols % 8:
        return None
    table = phased_torus_phases(torus.cols)
    if len(table) != len(schedule.phases):
        return None
    links = network.phase_links()
    phases = []
    for k, (construction, phase) in enumerate(zip(table, schedule.phases)):
        index = {(s, d): j for j, (s, d) in enumerate(construction[:, :2].tolist())}
        nbytes = np.zeros(len(construction), dtype=np.int64)
        for t in phase.sends:
            j = index.get((t.src, t.dst))
            if j is None:
                return None  # not the construction's message: no proof of contention-freedom
            nbytes[j] += t.nbytes
        phases.append(FastPhase(construction[:, 0], construction[:, 1], nbytes, links[k], True))
    barrier = network.barrier_time_s(torus.nnodes) if algorithm == "phased-global" else None
    return FastPlan(torus.nnodes, torus.nlinks, phases, p.overhead_s + p.phase_software_s, p.hop_s,
                    lambda b: b / p.link_Bps, p.copy_s,
                    barrier)
