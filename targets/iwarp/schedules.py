"""iWarp's AAPC schedules (001_569dde0e56ec3e6f.txt Sec. 2-4): phased, phased-global,
phased-unswitched, message-passing (natural and seeded-random orders), store-forward and two-stage.

Each generator turns a Collective (its byte matrix) into plain-data phases of Transfers.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from phalanx.compiler.columns import PhaseColumns, rows, stored
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, SyncMode, Transfer
from phalanx.targets.iwarp.phases import phased_torus_phases, ring_tuples
from phalanx.targets.iwarp.topology import Torus, ring_step
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE, SwitchTag

PHASE_BLOCK = 512  # phases phased_columns builds at once (at 64x64: 262,144 messages, 15 MB of rows)


def _schedule(coll: Collective, algorithm: str, phases: list[Phase] | tuple[Phase, ...]) -> Schedule:
    return Schedule(coll.index, coll.kind, algorithm, coll.nprocs, tuple(phases), coll.src,
                    coll.dst, coll.line)


def phased_columns(coll: Collective, torus: Torus, sync: SyncMode = SyncMode.LOCAL,
                   empty_messages: bool = False, switched: bool = True) -> PhaseColumns:
    """The n^3/8 phases of Sec. 2.1 as columns (phased_schedule), each message carrying its
    phase for the switch unless not `switched` (unswitched_phased_schedule)."""
    m = coll.matrix
    table = phased_torus_phases(torus.cols)
    switched = switched and (empty_messages or bool((m > 0).all()))
    counts = np.zeros(len(table), dtype=np.int64)

    def blocks() -> Iterator[np.ndarray]:
        """The rows PHASE_BLOCK phases at a time (one Python step per phase was 32,768 at 64x64)."""
        for lo in range(0, len(table), PHASE_BLOCK):
            block = table[lo:lo + PHASE_BLOCK]
            # each phase's messages by sender (a node sends one per phase), the order the
            # engines walk them: the native run reads these rows in place, with no copy of
            # them in walk order (runtime/plan_columns.py: 940 MB at 64x64)
            block = np.take_along_axis(block, np.argsort(block[:, :, :1], axis=1, kind="stable"), axis=1)
            src, dst = block[:, :, 0], block[:, :, 1]
            keep = np.ones(src.shape, dtype=bool) if empty_messages else m[src, dst] > 0
            counts[lo:lo + len(block)] = keep.sum(axis=1)
            tags = np.array([SwitchTag(coll.index, k).message if switched else 0
                             for k in range(lo, lo + len(block))], dtype=np.int64)
            src, dst = src[keep], dst[keep]  # row-major: phase by phase, each in its order
            yield rows(src, dst, m[src, dst], src, dst, np.repeat(tags, counts[lo:lo + len(block)]))

    data = stored(blocks())  # the generator fills `counts` as it goes
    return PhaseColumns.of_stored(data, counts, (sync,) * len(table))


def phased_schedule(coll: Collective, torus: Torus, sync: SyncMode = SyncMode.LOCAL,
                    empty_messages: bool = False) -> Schedule:
    """The n^3/8 phases of Sec. 2.1; every message carries its phase for the switch.

    A phase whose block is empty needs Fig. 5's empty message so that the switch still sees a
    tail on every link. With `empty_messages` it is a 0-byte Transfer (for data layers that
    carry empty blocks, runtime/synthetic.py); without, the compiler's IR allows no 0-byte
    transfer, so an incomplete pattern's messages go untagged (phases in order, unswitched) and
    only the fast path (wormhole.fast_plan, the default for phased) adds the empty messages."""
    name = "phased" if sync is SyncMode.LOCAL else "phased-global"
    return _schedule(coll, name, phased_columns(coll, torus, sync, empty_messages).phases())


def unswitched_phased_schedule(coll: Collective, torus: Torus) -> Schedule:
    """The n^3/8 phases of Sec. 2.1 as plain messages, no phase for the switch: each message
    costs its sender the ~400-cycle overhead (Sec. 3.1) but not the switch's per-phase software
    (Fig. 4 lines 2-5, phase_software_cycles: 760 more), and nothing holds a worm of phase k + 1
    back from a link that a late worm of phase k holds. With blocks of one size a node leaves a
    phase when its message is delivered and its partner's has arrived, so the phases stay in
    step and (nearly) contention-free; uneven blocks let nodes run ahead into busy links
    (its record's precondition refuses them, algorithms.py)."""
    return _schedule(coll, "phased-unswitched",
                     phased_columns(coll, torus, SyncMode.LOCAL, switched=False).phases())


def posting_order(src: int, nprocs: int, seed: int | None) -> list[int]:
    """Destinations in the order node src posts them: Fig. 6's natural order, or shuffled."""
    order = list(range(nprocs))
    if seed is not None:
        np.random.default_rng([seed, src]).shuffle(order)
    return order


def message_passing_columns(coll: Collective, seed: int | None = None) -> PhaseColumns:
    """message_passing_schedule's one phase as columns: node by node, each node's sends in
    its posting order (the natural order: row-major over the byte matrix)."""
    m = coll.matrix
    if seed is None:
        src, dst = np.nonzero(m)
    else:
        order = np.array([posting_order(s, coll.nprocs, seed) for s in range(coll.nprocs)],
                         dtype=np.int64).reshape(coll.nprocs, coll.nprocs)
        src = np.repeat(np.arange(coll.nprocs, dtype=np.int64), coll.nprocs)
        dst = order.ravel()
        keep = m[src, dst] > 0
        src, dst = src[keep], dst[keep]
    return PhaseColumns.of([rows(src, dst, m[src, dst], src, dst, LIBRARY_MESSAGE)])


def message_passing_schedule(coll: Collective, seed: int | None = None) -> Schedule:
    """Fig. 6: one phase in which every node posts all its sends at once through the deposit
    library (Sec. 3.1: its messages carry LIBRARY_MESSAGE); the router arbitrates. The seeded
    order is Sec. 1's "randomized message schedule", the one the seed measured."""
    name = "message-passing" if seed is None else "message-passing-random"
    return _schedule(coll, name, message_passing_columns(coll, seed).phases())


def _store_forward_path(torus: Torus, src: int, dst: int) -> list[int]:
    """Nodes a block visits: X then Y, or Y then X for half of the pairs (both link sets busy)."""
    (xs, ys), (xd, yd) = torus.coords(src), torus.coords(dst)
    sx, sy = ring_step(xs, xd, torus.cols), ring_step(ys, yd, torus.rows)
    moves = [(1 if sx > 0 else -1, 0)] * abs(sx) + [(0, 1 if sy > 0 else -1)] * abs(sy)
    if (src + dst) % 2:
        moves.reverse()
    path, x, y = [src], xs, ys
    for ddx, ddy in moves:
        x, y = x + ddx, y + ddy
        path.append(torus.node(x, y))
    return path


def store_forward_schedule(coll: Collective, torus: Torus) -> Schedule:
    """Varvarigos-Bertsekas style: every block moves one hop per phase, all blocks that cross a
    link in a phase travel as one message, so each node sources and sinks four at once."""
    m = coll.matrix
    hops: dict[int, list[Transfer]] = {}
    local = []
    for s, d in zip(*np.nonzero(m)):
        s, d = int(s), int(d)
        if s == d:
            local.append(Transfer(s, d, int(m[s, d]), s, d))
            continue
        path = _store_forward_path(torus, s, d)
        for i, (a, b) in enumerate(zip(path, path[1:])):
            hops.setdefault(i, []).append(Transfer(a, b, int(m[s, d]), s, d, 1))
    phases = [Phase.of(sorted(hops[i], key=lambda t: (t.src, t.dst)) + (local if i == 0 else []))
              for i in sorted(hops)]
    return _schedule(coll, "store-forward", phases or [Phase.of(local)])


def ring_phases_1d(n: int) -> list[list[tuple[int, int]]]:
    """Bidirectional ring AAPC: clockwise phase i overlaid with counterclockwise phase i."""
    cw = [p for t in ring_tuples(n, True) for p in t]
    ccw = [p for t in ring_tuples(n, False) for p in t]
    return [[(s, d) for s, d, _ in a + b] for a, b in zip(cw, ccw)]


def two_stage_schedule(coll: Collective, torus: Torus) -> Schedule:
    """Sec. 4.1: an AAPC over the rows with n-times larger messages, then one over the columns."""
    m, n = coll.matrix, torus.cols
    phases = []
    for stage in (0, 1):
        for ring in ring_phases_1d(n):
            sends = []
            for line in range(n):
                for a, b in ring:
                    s, d = (torus.node(a, line), torus.node(b, line)) if stage == 0 else \
                        (torus.node(line, a), torus.node(line, b))
                    sends += _stage_blocks(m, torus, s, d, stage)
            phases.append(Phase.of(sends))
    return _schedule(coll, "two-stage", phases)


def _stage_blocks(m: np.ndarray, torus: Torus, s: int, d: int, stage: int) -> list[Transfer]:
    """Blocks node s hands to d in a stage, as one message (message id 1)."""
    (_xs, ys), (xd, _yd) = torus.coords(s), torus.coords(d)
    n = torus.cols
    if stage == 0:  # s = (xs, y) sends its own blocks for column xd
        pairs = [(s, torus.node(xd, row)) for row in range(torus.rows)]
    elif s == d:  # blocks for s itself were delivered by the first stage
        return []
    else:  # s = (x, ys) forwards what row ys sent for (x, yd)
        pairs = [(torus.node(col, ys), d) for col in range(n)]
    return [Transfer(s, d, int(m[o, f]), o, f, 1) for o, f in pairs if m[o, f] > 0]
