"""The control path of a communication cycle: Cluster Controllers and the GCI.

000_df708a39f4a23045.txt Sec. 3.2 (Request Arbitration) and Sec. 3.3 (send flow chart):
a PP posts a send request in its shared-memory mailbox; at every cycle the CC forwards
at most ONE request to the GCI, PPs in round-robin priority (after PP1 is served the
order becomes PP2, PP3, PP4, PP1); the GCI grants first-come-first-served as long as no
conflict exists (a cluster sends one and receives one packet per cycle; a group link
carries one circuit per cycle) and keeps the rest queued for the next cycle.

Message aggregation (Sec. 5): requests of the cluster's PPs that the schedule marks as
one cluster message (same destination cluster, same message id > 0) are placed in one
DP packet by the CC, up to the packet size, and travel as one circuit.

Plain data and decisions only; network.py runs them on the engine. The GCIs of several
groups are modelled as one arbiter over all requests (their circuits cross groups).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.engine import Event
from phalanx.targets.proteus.topology import GroupHop, Topology


@dataclass(eq=False)
class Request:
    """One PP send request (or one packet-sized piece of a larger send)."""

    transfer: Transfer
    src_cluster: int
    dst_cluster: int
    nbytes: int
    done: Event  # fires when the data is released to the receiving PP
    taken: bool = False


@dataclass(eq=False)
class Packet:
    """What the CC forwards: the requests that share one DP packet and one circuit."""

    requests: list[Request]
    src_cluster: int
    dst_cluster: int
    nbytes: int
    forwarded_cycle: int
    staged: Event | None = None  # the staging stream into the source DP
    attempts: int = 0
    links: list[tuple[GroupHop, int]] = field(default_factory=list)  # granted group links


class ClusterController:
    """Mailboxes of a cluster's PPs and the CC's round-robin forwarding."""

    def __init__(self, cluster: int, pps: int, packet_bytes: int):
        self.cluster = cluster
        self.mailboxes: list[deque[Request]] = [deque() for _ in range(pps)]
        self.priority = 0  # the PP with top priority this cycle
        self.packet_bytes = packet_bytes
        self.same_message: dict[tuple[int, int], list[Request]] = {}

    def post(self, pp_local: int, request: Request) -> None:
        self.mailboxes[pp_local].append(request)
        message = request.transfer.message
        if message > 0 and request.nbytes < self.packet_bytes:
            self.same_message.setdefault((request.dst_cluster, message), []).append(request)

    def pending(self) -> bool:
        return any(self._head(q) is not None for q in self.mailboxes)

    @staticmethod
    def _head(queue: deque[Request]) -> Request | None:
        while queue and queue[0].taken:
            queue.popleft()
        return queue[0] if queue else None

    def forward(self, cycle: int) -> Packet | None:
        """The one request forwarded this cycle (with its cluster-message partners), if any."""
        n = len(self.mailboxes)
        for k in range(n):
            pp = (self.priority + k) % n
            head = self._head(self.mailboxes[pp])
            if head is not None:
                break
        else:
            return None
        self.priority = (pp + 1) % n
        head.taken = True
        bundle = [head] + self._partners(head)
        return Packet(bundle, self.cluster, head.dst_cluster, sum(r.nbytes for r in bundle),
                      cycle)

    def _partners(self, head: Request) -> list[Request]:
        key = (head.dst_cluster, head.transfer.message)
        if head.transfer.message <= 0 or key not in self.same_message:
            return []
        room, taken, kept = self.packet_bytes - head.nbytes, [], []
        for r in self.same_message.pop(key):
            if r.taken:
                continue
            if r.nbytes <= room:
                r.taken = True
                room -= r.nbytes
                taken.append(r)
            else:
                kept.append(r)
        if kept:
            self.same_message[key] = kept
        return taken


class GlobalArbiter:
    """The GCI queue: FCFS grants without conflicts, conflicting requests wait a cycle."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.queue: list[Packet] = []
        self.routes: dict[tuple[int, int], list[GroupHop]] = {}

    def route(self, src_cluster: int, dst_cluster: int) -> list[GroupHop]:
        key = (self.topo.group_of(src_cluster), self.topo.group_of(dst_cluster))
        if key not in self.routes:
            self.routes[key] = self.topo.group_route(*key)
        return self.routes[key]

    def enqueue(self, packets: list[Packet], first: bool = False) -> None:
        self.queue = packets + self.queue if first else self.queue + packets

    def arbitrate(self) -> list[Packet]:
        """Grants for the next cycle, in queue order; the rest stay queued."""
        senders: set[int] = set()
        receivers: set[int] = set()
        hop_use: Counter[GroupHop] = Counter()
        grants: list[Packet] = []
        rest: list[Packet] = []
        for i, p in enumerate(self.queue):
            if len(senders) == self.topo.nclusters:
                rest.extend(self.queue[i:])
                break
            hops = self.route(p.src_cluster, p.dst_cluster)
            if (p.src_cluster in senders or p.dst_cluster in receivers
                    or any(hop_use[h] >= self.topo.links for h in hops)):
                rest.append(p)
                continue
            senders.add(p.src_cluster)
            receivers.add(p.dst_cluster)
            p.links = [(h, hop_use[h]) for h in hops]
            hop_use.update(hops)
            grants.append(p)
        self.queue = rest
        return grants
