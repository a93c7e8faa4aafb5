"""A prediction of a schedule's time on a torus whose nodes stream several messages at once and
whose worms hold their routes' links: each message followed from its sender's start-up to its
receiver's merge, phase after phase, as the nodes enter them.

For a candidate too big to simulate (runtime/simcost.py's budget) on iWarp and the torus, where
the port model (cost.estimate_s) misranks the library's multi-stream schedules (issue 27,
docs/regret.md): it follows a ring step split into eager halves as one phase, so a node waits
for both directions of a step where each chain waits only for its own (bidirectional-rings
over-predicted ~1.4x), and it gives a node four streams each way and no links, where a node's
memory carries four streams of sends and receives together and four turned copies share links
(turned-reduce-scatter-allgather under-predicted ~0.74x). Here, as the wormhole simulator runs
a message (targets/iwarp/wormhole.py):

- the sender's processor spends `hold_s` per message, one at a time, in posting order;
- the worm's header reaches its receiver `latency_s` per hop later;
- it then streams its bytes at `s_per_byte`, holding one of its sender's `streams`, one of
  each end's `engine_streams` (iWarp's memory: sends and receives together) where the port
  has them, else one of the receiver's `streams`, and every link of its route;
- the receiver merges a reduction's elements (one merge at a time) before the message counts
  as arrived; a local copy takes the copy rate.

A node enters a phase as Phase.sync says: a local phase's next once its sends are delivered
and its receives in, an eager phase's once its receives are in and the eager phase before's
sends delivered; a barrier adds the port's barrier after the set's last node. Messages take
the resources greedily in phase order, within a phase by when their headers arrive: a later
phase's message never goes before an earlier one's on a link. What it leaves out: a worm that
waits for a link holding the links behind it (head-of-line blocking), and that the simulator
queues resources in time order, not phase order. It is a prediction, not a bound, and not the
simulator: tests/compiler/library/test_streamflow.py holds it to the simulator's times.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable

from phalanx.compiler.library.cost import combine_operations, combined_bytes
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.plan_walk import messages
from phalanx.compiler.schedule import Schedule, SyncMode, Transfer


class Timeline:
    """A resource's busy intervals, kept sorted and apart: a message processed after others
    (a later phase's, or one whose header came in later) may still use a gap they left."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def earliest(self, ready: float, length: float) -> float:
        """The earliest start at or after `ready` of a free interval of `length`."""
        i = bisect.bisect_right(self.ends, ready)  # the intervals that end after `ready`
        start = ready
        while i < len(self.starts) and self.starts[i] < start + length:
            start = max(start, self.ends[i])
            i += 1
        return start

    def book(self, start: float, end: float) -> None:
        """Busy from start to end (a free interval: `earliest`), joined to its neighbours."""
        i = bisect.bisect_right(self.ends, start)
        if i > 0 and self.ends[i - 1] == start:  # joins the interval before
            i -= 1
            start = self.starts[i]
            del self.starts[i], self.ends[i]
        if i < len(self.starts) and self.starts[i] == end:  # and the one after
            end = self.ends[i]
            del self.starts[i], self.ends[i]
        self.starts.insert(i, start)
        self.ends.insert(i, end)

    def free_since(self, start: float) -> float:
        """When the resource last became free at or before `start` (0: never busy before)."""
        i = bisect.bisect_right(self.ends, start)
        return self.ends[i - 1] if i else 0.0


class Pool:
    """Streams of one kind at a node (`size` of them), each a Timeline."""

    def __init__(self, size: int):
        self.streams = [Timeline() for _ in range(size)]

    def earliest(self, ready: float, length: float) -> float:
        return min(s.earliest(ready, length) for s in self.streams)

    def book(self, start: float, end: float) -> None:
        """On the stream free last before `start`: those free since earlier stay for others."""
        free = [s for s in self.streams if s.earliest(start, end - start) == start]
        max(free, key=lambda s: s.free_since(start)).book(start, end)


def _together(resources: list[Timeline | Pool], ready: float, length: float) -> float:
    """The earliest start at or after `ready` at which every resource is free for `length`."""
    start = ready
    while True:
        later = max(r.earliest(start, length) for r in resources)
        if later == start:
            return start
        start = later


class _Streams:
    """Each node's pools of streams and each link's Timeline."""

    def __init__(self, nprocs: int, port: PortModel):
        self.out = [Pool(port.streams) for _ in range(nprocs)]
        shared = port.engine_streams
        self.ends = [Pool(shared) for _ in range(nprocs)] if shared else None
        self.inn = None if shared else [Pool(port.streams) for _ in range(nprocs)]
        self.links: dict[Hashable, Timeline] = {}

    def stream(self, src: int, dst: int, route: tuple[Hashable, ...], ready: float,
               wire_s: float) -> float:
        """When a message whose header is in at `ready` has streamed its bytes."""
        pools: list[Timeline | Pool] = [self.out[src]]
        pools += [self.ends[src], self.ends[dst]] if self.ends is not None else [self.inn[dst]]
        resources = pools + [self.links.setdefault(k, Timeline()) for k in route]
        begin = _together(resources, ready, wire_s)
        for r in resources if wire_s > 0 else ():
            r.book(begin, begin + wire_s)
        return begin + wire_s


def streamflow_s(schedule: Schedule, machine: Machine, element_bytes: int | None = None) -> float:
    """The schedule's predicted time on `machine` (its port model and fixed routes)."""
    port, route = machine.port, machine.route
    assert route is not None, "the prediction follows the machine's fixed routes"
    reduction = schedule.kind in REDUCTIONS
    n = schedule.nprocs
    streams = _Streams(n, port)
    cpu = [0.0] * n  # each node's processor: its start-ups, in posting order
    merges = [Timeline() for _ in range(n)]  # and the merges of what it receives
    enter = [0.0] * n  # when each node enters the phase
    # Each transfer's arrival, where a phase receives transfers an earlier phase sent (an eager
    # ring step split in two); else a phase's receives are its own sends' messages.
    arrived: dict[Transfer, float] | None = None
    if any(phase.recvs is not phase.sends for phase in schedule.phases):
        arrived = {}
    delivered_before = [0.0] * n  # the eager phase before's sends, delivered
    previous_eager, last = False, 0.0
    for phase in schedule.phases:
        # Start-ups in each node's posting order, then the worms by when their headers are in.
        posted = []
        for group in messages(list(phase.sends)):
            src, dst = group[0].src, group[0].dst
            start = max(cpu[src], enter[src])
            if src != dst:
                cpu[src] = start + port.hold_s
                hops = route(src, dst)
                posted.append((cpu[src] + port.latency_s * len(hops), src, dst, tuple(hops), group))
            else:
                posted.append((start, src, dst, (), group))
        sent = [0.0] * n  # each node's sends of this phase, delivered
        received = [0.0] * n
        for ready, src, dst, hops, group in sorted(posted, key=lambda m: m[0]):
            nbytes = combined_bytes(group) if reduction else sum(t.nbytes for t in group)
            if src == dst:
                done = ready + port.copy_s_per_byte * nbytes
            else:
                done = streams.stream(src, dst, hops, ready, port.s_per_byte * nbytes)
            if reduction:
                finals = len({t.final for t in group}) if element_bytes is None else 0
                merge_s = port.combine_s_per_op * combine_operations(nbytes, finals, element_bytes)
                if merge_s > 0:
                    begin = merges[dst].earliest(done, merge_s)
                    merges[dst].book(begin, begin + merge_s)
                    done = begin + merge_s
            sent[src], received[dst], last = max(sent[src], done), max(received[dst], done), max(last, done)
            if arrived is not None:
                arrived.update(dict.fromkeys(group, done))
        if phase.recvs is not phase.sends:
            received = [0.0] * n
            for t in phase.recvs:
                received[t.dst] = max(received[t.dst], arrived[t])
        if phase.sync == SyncMode.EAGER:
            waits = [max(enter[v], received[v], delivered_before[v] if previous_eager else 0.0)
                     for v in range(n)]
            delivered_before = sent
        else:
            waits = [max(enter[v], received[v], sent[v],
                         delivered_before[v] if previous_eager else 0.0) for v in range(n)]
        for nodes in phase.barriers(n):
            last = max(waits[v] for v in nodes) + port.barrier_s
            for v in nodes:
                waits[v] = last
        enter, previous_eager = waits, phase.sync == SyncMode.EAGER
    return max(enter + [last])
