"""The busiest sender's ramp (`sender ramp`, issue 27; docs/bounds.md "An allgather's busiest
sender"): in an allgather the nodes together send every byte some node needs, so one node sends
at least the average, S = W / P; but a node starts with only its own block and can forward
only what has reached it, at its port's rate, from alpha on. Its messages, one at a time on one
port (each holding it for a start-up and its wire), are small while it knows little, so sending
S in few messages means waiting and sending it in many means start-ups.

For k messages with wire starts t_1 <= ... <= t_k and x_j bytes each:
    t_j >= j h + beta (x_1 + ... + x_(j-1)) + w   (the start-ups and wires before it, idle w)
    x_j <= K0 + max(0, t_j - alpha) / beta        (its own block, then what came in by t_j)
and the node is busy until t_k + x_k beta = k h + w + S beta. Idle at the start delays every
t_j the most, so for each k the least w is found with all of it there (`most_sent`), and
    T >= min over k of (k h + S beta + w_k).
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

BISECTIONS = 200  # halvings of the idle time's interval: far below a clock tick


def most_sent(messages: int, hold: float, alpha: float, own: float, idle: float) -> float:
    """The most bytes a node can send in `messages` messages after `idle` at the start, each
    message as large as what it holds when its wire starts (all times in byte times)."""
    sent = 0.0
    for j in range(1, messages + 1):
        start = j * hold + idle + sent
        sent += own + max(0.0, start - alpha)
    return sent


def least_idle(messages: int, hold: float, alpha: float, own: float, needed: float) -> float:
    """The least idle time (byte times) before which `messages` messages cannot carry `needed`
    bytes: a lower end of the bisection, so the bound it gives is never above the true one."""
    if most_sent(messages, hold, alpha, own, 0.0) >= needed:
        return 0.0
    low, high = 0.0, max(needed, alpha) + 1.0
    while most_sent(messages, hold, alpha, own, high) < needed:
        high *= 2
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if most_sent(messages, hold, alpha, own, middle) >= needed:
            high = middle
        else:
            low = middle
    return low


def ramp_s(needed_bytes: float, own_bytes: float, hold_s: float, startup_s: float,
           s_per_byte: float) -> float:
    """The least time a one-port node that starts with `own_bytes` can send `needed_bytes`
    (module docstring): the least over the message count k of k holds, the bytes and the idle."""
    if needed_bytes <= 0 or s_per_byte <= 0 or own_bytes <= 0:
        return 0.0
    hold, alpha = hold_s / s_per_byte, startup_s / s_per_byte
    best = float("inf")
    messages = 1
    while messages * hold_s + needed_bytes * s_per_byte < best:
        idle = least_idle(messages, hold, alpha, own_bytes, needed_bytes)
        best = min(best, messages * hold_s + (needed_bytes + idle) * s_per_byte)
        if idle == 0.0:  # more messages only add start-ups
            break
        messages += 1
    return best


def sender_ramp_bound_s(coll: Collective, port: PortModel, needed_bytes: float) -> float:
    """An allgather on ports that send one message at a time (a start-up, then its wire) and
    receive at one stream's rate: the busiest sender sends at least the average of the bytes
    the nodes need, `needed_bytes` over the collective's nodes, starting from the largest own
    block. 0 for other kinds, ports that stream several messages or nodes that share a port."""
    if coll.kind is not Kind.ALLGATHER or port.streams != 1 or port.port_of:
        return 0.0
    own = float(coll.network_matrix.max(initial=0))
    return ramp_s(needed_bytes / coll.nprocs, own, port.hold_s, port.startup_s, port.s_per_byte)
