"""The hypercube complete-exchange family: standard, direct and multiphase (Bokhari).

For P = 2^d nodes, every partition {d_1, ..., d_k} of d is a schedule (seed
003_f18cb429ce0a4177.txt Sec. 2.3): phase g is a direct (XOR) exchange inside the
subcubes spanned by a group of d_g bits, each step one combined message of
2^(d - d_g) blocks; between phases every node permutes its buffer (a local copy at
the memory-copy rate). {1, ..., 1} is Johnsson-Ho's standard exchange (Sec. 2.1),
{d} the direct exchange (Sec. 2.2).

Each phase g starts with a `barrier` phase after which its receives are posted and its
sends start (the implementations synchronize so that data transfers are "carefully
scheduled", Sec. 4). The local buffer permutation is a phase of local copy transfers
(`src == dst`, one combined copy per node) run before that barrier, so the runtime
charges `copy_time_s` of the bytes each node permutes.

`multiphase_time_s` is the theory's cost on a contention-free circuit-switched
hypercube (Sec. 2, t = lambda + tau m per message): what `auto` minimises and what
the simulated time on a real (contended) network is compared with.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from phalanx.compiler.algorithms import direct_partner
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, WHOLE, Phase, Schedule, SyncMode, Transfer
from phalanx.grammar.diagnostics import usage_error


@dataclass(frozen=True)
class ExchangeCost:
    """The four machine figures of the theory (seed 003 Table 1 gives them per machine)."""

    startup_us: float  # lambda: per message
    us_per_byte: float  # tau: per byte of a message
    copy_us_per_byte: float  # rho: local memory copy
    barrier_us: float  # one global barrier on the 2^d nodes


def log2_exact(n: int) -> int | None:
    """d with 2^d == n, None when n is not a power of two."""
    return n.bit_length() - 1 if n >= 1 and n & (n - 1) == 0 else None


def partitions(d: int, largest: int | None = None) -> Iterator[tuple[int, ...]]:
    """Every partition of d as a non-increasing tuple, e.g. 3 -> (3,), (2, 1), (1, 1, 1)."""
    largest = d if largest is None else largest
    if d == 0:
        yield ()
        return
    for first in range(min(d, largest), 0, -1):
        for rest in partitions(d - first, first):
            yield (first, *rest)


def is_equipartition(parts: tuple[int, ...]) -> bool:
    """Largest and smallest part differ by at most one: only these can be optimal (Sec. 2.3)."""
    return max(parts) - min(parts) <= 1


def algorithm_name(parts: tuple[int, ...]) -> str:
    """`standard` for {1,...,1}, `direct` for {d}, else `multiphase:2,3` (ascending, as Bokhari)."""
    if len(parts) == 1:
        return "direct"
    if max(parts) == 1:
        return "standard"
    return "multiphase:" + ",".join(str(p) for p in sorted(parts))


def family(d: int) -> tuple[str, ...]:
    """All algorithms of the family for 2^d nodes: standard, direct, then the multiphases."""
    names = [algorithm_name(p) for p in sorted(partitions(d), key=lambda p: (len(p), p))]
    return tuple(dict.fromkeys(["standard", "direct", *names])) if d >= 2 else ("direct",)


def parse_partition(algorithm: str, d: int) -> tuple[int, ...]:
    """The partition (non-increasing) that `algorithm` names for a 2^d-node exchange.

    `multiphase:2+3` is accepted for `multiphase:2,3` where a comma would split an option.
    """
    if algorithm == "standard":
        return (1,) * d
    if algorithm == "direct":
        return (d,)
    text = algorithm.removeprefix("multiphase:")
    try:
        parts = tuple(sorted((int(x) for x in text.replace("+", ",").split(",")), reverse=True))
    except ValueError:
        parts = ()
    if text == algorithm or not parts or min(parts) < 1 or sum(parts) != d:
        raise usage_error(f"'{algorithm}' is not a multiphase exchange on {2 ** d} nodes",
                          f"write multiphase:<parts> with positive parts summing to d = {d}, "
                          f"e.g. multiphase:{','.join(str(p) for p in _halves(d))}")
    return parts


def _halves(d: int) -> tuple[int, ...]:
    return (d // 2, d - d // 2) if d >= 2 else (d,)


def _bit_groups(parts: tuple[int, ...], d: int) -> list[tuple[int, int]]:
    """(shift, width) of each phase's bits, from the high bits down (Johnsson-Ho: j = d-1 .. 0)."""
    groups, top = [], d
    for width in parts:
        top -= width
        groups.append((top, width))
    return groups


