"""Split a pipeline body into stages: each assignment moves 1/N of its elements per stage,
each compute statement costs 1/N per stage.

Where an assignment is cut decides how each stage communicates. Cutting `(BLOCK, *)` to
`(*, BLOCK)` by rows of the destination's first dimension leaves each stage with the rows of
1/N of the senders: a balanced all-to-all becomes N exchanges from a few senders to
everyone. So stages are cut so that each moves data the way the whole statement does:

- Along one destination dimension d, the indices are grouped by who holds them: the pair
  (source owner, destination owner) of that dimension (one group where d is distributed on
  neither side). Stage k takes the k-th of N even slices of every group, so every sender
  sends 1/N of what it sends in the whole statement to every one of its receivers.
- The byte matrix of a stage is the whole statement's with dimension d's count table
  (compiler/commsets.py) replaced by the stage's, so the stage's matrix is proportional to
  the whole's exactly when every group gives the stage the same fraction of its indices.
  `spread` measures how far a cut is from that: over stages, the largest ratio between two
  groups' fractions (1.0: proportional; infinite: some stage loses a sender-receiver pair).
- The chosen dimension is the one with the least spread, then one distributed on neither
  side (its stages are contiguous runs), then the lowest; only dimensions with at least N
  indices can be cut into N non-empty stages.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.distribution import dim_owner_map
from phalanx.compiler.semantics import AssignStmt, ComputeStmt, Op, StageWindow


def stage_windows(rows: int, stages: int) -> list[tuple[int, int]]:
    """Contiguous ranges, as even as possible, covering [0, rows)."""
    base, extra = divmod(rows, stages)
    out, lo = [], 0
    for i in range(stages):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _owner_keys(stmt: AssignStmt, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The global indices the statement writes along destination dimension `dim` (its
    section there) and, per index, which (source owner, destination owner) group it is in,
    as one number (all 0 where the dimension is distributed on neither side). An eoshift's
    boundary positions, which read no source element, are a group of their own."""
    trip = stmt.dst_triplets[dim]
    idx = trip.indices()
    dst_owner = dim_owner_map(stmt.dst, dim)
    dst_key = np.zeros(trip.count, np.int64) if dst_owner is None else dst_owner[idx].astype(np.int64)
    src_key = np.zeros(trip.count, np.int64)
    sd = stmt.perm[dim]
    src_owner = dim_owner_map(stmt.src, sd) if sd >= 0 else None
    if src_owner is not None:
        strip = stmt.src_triplets[sd]
        pos = np.arange(trip.count, dtype=np.int64) + stmt.shift[dim]
        reads = (pos >= 0) & (pos < strip.count) if stmt.op is Op.EOSHIFT else np.ones(trip.count, bool)
        pos %= strip.count
        src_key = np.where(reads, src_owner[strip.lo + strip.stride * pos], int(src_owner.max()) + 1)
    return idx, src_key.astype(np.int64) * (int(dst_key.max()) + 1) + dst_key


def distributed(stmt: AssignStmt, dim: int) -> bool:
    """Whether destination dimension `dim` is spread over processors in the destination or,
    where it reads from, in the source."""
    sd = stmt.perm[dim]
    return stmt.dst.proc_dims[dim] is not None or (sd >= 0 and stmt.src.proc_dims[sd] is not None)


@dataclass(frozen=True)
class Cut:
    """An assignment cut into stages along destination dimension `dim`."""

    dim: int
    stages: tuple[np.ndarray, ...]  # ascending destination indices along `dim`, per stage
    spread: float

    def windows(self) -> list[StageWindow]:
        return [StageWindow(self.dim, _runs(ix)) for ix in self.stages]


def _runs(ix: np.ndarray) -> tuple[tuple[int, int], ...]:
    breaks = np.flatnonzero(np.diff(ix) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(ix)]))
    return tuple((int(ix[s]), int(ix[e - 1]) + 1) for s, e in zip(starts, ends))


def cut_along(stmt: AssignStmt, dim: int, stages: int) -> Cut:
    """Stage k gets the k-th of `stages` slices of every owner group of `dim`: the indices are
    ordered by their position within their group, (rank + 1/2) / group size, and the order
    is cut into even pieces. Groups whose size is a multiple of `stages` then give each stage
    exactly 1/`stages` of their indices; one group gives contiguous windows."""
    idx, keys = _owner_keys(stmt, dim)
    extent = len(keys)
    order = np.argsort(keys, kind="stable")
    sizes = np.bincount(keys)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    rank = np.empty(extent, np.int64)
    rank[order] = np.arange(extent) - starts[keys[order]]
    position = (2 * rank + 1) / (2 * sizes[keys])
    ranked = np.lexsort((np.arange(extent), position))
    pieces = tuple(np.sort(ranked[lo:hi]) for lo, hi in stage_windows(extent, stages))
    spread = 1.0
    for piece in pieces:  # positions in the section
        fraction = np.bincount(keys[piece], minlength=len(sizes))[sizes > 0] / sizes[sizes > 0]
        spread = max(spread, math.inf if fraction.min() == 0 else fraction.max() / fraction.min())
    return Cut(dim, tuple(np.sort(idx[piece]) for piece in pieces), spread)


def choose_cut(stmt: AssignStmt, stages: int) -> Cut | None:
    """The cut of the module docstring, or None when no dimension has `stages` indices."""
    cuts = [cut_along(stmt, d, stages) for d, trip in enumerate(stmt.dst_triplets)
            if trip.count >= stages]
    return min(cuts, key=lambda c: (c.spread, distributed(stmt, c.dim), c.dim), default=None)


def split_stages(body: list, stages: int) -> tuple[tuple[ComputeStmt | AssignStmt, ...], ...]:
    """The stages of a pipeline body; every assignment must have a dimension with at least
    `stages` indices (the checker says so otherwise)."""
    windows = {id(s): choose_cut(s, stages).windows() for s in body if isinstance(s, AssignStmt)}
    out = []
    for i in range(stages):
        stage = []
        for s in body:
            if isinstance(s, ComputeStmt):
                stage.append(dataclasses.replace(s, cost=s.cost / stages, stage=i))
            else:
                stage.append(dataclasses.replace(s, window=windows[id(s)][i], stage=i))
        out.append(tuple(stage))
    return tuple(out)
