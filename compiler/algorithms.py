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


def direct_partners(step: int, nprocs: int) -> np.ndarray:
    """direct_partner(r, step, nprocs) of every rank r, at once."""
    ranks = np.arange(nprocs, dtype=np.int64)
    return ranks ^ step if nprocs & (nprocs - 1) == 0 else (ranks + step) % nprocs


def direct_columns(coll: Collective) -> PhaseColumns:
    """P-1 contention-free phases: in step s, r sends its block for partner(r, s).

    Local blocks (p to p) are copied in the first phase. Empty blocks send nothing (a step
    may then be empty)."""
    n, m = coll.nprocs, coll.matrix
    ranks = np.arange(n, dtype=np.int64)
    own = ranks[np.diagonal(m) > 0]
    tables = []
    for step in range(1, n):
        to = direct_partners(step, n)
        sends = ranks[m[ranks, to] > 0]
        table = rows(sends, to[sends], m[sends, to[sends]], sends, to[sends])
        if step == 1:
            table = np.concatenate((rows(own, own, m[own, own], own, own), table))
        tables.append(table)
    if n == 1:
        tables.append(rows(own, own, m[own, own], own, own))
    return PhaseColumns.of(tables)


def direct_phases(coll: Collective) -> tuple[Phase, ...]:
    return direct_columns(coll).phases()


def direct_schedule(coll: Collective) -> Schedule:
    return Schedule(coll.index, coll.kind, "direct", coll.nprocs, direct_phases(coll),
                    coll.src, coll.dst, coll.line)


GENERIC_ALGORITHMS = {"direct": direct_schedule}
