"""A reduce's contributor pipeline: relayed pieces cost a store-and-forward each (docs/bounds.md,
"A reduce's contributors in pieces").

A contributor v other than the root q must get its value of every element to q. For each
element take one chain of messages that carries v's value to q, and group the elements by the
chain's first message, v's own. Sort v's messages with a nonempty group by when they end, M_1,
..., M_k, groups of x_1, ..., x_k bytes (x_1 + ... + x_k = n). v's port (or its one engine)
runs each message's start-up and wire one at a time, so M_j ends no sooner than
j alpha + (x_1 + ... + x_j) beta. If M_j goes to a relay w (not q), w holds its bytes only once
it has all arrived, and sends the group's x_j bytes (a value of each element) after that, in
messages of its own: the last ends no sooner than alpha + x_j beta after M_j:

    T >= (j + 1) alpha + (x_1 + ... + x_j + x_j) beta     for every relayed M_j.

Counting v's relayed messages only (their rank and byte prefix are no more than in the full
order), the bytes v can relay by T are at most G(T), the greedy sum: each x_j as large as its
constraint allows given the ones before (a larger x_j lowers x_(j+1)'s allowance by half as
much, so the greedy is the largest). The other n - G(T) bytes or more go straight to q, from
each of the d contributors, so q's port takes max(n, d (n - G(T))) bytes after alpha:

    T >= alpha + max(n, d (n - G(T))) beta.

On a shared engine where every node but q contributes, a relay w is a contributor too: its one
engine takes M_j's x_j bytes (not before alpha), sends its own n bytes and starts a message
carrying the group after M_j ends, and a message of its own before that would cost another
start-up, so T >= 2 alpha + (n + x_j) beta: each piece is at most (T - 2 alpha - n beta) / beta
(the greedy with that cap is still the largest: a larger x_j never lowers x_j + x_(j+1)).

Both hold for every schedule ending by T; G only grows with T, so the bound is the least T that
meets the second, found by bisection. It assumes the port model's one message at a time with
the start-up holding the sender (hold_s = startup_s), store and forward of whole messages, and
one port per node; no merges are charged.
"""

from __future__ import annotations

import math

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.reducedepth import contributors_per_root
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

BISECTIONS = 60


def relayed_bytes(t_s: float, port: PortModel, piece_cap: float = math.inf) -> float:
    """G(T): the most bytes one contributor can send through relays by `t_s` (module docstring):
    x_j = (T - (j + 1) alpha - (x_1 + ... + x_(j-1)) beta) / (2 beta), at most `piece_cap`,
    while positive."""
    alpha, beta = port.startup_s, port.s_per_byte
    total, j = 0.0, 1
    while True:
        piece = min(piece_cap, (t_s - (j + 1) * alpha - total * beta) / (2 * beta))
        if piece <= 0:
            return total
        total += piece
        j += 1


def feasible(t_s: float, d: int, n: float, port: PortModel, relays_send: bool = False) -> bool:
    """Whether d contributors' n-byte partials can reach the root by `t_s`: what they cannot
    relay in time goes straight to the root's port. `relays_send`: every relay is a contributor
    whose own n bytes leave it through the one engine that takes the pieces (module docstring)."""
    alpha, beta = port.startup_s, port.s_per_byte
    cap = (t_s - 2 * alpha - n * beta) / beta if relays_send else math.inf
    straight = max(0.0, n - relayed_bytes(t_s, port, cap))
    return port.startup_s + max(n, d * straight) * port.s_per_byte <= t_s


def contributor_pipeline_bound_s(coll: Collective, port: PortModel) -> float:
    """The least time at which a reduce's root can have every contributor's partial when each
    relayed piece pays a store-and-forward (module docstring); the largest over roots. 0 for
    other kinds, a port that streams several messages (iWarp, the torus), is shared (Proteus) or
    frees its sender before the start-up ends."""
    if (coll.kind is not Kind.REDUCE or port.streams != 1 or port.port_of or port.latency_s
            or port.startup_s <= 0 or port.s_per_byte <= 0):
        return 0.0
    best = 0.0
    for d, n in contributors_per_root(coll):
        relays_send = port.shared_engine and d == coll.nprocs - 1
        lo, hi = 0.0, port.startup_s + d * n * port.s_per_byte  # every partial straight to q
        for _ in range(BISECTIONS):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if feasible(mid, d, n, port, relays_send) else (mid, hi)
        best = max(best, lo)
    return best
