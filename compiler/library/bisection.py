"""The least time at which a condition holds, by halving a bracket: the reduce and relay bounds'
searches (reducemerge.py, reducestraight.py, reducedepth.py, enginerelays.py)."""

from __future__ import annotations

from collections.abc import Callable

HALVINGS = 60  # halvings of the bracket: far below a nanosecond for brackets of seconds


def least_time_s(lo: float, hi: float, holds: Callable[[float], bool],
                 halvings: int = HALVINGS) -> tuple[float, float]:
    """(lo, hi) after `halvings` halvings of [lo, hi], `holds` a condition that once it holds
    holds at every later time and that holds at `hi`: hi a time where it holds, lo one where it
    does not (or the start). A bound takes lo, its safe side, or hi where its proof says a time
    at which the condition holds."""
    for _ in range(halvings):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return lo, hi
