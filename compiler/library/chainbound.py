"""The `rounds and relays` bound: start-up rounds and the relays' bytes counted together.

docs/bounds.md, "Rounds and relays". In a one-destination kind, cut time into slots of one
hold h (slot of a message = floor(start / h)). A node starts at most one message per slot
(assumption 1), and a message that forwards a byte starts at least alpha >= h after the one
that brought it (2, 4), in a later slot. Follow one byte position x of a source r's blocks:
the messages that carry it to a destination form a chain whose slots rise, and the chain is
fixed by its slots (r's message in the first, its receiver's in the second, ...), so with S
slots in all, at most C(S, j) of r's destinations are reached by chains of j messages, and at
most C(S, j) - C(S - k, j) where r starts k messages (every chain begins with one of them). Each
byte of a chain of j messages costs j byte times on the senders' ports (2j on shared engines).
The ports are busy for every start-up (h) and every such byte, and no port longer than the
schedule: with S slots, T is at least the average over the P nodes of each node's least sum
over its message count k; and the latest start is in slot S - 1, so T >= (S - 1) h + alpha.
The bound is the least over S of the larger of the two. Where a start-up costs far more than a
block, few slots force long chains (Bruck et al. 1997's count for rounds, here for schedules
out of step); with many slots it is the `start-ups or relays` bound.
"""

from __future__ import annotations

import math

import numpy as np

from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

MORE_SLOTS = 16  # slots counted past the fewest (ceil(log2(d + 1))), beyond which relays_s stands in


def chain_lengths(slots: int, messages: int, destinations: int) -> np.ndarray | None:
    """The least chain lengths, shortest first, of `destinations` distinct chains from a node
    that starts `messages` messages in `slots` slots. A chain that begins with the node's
    message in slot s takes its other j - 1 slots from the S - 1 - s after it, so at most
    C(S - 1 - s, j - 1) are j long; over k distinct slots that is most for slots 0 .. k - 1,
    C(S, j) - C(S - k, j) in all, 2^S - 2^(S - k) chains of any length. None where they
    cannot reach every destination."""
    if destinations > 2 ** slots - 2 ** (slots - messages):
        return None
    lengths: list[int] = []
    j = 1
    while len(lengths) < destinations:
        room = math.comb(slots, j) - math.comb(slots - messages, j)
        lengths += [j] * min(room, destinations - len(lengths))
        j += 1
    return np.array(lengths, dtype=np.float64)


def ports_busy_s(blocks: np.ndarray, slots: int, port: PortModel) -> float:
    """The ports' busy time summed over the nodes (rows of `blocks`, each node's blocks for
    others, largest first): each node's least over its message count k of k holds plus its
    data's chain bytes. For every byte position x the blocks longer than x take the shortest
    chains, so the sum over x is the sorted blocks times the sorted lengths. inf where some
    node cannot reach its destinations in `slots` slots."""
    each = 2.0 if port.shared_engine else 1.0
    counts = (blocks > 0).sum(axis=1)
    least = np.where(counts > 0, np.inf, 0.0)
    for n in np.unique(counts[counts > 0]):
        rows = np.flatnonzero(counts == n)
        chosen = [(k, found) for k in range(1, min(slots, int(n)) + 1)
                  if (found := chain_lengths(slots, k, int(n))) is not None]
        if not chosen:
            continue
        lengths = np.zeros((blocks.shape[1], len(chosen)))
        for column, (_k, found) in enumerate(chosen):
            lengths[:int(n), column] = found
        holds_s = np.array([k for k, _found in chosen]) * port.hold_s
        busy = holds_s + each * port.s_per_byte * (blocks[rows] @ lengths)
        least[rows] = busy.min(axis=1)
    return float(least.sum())


def complete_exchange_block(coll: Collective) -> int:
    """The one block every node sends every other where the collective is a complete exchange
    of equal blocks, else 0; read off the matrix without copying it (P x P at scale)."""
    m = coll.matrix
    n = len(m)
    block = int(m[0, 1]) if n > 1 else 0
    if block <= 0:
        return 0
    off_diagonal = np.count_nonzero(m == block) - np.count_nonzero(np.diagonal(m) == block)
    return block if off_diagonal == n * (n - 1) else 0


def node_blocks(coll: Collective) -> np.ndarray | None:
    """Each node's blocks for others, largest first, as far as the most any node sends (rows
    of `ports_busy_s`); one row where every node's are the same (a complete exchange), so
    nothing is sorted. None where nothing crosses the network."""
    n = coll.nprocs
    block = complete_exchange_block(coll)
    if block:
        return np.full((1, n - 1), float(block))
    m = coll.network_matrix  # a copy, sorted in place
    m.sort(axis=1)
    counts = (m > 0).sum(axis=1)
    most = int(counts.max())
    if most == 0:
        return None
    return m[:, :-most - 1:-1].astype(np.float64)


def rounds_relays_bound_s(coll: Collective, port: PortModel, relays_s: float) -> float:
    """The least over the slots S of the larger of (S - 1) h + alpha and the ports' average
    busy time with S slots (module docstring). `relays_s`, the `start-ups or relays` bound, is
    that average with slots unlimited, below it for every S: past MORE_SLOTS slots beyond the
    fewest the bound takes the larger of it and the time of that many slots instead of
    counting on. The busy time never rises with S (more slots allow more chains) and the last
    start's time does, so the count stops once the busy time is below either. 0 where a port
    streams several messages, is shared between nodes, or a start-up holds its sender for
    nothing. For the one-destination kinds only (the caller's
    test: bounds.ONE_DESTINATION_KINDS), whose every byte serves one destination."""
    if port.streams != 1 or port.port_of or port.hold_s <= 0:
        return 0.0
    blocks = node_blocks(coll)
    if blocks is None:
        return 0.0
    first = math.ceil(math.log2(blocks.shape[1] + 1))

    def last_start_s(slots: int) -> float:
        return (slots - 1) * port.hold_s + port.startup_s

    best = max(relays_s, last_start_s(first + MORE_SLOTS))
    if ports_busy_s(blocks, first + MORE_SLOTS - 1, port) / len(blocks) >= best:
        return best  # fewer slots keep the ports busy longer still
    for slots in range(first, first + MORE_SLOTS):
        if last_start_s(slots) >= best:
            break
        busy_s = ports_busy_s(blocks, slots, port) / len(blocks)  # the average over the nodes
        best = min(best, max(last_start_s(slots), busy_s))
        if busy_s <= max(last_start_s(slots), relays_s):
            break  # more slots start later and their busy time falls no further than this
    return best