def _held_blocks(r: int, done_mask: int, n: int) -> list[tuple[int, int]]:
    """Blocks (origin, final) node r holds once the bits in `done_mask` are exchanged.

    Origin agrees with r outside done_mask (not yet moved along those bits); final agrees
    with r on done_mask (already moved there).
    """
    free = [o for o in range(n) if (o ^ r) & ~done_mask & (n - 1) == 0]
    finals = [f for f in range(n) if (f ^ r) & done_mask == 0]
    return [(o, f) for o in free for f in finals]


def _shuffle_phase(m: list[list[int]], n: int, done_mask: int, before_mask: int | None) -> Phase:
    """Every node permutes the blocks it must forward: one combined local copy each.

    A block is permuted once on each node it passes through (when it first sits in the
    buffer there): `before_mask` is the previous boundary's done_mask, whose blocks were
    permuted then (None at the first boundary). The runtime tracks one letter per block and
    hop, so a block cannot be copied twice on one node.
    """
    copies = []
    for r in range(n):
        seen = set(_held_blocks(r, before_mask, n)) if before_mask is not None else set()
        copies += [Transfer(r, r, m[o][f], o, f, COMBINED)
                   for o, f in _held_blocks(r, done_mask, n)
                   if f != r and m[o][f] > 0 and (o, f) not in seen]
    return Phase.of(copies, SyncMode.BARRIER)


def _exchange_steps(m: list[list[int]], n: int, done_mask: int, shift: int,
                    width: int) -> list[Phase]:
    """Direct exchange inside the subcubes of bits [shift, shift + width)."""
    mask = (1 << width) - 1
    by_group: list[dict[int, list[tuple[int, int]]]] = []  # node -> final's group bits -> its blocks
    for r in range(n):
        buckets: dict[int, list[tuple[int, int]]] = {}
        for o, f in _held_blocks(r, done_mask, n):
            if m[o][f] > 0:
                buckets.setdefault(f >> shift & mask, []).append((o, f))
        by_group.append(buckets)
    steps = []
    for step in range(1, 1 << width):
        sends = []
        for r in range(n):
            partner = direct_partner(r, step << shift, n)
            sends += [Transfer(r, partner, m[o][f], o, f, COMBINED)
                      for o, f in by_group[r].get(partner >> shift & mask, ())]
        steps.append(Phase.of(sends))
    return steps


@lru_cache(maxsize=16)
def _moves(n: int, parts: tuple[int, ...]) -> tuple[tuple[str, int, np.ndarray], ...]:
    """(sync, message id, (src, dst, origin, final) rows) per phase for every block, whatever
    its size: the structure depends only on n and the partition, so a sweep over message
    sizes builds it once."""
    ones = [[1] * n for _ in range(n)]
    local = [Transfer(p, p, 1, p, p) for p in range(n)]
    phases: list[Phase] = [Phase.of(local, SyncMode.BARRIER)]
    done_mask, before_mask = 0, None
    for g, (shift, width) in enumerate(_bit_groups(parts, sum(parts))):
        if g > 0:
            phases.append(_shuffle_phase(ones, n, done_mask, before_mask))
            before_mask = done_mask
        phases += _exchange_steps(ones, n, done_mask, shift, width)
        done_mask |= ((1 << width) - 1) << shift
    out = []
    for k, phase in enumerate(phases):
        rows = np.array([(t.src, t.dst, t.origin, t.final) for t in phase.sends],
                        dtype=np.int64).reshape(-1, 4)
        rows.setflags(write=False)
        out.append((phase.sync, 0 if k == 0 else COMBINED, rows))
    return tuple(out)


