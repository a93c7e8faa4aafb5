"""Owner and local-index maps of one distributed dimension (HPF BLOCK, BLOCK(k), CYCLIC(k), *).

For an extent n over P processors:
  BLOCK(b)  (b = ceil(n/P) when not given): owner(i) = i // b,       local(i) = i mod b
  CYCLIC(k):                                owner(i) = (i // k) mod P, local(i) = (i // (k P)) k + i mod k
  *:                                        not distributed,          local(i) = i
Both maps are increasing in i on each owner, so a processor's local array holds its
global indices in ascending order.
"""

from __future__ import annotations

import numpy as np

from phalanx.compiler.semantics import DimDist, DistArray


def block_size(dd: DimDist, extent: int, nprocs: int) -> int:
    if dd.kind == "BLOCK":
        return dd.block if dd.block is not None else -(-extent // nprocs)
    return dd.block or 1


def owner_map(dd: DimDist, extent: int, nprocs: int) -> np.ndarray | None:
    """Owner of each global index along the dimension, or None for `*`."""
    if dd.kind == "*":
        return None
    i = np.arange(extent, dtype=np.int64)
    b = block_size(dd, extent, nprocs)
    if dd.kind == "BLOCK":
        return i // b
    return (i // b) % nprocs


def local_index_map(dd: DimDist, extent: int, nprocs: int) -> np.ndarray:
    """Local index of each global index on its owner."""
    i = np.arange(extent, dtype=np.int64)
    if dd.kind == "*":
        return i
    b = block_size(dd, extent, nprocs)
    if dd.kind == "BLOCK":
        return i % b
    return (i // (b * nprocs)) * b + i % b


def owned_indices(array: DistArray, proc: int) -> tuple[np.ndarray, ...]:
    """Global indices, per dimension, of the elements `proc` owns (ascending = local order)."""
    out = []
    for dd, extent in zip(array.dist, array.shape):
        owners = owner_map(dd, extent, array.onto.count)
        idx = np.arange(extent, dtype=np.int64)
        out.append(idx if owners is None else idx[owners == proc])
    return tuple(out)


def local_shape(array: DistArray, proc: int) -> tuple[int, ...]:
    return tuple(len(ix) for ix in owned_indices(array, proc))
