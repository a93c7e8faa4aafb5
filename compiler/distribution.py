"""Owner and local-index maps of one distributed dimension (HPF BLOCK, BLOCK(k), CYCLIC(k), *).

For an extent n over P processors:
  BLOCK(b)  (b = ceil(n/P) when not given): owner(i) = i // b,       local(i) = i mod b
  CYCLIC(k):                                owner(i) = (i // k) mod P, local(i) = (i // (k P)) k + i mod k
  *:                                        not distributed,          local(i) = i
Both maps are increasing in i on each owner, so a processor's local array holds its
global indices in ascending order.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from phalanx.compiler.semantics import DimDist, DistArray, Format
from phalanx.grammar.ast import Mapping


def block_size(dd: DimDist, extent: int, nprocs: int) -> int:
    if dd.kind is Format.BLOCK:
        return dd.block if dd.block is not None else -(-extent // nprocs)
    return dd.block or 1


@lru_cache(maxsize=32)
def owner_map(dd: DimDist, extent: int, nprocs: int) -> np.ndarray | None:
    """Owner of each global index along the dimension, or None for `*` (read-only, remembered:
    the compile's communication sets and the run's data check ask for the same maps)."""
    if dd.kind is Format.COLLAPSED:
        return None
    b = block_size(dd, extent, nprocs)
    blocks = -(-extent // b) if b else 0  # blocks of b indices the dimension holds
    owners = np.repeat(np.arange(nprocs if dd.kind is Format.CYCLIC else blocks, dtype=np.int64), b)
    if dd.kind is Format.CYCLIC:  # runs of b indices dealt round the processors
        owners = np.tile(owners, -(-blocks // nprocs))
    out = owners[:extent].copy() if len(owners) > extent else owners
    out.setflags(write=False)
    return out


def local_index_map(dd: DimDist, extent: int, nprocs: int) -> np.ndarray:
    """Local index of each global index on its owner."""
    i = np.arange(extent, dtype=np.int64)
    if dd.kind is Format.COLLAPSED:
        return i
    b = block_size(dd, extent, nprocs)
    if dd.kind is Format.BLOCK:
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


def owned_sections(array: DistArray, node: int) -> tuple[slice | np.ndarray, ...]:
    """What machine node `node` holds, per dimension, as a slice where it is a (strided) run,
    else as ascending global indices; computed from the owner's coordinate, in O(local size)."""
    if node not in array.onto.nodes or (array.mapping is Mapping.SINGLE and node != array.owner):
        return tuple(slice(0, 0) for _ in array.shape)
    if array.mapping in (Mapping.REPLICATED, Mapping.SINGLE):
        return tuple(slice(0, e) for e in array.shape)
    coords = array.onto.coords(node - array.onto.base)
    out: list[slice | np.ndarray] = []
    for dim, extent in enumerate(array.shape):
        proc_dim = array.proc_dims[dim]
        if proc_dim is None:
            out.append(slice(0, extent))
            continue
        dd, nprocs, c = array.dist[dim], array.onto.shape[proc_dim], coords[proc_dim]
        b = block_size(dd, extent, nprocs)
        if dd.kind is Format.BLOCK:
            out.append(slice(min(c * b, extent), min((c + 1) * b, extent)))
        elif b == 1:
            out.append(slice(min(c, extent), extent, nprocs))
        else:  # CYCLIC(k): runs of k every k*P, the last one cut at the extent
            starts = np.arange(c * b, extent, b * nprocs, dtype=np.int64)
            idx = (starts[:, None] + np.arange(b, dtype=np.int64)).ravel()
            out.append(idx[idx < extent])
    return tuple(out)


def owned_indices(array: DistArray, rank: int) -> tuple[np.ndarray, ...]:
    """Global indices, per dimension, of the elements node `rank` holds (ascending = local order)."""
    return tuple(np.arange(ix.start, ix.stop, ix.step or 1, dtype=np.int64)
                 if isinstance(ix, slice) else ix for ix in owned_sections(array, rank))


def local_shapes(array: DistArray, nnodes: int) -> np.ndarray:
    """local_shape of every machine node 0..nnodes-1, as an (nnodes, rank) int64 array (zeros
    for a node holding none): per dimension, how many indices each arrangement coordinate owns."""
    out = np.zeros((nnodes, len(array.shape)), dtype=np.int64)
    nodes = array.onto.nodes
    if array.mapping is Mapping.SINGLE:
        out[array.owner] = array.shape
        return out
    out[nodes.start:nodes.stop] = array.shape
    if array.mapping is Mapping.REPLICATED:
        return out
    coords = np.unravel_index(np.arange(array.onto.count), array.onto.shape)
    for dim, proc_dim in enumerate(array.proc_dims):
        if proc_dim is not None:
            counts = np.bincount(dim_owner_map(array, dim), minlength=array.onto.shape[proc_dim])
            out[nodes.start:nodes.stop, dim] = counts[coords[proc_dim]]
    return out


def local_shape(array: DistArray, rank: int) -> tuple[int, ...]:
    """The shape of node `rank`'s local array (from owned_sections: no index array for a run)."""
    return tuple(len(range(ix.start, ix.stop, ix.step or 1)) if isinstance(ix, slice) else len(ix)
                 for ix in owned_sections(array, rank))
