"""A reduce's contributor that sends to the root spends a start-up on it, which its relays then
miss (iWarp, the torus): docs/bounds.md, "Straight messages' start-ups".

"Relays' merges" (reducemerge.py) lets every contributor bring relays r_j bytes with each of its
start-ups j (at j h at the soonest) and still send its rest straight to the root q, from alpha
on, as if that message took no start-up. But a message goes to one node: the start-ups whose
message goes to q bring relays nothing. Call a contributor's first start-up to q its *class* k.
Its relays then get at most `R - r_k` bytes (R the sum of every r_j), so at least
`g_k = n - R + r_k` of its bytes go to q, all in messages started at k h or later, each
`a_j = (T - j h - alpha) / c` bytes at most (one stream, then q's merge). q's streams and
processor take the bytes of the messages started from k h on only from `k h + alpha`, at
`max(beta / s, m)` a byte, so for every k

    sum over the contributors of class k or later of g_class <= C_k = (T - k h - alpha) / max(beta / s, m).

The most contributors these C_k admit (counts relaxed to fractions) come from the latest classes
first: a later class costs less a contributor (r_j falls with j) and only the suffixes up to it
(max_contributors). T is feasible only if all d contributors fit, or if a contributor can send
no message to q at all (R >= n). The bound is the least such T (bisection).
"""

from __future__ import annotations

import math
from functools import partial

from phalanx.compiler.library.bisection import least_time_s
from phalanx.compiler.library.reducedepth import contributors_per_root
from phalanx.compiler.library.reducemerge import merge_s_per_byte, relay_share, relays_merge
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective


def straight_startups_bound_s(coll: Collective, port: PortModel) -> float:
    """The least T at which the d contributors' straight messages fit through the root (module
    docstring); the largest over roots. 0 where "relays' merges" does not apply (other kinds,
    one-stream ports, shared ports, start-ups that do not hold the sender)."""
    if not relays_merge(coll, port):
        return 0.0
    merge = merge_s_per_byte(coll, port)
    best = 0.0
    for d, n in contributors_per_root(coll):
        lo, hi = port.startup_s, 2 * port.startup_s + d * n * (port.s_per_byte + merge)
        while not fits(hi, d, n, port, merge):  # a top that fits (fits grows with T)
            hi *= 2
        best = max(best, least_time_s(lo, hi, partial(fits, d=d, n=n, port=port, merge_s_per_byte=merge))[1])
    return best


def fits(t_s: float, d: int, n: float, port: PortModel, merge_s_per_byte: float) -> bool:
    """Whether d contributors of n bytes can each relay or send straight their partial by t_s."""
    relays = relay_shares(t_s, port, merge_s_per_byte, n)
    total = sum(relays)
    if total >= n:  # every contributor may leave q alone
        return True
    return max_contributors(t_s, n, relays, port, merge_s_per_byte) >= d


def relay_shares(t_s: float, port: PortModel, merge_s_per_byte: float, n: float) -> list[float]:
    """r_j for each start-up j that can still bring anything to q by t_s (reducemerge.py): the
    largest x with x <= F(t_s - j h - alpha - x c); those past the relays' reach are 0. Stops
    once the sum reaches n plus r_0 (then every class relays n and costs nothing)."""
    alpha, hold = port.startup_s, port.hold_s
    per_byte = port.s_per_byte + merge_s_per_byte
    out: list[float] = []
    j, total = 0, 0.0
    while t_s - j * hold - alpha > 0:
        share = relay_share(t_s - j * hold - alpha, alpha, hold, per_byte)
        out.append(share)
        total += share
        if total >= n + out[0]:
            break
        j += 1
    return out


def max_contributors(t_s: float, n: float, relays: list[float], port: PortModel,
                     merge_s_per_byte: float) -> float:
    """The most contributors (fractions allowed) whose straight bytes q's suffixes C_k take:
    latest class first, class k getting what C_k leaves after the later classes (C_k falls
    with k, so C_k is the least of the suffixes a class-k contributor loads), each costing g_k.
    A class whose start-ups from k on cannot carry its g_k (a_j, or r_j where it relays) is out;
    a class of g_k <= 0 takes any number."""
    alpha, hold = port.startup_s, port.hold_s
    per_byte = port.s_per_byte + merge_s_per_byte
    q_per_byte = max(port.s_per_byte / port.streams, merge_s_per_byte)
    total = sum(relays)
    straight = [max(0.0, (t_s - j * hold - alpha) / per_byte) for j in range(len(relays))]
    before = [0.0]  # sum of r_i for i < k
    for r in relays:
        before.append(before[-1] + r)
    load, count, after = 0.0, 0.0, 0.0  # after: sum of max(r_i, a_i) for i > k
    for k in reversed(range(len(relays))):
        capacity = (t_s - k * hold - alpha) / q_per_byte
        cost = n - total + relays[k]
        carried = before[k] + straight[k] + after  # the most its start-ups can move
        after += max(relays[k], straight[k])
        if capacity <= load or straight[k] <= 0 or carried < n:
            continue
        if cost <= 0:
            return math.inf
        count += (capacity - load) / cost
        load = capacity
    return count
