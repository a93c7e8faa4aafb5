"""Ring geometry of the KSR-1 model (seed 002_1e1cb805508c9dd7.txt Secs. 2, 4).

A ring:0 has 34 stations: cells 0..31 and two ARD cells, the downlink from ring:1 at station
32 and the uplink to ring:1 at station 33 (Sec. 2.1). The ring is unidirectional: a packet
goes from station a to b in (b - a) mod 34 hops. Slots pass each station every
`slot_s`, 13 of them round the ring (Sec. 2.2); a packet enters at the next free slot that
passes its station and holds that slot until it leaves the ring.
"""

from __future__ import annotations

import math

from phalanx.targets.ksr1.params import KsrParams


class RingGeometry:
    """Where cells sit: ring:0 number, station, hops between stations."""

    def __init__(self, params: KsrParams, nnodes: int):
        self.cells = int(params.cells_per_ring0)
        self.stations = params.stations
        self.down = self.cells  # the ARD that brings packets from ring:1 into this ring:0
        self.up = self.cells + 1  # the ARD that takes packets from this ring:0 to ring:1
        self.nrings = max(math.ceil(nnodes / self.cells), 1)
        self.nnodes = nnodes

    def ring(self, cell: int) -> int:
        return cell // self.cells

    def station(self, cell: int) -> int:
        return cell % self.cells

    def hops(self, a: int, b: int) -> int:
        """Hops from station a to station b downstream (a full rotation when a == b)."""
        return (b - a) % self.stations or self.stations

    def covers(self, start: int, span: int, station: int) -> int:
        """Hops after which a packet entering at `start` and riding `span` hops passes
        `station`, or 0 when it does not pass it."""
        h = (station - start) % self.stations
        return h if 0 < h <= span else 0

    def downstream(self, cell: int) -> list[int]:
        """Cells of `cell`'s ring:0 in the order a request from `cell` passes them."""
        r, s = self.ring(cell), self.station(cell)
        order = [r * self.cells + (s + k) % self.cells for k in range(1, self.cells)]
        return [c for c in order if c < self.nnodes]

    def rings_after(self, ring: int) -> list[int]:
        """The other ring:0s in the order a request on ring:1 reaches their ARDs."""
        return [(ring + k) % self.nrings for k in range(1, self.nrings)]

    def cells_of(self, ring: int) -> range:
        return range(ring * self.cells, min((ring + 1) * self.cells, self.nnodes))
