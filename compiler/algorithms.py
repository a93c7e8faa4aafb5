"""Generic schedule generators that any target may offer (one small function each)."""

from __future__ import annotations

import numpy as np

from phalanx.compiler.columns import PhaseColumns, rows
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule


def direct_partner(rank: int, step: int, nprocs: int, to: bool = True) -> int:
    """Partner of `rank` in step 1..P-1: XOR pairing on powers of two, (r + s) mod P otherwise."""
    if nprocs & (nprocs - 1) == 0:
        return rank ^ step
    return (rank + step) % nprocs if to else (rank - step) % nprocs


def direct_columns(coll: Collective) -> PhaseColumns:
    """P-1 contention-free phases: in step s, r sends its block for partner(r, s).

    Local blocks (p to p) are copied in the first phase. Empty blocks send nothing (a step
    may then be empty). All steps at once: row s - 1 of the (P - 1) x P partner table is
    step s's, read row by row."""
    n, m = coll.nprocs, coll.matrix
    ranks = np.arange(n, dtype=np.int64)
    own = ranks[np.diagonal(m) > 0]
    src = np.broadcast_to(ranks, (max(n - 1, 0), n))
    steps = np.arange(1, n, dtype=np.int64)[:, None]
    dst = src ^ steps if n & (n - 1) == 0 else (src + steps) % n
    nbytes = m[src, dst]
    sent = nbytes > 0
    counts = sent.sum(axis=1)
    if n == 1:
        counts = np.zeros(1, dtype=np.int64)  # the one phase copies the local block
    s, d = np.concatenate((own, src[sent])), np.concatenate((own, dst[sent]))
    table = rows(s, d, np.concatenate((m[own, own], nbytes[sent])), s, d)
    offsets = np.concatenate(([0], len(own) + np.cumsum(counts)))
    return PhaseColumns(table, offsets, ("local",) * len(counts))


def direct_phases(coll: Collective) -> tuple[Phase, ...]:
    return direct_columns(coll).phases()


def direct_schedule(coll: Collective) -> Schedule:
    return Schedule(coll.index, coll.kind, "direct", coll.nprocs, direct_phases(coll),
                    coll.src, coll.dst, coll.line)


GENERIC_ALGORITHMS = {"direct": direct_schedule}
