"""Generic schedule generators that any target may offer (one small function each)."""

from __future__ import annotations

from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, Transfer


def direct_partner(rank: int, step: int, nprocs: int, to: bool = True) -> int:
    """Partner of `rank` in step 1..P-1: XOR pairing on powers of two, (r + s) mod P otherwise."""
    if nprocs & (nprocs - 1) == 0:
        return rank ^ step
    return (rank + step) % nprocs if to else (rank - step) % nprocs


def direct_phases(coll: Collective) -> tuple[Phase, ...]:
    """P-1 contention-free phases: in step s, r sends its block for partner(r, s).

    Local blocks (p to p) are copied in the first phase. Empty blocks send nothing.
    """
    n, m = coll.nprocs, coll.byte_matrix  # tuples of Python ints: fast to index
    local = [Transfer(p, p, m[p][p], p, p) for p in range(n) if m[p][p] > 0]
    phases = []
    for step in range(1, n):
        sends = [Transfer(r, q, m[r][q], r, q)
                 for r in range(n) if m[r][q := direct_partner(r, step, n)] > 0]
        if step == 1:
            sends = local + sends
        phases.append(Phase.of(sends))
    if n == 1:
        phases.append(Phase.of(local))
    return tuple(phases)


def direct_schedule(coll: Collective) -> Schedule:
    return Schedule(coll.index, coll.kind, "direct", coll.nprocs, direct_phases(coll),
                    coll.src, coll.dst, coll.line)


GENERIC_ALGORITHMS = {"direct": direct_schedule}
