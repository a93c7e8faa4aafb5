"""Split a pipeline body into stages: each assignment moves 1/N of its rows per stage,
each compute statement costs 1/N per stage."""

from __future__ import annotations

import dataclasses

from phalanx.compiler.semantics import AssignStmt, ComputeStmt


def stage_windows(rows: int, stages: int) -> list[tuple[int, int]]:
    """Contiguous row ranges, as even as possible, covering [0, rows)."""
    base, extra = divmod(rows, stages)
    out, lo = [], 0
    for i in range(stages):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def split_stages(body: list, stages: int) -> tuple[tuple[ComputeStmt | AssignStmt, ...], ...]:
    out = []
    for i in range(stages):
        stage = []
        for s in body:
            if isinstance(s, ComputeStmt):
                stage.append(dataclasses.replace(s, cost=s.cost / stages, stage=i))
            else:
                window = stage_windows(s.dst.shape[0], stages)[i]
                stage.append(dataclasses.replace(s, window=window, stage=i))
        out.append(tuple(stage))
    return tuple(out)
