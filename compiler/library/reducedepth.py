"""A reduce's root over three levels: relays cost their senders start-ups (docs/bounds.md,
"A reduce's root over three levels").

The fan-in bound (bounds.py) lets every element of the partial reach the root q through one
relay, at 2 alpha plus its bytes. This bound charges what such relays cost: a contributor
whose values go through relays must send to each of them, and it has few messages to send
them in. On a port that holds its node h for each start-up and beta for each byte it sends
(one message at a time, or one engine for both directions), a contributor v sends its n bytes
at least once, so it starts k_v <= K = floor((T - n beta) / h) messages and reaches at most K
nodes other than q.

Cut the n bytes (any unit; bytes below) into those that some contributor's value reaches q
only by chains of three messages or more (a fraction f: each reaches q no sooner than
3 alpha, assumption 2, so T >= 3 alpha + f n beta) and the others, each of whose d values
comes straight from its contributor (v in R_x, the nodes that send x to q) or through one
relay w in R_x that v sends to. Of an element x of the others q takes r_x = |R_x| values,
in all A <= A0 - f n with A0 = (T - alpha) / beta; relay w takes c_{w,x} <= i_w values of x
(i_w: the contributors that send to w), in [alpha, T - alpha], so sum over x of c_{w,x} <= B =
(T - 2 alpha) / beta and <= i_w a_w (a_w: the x with w in R_x, sum a_w <= A); on a shared
engine where every node but q contributes, w's engine also sends w's own n bytes after alpha,
so B = (T - 2 alpha - n beta) / beta. The values that go through relays, d (1 - f) n - A at
least, are then at most sum over w of min(i_w a_w, B) <= sqrt(sum i_w  sum a_w  B)
<= sqrt(d K A B) (min(x, B) <= sqrt(x B), then Cauchy-Schwarz):

    d (1 - f) n - A <= sqrt(d K A B),   A0 >= n (q takes a value of every element).

Where a node streams s messages at once (iWarp, the torus: four links, beta the link's time
per byte) its processor, not its port, is held h = alpha - hop for each start-up while earlier
messages stream, and a node takes in at most s / beta bytes a second: every beta above is then
beta / s, and K counts the messages a contributor can start to relays, each by T - 2 alpha (the
relay's message starts no sooner than alpha after it, and arrives alpha later), h apart from 0:
K = floor((T - 2 alpha) / h) + 1.

With u = A0 - f n (the largest A), g(u) = (d - 1) u - sqrt(d K B u) + d (n - A0) <= 0 must hold
for some u in [A0 - f_max n, A0], f_max = (T - 3 alpha) / (n beta) clamped to [0, 1]: a
quadratic in sqrt(u), so its least over the interval is exact. Feasibility only grows with T,
so the bound is the least feasible T, found by bisection (the infeasible end returned).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import partial

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bisection import least_time_s
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective


def feasible(t_s: float, d: int, n: float, port: PortModel, relays_send: bool = False) -> bool:
    """Whether some split of a reduce of d contributors' n-byte partials into elements of three
    levels or more and elements of two levels at most meets every constraint by time t_s.
    `relays_send`: every relay is a contributor whose own n bytes leave it through the one
    engine that takes the values it relays (a shared engine, every node but q contributing)."""
    alpha, hold, streams = port.startup_s, port.hold_s, port.streams
    beta = port.s_per_byte / streams  # a node's receive rate, over all its streams
    if streams == 1:  # the port is held for each start-up and each byte sent
        if t_s < hold + n * beta:  # every contributor sends its n bytes once at least
            return False
        k = math.floor((t_s - n * beta) / hold) if hold > 0 else d
    else:  # the processor is held for each start-up, the bytes stream beside it
        if t_s < alpha + n * beta:
            return False
        # a message to a relay starts by T - 2 alpha, the contributor's start-ups hold apart
        k = max(0, math.floor((t_s - 2 * alpha) / hold) + 1) if hold > 0 else d
    a0 = (t_s - alpha) / beta  # bytes through q's port after the first start-up
    if a0 < n:
        return False
    own_s = n * beta if relays_send else 0.0
    b = max(0.0, (t_s - 2 * alpha - own_s) / beta)  # what a relay takes in before it forwards
    c = d * max(k, 0) * b
    f_max = min(1.0, max(0.0, (t_s - 3 * alpha) / (n * beta))) if n * beta > 0 else 1.0
    lo, hi = math.sqrt(max(0.0, a0 - f_max * n)), math.sqrt(a0)
    s = min(max(math.sqrt(c) / (2 * (d - 1)), lo), hi) if d > 1 else hi
    return (d - 1) * s * s - math.sqrt(c) * s + d * (n - a0) <= 0


def contributors_per_root(coll: Collective) -> Iterator[tuple[int, float]]:
    """For each node q that a reduce's partials reach: its contributors d (the other nodes with
    bytes for q) and the fewest bytes n one of them sends it (the reduce bounds' d and n)."""
    m = coll.network_matrix
    for q in range(coll.nprocs):
        column = np.delete(m[:, q], q)
        d = int((column > 0).sum())
        if d:
            yield d, float(column[column > 0].min())


def three_level_bound_s(coll: Collective, port: PortModel) -> float:
    """The least time at which a reduce's root can have every contributor's partial, charging
    relays to their senders' start-ups (module docstring); the largest over roots. 0 for other
    kinds or a port that is shared (Proteus)."""
    if coll.kind is not Kind.REDUCE or port.port_of or port.s_per_byte <= 0:
        return 0.0
    best = 0.0
    for d, n in contributors_per_root(coll):
        relays_send = port.shared_engine and d == coll.nprocs - 1
        lo, hi = 0.0, 3 * port.startup_s + d * n * port.s_per_byte / port.streams + port.hold_s
        while not feasible(hi, d, n, port, relays_send):  # never more than all partials straight to q
            hi *= 2
        holds = partial(feasible, d=d, n=n, port=port, relays_send=relays_send)
        best = max(best, least_time_s(lo, hi, holds)[0])
    return best


def relay_capacity_bytes(t_s: float, port: PortModel) -> float:
    """The most bytes a contributor's messages can bring to relays in time for the relays to
    forward them by t_s: its i-th start-up is no sooner than (i - 1) h, a message's last byte
    arrives alpha + its bytes' wire after its start, and a relay's own message to the root
    starts by t_s - alpha."""
    alpha, hold, beta = port.startup_s, port.hold_s, port.s_per_byte
    if hold <= 0:
        return math.inf
    slots = max(0, math.floor((t_s - 2 * alpha) / hold) + 1)
    return sum(t_s - 2 * alpha - i * hold for i in range(slots)) / beta


def deadline_bound_s(coll: Collective, port: PortModel) -> float:
    """A reduce on nodes that stream several messages (iWarp, the torus): what a contributor
    cannot bring to relays in time (relay_capacity_bytes) it sends straight to the root, whose
    streams take at most `streams` link-rate streams from alpha on; the least t_s at which d
    contributors' n bytes fit (docs/bounds.md, "Relays' deadlines"); the largest over roots.
    0 for other kinds, one-stream ports (the fan-in and three levels bounds are stronger there)
    and shared ports (Proteus)."""
    if coll.kind is not Kind.REDUCE or port.streams == 1 or port.port_of or port.s_per_byte <= 0:
        return 0.0
    alpha, beta, streams = port.startup_s, port.s_per_byte, port.streams
    best = 0.0
    for d, n in contributors_per_root(coll):
        lo, hi = 0.0, alpha + d * n * beta / streams  # every partial straight to the root fits
        best = max(best, least_time_s(lo, hi, partial(deadlines_met, d=d, n=n, port=port))[0])
    return best


def deadlines_met(t_s: float, d: int, n: float, port: PortModel) -> bool:
    """Whether the bytes d contributors of n bytes each cannot bring to relays in time fit
    through the root's streams by t_s (deadline_bound_s)."""
    straight = d * max(0.0, n - relay_capacity_bytes(t_s, port))
    return t_s >= port.startup_s and straight <= port.streams * (t_s - port.startup_s) / port.s_per_byte
