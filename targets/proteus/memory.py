"""The cluster's dual-port memory (DP) as a shared-bandwidth resource on the engine.

Every byte a cluster sends or receives crosses its DP twice (000_df708a39f4a23045.txt
Sec. 2.2, 3.1): the PP writes a packet in (staging) and the DMA reads it out to the link;
the DMA writes a received packet in and the PP reads it out (release). Streams active
at the same time share the DP's bandwidth equally (processor sharing), and a DMA
stream is also capped by the link and by the DP at the other end. So a cycle in which
a cluster sends, receives, stages and releases (the busy cycles of Sec. 3.2 and Sec. 5)
runs its DMA at a quarter of the DP rate: that contention, not a factor, makes a
64 KB transfer take 4.0 ms instead of the link's 3.125 ms.

A stream's rate changes only when a stream starts or ends at one of its memories, so
the model is event-driven: each change settles the bytes moved so far and reschedules
the streams of the memories involved.
"""

from __future__ import annotations

from typing import Any

from phalanx.runtime.engine import Engine, Event


class DualPortMemory:
    """One DP: its streams and the time it was busy (for utilisation reports)."""

    def __init__(self, name: str, bandwidth_Bps: float):
        self.name = name
        self.bandwidth_Bps = bandwidth_Bps
        self.flows: list[Flow] = []
        self.busy_s = 0.0
        self._since = 0.0
        self.bytes_moved = 0.0

    def share_Bps(self) -> float:
        return self.bandwidth_Bps / max(len(self.flows), 1)


class Flow:
    def __init__(self, nbytes: float, memories: tuple[DualPortMemory, ...], cap_Bps: float,
                 done: Event):
        self.remaining = float(nbytes)
        self.memories = memories
        self.cap_Bps = cap_Bps
        self.done = done
        self.rate_Bps = 0.0
        self.last_s = 0.0
        self.version = 0


class FlowSystem:
    """Starts streams over one or two DPs and fires their events when the bytes are through."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def start(self, nbytes: float, memories: tuple[DualPortMemory, ...], cap_Bps: float,
              what: str) -> Event:
        done = self.engine.event(what)
        if nbytes <= 0:
            return done.succeed()
        flow = Flow(nbytes, memories, cap_Bps, done)
        flow.last_s = self.engine.now
        for m in memories:
            m.bytes_moved += nbytes
            if not m.flows:
                m._since = self.engine.now
            m.flows.append(flow)
        self._reschedule(memories)
        return done

    def _reschedule(self, memories: tuple[DualPortMemory, ...]) -> None:
        now = self.engine.now
        seen: set[int] = set()
        for m in memories:
            for f in m.flows:
                if id(f) in seen:
                    continue
                seen.add(id(f))
                f.remaining = max(f.remaining - f.rate_Bps * (now - f.last_s), 0.0)
                f.last_s = now
                f.rate_Bps = min([f.cap_Bps] + [x.share_Bps() for x in f.memories])
                f.version += 1
                finish = self.engine.timeout(f.remaining / f.rate_Bps, "DP stream")
                finish.callbacks.append(self._finisher(f, f.version))

    def _finisher(self, flow: Flow, version: int) -> Any:
        def finish(_: Event) -> None:
            if flow.version != version:
                return  # rescheduled since
            now = self.engine.now
            for m in flow.memories:
                m.flows.remove(flow)
                if not m.flows:
                    m.busy_s += now - m._since
            flow.remaining = 0.0
            self._reschedule(flow.memories)
            flow.done.succeed()
        return finish