def multiphase_phases(coll: Collective, parts: tuple[int, ...], pieces: int = 1) -> tuple[Phase, ...]:
    """The phases of the multiphase exchange of `coll` (P = 2^sum(parts)) for `parts`: the
    cached structure with the collective's block sizes, empty blocks left out. In `pieces`
    rounds, round r moving bytes [m r / pieces, m (r + 1) / pieces) of every block of m bytes
    (Transfer.offset); each round opens with the exchange's barrier."""
    m, n = coll.matrix, coll.nprocs
    phases = []
    for r in range(pieces):
        start = m * r // pieces
        size = m * (r + 1) // pieces - start
        for sync, message, rows in _moves(n, parts):
            o, f = rows[:, 2], rows[:, 3]
            sizes = size[o, f]
            keep = sizes > 0
            offsets = [WHOLE] * int(keep.sum()) if pieces == 1 else start[o, f][keep].tolist()
            phases.append(Phase.of([Transfer(s, d, b, origin, final, message, offset)
                                    for (s, d), b, origin, final, offset in
                                    zip(rows[keep, :2].tolist(), sizes[keep].tolist(),
                                        o[keep].tolist(), f[keep].tolist(), offsets)], sync))
    return tuple(phases)


def multiphase_schedule(coll: Collective, algorithm: str, pieces: int = 1) -> Schedule:
    """The schedule of `algorithm` (standard, direct or multiphase:...) for `coll`, every block
    cut into `pieces` (multiphase_phases)."""
    d = log2_exact(coll.nprocs)
    if d is None:
        raise usage_error(f"'{algorithm}' needs a power-of-two number of processors, "
                          f"not {coll.nprocs}", "use algorithm direct, or 2^d processors")
    parts = parse_partition(algorithm, d)
    return Schedule(coll.index, coll.kind, algorithm_name(parts), coll.nprocs,
                    multiphase_phases(coll, parts, pieces), coll.src, coll.dst, coll.line)


def shuffle_blocks(parts: tuple[int, ...]) -> int:
    """Blocks each node copies over all between-phase permutations, as the schedule does.

    At the first boundary every held block not yet home (n - 2^D1); at boundary g > 2 the
    blocks that arrived in phase g-1 and are not home: n - 2^(d - d_(g-1)) - 2^D(g-1) + 2^D(g-2),
    with D(g) = d_1 + ... + d_g.
    """
    d, total = sum(parts), 0
    n = 1 << d
    done = [sum(parts[:g]) for g in range(len(parts) + 1)]  # done[g] = D(g)
    for g in range(1, len(parts)):  # boundary before phase g (0-based)
        if g == 1:
            total += n - (1 << done[1])
        else:
            total += n - (1 << (d - parts[g - 1])) - (1 << done[g]) + (1 << done[g - 1])
    return total


def multiphase_time_s(parts: tuple[int, ...], block_bytes: float, cost: ExchangeCost) -> float:
    """Contention-free hypercube time of the partition (seed 003 Sec. 2, 2.3; theory of [3]).

    sum over phases of [barrier + (2^d_g - 1)(lambda + tau m 2^(d - d_g))]
    + rho m (1 + shuffled blocks): one own-block copy plus the between-phase permutations.
    """
    d = sum(parts)
    steps_us = sum(cost.barrier_us + ((1 << w) - 1) * (cost.startup_us + cost.us_per_byte
                                                       * block_bytes * (1 << (d - w)))
                   for w in parts)
    copy_us = cost.copy_us_per_byte * block_bytes * (1 + shuffle_blocks(parts))
    return (steps_us + copy_us) * 1e-6


def phase_receive_bytes(parts: tuple[int, ...], block_bytes: float) -> list[float]:
    """Bytes each node receives in each phase: what it must post receive buffers for."""
    d = sum(parts)
    return [((1 << w) - 1) * block_bytes * (1 << (d - w)) for w in parts]


def pieces_to_fit(parts: tuple[int, ...], block_bytes: int, limit_bytes: float) -> int | None:
    """The fewest pieces every block must be cut into so that no phase of the partition posts
    receives for more than `limit_bytes` (each piece's round opens with a barrier); None where
    not even one-byte pieces fit. Receive bytes grow with the piece, whose largest is
    ceil(block / pieces)."""
    largest_piece = int(limit_bytes // max(phase_receive_bytes(parts, 1)))
    if largest_piece < 1:
        return None
    return max(1, -(-block_bytes // largest_piece))

