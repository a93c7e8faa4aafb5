"""A reduce's engines at both ends of the run: idle before the first wire, and only the root's
streams busy in the last start-up (docs/bounds.md, "A reduce's drain into the root").

Where one engine, or `s` memory streams, carry a node's sends and its receives together (the
Paragon, SP2 and CS-2; iWarp and the torus), the shared engines' bound charges every engine its
share of the reduce's bytes from `alpha` on. For each contributor v and each byte of its
partial take one chain of messages that carries v's value of it to the root q, and count that
byte in the chain's first message: 2 beta per byte of stream time, one stream at each end.

- Before alpha no message streams (its start-up, then its first byte, come first); from alpha
  to alpha + (j + 1) h the P nodes have started at most P (j + 1) messages, each holding one
  stream at each end, so at most min(s P, 2 P (j + 1)) streams are busy (the memory start).
- A counted byte that goes to a node w other than q reaches q only in a message w starts after
  the byte arrived, whose first byte reaches its receiver alpha later, by T: it arrived by
  T - alpha. So after T - alpha every counted byte streams into q, whose s streams take at most
  s at once: at most 2 s streams carry counted bytes.

The counted bytes need 2 beta sum(partials) of stream time; what the streams can carry by T
grows with T, so the bound is the least T at which it suffices (bisection).
"""

from __future__ import annotations

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

BISECTIONS = 60


def drain_bound_s(coll: Collective, port: PortModel) -> float:
    """The least T by which the streams can carry a reduce's counted bytes (module docstring).
    0 for other kinds, several roots, ports whose directions do not share their streams, and
    ports shared between nodes (Proteus)."""
    streams = port.engine_streams
    if coll.kind is not Kind.REDUCE or not streams or port.port_of or port.startup_s <= 0:
        return 0.0
    m = coll.network_matrix
    roots = np.flatnonzero(m.any(axis=0))
    if len(roots) != 1:
        return 0.0
    need_s = 2 * float(m[:, roots[0]].sum()) * port.s_per_byte  # stream-seconds of counted bytes
    if need_s <= 0:
        return 0.0

    def carried(t_s: float) -> float:
        return stream_capacity_s(t_s, coll.nprocs, streams, port)

    low, high = port.startup_s, 2 * port.startup_s
    while carried(high) < need_s:
        low, high = high, 2 * high
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if carried(middle) < need_s else (low, middle)
    return high


def stream_capacity_s(t_s: float, nodes: int, streams: int, port: PortModel) -> float:
    """Stream-seconds that can carry counted bytes in [0, t_s] (module docstring): none before
    alpha, min(s P, 2 P (j + 1)) from alpha + j h, at most 2 s after t_s - alpha."""
    alpha, hold = port.startup_s, port.hold_s
    ramp = [alpha + j * hold for j in range(1, streams) if 2 * j < streams] if hold > 0 else []
    points = sorted({alpha, t_s, max(alpha, t_s - alpha), *[p for p in ramp if alpha < p < t_s]})
    total = 0.0
    for start, end in zip(points, points[1:]):
        middle = (start + end) / 2
        started = int((middle - alpha) // hold) + 1 if hold > 0 else nodes
        busy = min(streams * nodes, 2 * nodes * started)
        if middle > t_s - alpha:
            busy = min(busy, 2 * streams)
        total += busy * (end - start)
    return total
