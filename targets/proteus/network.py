"""The Proteus network model: synchronous circuit switching in communication cycles.

000_df708a39f4a23045.txt Sec. 3. A cycle starts at the EOT signal. At that boundary
  1. the GCI's grants (arbitrated during the previous cycle) set up this cycle's circuits;
  2. packets that arrived during the previous cycle are released to their PPs (Sec. 4.2,
     Fig. 9: "in cycle q+1 the packets have been received and are released");
  3. each CC forwards at most one PP request (control.py) and stages its packet into the DP.
Then the control part (60 us TX/RX sync + set-up, 0.1 ms in all) passes and the data
moves: DMA streams, staging and release streams share each cluster's dual-port memory
(memory.py), and the DMA is capped by the 20 MB/s link. The cycle ends when its
longest transmission is through (or after the fixed cycle time, `cycle_ms`). A packet
is thus released at the earliest two boundaries after its request was forwarded, the
minimum latency of Sec. 3.3. With `error_rate`, a corrupted packet is detected at the
receiver (4/5 code) and goes back to the head of the GCI queue: it is sent again in a
later cycle from the DP copy, counted in `stats()["retransmissions"]`.

Intra-cluster messages (same cluster, different PPs) never use a cycle: the sending PP
flushes the data over the cluster's shared bus and sets a flag (Sec. 3.1).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import numpy as np

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.engine import Engine, Event, Resource
from phalanx.runtime.network import Network
from phalanx.targets.proteus.control import ClusterController, GlobalArbiter, Packet, Request
from phalanx.targets.proteus.memory import DualPortMemory, FlowSystem
from phalanx.targets.proteus.params import ProteusParams
from phalanx.targets.proteus.topology import Topology

EPS_S = 1e-12


class ProteusNetwork(Network):
    def __init__(self, engine: Engine, topo: Topology, params: ProteusParams):
        self.engine, self.topo, self.params = engine, topo, params
        c = range(topo.nclusters)
        self.flows = FlowSystem(engine)
        self.dps = [DualPortMemory(f"cluster {i} dual-port memory", params.dp_Bps) for i in c]
        self.out_links = [Resource(engine, f"cluster {i} link out") for i in c]
        self.in_links = [Resource(engine, f"cluster {i} link in") for i in c]
        self.buses = [Resource(engine, f"cluster {i} shared bus") for i in c]
        self.group_links = {(h, k): Resource(engine, f"group link {h[0]}->{h[1]} #{k}")
                            for h in topo.group_hops() for k in range(topo.links)}
        self.ccs = [ClusterController(i, topo.pps, int(params.packet_bytes)) for i in c]
        self.gci = GlobalArbiter(topo)
        self.arrived: list[Packet] = []
        self.clock_running = False
        self.cycle = 0
        self.next_boundary_s = 0.0
        self.spans: list[tuple[str, float, float]] = []  # (link, start, end) for Gantt
        self.counts = {"cycles": 0, "busy_cycles": 0, "transmissions": 0, "retransmissions": 0,
                       "packets_released": 0, "requests": 0, "aggregated_requests": 0,
                       "intra_cluster_messages": 0, "cycle_overruns": 0}
        self.cluster_busy_cycles = [0] * topo.nclusters
        self.first_busy_s: float | None = None  # start of the first cycle that moved data
        self.reseed(0)

    def reseed(self, seed: int) -> None:
        """Error draws from the run's seed and the `error_seed` parameter (deterministic)."""
        self.rng = np.random.default_rng([int(self.params.error_seed), int(seed)])

    # -- the interface the interpreter calls -------------------------------------------

    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        src, dst = self.topo.cluster_of(t.src), self.topo.cluster_of(t.dst)
        if src == dst:
            yield from self._flush(src, t.nbytes)
            return
        cc = self.ccs[src]
        packet = int(self.params.packet_bytes)
        pieces = [min(packet, t.nbytes - k) for k in range(0, max(t.nbytes, 1), packet)]
        done = []
        for nbytes in pieces:
            event = self.engine.event(f"release of {t.src}->{t.dst} ({nbytes} B)")
            event.producer = f"proteus cycle clock (cluster {src} CC)"
            cc.post(t.src % self.topo.pps, Request(t, src, dst, nbytes, event))
            done.append(event)
        self.counts["requests"] += len(pieces)
        if not self.clock_running:
            self.clock_running = True
            self.engine.process(self._clock(), "proteus cycle clock")
        yield self.engine.all_of(done, f"packets {t.src}->{t.dst}")

    def copy_time_s(self, nbytes: int) -> float:
        return nbytes / self.params.flush_Bps

    def barrier_time_s(self, nnodes: int) -> float:
        """A barrier rides on one cycle's control exchange (Sec. 3.2: CCs and GCI sync)."""
        return self.params.overhead_s

    def combine_time_s(self, operations: int) -> float:
        return operations / (self.params.arith_MFLOPS * 1e6)

    def resources(self) -> list[Any]:
        return (self.out_links + self.in_links + self.dps + self.buses
                + list(self.group_links.values()))

    def link_spans(self) -> list[tuple[str, float, float]]:
        return self.spans

    def stats(self) -> dict[str, Any]:
        """Counters of the run (proposed for the `run --json` object as `network`)."""
        return dict(self.counts) | {"cluster_busy_cycles": list(self.cluster_busy_cycles),
                                    "first_busy_cycle_s": self.first_busy_s}

    # -- intra-cluster: flush and sync ---------------------------------------------------

    def _flush(self, cluster: int, nbytes: int) -> Generator[Event, Any, None]:
        bus = self.buses[cluster]
        yield bus.request()
        yield self.engine.timeout(nbytes / self.params.flush_Bps, "flush")
        bus.release()
        self.counts["intra_cluster_messages"] += 1

    # -- the cycle clock ----------------------------------------------------------------

    def _active(self) -> bool:
        return bool(self.gci.queue or self.arrived or any(cc.pending() for cc in self.ccs))

    def _clock(self) -> Generator[Event, Any, None]:
        """Runs cycles while anything is pending, then stops (restarted by the next post)."""
        idle_s = self.params.fixed_cycle_s or self.params.overhead_s
        skipped = max(math.ceil((self.engine.now - self.next_boundary_s) / idle_s - 1e-9), 0)
        self.cycle += skipped
        self.counts["cycles"] += skipped
        start = self.next_boundary_s + skipped * idle_s
        yield self.engine.timeout(max(start - self.engine.now, 0.0), "next EOT")
        while self._active():
            yield from self._one_cycle()
        self.clock_running = False

    def _one_cycle(self) -> Generator[Event, Any, None]:
        start = self.engine.now
        self.cycle += 1
        self.counts["cycles"] += 1
        grants = self.gci.arbitrate()
        released, self.arrived = self.arrived, []
        for p in released:
            self.counts["packets_released"] += 1
            for r in p.requests:
                r.done.succeed()
        n = self.topo.nclusters
        forwarded = [self.ccs[(self.cycle + i) % n].forward(self.cycle) for i in range(n)]
        forwarded = [p for p in forwarded if p is not None]
        self.gci.enqueue(forwarded)
        yield self.engine.timeout(self.params.overhead_s, "cycle sync and set-up")
        for p in released:
            self.flows.start(p.nbytes, (self.dps[p.dst_cluster],), math.inf, "PP release")
        for p in forwarded:
            self.counts["aggregated_requests"] += len(p.requests) - 1
            p.staged = self.flows.start(p.nbytes, (self.dps[p.src_cluster],), math.inf,
                                        "PP staging")
        sends = [self.engine.process(self._transmit(p), f"circuit {p.src_cluster}->"
                                     f"{p.dst_cluster} cycle {self.cycle}") for p in grants]
        if grants:
            self.counts["busy_cycles"] += 1
            if self.first_busy_s is None:
                self.first_busy_s = start
        waits = list(sends)
        fixed = self.params.fixed_cycle_s
        if fixed is not None:
            waits.append(self.engine.timeout(max(start + fixed - self.engine.now, 0.0), "EOT"))
        yield self.engine.all_of(waits, f"end of cycle {self.cycle}")
        if fixed is not None and self.engine.now > start + fixed + EPS_S:
            self.counts["cycle_overruns"] += 1
        self.next_boundary_s = self.engine.now

    def _transmit(self, p: Packet) -> Generator[Event, Any, None]:
        """One circuit for one cycle: links held while the DMA moves the packet DP to DP."""
        links = [self.out_links[p.src_cluster], self.in_links[p.dst_cluster]]
        links += [self.group_links[hop] for hop in p.links]
        if p.staged is not None:
            yield p.staged
        for link in links:
            yield link.request()
        start = self.engine.now
        yield self.flows.start(p.nbytes, (self.dps[p.src_cluster], self.dps[p.dst_cluster]),
                               self.params.link_Bps, "DMA")
        for link in links:
            link.release()
            self.spans.append((link.name, start, self.engine.now))
        self.counts["transmissions"] += 1
        self.cluster_busy_cycles[p.src_cluster] += 1
        p.attempts += 1
        if self.params.error_rate > 0 and self.rng.random() < self.params.error_rate:
            self.counts["retransmissions"] += 1  # detected at the receiver, relayed to the GCI
            self.gci.enqueue([p], first=True)
        else:
            self.arrived.append(p)
