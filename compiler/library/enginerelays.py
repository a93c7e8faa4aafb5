"""The `engines and relays` bound: each shared engine's own bytes, the relays poured into the others.

docs/bounds.md, "Engines and relays". `start-ups or relays` (bounds.relay_bound_s) charges
every engine's work to the average over the nodes, so where the blocks are uneven a node that
sends and receives more than the others counts no more than its share. Here each engine is
held to the schedule's time T on its own: node w starts k_w messages (h each), sends the bytes
of its own blocks and receives those for it at least once (beta each, one engine carrying both
directions), and twice each byte it relays (received, then sent on). At most k_w of w's blocks
go straight, so at least X_w - top_k_w(w) bytes of its blocks are relayed by some node. A T
that a schedule meets therefore admits counts k_w >= 1 such that every node's own work
k_w h + beta (X_w + Y_w) is at most T and the engines' room left, summed, takes every relayed
byte at 2 beta:

    sum over w of [ (T - k_w h - beta (X_w + Y_w)) / (2 beta) - (X_w - top_k_w(w)) ] >= 0.

Each node's term is concave in k_w (the (k + 1)-th message adds b_(k+1) - h / (2 beta)), so the
best count is the number of blocks with 2 beta b > h (at least 1), as in `start-ups or
relays`, or the most that fit under T if fewer. The least such T, by bisection, is the bound.
Summed over the nodes without the caps it is `start-ups or relays`, so it is never below that;
on a complete exchange of equal blocks it equals it (every node alike) and is not computed.
"""

from __future__ import annotations

import numpy as np

from phalanx.compiler.library.bisection import least_time_s
from phalanx.compiler.library.chainbound import complete_exchange_block
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective


def engine_relays_bound_s(coll: Collective, port: PortModel) -> float:
    """The least T the module docstring admits, for a one-destination kind (the caller's test:
    bounds.ONE_DESTINATION_KINDS) on one shared engine per node that moves one message at a
    time (PortModel.shared_engine, streams 1, no ports shared between nodes: the Paragon, SP2
    and CS-2). 0 elsewhere, where nothing crosses the network, and on a complete exchange of
    equal blocks (where it is `start-ups or relays`)."""
    if not port.shared_engine or port.streams != 1 or port.port_of or port.hold_s <= 0:
        return 0.0
    if complete_exchange_block(coll):
        return 0.0
    m = coll.network_matrix.astype(np.float64)  # a copy: the diagonal (kept local) is 0
    n = len(m)
    out, into = m.sum(axis=1), m.sum(axis=0)  # X_w, Y_w
    if not out.any():
        return 0.0
    hold, relay_s_per_byte = port.hold_s, 2 * port.s_per_byte
    largest = -np.sort(-m, axis=1)
    straight = np.concatenate([np.zeros((n, 1)), np.cumsum(largest, axis=1)], axis=1)  # top_k
    best = np.maximum((relay_s_per_byte * largest > hold).sum(axis=1), 1)
    own_s = port.s_per_byte * (out + into)
    senders = out > 0
    rows = np.arange(n)

    def room(time_s: float) -> float:
        """The engines' room left for relays at `time_s` less the bytes they must relay, in
        bytes; -inf where some node's own work does not fit."""
        fits = np.floor((time_s - own_s) / hold).astype(np.int64)
        k = np.where(senders, np.minimum(best, fits), 0)
        if (senders & (k < 1)).any() or (time_s < own_s).any():
            return -np.inf
        left = (time_s - k * hold - own_s) / relay_s_per_byte
        return float((left - (out - straight[rows, k])).sum())

    # feasible: each node's own work at its best count, and all the relays on one engine
    high = float((own_s + best * hold).max() + relay_s_per_byte * (out - straight[rows, best]).sum())
    return least_time_s(0.0, high, lambda t: room(t) >= 0, halvings=100)[0]
