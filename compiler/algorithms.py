"""Generic schedule generators that any target may offer (one small function each)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from phalanx.compiler.columns import PhaseColumns, rows, stored
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule


def direct_partner(rank: int, step: int, nprocs: int, to: bool = True) -> int:
    """Partner of `rank` in step 1..P-1: XOR pairing on powers of two, (r + s) mod P otherwise."""
    if nprocs & (nprocs - 1) == 0:
        return rank ^ step
    return (rank + step) % nprocs if to else (rank - step) % nprocs


PART_ROWS = 1 << 16  # transfers direct_columns works out at once (a few MB: in cache)


def direct_columns(coll: Collective) -> PhaseColumns:
    """P-1 contention-free phases: in step s, r sends its block for partner(r, s).

    Local blocks (p to p) are copied in the first phase. Empty blocks send nothing (a step
    may then be empty). A few steps at once, each a row of the partner table read in rank
    order, written straight into the bytes the IR keeps (columns.stored)."""
    n, m = coll.nprocs, coll.matrix
    ranks = np.arange(n, dtype=np.int64)
    own = ranks[np.diagonal(m) > 0]
    counts: list[np.ndarray] = []  # transfers per step, as tables() goes
    at_once = max(1, PART_ROWS // n)

    def tables() -> Iterator[np.ndarray]:
        yield rows(own, own, m[own, own], own, own)
        for first in range(1, n, at_once):
            steps = np.arange(first, min(first + at_once, n), dtype=np.int64)[:, None]
            src = np.broadcast_to(ranks, (len(steps), n))
            dst = src ^ steps if n & (n - 1) == 0 else (src + steps) % n
            nbytes = m[src, dst]
            sent = nbytes > 0
            counts.append(sent.sum(axis=1))
            if counts[-1].sum() == sent.size:  # every rank sends in these steps
                yield rows(src.ravel(), dst.ravel(), nbytes.ravel(), src.ravel(), dst.ravel())
            else:
                yield rows(src[sent], dst[sent], nbytes[sent], src[sent], dst[sent])

    data = stored(tables())
    per_step = np.concatenate(counts) if counts else np.zeros(1, dtype=np.int64)  # n = 1: one phase
    per_step[0] += len(own)
    return PhaseColumns.of_stored(data, per_step, ("local",) * len(per_step))


def direct_phases(coll: Collective) -> tuple[Phase, ...]:
    return direct_columns(coll).phases()


def direct_schedule(coll: Collective) -> Schedule:
    return Schedule(coll.index, coll.kind, "direct", coll.nprocs, direct_phases(coll),
                    coll.src, coll.dst, coll.line)


GENERIC_ALGORITHMS = {"direct": direct_schedule}
