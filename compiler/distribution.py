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


def dim_owner_map(array: DistArray, dim: int) -> np.ndarray | None:
    """Arrangement coordinate owning each index of `dim`, or None where not distributed."""
    proc_dim = array.proc_dims[dim]
    if proc_dim is None:
        return None
    return owner_map(array.dist[dim], array.shape[dim], array.onto.shape[proc_dim])


def dim_local_map(array: DistArray, dim: int) -> np.ndarray:
    """Local index of each global index of `dim` on its owner (identity where not distributed)."""
    proc_dim = array.proc_dims[dim]
    if proc_dim is None:
        return np.arange(array.shape[dim], dtype=np.int64)
    return local_index_map(array.dist[dim], array.shape[dim], array.onto.shape[proc_dim])


def owned_indices(array: DistArray, rank: int) -> tuple[np.ndarray, ...]:
    """Global indices, per dimension, of the elements `rank` holds (ascending = local order)."""
    full = tuple(np.arange(e, dtype=np.int64) for e in array.shape)
    empty = tuple(np.zeros(0, dtype=np.int64) for _ in array.shape)
    if rank >= array.onto.count:
        return empty
    if array.mapping == "replicated":
        return full
    if array.mapping == "single":
        return full if rank == array.owner else empty
    coords = array.onto.coords(rank)
    out = []
    for dim, idx in enumerate(full):
        owners = dim_owner_map(array, dim)
        out.append(idx if owners is None else idx[owners == coords[array.proc_dims[dim]]])
    return tuple(out)


def local_shape(array: DistArray, rank: int) -> tuple[int, ...]:
    return tuple(len(ix) for ix in owned_indices(array, rank))
