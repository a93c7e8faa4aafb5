"""A link's blocks: sent direct, late, or relayed at two start-ups (docs/bounds.md, "A link's
blocks direct or relayed").

Where every message takes its pair's one fixed route and each source sends one block, a byte
of block (s, d) either goes in a message from s to d, on the route, across each of its links
(*direct*), or first leaves s in a message to some other node u (a *leg*), which forwards it
only once that message has all arrived (assumption 5 of docs/bounds.md). s starts its messages
h apart (1), its i-th no sooner than i h; each message's bytes arrive from alpha after its start
(2), one link's worth per link beta. For a schedule that ends by T:

- a direct message in slot i carries at most (T - i h - alpha) / beta bytes, none on a link
  before (i + 1) h;
- a leg in slot i of r bytes has all arrived at u by a >= i h + alpha + r beta; u's j messages
  that carry its bytes on start from a, h apart, so the last reaches its next node no sooner
  than a + alpha + (r beta + h j (j - 1) / 2) / j (a mean of the j); so r beta + f(r) <=
  T - i h - 2 alpha, f(r) the least of that over j.

A source's messages in order are a pattern of direct slots and legs. Given the pattern, the legs
carry at most their capacities, and the direct bytes, filled into the earliest direct slots,
leave the least on the link after every slot. A link e carries at most (T - (i + 1) h) / beta of
the bytes released from (i + 1) h on, so T is ruled out where no choice of patterns of the
sources whose routes cross e meets every such limit. The bound is the largest, over the links,
of the least time not ruled out (bisection). A trial time with more than SLOT_LIMIT slots, or
too many partial sums, is not ruled out: that keeps the search short and the
bound a bound (a weaker one).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

import numpy as np

from phalanx.compiler.library.registry import PortModel, Route
from phalanx.compiler.library.relaybound import RELAY_KINDS
from phalanx.compiler.recognize import Collective

BISECTIONS = 50  # halvings of [0, the all-direct time]: far below a nanosecond here
SLOT_LIMIT = 8  # a source's slots tried at a time: 2^8 patterns
FRONTIER_LIMIT = 256  # Pareto-least partial sums of a link's sources kept at a time
SLACK = 1e-9  # relative: a limit met within rounding counts as met (keeps the bound a bound)


def leg_bytes(budget_s: float, port: PortModel) -> float:
    """The most bytes r of a leg with r beta + f(r) <= budget_s (module docstring): for j
    forwarding messages r beta (1 + 1 / j) + h (j - 1) / 2 <= budget_s."""
    best = 0.0
    j = 1
    while budget_s - port.hold_s * (j - 1) / 2 > 0:
        best = max(best, (budget_s - port.hold_s * (j - 1) / 2) * j / (j + 1))
        j += 1
    return best / port.link_s_per_byte


def _menu(block: float, direct: list[float], legs: list[float]) -> list[tuple[float, ...]]:
    """The Pareto-least vectors of direct bytes a source leaves on its route's links from each
    slot on, one for each pattern of direct slots and legs that can carry its block."""
    slots = len(direct)
    found = set()
    for pattern in itertools.product((False, True), repeat=slots):  # True: a leg
        relayed = sum(c for c, leg in zip(legs, pattern) if leg)
        if sum(c for c, leg in zip(direct, pattern) if not leg) + relayed < block * (1 - SLACK):
            continue
        left, amounts = max(block - relayed, 0.0), [0.0] * slots
        for i in range(slots):
            if not pattern[i]:
                amounts[i] = min(left, direct[i])
                left -= amounts[i]
        found.add(tuple(float(sum(amounts[i:])) for i in range(slots)))
    return _pareto(found)


def _pareto(vectors) -> list[tuple[float, ...]]:
    """The vectors that no other is at most in every place."""
    ordered = sorted(set(vectors), key=sum)
    kept: list[tuple[float, ...]] = []
    for v in ordered:
        if not any(all(a <= b for a, b in zip(k, v)) for k in kept):
            kept.append(v)
    return kept


def _ruled_out(time_s: float, blocks: tuple[float, ...], port: PortModel) -> bool:
    """True if no schedule of these blocks (one source each, all across one link) ends by
    time_s; False if one may, or if the search would be too long."""
    alpha, hold, beta = port.startup_s, port.hold_s, port.link_s_per_byte
    slots = 0
    while time_s - slots * hold - alpha > 0:
        slots += 1
    if slots == 0:
        return True  # no message has arrived by time_s
    if slots > SLOT_LIMIT:
        return False
    direct = [(time_s - i * hold - alpha) / beta for i in range(slots)]
    legs = [leg_bytes(time_s - i * hold - 2 * alpha, port) for i in range(slots)]
    limits = [max(time_s - (i + 1) * hold, 0.0) / beta * (1 + SLACK) for i in range(slots)]
    menus = {b: _menu(b, direct, legs) for b in set(blocks)}
    frontier = [tuple(0.0 for _ in range(slots))]
    for block in sorted(blocks, reverse=True):
        sums = [s for s in (tuple(a + b for a, b in zip(v, u)) for v in frontier for u in menus[block])
                if all(x <= lim for x, lim in zip(s, limits))]
        if not sums:
            return True
        if len(sums) > FRONTIER_LIMIT * len(menus[block]):
            return False  # a long search: not ruled out
        frontier = _pareto(sums)
    return False


def _least_time_s(blocks: tuple[float, ...], port: PortModel) -> float:
    """The largest time found ruled out for one link's blocks (0 if none)."""
    beta = port.link_s_per_byte
    low, high = 0.0, max(port.hold_s + sum(blocks) * beta, port.startup_s + max(blocks) * beta)
    for _ in range(BISECTIONS):  # high: every block in one direct message first, not ruled out
        middle = (low + high) / 2
        if _ruled_out(middle, blocks, port):
            low = middle
        else:
            high = middle
    return low  # ruled out: every schedule takes longer


def direct_or_relayed_bound_s(coll: Collective, port: PortModel, route: Route | None) -> float:
    """The bound of the module docstring; 0 where the kind is not a permutation or shift, a
    source sends several blocks, the machine names no fixed routes or link rate, or ports are
    shared between nodes (Proteus)."""
    if coll.kind not in RELAY_KINDS or route is None or port.port_of or port.link_s_per_byte <= 0:
        return 0.0
    m = coll.network_matrix
    pairs = [(int(s), int(d)) for s, d in zip(*np.nonzero(m)) if s != d]
    if not pairs or len({s for s, _ in pairs}) < len(pairs):
        return 0.0
    through: dict[Hashable, list[float]] = {}
    for s, d in pairs:
        for link in route(s, d):
            through.setdefault(link, []).append(float(m[s, d]))
    best = 0.0
    for blocks in sorted({tuple(sorted(b)) for b in through.values()}, key=sum, reverse=True):
        beta = port.link_s_per_byte
        if max(port.hold_s + sum(blocks) * beta, port.startup_s + max(blocks) * beta) <= best:
            continue  # cannot raise the largest
        best = max(best, _least_time_s(blocks, port))
    return best

