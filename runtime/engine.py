"""A small discrete-event engine in the style of SimPy.

The core is a heap of (time, priority, sequence, event); the sequence number makes
runs deterministic. Processes are generators that yield events. Resources (one unit) and
pools (several identical units) are FIFO queues of requests: contention lives there, not in
the loop. When the heap runs dry while processes still wait, `run` raises Deadlock with the
cycle of waiting resources.
`run` also stops cleanly (raising Stopped) after a number of events or of wall-clock
seconds, so that a run too big for the machine ends with a partial report, not a hang.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

URGENT, NORMAL = 0, 1


class Event:
    """Something that happens once; callbacks run when it is processed.

    What a deadlock report needs to know about a wait is declared here with class-level
    defaults (no per-event cost): the `resource` (or pool) an event requests, the events an
    `all_of` `waits_for`, or else the name of the `producer` expected to trigger it.
    """

    resource: Resource | Pool | None = None
    waits_for: Sequence[Event] = ()
    producer: str | None = None

    def __init__(self, engine: Engine, what: str = ""):
        self.engine = engine
        self.what = what  # for deadlock reports
        self.callbacks: list[Callable[[Event], None]] | None = []
        self.triggered = False
        self.value: Any = None

    def succeed(self, value: Any = None, delay: float = 0.0) -> Event:
        if self.triggered:
            raise RuntimeError(f"event {self.what!r} triggered twice")
        self.triggered = True
        self.value = value
        self.engine._schedule(self, delay, NORMAL)
        return self

    def happen_now(self, value: Any = None) -> None:
        """Processed here, without the heap: a request granted to the running process, which
        goes on at once (Process._resume)."""
        self.triggered, self.value, self.callbacks = True, value, None

    @property
    def processed(self) -> bool:
        return self.callbacks is None


class Process(Event):
    """Runs a generator; the process itself is an event that fires when it returns."""

    def __init__(self, engine: Engine, body: Generator[Event, Any, Any], name: str):
        super().__init__(engine, name)
        self.name = name
        self.body = body
        self.waiting_on: Event | None = None
        start = Event(engine, f"start {name}")
        start.callbacks.append(self._resume)
        start.succeed()
        engine.live.add(self)

    def _resume(self, event: Event) -> None:
        engine = self.engine
        engine.active = self
        value = event.value
        try:
            while True:
                try:
                    nxt = self.body.send(value)
                except StopIteration as stop:
                    self.waiting_on = None
                    engine.live.discard(self)
                    self.succeed(stop.value)
                    return
                if nxt.callbacks is not None:
                    break
                # Already happened (a free resource granted on request, a finished process):
                # go on at once, without a round trip through the heap.
                value = nxt.value
        finally:
            engine.active = None
        self.waiting_on = nxt
        nxt.callbacks.append(self._resume)


class Resource:
    """A unit-capacity resource (a port, a link) with a FIFO queue of requests.

    A machine has thousands (torus:16x16: 6,146 links, pools and processors), most never
    waited for on a given run, and a native run (runtime/native_run.py) waits in the core's
    own queues: so slots, not a dict, and the queue made at the first wait (an empty deque is
    624 bytes: with the dicts, 4.4 MB of torus:16x16's run)."""

    __slots__ = ("engine", "name", "holder", "queue", "busy_s", "_since")

    def __init__(self, engine: Engine, name: str):
        self.engine = engine
        self.name = name
        self.holder: Process | None = None
        self.queue: deque[tuple[Event, Process | None]] | None = None  # none until a request waits
        self.busy_s = 0.0
        self._since = 0.0

    def request(self) -> Event:
        event = Event(self.engine, f"request {self.name}")
        event.resource = self
        owner = self.engine.active
        if self.holder is None and not self.queue:
            self._grant(event, owner, now=owner is not None)
        else:
            _waiting(self).append((event, owner))
        return event

    def _grant(self, event: Event, owner: Process | None, now: bool = False) -> None:
        """`now`: the requester is running and may go on at once (the event is processed
        here, not through the heap); else it is woken at the current time."""
        self.holder = owner
        self._since = self.engine.now
        if now:
            event.happen_now(self)
        else:
            event.succeed(self)

    def release(self) -> None:
        self.busy_s += self.engine.now - self._since
        self.holder = None
        if self.queue:
            self._grant(*self.queue.popleft())

    @property
    def holders(self) -> tuple[Process, ...]:
        """The process holding the unit, if any (as Pool.holders, for deadlock reports)."""
        return () if self.holder is None else (self.holder,)


def _waiting(resource: Resource | Pool) -> deque[tuple[Event, Process | None]]:
    """The resource's queue of waiting requests, made at its first wait."""
    if resource.queue is None:
        resource.queue = deque()
    return resource.queue


class Pool:
    """`capacity` identical units (ring slots, memory streams, injection channels), FIFO.

    `holders` lists the processes holding a unit, in the order they got it (None for a request
    made outside any process); a deadlock report names them. `busy_s` is the unit-time used
    divided by `capacity`, so `busy_s / total_time` is the mean fraction of the units in use
    (a utilisation report reads a pool as it reads a Resource, whose busy_s is this with one
    unit). A running process that finds a free unit goes on at once, as with Resource, unless
    `grant_now` is False: then every grant is woken through the heap at the current time (the
    KSR-1 ring's slots are granted so; its published numbers were computed that way).
    """

    __slots__ = ("engine", "name", "capacity", "grant_now", "holders", "queue", "busy_s", "_since")

    def __init__(self, engine: Engine, name: str, capacity: int, grant_now: bool = True):
        if capacity < 1:
            raise ValueError(f"pool {name!r} needs at least one unit, not {capacity}")
        self.engine, self.name, self.capacity = engine, name, capacity
        self.grant_now = grant_now
        self.holders: list[Process | None] = []
        self.queue: deque[tuple[Event, Process | None]] | None = None  # as Resource's
        self.busy_s = 0.0
        self._since = 0.0

    def _account(self) -> None:
        now = self.engine.now
        self.busy_s += (now - self._since) * len(self.holders) / self.capacity
        self._since = now

    def request(self) -> Event:
        event = Event(self.engine, f"request {self.name}")
        event.resource = self
        owner = self.engine.active
        if len(self.holders) < self.capacity and not self.queue:
            self._account()
            self.holders.append(owner)
            if owner is not None and self.grant_now:
                event.happen_now(self)
            else:
                event.succeed(self)
        else:
            _waiting(self).append((event, owner))
        return event

    def release(self) -> None:
        """Free the unit of the running process (or the oldest grant when that process holds
        none: a unit taken outside any process); the next request in the queue gets it."""
        if not self.holders:
            raise RuntimeError(f"{self.name} released with no unit held")
        self._account()
        owner = self.engine.active
        if owner in self.holders:
            self.holders.remove(owner)
        else:
            del self.holders[0]
        if self.queue:
            event, waiter = self.queue.popleft()
            self.holders.append(waiter)
            event.succeed(self)


@dataclass
class Deadlock(Exception):
    """Processes wait forever; `cycle` lists the waits that close a loop."""

    cycle: list[str]
    blocked: list[str]

    @property
    def description(self) -> str:
        if self.cycle:
            return " -> ".join(self.cycle)
        return "nothing left to run; blocked: " + "; ".join(self.blocked[:8])

    def __str__(self) -> str:
        return "deadlock: " + self.description


@dataclass
class Stopped(Exception):
    """`run` stopped at a limit (events or wall-clock time) before the model finished."""

    reason: str
    events: int
    now_s: float

    def __str__(self) -> str:
        return f"stopped {self.reason} ({self.events} events, simulated time {self.now_s:.9f} s)"


WALL_CLOCK_EVERY = 4096  # events between wall-clock checks: time.monotonic() is not free


class Engine:
    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Event]] = []
        self._seq = 0
        self.active: Process | None = None
        self.live: set[Process] = set()
        self.events_processed = 0
        self.max_events: int | None = None  # defaults of run()'s limits (see set_limits)
        self.time_limit_s: float | None = None

    def set_limits(self, max_events: int | None = None, time_limit_s: float | None = None) -> None:
        """Limits every later `run()` honours unless it is given its own."""
        self.max_events, self.time_limit_s = max_events, time_limit_s

    def _schedule(self, event: Event, delay: float, priority: int) -> None:
        heapq.heappush(self._heap, (self.now + delay, priority, self._seq, event))
        self._seq += 1

    def event(self, what: str = "") -> Event:
        return Event(self, what)

    def timeout(self, delay_s: float, what: str = "timeout") -> Event:
        if delay_s < 0:
            raise ValueError(f"negative delay {delay_s}")
        return Event(self, what).succeed(None, delay_s)

    def at(self, time_s: float, what: str = "at") -> Event:
        """An event that fires at the absolute time `time_s` (not before now)."""
        if time_s < self.now:
            raise ValueError(f"time {time_s} is in the past (now {self.now})")
        event = Event(self, what)
        event.triggered = True
        heapq.heappush(self._heap, (time_s, NORMAL, self._seq, event))
        self._seq += 1
        return event

    def process(self, body: Generator[Event, Any, Any], name: str) -> Process:
        return Process(self, body, name)

    def all_of(self, events: Iterable[Event], what: str = "all of") -> Event:
        events = list(events)
        done = Event(self, what)
        done.waits_for = events
        remaining = [e for e in events if not e.processed]
        if not remaining:
            return done.succeed()
        count = [len(remaining)]

        def one_done(_: Event) -> None:
            count[0] -= 1
            if count[0] == 0:
                done.succeed()

        for e in remaining:
            e.callbacks.append(one_done)
        return done

    def run(self, max_events: int | None = None, time_limit_s: float | None = None) -> None:
        """Process events until none are left; Deadlock if processes still wait then, Stopped
        after `max_events` events or `time_limit_s` wall-clock seconds of this call."""
        max_events = self.max_events if max_events is None else max_events
        time_limit_s = self.time_limit_s if time_limit_s is None else time_limit_s
        deadline = None if time_limit_s is None else time.monotonic() + time_limit_s
        while self._heap:
            self.now, _, _, event = heapq.heappop(self._heap)
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            self.events_processed += 1
            if max_events is not None and self.events_processed >= max_events:
                raise Stopped(f"at the limit of {max_events} events", self.events_processed,
                              self.now)
            if deadline is not None and self.events_processed % WALL_CLOCK_EVERY == 0 \
                    and time.monotonic() > deadline:
                raise Stopped(f"at the time limit of {time_limit_s:g} s", self.events_processed,
                              self.now)
        if self.live:
            raise find_deadlock(self.live)


