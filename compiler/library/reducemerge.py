"""A reduce's relays pay a piece's wire and merge twice, on nodes that stream several messages
(iWarp, the torus): docs/bounds.md, "Relays' merges and forwards".

"Relay deadlines" lets a contributor's message to a relay w arrive as late as `alpha` before
the end. But w merges what it receives (one operation an element, on its processor, after the
message's last byte: runtime/interpreter.py `_send`) and holds the values only then, and its
own messages that carry them on pay their wire and the next receiver's merge again. With
`c = beta + m` (a byte's wire on one link stream and its merge):

- A node holding a group of bytes at `T - tau` gets at most
  `F(tau) = sum over i >= 0 of (tau - alpha - i h)+ / c` of them merged into the root q by T:
  its i-th message after that starts no sooner than `i h` later, and a byte it carries is
  merged at q no sooner than `alpha` plus that message's bytes' `c` after its start (later if
  it goes through another relay first).
- A contributor's j-th start-up (j >= 0) is no sooner than `j h`; a message it starts then to a
  relay, carrying x bytes of its partial (counted once: the first message of one chain per byte),
  is merged there no sooner than `j h + alpha + x c`, so `x <= F(T - j h - alpha - x c)`: the
  largest such x is r_j, and a contributor brings relays at most `R(T) = sum of r_j` bytes.
- The rest, at least `n - R(T)` bytes of each of the d contributors, go straight to q in
  messages of their own, which q's streams take at `s / beta` bytes a second and its processor
  merges at `1 / m`, neither before `alpha`: `d (n - R(T)) max(beta / s, m) <= T - alpha`.
"""

from __future__ import annotations

import math
from functools import partial

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.bisection import HALVINGS, least_time_s
from phalanx.compiler.library.reducedepth import contributors_per_root
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective


def relays_merge(coll: Collective, port: PortModel) -> bool:
    """Where the relays' merges count (module docstring): a reduce on ports that stream several
    messages, one node each, whose start-ups hold the sender."""
    return not (coll.kind is not Kind.REDUCE or port.streams == 1 or port.port_of
                or port.s_per_byte <= 0 or port.hold_s <= 0)


def merge_s_per_byte(coll: Collective, port: PortModel) -> float:
    """A receiver's merge time a byte of the partial: one operation an element."""
    return port.combine_s_per_op / coll.element_bytes if coll.element_bytes else 0.0


def relay_merges_bound_s(coll: Collective, port: PortModel) -> float:
    """The least T at which the bytes d contributors cannot bring to relays in time (module
    docstring) fit through the root; the largest over roots. 0 for other kinds, one-stream
    ports (a port held for the bytes: the contributor pipeline charges the store-and-forward
    there), shared ports (Proteus) and start-ups that do not hold the sender."""
    if not relays_merge(coll, port):
        return 0.0
    merge = merge_s_per_byte(coll, port)
    best = 0.0
    for d, n in contributors_per_root(coll):
        per_byte = max(port.s_per_byte / port.streams, merge)
        lo, hi = port.startup_s, port.startup_s + d * n * per_byte  # all straight to q fits
        fits = partial(straight_fits, d=d, n=n, port=port, merge_s_per_byte=merge, per_byte=per_byte)
        best = max(best, least_time_s(lo, hi, fits)[1])
    return best


def straight_fits(t_s: float, d: int, n: float, port: PortModel, merge_s_per_byte: float,
                  per_byte: float) -> bool:
    """Whether the bytes the relays cannot merge in by t_s, d contributors' of n each, go straight
    through the root's streams (per_byte a byte's time there) after its start-up."""
    straight = d * max(0.0, n - relayed_bytes(t_s, port, merge_s_per_byte, n))
    return straight * per_byte <= t_s - port.startup_s


def relayed_bytes(t_s: float, port: PortModel, merge_s_per_byte: float,
                  enough: float = math.inf) -> float:
    """R(T): the most bytes of one contributor that relays can have merged into the root by t_s
    (module docstring), the sum over its start-ups j h of the largest x with
    x <= F(t_s - j h - alpha - x c); the sum so far once it reaches `enough` (a partial's bytes:
    more cannot be relayed)."""
    alpha, hold = port.startup_s, port.hold_s
    per_byte = port.s_per_byte + merge_s_per_byte
    total, j = 0.0, 0
    while t_s - j * hold - 2 * alpha > 0 and total < enough:
        total += relay_share(t_s - j * hold - alpha, alpha, hold, per_byte)
        j += 1
    return total


def relay_share(window_s: float, alpha: float, hold: float, per_byte: float) -> float:
    """r_j: the largest x with x <= F(window_s - x c), a start-up's message to a relay that has
    window_s after its alpha (bisection)."""
    lo, hi = 0.0, window_s / per_byte
    for _ in range(HALVINGS):
        mid = (lo + hi) / 2
        fits = mid <= forwarded_bytes(window_s - mid * per_byte, alpha, hold, per_byte)
        lo, hi = (mid, hi) if fits else (lo, mid)
    return lo


def forwarded_bytes(tau_s: float, alpha: float, hold: float, per_byte: float) -> float:
    """F(tau): the most bytes a node holding them tau_s before the end can have merged into the
    root by then, its messages `hold` apart, each `alpha` plus its bytes' `per_byte`."""
    if tau_s <= alpha:
        return 0.0
    messages = math.ceil((tau_s - alpha) / hold)  # those with tau - alpha - i h > 0
    return (messages * (tau_s - alpha) - hold * messages * (messages - 1) / 2) / per_byte
