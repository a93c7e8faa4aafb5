"""The KSR-1 ALLCACHE network model: remote reads as packets in ring slots (seed 002 Secs. 2.2, 4, 5).

A transfer src -> dst is the cell dst reading the subpages of a block that src holds. For
each subpage (Sec. 2.2): the requester looks in its sub-cache and local cache, formats a
request and puts it in the next free slot passing its station; the request travels
downstream until a cell holding the subpage takes it (or, when no cell of this ring:0
holds it, the uplink ARD lifts it onto ring:1 and the other ring:0's downlink ARD puts it
down, Sec. 2.1); the holder's CIU reads its local cache and inserts a response, which
rides back (through both ARDs again when it crosses) and goes once round the requester's
ring:0: the requester "copies the message" (Sec. 2.2) as it passes, and so does every
other cell waiting for the same subpage: a broadcast costs about one read per
subpage whatever the number of readers (Sec. 5.2). Cells that received a copy answer
later readers that reach them first (Sec. 5.3); a reader asking again for data it holds
means the owner rewrote it (outside the collective), so the other copies are invalid
(Sec. 2.2's invalidation protocol) and the owner answers again.

Writes (Sec. 2.2: exclusive ownership, invalidation-based coherence; ReadMode.WRITE): a cell
writing a subpage it does not hold exclusively sends an ownership request once round its
ring:0 (and, when copies live on other ring:0s, which the ARD's directory knows, round
those over ring:1); every copy it passes is invalidated, the first holder answers with
the data, and the writer becomes the exclusive owner, whom later readers then find.

Resources (runtime engine): per cell a read engine (one read loop at a time; a plain read
waits for its subpage, `prefetch` keeps several in flight, Sec. 3.4), the processor running
the loop (params.read_loop_us per subpage, calibrated) and four CIUs (Sec. 2.1); per ring:0
a pool of 13 slots (Sec. 2.2) and the two ARDs, one packet per params.ard_service_ns
(calibrated) each: the ARDs are where reads over ring:1 queue (Secs. 5.2, 5.4). Ring:1
itself is a fixed transit (the seed gives no ring:1 bandwidth). An unloaded read costs
exactly the loop's turn and Table 1's 175 (ring:0) or 600 (ring:1) cycles plus slot
alignment; everything else is contention.
Poststore (Sec. 3.4): the owner pushes each subpage once round every ring:0, readers then
read their local cache; private data (one reader's block) is pushed for that reader alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Generator
from typing import Any, NamedTuple

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.engine import Engine, Event, Pool, Resource
from phalanx.runtime.network import Network
from phalanx.targets.ksr1.params import KsrParams
from phalanx.targets.ksr1.ring import RingGeometry
from phalanx.targets.ksr1.tags import Read, ReadMode


class Content(NamedTuple):
    """What a subpage belongs to: a shared content (the same data for every reader, numbered as
    tags.Read numbers it) or one transfer's private data (numbered by the network), and the
    subpage address its data starts at in the holder's memory, which picks the CIU that serves
    it (a holder keeps what it gives in a buffer by reader: block q from subpage q nsub)."""

    shared: bool
    number: int
    first_subpage: int = 0


Sub = tuple[Content, int]  # (content, subpage index)
Pass = tuple[int, int, int, float]  # a response's ride: ring, entry station, hops, entry time


class KsrNetwork(Network):
    def __init__(self, engine: Engine, params: KsrParams, nnodes: int):
        self.engine, self.p = engine, params
        self.geo = geo = RingGeometry(params, nnodes)
        self.readers = [Resource(engine, f"cell {q} read engine") for q in range(nnodes)]
        self.loops = [Resource(engine, f"cell {q} reading loop") for q in range(nnodes)]
        self.cius = [[Resource(engine, f"cell {q} CIU {k}") for k in range(int(params.cius_per_cell))]
                     for q in range(nnodes)]
        # grant_now=False: a free slot is granted through the heap, the order of events in which
        # the published numbers were computed (see engine.Pool)
        self.slots = [Pool(engine, f"ring:0 {r} slots", int(params.ring0_slots), grant_now=False)
                      for r in range(geo.nrings)]
        self.ard_up = [Resource(engine, f"ring:0 {r} ARD up") for r in range(geo.nrings)]
        self.ard_down = [Resource(engine, f"ring:0 {r} ARD down") for r in range(geo.nrings)]
        self.next_slot: dict[tuple[int, int], float] = {}
        self.copies: dict[Sub, set[int]] = {}
        self.pending: dict[Sub, list[tuple[int, Event]]] = {}
        self.passes: dict[Sub, list[Pass]] = {}
        self.pushed: set[Content] = set()
        self.answering: dict[tuple[Sub, int], list[tuple[int, int]]] = {}
        self.writer: dict[Sub, int] = {}  # subpages whose owner is the cell that last wrote them
        self.serial = itertools.count()
        self.counters: dict[str, int] = {"reads": 0, "requests": 0, "dropped": 0, "crossings": 0,
                                         "pushes": 0, "writes": 0, "invalidated": 0}

    # -- the NetworkModel protocol -------------------------------------------------------
    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        content, mode = Read.of(t.message)
        nsub = max(math.ceil(t.nbytes / self.p.subpage_bytes), 1)
        key = Content(True, content) if content else Content(False, next(self.serial), t.final * nsub)
        reader = self.readers[t.dst]
        yield reader.request()
        if mode == ReadMode.POSTSTORE:  # shared content, or one reader's own (a fresh key)
            yield from self._poststored(t, key, nsub)
        elif mode == ReadMode.WRITE:
            yield from self._stream(t, key, range(nsub), write=True)
        else:
            depth = min(int(self.p.prefetch_outstanding) if mode == ReadMode.PREFETCH else 1, nsub)
            if depth <= 1:
                yield from self._stream(t, key, range(nsub))
            else:
                streams = [self.engine.process(self._stream(t, key, range(s, nsub, depth)),
                                               f"cell {t.dst} prefetch stream {s}") for s in range(depth)]
                yield self.engine.all_of(streams, f"cell {t.dst} prefetches")
        reader.release()

    def stats(self) -> dict[str, int]:
        """What the ring did: reads, requests, dropped requests, ring:1 crossings, poststore
        pushes, writes, invalidated copies (a copy of the counters)."""
        return dict(self.counters)

    def copy_time_s(self, nbytes: int) -> float:
        """A block copied within a cell: its subpages read from the local cache (Table 1)."""
        return math.ceil(nbytes / self.p.subpage_bytes) * self.p.access_s

    def barrier_time_s(self, nnodes: int) -> float:
        return self.p.barrier_us * 1e-6

    def combine_time_s(self, operations: int) -> float:
        return operations / (self.p.arith_MFLOPS * 1e6)

    def resources(self) -> list[Any]:
        cius = [c for cell in self.cius for c in cell]
        return self.readers + self.loops + cius + self.slots + self.ard_up + self.ard_down

    # -- reads ---------------------------------------------------------------------------
    def _stream(self, t: Transfer, key: Content, subpages: range, write: bool = False):
        loop = self.loops[t.dst]
        for j in subpages:
            yield from self._loop_step(loop)
            yield self.engine.timeout(self.p.miss_s + self.p.protocol_s, "miss and request")
            if write:
                yield from self.write(t.dst, t.src, (key, j))
            else:
                yield from self._read(t.dst, t.src, (key, j))

    def _read(self, q: int, src: int, sub: Sub):
        self.counters["reads"] += 1
        shared = sub[0].shared
        if shared:
            self._fresh(sub, q, src)
        done, passing = self._register(q, sub)
        if not passing:
            self.engine.process(self._request(q, src, sub, done), f"cell {q} request")
        yield done
        if shared:
            self.copies[sub].add(q)
        else:
            self.pending.pop(sub, None)
            self.passes.pop(sub, None)

    def _fresh(self, sub: Sub, q: int, src: int) -> None:
        """Start a new generation of copies when the data was rewritten (see module doc)."""
        have = self.copies.get(sub)
        if have is not None and sub in self.writer and q not in have:
            return  # ownership moved on a write: readers find the writer (or its readers)
        if have is None or q in have or src not in have:
            self.copies[sub] = {src}
            self.passes.pop(sub, None)
            self.writer.pop(sub, None)

    def _register(self, q: int, sub: Sub) -> tuple[Event, bool]:
        """The event of `q` having the subpage; True when a response already on q's ring
        will pass it (no request needed)."""
        geo, now = self.geo, self.engine.now
        done = self.engine.event(f"subpage {sub[1]} reaches cell {q}")
        for ring, start, span, t0 in self.passes.get(sub, ()):
            h = geo.covers(start, span, geo.station(q)) if ring == geo.ring(q) else 0
            if h and t0 + h * self.p.hop_s >= now:
                done.succeed(None, t0 + h * self.p.hop_s - now)
                return done, True
        self.pending.setdefault(sub, []).append((q, done))
        return done, False

    def _went_by(self, q: int, sub: Sub) -> bool:
        """A response or push of `sub` already passed cell q on its ring: a reader that comes
        later misses (Sec. 3.4: a poststore updates the copies that exist when it passes)."""
        geo, now = self.geo, self.engine.now
        for ring, start, span, t0 in self.passes.get(sub, ()):
            h = geo.covers(start, span, geo.station(q)) if ring == geo.ring(q) else 0
            if h and t0 + h * self.p.hop_s < now:
                return True
        return False

    def _holder(self, q: int, src: int, sub: Sub) -> int:
        """The first cell holding the subpage that q's request reaches (src for private data)."""
        have = self.copies.get(sub)
        if not have:
            return src
        geo, rq, sq = self.geo, self.geo.ring(q), self.geo.station(q)

        def reached(c: int) -> tuple[int, int, int]:
            r = geo.ring(c)
            if r == rq:
                return (0, 0, geo.hops(sq, geo.station(c)))
            return (1, (r - rq) % geo.nrings, geo.station(c))

        return min((c for c in have if c != q), key=reached, default=src)

    def _request(self, q: int, src: int, sub: Sub, done: Event):
        holder = self._holder(q, src, sub)
        geo = self.geo
        rq, rh, sq, sh = geo.ring(q), geo.ring(holder), geo.station(q), geo.station(holder)
        self.counters["requests"] += 1
        if rq == rh:
            yield from self._ride(rq, sq, geo.hops(sq, sh))
        else:
            yield from self._ride(rq, sq, geo.hops(sq, geo.up))
            yield from self._cross(rq, rh)
            yield from self._ride(rh, geo.down, geo.hops(geo.down, sh))
        ciu = self.cius[holder][sub[1] % len(self.cius[holder])]
        if self._answered(sub, q, done):
            return
        yield ciu.request()
        if self._answered(sub, q, done):
            ciu.release()
            return
        rides = self.answering.setdefault((sub, rq), [])
        entry = (sh, geo.stations) if rq == rh else (geo.down, geo.stations)
        rides.append(entry)  # requests it covers now wait for this response
        yield self.engine.timeout(self.p.access_s, "local cache read")
        ciu.release()

        def answered(_: float) -> None:
            rides.remove(entry)
            if not rides:
                self.answering.pop((sub, rq), None)

        if rq == rh:  # once round the ring, back to the holder
            yield from self._ride(rh, sh, entry[1], sub, on_insert=answered)
        else:
            yield from self._ride(rh, sh, geo.hops(sh, geo.up), sub)
            yield from self._cross(rh, rq)
            yield from self._ride(rq, geo.down, entry[1], sub, on_insert=answered)

    def _answered(self, sub: Sub, q: int, done: Event) -> bool:
        """A response that will pass the requester is on its way or being read: the holder
        does not answer the same subpage twice (the requester copies that one)."""
        geo = self.geo
        rides = self.answering.get((sub, geo.ring(q)), ())
        if done.triggered or any(geo.covers(start, span, geo.station(q)) for start, span in rides):
            self.counters["dropped"] += 1
            return True
        return False

    # -- writes --------------------------------------------------------------------------
    def write(self, q: int, src: int, sub: Sub):
        """Cell q gets `sub` exclusively to write it (src: where the schedule says it is)."""
        self.counters["writes"] += 1
        have = set(self.copies.get(sub) or {src})
        if have == {q}:
            return  # already the exclusive owner: the write hits the local cache
        geo = self.geo
        rq, sq = geo.ring(q), geo.station(q)
        holder = None if q in have else self._holder(q, src, sub)
        self.counters["requests"] += 1
        self.writer[sub] = q
        self.copies[sub] = {q}  # from now on requests find q; the copies are being invalidated
        self.passes.pop(sub, None)
        away = sorted({geo.ring(c) for c in have} - {rq})
        if not away:  # once round q's ring:0, invalidating every copy it passes
            yield from self._ride(rq, sq, geo.stations)
        else:  # the ARD directory knows of copies elsewhere: round each of those ring:0s too
            yield from self._ride(rq, sq, geo.stations + geo.hops(sq, geo.up))
            here = rq
            for r in away:
                yield from self._cross(here, r)
                yield from self._ride(r, geo.down, geo.hops(geo.down, geo.up) + geo.stations)
                here = r
            yield from self._cross(here, rq)
            yield from self._ride(rq, geo.down, geo.hops(geo.down, sq))
        if holder is not None:  # the data came with the first holder's answer
            yield from self._access(holder, sub)
        self.counters["invalidated"] += len(have - {q})

    # -- resources -----------------------------------------------------------------------
    def _loop_step(self, loop: Resource):
        """The reading loop's own time for one subpage (params.read_loop_us): the cell's
        processor runs it, one subpage at a time even when several reads are in flight."""
        if self.p.read_loop_s > 0:
            yield loop.request()
            yield self.engine.timeout(self.p.read_loop_s, "reading loop")
            loop.release()

    def _access(self, holder: int, sub: Sub):
        """The holder's CIU (one of four, by subpage address) reads its local cache."""
        cius = self.cius[holder]
        ciu = cius[(sub[0].first_subpage + sub[1]) % len(cius)]
        yield ciu.request()
        yield self.engine.timeout(self.p.access_s, "local cache read")
        ciu.release()

    def _insert_time(self, ring: int, station: int) -> float:
        """When the next slot that this station has not used yet passes it."""
        slot, now = self.p.slot_s, self.engine.now
        offset = (station * self.p.hop_s) % slot
        aligned = offset + math.ceil((now - offset) / slot - 1e-9) * slot
        t0 = max(aligned, self.next_slot.get((ring, station), 0.0))
        self.next_slot[(ring, station)] = t0 + slot
        return t0

    def _ride(self, ring: int, start: int, span: int, sub: Sub | None = None,
              on_insert: Callable[[float], None] | None = None):
        """A packet on ring:0 `ring` from `start` for `span` hops, in one of its slots."""
        pool = self.slots[ring]
        yield pool.request()
        t0 = self._insert_time(ring, start)
        if sub is not None:
            self._pass(sub, ring, start, span, t0)
        if on_insert is not None:
            on_insert(t0)
        yield self.engine.timeout(t0 - self.engine.now + span * self.p.hop_s, "ring:0")
        pool.release()

    def _pass(self, sub: Sub, ring: int, start: int, span: int, t0: float) -> None:
        """A response rides ring:0 from `start`: every cell it passes that waits for it copies it."""
        geo, hop = self.geo, self.p.hop_s
        self.passes.setdefault(sub, []).append((ring, start, span, t0))
        waiting = []
        for q, done in self.pending.get(sub, ()):
            if done.triggered:
                continue
            h = geo.covers(start, span, geo.station(q)) if geo.ring(q) == ring else 0
            if h:
                done.succeed(None, t0 + h * hop - self.engine.now)
            else:
                waiting.append((q, done))
        self.pending[sub] = waiting

    def _cross(self, from_ring: int, to_ring: int):
        """Up through one ARD, across ring:1, down through the other (Sec. 2.1)."""
        self.counters["crossings"] += 1
        yield from self._ard(self.ard_up[from_ring])
        yield self.engine.timeout(self.p.ring1_transit_s, "ring:1")
        yield from self._ard(self.ard_down[to_ring])

    def _ard(self, ard: Resource):
        yield ard.request()
        yield self.engine.timeout(self.p.ard_s, "ARD")
        ard.release()

    # -- poststore -----------------------------------------------------------------------
    def _poststored(self, t: Transfer, key: Content, nsub: int):
        """The owner pushes the data once (the first reader of a generation starts it);
        a reader's loop reads each subpage from its local cache once the push has passed."""
        first = (key, 0)
        if key not in self.pushed or t.dst in self.copies.get(first, ()):
            self.pushed.add(key)
            for j in range(nsub):
                self.copies[(key, j)] = {t.src}
                self.passes.pop((key, j), None)
            for j in range(nsub):
                self.engine.process(self._push(t.src, (key, j)), f"cell {t.src} poststore {j}")
        waits = []
        for j in range(nsub):
            sub = (key, j)
            done, passing = self._register(t.dst, sub)
            if not passing and self._went_by(t.dst, sub):  # the push passed before this reader came: a miss
                self.engine.process(self._request(t.dst, t.src, sub, done), f"cell {t.dst} request")
            waits.append(done)
        for j, done in enumerate(waits):  # the reading loop takes each subpage once it is in
            yield done
            yield self.engine.timeout(self.p.access_s + self.p.read_loop_s, "local cache read")
            self.copies[(key, j)].add(t.dst)

    def _push(self, owner: int, sub: Sub):
        self.counters["pushes"] += 1
        geo = self.geo
        ring, start = geo.ring(owner), geo.station(owner)
        yield from self._access(owner, sub)

        def lift(t0: float) -> None:
            if geo.nrings > 1:
                delay = t0 + geo.hops(start, geo.up) * self.p.hop_s - self.engine.now
                self.engine.process(self._push_up(ring, sub, delay), f"poststore {sub[1]} to ring:1")

        yield from self._ride(ring, start, geo.stations, sub, on_insert=lift)

    def _push_up(self, ring: int, sub: Sub, delay_s: float):
        """The uplink ARD lifts the pushed subpage onto ring:1, which passes every other ARD."""
        yield self.engine.timeout(delay_s, "to the uplink ARD")
        yield from self._ard(self.ard_up[ring])
        for other in self.geo.rings_after(ring):
            self.engine.process(self._push_down(other, sub), f"poststore {sub[1]} into ring {other}")

    def _push_down(self, ring: int, sub: Sub):
        self.counters["crossings"] += 1
        yield self.engine.timeout(self.p.ring1_transit_s, "ring:1")
        yield from self._ard(self.ard_down[ring])
        yield from self._ride(ring, self.geo.down, self.geo.stations, sub)
