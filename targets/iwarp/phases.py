"""The optimal phased AAPC of 001_569dde0e56ec3e6f.txt Sec. 2.1 on a bidirectional n x n torus.

1-D ring phases (n a multiple of 8), as chains of four messages:
  clockwise (a, b), 0 <= a < b < n/2: a -> b -> a+n/2 -> b+n/2 -> a (hops h, n/2-h, h, n/2-h);
  counterclockwise: the same four messages reversed.
  class 3 (footnote 3), for even a: clockwise a -> a+n/2 and a+n/2 -> a, with the send-to-self
  messages of a+1 and a+1+n/2; its counterclockwise partner is a different phase over the same
  four nodes: a+1 -> a+1+n/2 and back counterclockwise, with the self messages of a and a+n/2.
  (Reversing the clockwise one literally would send a <-> a+n/2 twice.)
Tuples M_0..M_{n/2-1}: M_0 holds the class-3 phases (0,0), (2,2), ...; M_1.. are the rounds of a
round-robin tournament among the n/2 upper-half nodes. The 2-D phases are
  M_i . r^k(M_j) + Mbar_i . r^(k+1)(Mbar_j)   and   M_i . r^k(Mbar_j) + Mbar_i . r^(k+1)(M_j)
for i, j < n/2 and k < n/4: n^3/8 phases of 8n messages. A 2-D message u x v moves as u in X,
then as v in Y: exactly the e-cube route of topology.py.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from phalanx.targets.iwarp.topology import ROUTE_CHUNK, Torus, ring_steps, route_links

# A 1-D message: (src, dst, signed step); a 1-D phase: 4 of them; a tuple: n/4 phases.
Message1D = tuple[int, int, int]


def tournament_rounds(players: int) -> list[list[tuple[int, int]]]:
    """Round-robin rounds (circle method): every pair a < b meets exactly once."""
    ring = list(range(players))
    rounds = []
    for _ in range(players - 1):
        games = [tuple(sorted((ring[i], ring[players - 1 - i]))) for i in range(players // 2)]
        rounds.append(sorted(games))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return sorted(rounds)


def ring_phase(a: int, b: int, n: int, clockwise: bool) -> list[Message1D]:
    """The (a, b) chain of four messages; (a, a) is a class-3 phase (a even: clockwise)."""
    half = n // 2
    if a == b:
        runner, sitter = (a, a + 1) if clockwise else (a + 1, a)
        sign = 1 if clockwise else -1
        return [(runner, runner + half, sign * half), (runner + half, runner, sign * half),
                (sitter, sitter, 0), (sitter + half, sitter + half, 0)]
    h = b - a
    cw = [(a, b, h), (b, a + half, half - h), (a + half, b + half, h), (b + half, a, half - h)]
    if clockwise:
        return cw
    return [(d % n, s % n, -step) for s, d, step in cw]


def ring_tuples(n: int, clockwise: bool) -> list[list[list[Message1D]]]:
    """M_0 .. M_{n/2-1} (or their counterclockwise Mbar), each n/4 node-disjoint 1-D phases."""
    half = n // 2
    m0 = [ring_phase(a, a, n, clockwise) for a in range(0, half, 2)]
    rounds = [[ring_phase(a, b, n, clockwise) for a, b in games]
              for games in tournament_rounds(half)]
    return [[[(s % n, d % n, st) for s, d, st in p] for p in t] for t in [m0, *rounds]]


def _dot(p_tuple: np.ndarray, q_tuple: np.ndarray, n: int) -> np.ndarray:
    """Overlay of p_l x q_l: rows (src, dst, step_x, step_y) of 2-D messages on node ids y*n+x."""
    p, q = p_tuple[:, :, None, :], q_tuple[:, None, :, :]
    shape = (p_tuple.shape[0], 4, 4)
    src = np.broadcast_to(q[..., 0] * n + p[..., 0], shape)
    dst = np.broadcast_to(q[..., 1] * n + p[..., 1], shape)
    sx, sy = np.broadcast_to(p[..., 2], shape), np.broadcast_to(q[..., 2], shape)
    return np.stack([src, dst, sx, sy], axis=-1).reshape(-1, 4)


@lru_cache(maxsize=8)
def phased_torus_phases(n: int) -> np.ndarray:
    """All n^3/8 phases: int64 array (phases, 8n, 4) of (src, dst, step_x, step_y)."""
    if n < 8 or n % 8:
        raise ValueError(f"the phased AAPC needs an n x n torus with n a multiple of 8, got {n}")
    cw, ccw = np.array(ring_tuples(n, True)), np.array(ring_tuples(n, False))
    quarter, half = n // 4, n // 2
    # filled in place: a list of the phases stacked at the end held the table twice (1 GB at 64x64)
    phases = np.empty((n ** 3 // 8, 8 * n, 4), dtype=np.int64)
    index = 0
    for i in range(half):
        for j in range(half):
            for k in range(quarter):
                for first, second in ((cw[j], ccw[j]), (ccw[j], cw[j])):
                    a = _dot(cw[i], np.roll(first, -k, axis=0), n)
                    phases[index, :len(a)] = a
                    phases[index, len(a):] = _dot(ccw[i], np.roll(second, -(k + 1), axis=0), n)
                    index += 1
    phases.setflags(write=False)
    return phases


def phase_problems(torus: Torus, phases: np.ndarray, limit: int = 10,
                   links: np.ndarray | None = None) -> list[str]:
    """The proof of Sec. 2.1: empty when every phase uses every directed link exactly once,
    every node sends and receives at most one message per phase, every route is the e-cube
    route, and every (source, destination) pair appears exactly once over all phases.
    Counted with numpy, a block of phases at a time (32x32 has 4,096 phases of 256 messages);
    `links`, the phases' e-cube route links when already known (`construction_links`)."""
    problems: list[str] = []
    nodes, nlinks = torus.nnodes, torus.nlinks
    # every pair's count in one pass (a count array per block was 512 passes over 134 MB at 64x64)
    pairs = np.bincount((np.asarray(phases[:, :, 0], dtype=np.int64) * nodes + phases[:, :, 1]).ravel(),
                        minlength=nodes * nodes)
    per_block = max(1, ROUTE_CHUNK // max(phases.shape[1] * (torus.rows + torus.cols), 1))
    for lo in range(0, len(phases), per_block):
        block = np.asarray(phases[lo:lo + per_block], dtype=np.int64)
        src, dst, sx, sy = (block[:, :, c] for c in range(4))
        ecube = (sx == ring_steps(src % torus.cols, dst % torus.cols, torus.cols)) & \
                (sy == ring_steps(src // torus.cols, dst // torus.cols, torus.rows))
        hops = (links[lo:lo + per_block] if links is not None
                else route_links(torus, src.ravel(), dst.ravel())).reshape(len(block), -1)
        phase_of = np.broadcast_to(np.arange(len(block))[:, None], hops.shape)
        used = hops >= 0
        counts = np.bincount(phase_of[used] * nlinks + hops[used],
                             minlength=len(block) * nlinks).reshape(len(block), nlinks)
        sends = _counts_per_phase(src, nodes)
        receives = _counts_per_phase(dst, nodes)
        if ecube.all() and (sends <= 1).all() and (receives <= 1).all() and (counts == 1).all():
            continue  # the block holds: no phase to name (32,768 phases of one Python step each at 64x64)
        for i in range(len(block)):
            k = lo + i
            problems += [f"phase {k}: {a}->{b} does not take its e-cube route"
                         for a, b in zip(src[i][~ecube[i]].tolist(), dst[i][~ecube[i]].tolist())]
            for what, busy in (("sends", sends[i]), ("receives", receives[i])):
                problems += [f"phase {k}: node {v} {what} {busy[v]} messages"
                             for v in np.flatnonzero(busy > 1).tolist()]
            idle = int((counts[i] == 0).sum())
            if idle:
                problems.append(f"phase {k}: {idle} directed links are idle")
            problems += [f"phase {k}: {torus.link_name(link)} is used {counts[i, link]} times"
                         for link in np.flatnonzero(counts[i] > 1).tolist()]
            if len(problems) >= limit:
                return problems[:limit]
    missing = int((pairs == 0).sum())
    if missing:
        problems.append(f"{missing} (source, destination) pairs never appear")
    problems += [f"pair {divmod(p, nodes)} appears {pairs[p]} times"
                 for p in np.flatnonzero(pairs > 1).tolist()]
    return problems[:limit]


def _counts_per_phase(column: np.ndarray, nodes: int) -> np.ndarray:
    """(phases, nodes) counts of each node in `column` (phases, messages)."""
    rows = np.arange(len(column))[:, None] * nodes
    return np.bincount((rows + column).ravel(), minlength=len(column) * nodes).reshape(-1, nodes)


@lru_cache(maxsize=4)
def construction_links(n: int) -> np.ndarray:
    """E-cube route links of every message of every phase of the n x n construction:
    (phases, messages, max hops), -1 padded. The proof and the fast path both use it."""
    table = phased_torus_phases(n)
    flat = route_links(Torus(n, n), table[:, :, 0].ravel(), table[:, :, 1].ravel())
    flat.setflags(write=False)
    return flat.reshape(table.shape[0], table.shape[1], -1)


@lru_cache(maxsize=4)
def construction_problems(n: int) -> tuple[str, ...]:
    """`phase_problems` of the n x n construction itself, computed once per n, its routes a
    block of phases at a time: construction_links (the fast path's) holds all of them, 17 GB
    with their pools at 64x64."""
    return tuple(phase_problems(Torus(n, n), phased_torus_phases(n)))


def construction_subset_problems(n: int, rows: np.ndarray, offsets: np.ndarray,
                                 limit: int = 10) -> list[str]:
    """A schedule's transfers (rows of its (transfers, 7) table, phase k's rows from offsets[k]
    to offsets[k + 1]) that are not a message of the n x n construction's phase k, or whose
    pair an earlier transfer already sent; in row order, at most `limit`. Counted with numpy
    over the table: a pair's phase is looked up in one nodes x nodes array, which holds where
    every pair is in one phase of the construction (construction_problems proves it; where it
    does not hold, that proof's problems come first and refuse the schedule anyway)."""
    if limit <= 0:
        return []
    table = phased_torus_phases(n)
    nodes = n * n
    phase_of_pair = np.full(nodes * nodes, -1, dtype=np.int32)
    phase_of_pair[table[:, :, 0] * nodes + table[:, :, 1]] = \
        np.arange(len(table), dtype=np.int32)[:, None]
    src, dst = rows[:, 0], rows[:, 1]
    phase = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    inside = (src >= 0) & (src < nodes) & (dst >= 0) & (dst < nodes)
    pair = np.where(inside, src * nodes + dst, 0)
    foreign = ~inside | (phase_of_pair[pair] != phase)
    del phase_of_pair
    repeated = np.zeros(len(rows), dtype=bool)
    at = np.flatnonzero(inside)
    if np.bincount(pair[at], minlength=nodes * nodes).max(initial=0) > 1:  # no sort when none repeats
        order = np.argsort(pair[at], kind="stable")
        ordered = pair[at][order]
        repeated[at[order[np.flatnonzero(ordered[1:] == ordered[:-1]) + 1]]] = True
    out = []
    for i in np.flatnonzero(foreign | repeated)[:limit].tolist():
        k, a, b = int(phase[i]), int(src[i]), int(dst[i])
        out.append(f"phase {k}: {a}->{b} is not a message of the construction's phase {k}"
                   if foreign[i] else f"phase {k}: pair {a}->{b} appears twice")
    return out
