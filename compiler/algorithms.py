"""Generic schedule generators that any target may offer (one small function each)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from phalanx.compiler.columns import PhaseColumns, rows, stored
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, SyncMode


def direct_partner(rank: int, step: int, nprocs: int, to: bool = True) -> int:
    """Partner of `rank` in step 1..P-1: XOR pairing on powers of two, (r + s) mod P otherwise."""
    if nprocs & (nprocs - 1) == 0:
        return rank ^ step
    return (rank + step) % nprocs if to else (rank - step) % nprocs


PART_ROWS = 1 << 16  # transfers direct_columns works out at once (a few MB: in cache)


def direct_columns(coll: Collective) -> PhaseColumns:
    """P-1 contention-free phases: in step s, r sends its block for partner(r, s).

    Local blocks (p to p) are copied in the first phase, each just before its node's send of
    step 1: the order the runtime walks a phase's transfers in (by sender, runtime/plan_columns.py
    `_message_order`), so that the run takes the IR's table as it is rather than a sorted
    copy (940 MB at 4096 nodes). Empty blocks send nothing (a step may then be empty). A few
    steps at once, each a row of the partner table read in rank order, written straight into
    the bytes the IR keeps (columns.stored)."""
    n, m = coll.nprocs, coll.matrix
    ranks = np.arange(n, dtype=np.int64)
    counts: list[np.ndarray] = []  # transfers per step, as tables() goes
    at_once = max(1, PART_ROWS // n)

    def partners(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        src = np.broadcast_to(ranks, (len(steps), n))
        return src, src ^ steps if n & (n - 1) == 0 else (src + steps) % n

    def first_phase() -> np.ndarray:
        """Each node's own copy, then its send of step 1 (where it has them)."""
        ends = np.empty((n, 2, 2), np.int64)  # per node: (copy, send), each (src, dst)
        ends[:, 0, 0] = ends[:, 0, 1] = ends[:, 1, 0] = ranks
        ends[:, 1, 1] = partners(np.ones((1, 1), np.int64))[1][0] if n > 1 else ranks
        has = np.stack((np.diagonal(m) > 0, m[ranks, ends[:, 1, 1]] > 0 if n > 1
                        else np.zeros(n, bool)), axis=1)
        pick = ends[has]  # (rows, 2): src and dst, by node, its copy first
        counts.append(np.array([len(pick)]))
        return rows(pick[:, 0], pick[:, 1], m[pick[:, 0], pick[:, 1]], pick[:, 0], pick[:, 1])

    def tables() -> Iterator[np.ndarray]:
        yield first_phase()
        for first in range(2, n, at_once):
            src, dst = partners(np.arange(first, min(first + at_once, n), dtype=np.int64)[:, None])
            nbytes = m[src, dst]
            sent = nbytes > 0
            counts.append(sent.sum(axis=1))
            if counts[-1].sum() == sent.size:  # every rank sends in these steps
                yield rows(src.ravel(), dst.ravel(), nbytes.ravel(), src.ravel(), dst.ravel())
            else:
                yield rows(src[sent], dst[sent], nbytes[sent], src[sent], dst[sent])

    data = stored(tables())
    per_step = np.concatenate(counts)
    return PhaseColumns.of_stored(data, per_step, (SyncMode.LOCAL,) * len(per_step))


def direct_phases(coll: Collective) -> tuple[Phase, ...]:
    return direct_columns(coll).phases()


def direct_schedule(coll: Collective) -> Schedule:
    return Schedule(coll.index, coll.kind, "direct", coll.nprocs, direct_phases(coll),
                    coll.src, coll.dst, coll.line)


GENERIC_ALGORITHMS = {"direct": direct_schedule}
