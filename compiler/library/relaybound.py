"""Relays round fixed routes: a lower bound that charges the relays' ports (docs/bounds.md,
"Relays round fixed routes").

Where every message takes its pair's one fixed route (the Paragon's row-column routes, the
hypercube's e-cube, the CS-2's up/down routes), a byte of block (s, d) either reaches d in a
message from s to d, and so crosses every link of s's route to d, or is received and sent on
by some node other than s and d (assumption 4 of docs/bounds.md: a node forwards only what it
holds). A link carries at most one byte per link_s_per_byte and none before hold_s, so of the
blocks whose routes cross a link e at most (T - hold_s) / link_s_per_byte bytes go direct; the
rest is relayed. For links whose blocks are disjoint the relayed bytes add up:

    R(T) >= sum over the links e of F of (bytes_e - (T - hold_s) / link_s_per_byte)+.

Every byte leaves its source's port once, and a relayed byte leaves a relay's port once more
(on a shared engine every message's byte also enters an engine: twice each); every node that
sends makes at least one start-up, which holds its port hold_s. No port is busier than T, so
over the P ports

    P T streams >= senders hold_s + c s_per_byte (B + R(T)),   c = 2 on a shared engine, else 1,

B the bytes that leave their nodes. The least T that satisfies this is the bound: the right
side falls as T grows, so it is found by bisection. The family F is chosen greedily, the links
with most bytes first, each link whose blocks none of the chosen links carries.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import PortModel, Route
from phalanx.compiler.recognize import Collective

RELAY_KINDS = (Kind.CSHIFT, Kind.PERMUTATION)  # one message per pair, few of them: cheap to route
BISECTIONS = 60  # halvings of the interval: far below a nanosecond on any bound here


def disjoint_links(blocks: dict[tuple[int, int], float], route: Route) -> list[float]:
    """Bytes on each link of a family whose blocks are pairwise disjoint: greedily, the link
    with the most bytes first, then each next link none of whose blocks a chosen link has."""
    through: dict[Hashable, list[tuple[int, int]]] = {}
    for pair in blocks:
        for link in route(*pair):
            through.setdefault(link, []).append(pair)
    loads = sorted(((sum(blocks[p] for p in pairs), pairs) for pairs in through.values()),
                   key=lambda item: -item[0])
    taken: set[tuple[int, int]] = set()
    family = []
    for load, pairs in loads:
        if taken.isdisjoint(pairs):
            taken.update(pairs)
            family.append(load)
    return family


def relay_ports_bound_s(coll: Collective, port: PortModel, route: Route | None) -> float:
    """The bound of the module docstring; 0 where the kind has many messages, the machine names
    no fixed routes, or ports are shared between nodes (Proteus)."""
    if coll.kind not in RELAY_KINDS or route is None or port.port_of or port.link_s_per_byte <= 0:
        return 0.0
    m = coll.network_matrix
    blocks = {(int(s), int(d)): float(m[s, d]) for s, d in zip(*np.nonzero(m)) if s != d}
    if not blocks:
        return 0.0
    family = np.array(disjoint_links(blocks, route))
    each = 2.0 if port.engine_streams else 1.0  # both directions on the streams they share
    streams = port.engine_streams or port.streams
    senders = len({s for s, _ in blocks})
    total = sum(blocks.values())

    def needed_s(time_s: float) -> float:
        """The time the ports need if the schedule takes time_s."""
        direct = max(time_s - port.hold_s, 0.0) / port.link_s_per_byte
        relayed = float(np.maximum(family - direct, 0.0).sum())
        return (senders * port.hold_s + each * port.s_per_byte * (total + relayed)) \
            / (coll.nprocs * streams)

    low, high = 0.0, needed_s(0.0)  # needed_s falls as the time grows: the root is below needed_s(0)
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if needed_s(middle) > middle:
            low = middle
        else:
            high = middle
    return low  # a time the ports cannot meet: every schedule takes longer


def relay_or_direct_bound_s(coll: Collective, port: PortModel, route: Route | None) -> float:
    """A schedule that relays no byte sends direct messages only, which the fixed routes bound
    (the busiest link's bytes, none before hold_s); one that relays a byte delivers it no sooner
    than two start-ups in: the message that brings it to the relay reaches it startup_s after it
    started, and the relay's message, started once the relay holds the byte, startup_s after
    that (docs/bounds.md, "A relay's two start-ups"). So T >= min(fixed routes, 2 startup_s).
    0 where relay_ports_bound_s does not apply."""
    if coll.kind not in RELAY_KINDS or route is None or port.port_of or port.link_s_per_byte <= 0:
        return 0.0
    m = coll.network_matrix
    link_bytes: dict[Hashable, float] = {}
    for s, d in zip(*np.nonzero(m)):
        if s != d:
            for link in route(int(s), int(d)):
                link_bytes[link] = link_bytes.get(link, 0.0) + float(m[s, d])
    if not link_bytes:
        return 0.0
    direct_s = port.hold_s + max(link_bytes.values()) * port.link_s_per_byte
    return min(direct_s, 2 * port.startup_s)