def find_deadlock(live: set[Process]) -> Deadlock:
    """Build the wait-for graph (process -> resource -> holder (every holder of a pool), or ->
    awaited sender)."""
    waits: dict[str, list[tuple[str, str]]] = {}
    for proc in sorted(live, key=lambda p: p.name):
        waits[proc.name] = _blockers(proc.waiting_on)
    return deadlock_of(waits)


def deadlock_of(waits: dict[str, list[tuple[str, str]]]) -> Deadlock:
    """The report of processes that wait forever: `waits` maps each (by name, in name order)
    to what it waits on, as (process name, reason) pairs (runtime/native_run.py builds it from
    the native core's waits)."""
    blocked = [f"{name} waits for " + (", ".join(f"{w} ({why})" for w, why in ws) or "nothing")
               for name, ws in waits.items()]
    return Deadlock(_find_cycle(waits), blocked)


def _blockers(event: Event | None) -> list[tuple[str, str]]:
    """(process name, reason) pairs that `event` waits on."""
    if event is None:
        return []
    resource = event.resource
    if resource is not None:
        return [(h.name, f"holds {resource.name}") for h in resource.holders if h is not None]
    if event.waits_for:
        out: list[tuple[str, str]] = []
        for e in event.waits_for:
            if e.processed:
                continue
            if isinstance(e, Process):
                out.append((e.name, f"{e.name} unfinished"))
            else:
                out.extend(_blockers(e))
        return out
    producer = event.producer
    return [(producer, event.what)] if producer else []


def _find_cycle(waits: dict[str, list[tuple[str, str]]]) -> list[str]:
    """A cycle in the wait-for graph as 'a waits for b: reason' steps."""
    for start in waits:
        path: list[tuple[str, str]] = []
        seen = {start: 0}
        node = start
        while True:
            nexts = [(w, why) for w, why in waits.get(node, []) if w in waits]
            if not nexts:
                break
            nxt, why = nexts[0]
            path.append((node, why))
            if nxt in seen:
                loop = path[seen[nxt]:]
                return [f"{a} waits on {why}" for a, why in loop] + [loop[0][0]]
            seen[nxt] = len(path)
            node = nxt
    return []
