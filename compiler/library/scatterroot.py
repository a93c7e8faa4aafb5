"""A scatter's root and the relays behind it (`scatter relays`, docs/bounds.md, "A scatter's
root and its relays").

The start-up rounds let a scatter's last node take its one block a few start-ups in; but every
block leaves the root, whose port (or whose streams, one message each) sends them a start-up
apart, and a block the root hands to another node for relaying reaches its owner only after
more start-ups. The bound weighs the two: blocks sent late cost the root's start-ups and
bytes before them, blocks sent early in few large messages cost the relays' rounds after.
"""

from __future__ import annotations

import math

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

BISECTIONS = 60  # on [0, a schedule's time]: far below the tests' rounding


def _even_scatter(coll: Collective) -> tuple[int, float] | None:
    """(receivers, block bytes) where one root sends every receiver the same block; None
    otherwise (other kinds, several senders, uneven blocks)."""
    if coll.kind is not Kind.SCATTER:
        return None
    m = coll.network_matrix
    senders = np.flatnonzero(m.any(axis=1))
    if len(senders) != 1:
        return None
    row = np.delete(m[senders[0]], senders[0])
    blocks = row[row > 0]
    if blocks.size == 0 or blocks.min() != blocks.max():
        return None
    return int(blocks.size), float(blocks[0])


def _capacity_s(window_s: float, hold_s: float, messages: int) -> float:
    """Byte-time that `messages` messages started one per hold_s from a window's start can
    each bring on one link by its end: sum over i < messages of (window_s - i hold_s)+."""
    if window_s <= 0:
        return 0.0
    started = min(messages, math.ceil(window_s / hold_s))
    return started * window_s - hold_s * started * (started - 1) / 2


def _relay_s(owners: int, port: PortModel) -> float:
    """Time after a root message arrives before the last of `owners` nodes, whose last new
    bytes it carried, is sent them by relays: 0 for one owner (the receiver), else the
    start-up rounds from one holder, (ceil(log2 owners) - 1) holds, and a start-up."""
    if owners <= 1:
        return 0.0
    return ((owners - 1).bit_length() - 1) * port.hold_s + port.startup_s


def scatter_relays_bound_s(coll: Collective, port: PortModel) -> float:
    """A scatter of b-byte blocks from one root to d receivers (docs/bounds.md, "A scatter's
    root and its relays"). Order the root's messages by the arrival of their last byte, E_1 <=
    E_2 <= ...; give each receiver w the index k(w) of the latest root message that starts the
    path of one of its block's bytes to it, and let n_k receivers have k(w) = k, N_k = n_1 +
    ... + n_k. The first k messages carry the N_k blocks whole, so
      one stream (the port runs each start-up and wire in turn): E_k >= k h + N_k b beta;
      several (each message on one link from alpha after its start, at most `streams` of
      them at once at the root): E_k >= (k - 1) h + alpha and
      N_k b beta <= sum over i < min(k, streams) of (E_k - alpha - i h)+.
    Message k's receiver holds its bytes only at E_k (a node forwards a message only once it
    has all arrived), and the nodes sent any of them by relays at most double per hold, so
    T >= E_k + (ceil(log2 n_k) - 1) h + alpha for n_k >= 2 (E_k for n_k = 1). T is at least
    the least over the groups n_k of the largest over k; for a given T, filling each group as
    far as T allows is best (moving a receiver to an earlier group leaves the later groups'
    N_k alone or drops a group), so T is found by bisection. 0 for other kinds, uneven blocks,
    several senders and ports shared between nodes."""
    found = _even_scatter(coll)
    if found is None or port.port_of or port.hold_s <= 0:
        return 0.0
    receivers, block = found
    block_s = block * port.s_per_byte
    alpha, hold, streams = port.startup_s, port.hold_s, port.streams

    def root_by(k: int, covered: int, t: float) -> bool:
        """Can the root's first k messages to arrive bring `covered` blocks by t?"""
        bytes_s = covered * block_s
        if t < (k - 1) * hold + alpha:
            return False
        if streams == 1:
            return k * hold + bytes_s <= t
        return bytes_s <= _capacity_s(t - alpha, hold, min(k, streams))

    def fits(t: float) -> bool:
        covered, k = 0, 0
        while covered < receivers:
            k += 1
            if not root_by(k, covered + 1, t):
                return False  # no later message can do better: its bound only grows with k
            low, high = 1, receivers - covered  # the largest group that fits lies in [low, high]
            while low < high:
                middle = (low + high + 1) // 2
                if root_by(k, covered + middle, t - _relay_s(middle, port)):
                    low = middle
                else:
                    high = middle - 1
            covered += low
        return True

    low, high = 0.0, alpha + receivers * (hold + block_s)  # direct sends one after another fit
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high
