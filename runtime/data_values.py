"""The values of a run's payloads: seeded global arrays and the statement's reference result."""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np

from phalanx.compiler.semantics import AssignStmt, DistArray, Op

try:  # the native core writes byte arrays' payload words (runtime/engine_core/src/data.rs)
    from phalanx_engine_core import fill_payload_words
except ImportError:  # (without it numpy computes the same words, slower: payload_words)
    fill_payload_words = None

NUMPY_TYPES = {"byte": np.uint8, "int32": np.int32, "int64": np.int64, "float32": np.float32,
               "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}
REDUCE_FUNCTIONS = {Op.SUM: np.sum, Op.MAX: np.max, Op.MIN: np.min, Op.PROD: np.prod}
COMBINE = {Op.SUM: np.add, Op.MAX: np.maximum, Op.MIN: np.minimum, Op.PROD: np.multiply}

# Simulated runs allocate and first touch gigabytes of arrays (16x16 at 16 KB: 1 GB of
# payload, its copy and write counts). NumPy asks the kernel for transparent huge pages on
# every array of 4 MB or more; where the kernel then compacts memory on each fault
# (transparent_hugepage/defrag = madvise) drawing that payload took 4.2 s instead of 1.6 s
# (bench/iwarp.py). NUMPY_MADVISE_HUGEPAGE=1 keeps NumPy's default.
if os.environ.get("NUMPY_MADVISE_HUGEPAGE", "0") == "0":
    getattr(np._core.multiarray, "_set_madvise_hugepage", lambda enabled: None)(False)


# splitmix64 (Steele, Lea and Flood 2014): the state's step and the output function's constants
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1, MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
PAYLOAD_CHUNK_WORDS = 1 << 17  # words numpy computes at a time (1 MB, cache-sized)


def payload_words(nwords: int, seed: int) -> np.ndarray:
    """A byte array's payload, 8 bytes a word: word k is splitmix64's output function of
    seed + k * GOLDEN (mod 2**64), a bijection of k, so no two words of the array are alike.
    The native core writes them in one pass (fill_payload_words: 1 GB in 0.82-0.87 s of CPU
    here, about 0.55 s of it the kernel's page faults, where drawing as many random words took
    1.2-1.25 s); numpy computes the same words a chunk at a time where the extension is missing."""
    words = np.empty(nwords, np.uint64)
    write_payload_words(words, seed)
    return words


def write_payload_words(words: np.ndarray, seed: int) -> None:
    """payload_words' words written into `words` (uint64, C-contiguous)."""
    if fill_payload_words is not None:
        fill_payload_words(words, seed, 0)
        return
    nwords = len(words)
    for start in range(0, nwords, PAYLOAD_CHUNK_WORDS):
        z = np.arange(start, min(start + PAYLOAD_CHUNK_WORDS, nwords), dtype=np.uint64)
        z *= GOLDEN
        z += np.uint64(seed)
        z ^= z >> np.uint64(30)
        z *= MIX1
        z ^= z >> np.uint64(27)
        z *= MIX2
        z ^= z >> np.uint64(31)
        words[start:start + len(z)] = z


def random_global(array: DistArray, rng: np.random.Generator, near_one: bool = False) -> np.ndarray:
    """Seeded data for an array; `near_one` keeps long products finite."""
    dtype = np.dtype(NUMPY_TYPES[array.elem_type])
    shape = array.shape
    if dtype.kind in "fc" and near_one:
        real = rng.uniform(0.999, 1.001, shape)
        return (real + 1j * rng.uniform(-1e-3, 1e-3, shape) if dtype.kind == "c" else real).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype, copy=False)
    if dtype == np.uint8:  # payload words of a seed the run draws (a byte a draw took 4-5 s for 1 GB)
        a, draw = byte_payload(array, rng)
        draw()
        return a
    return rng.integers(0, min(np.iinfo(dtype).max, 1 << 20), size=shape, dtype=dtype)


def byte_payload(array: DistArray, rng: np.random.Generator) -> tuple[np.ndarray, Callable[[], None]]:
    """A byte array's seeded data (random_global's) as an array not written yet and the call
    that writes its payload words: the seed is drawn from `rng` now, so the generator's next
    draws are random_global's, and the values are the same whenever they are written. Until
    then the array's pages are not touched (AssignmentData.build: a check that reads no value
    never writes them, 1 GB at torus:16x16 and 16 KB)."""
    n = math.prod(array.shape)
    seed = int(rng.integers(np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
    words = np.empty(-(-n // 8), np.uint64)
    return words.view(np.uint8)[:n].reshape(array.shape), lambda: write_payload_words(words, seed)


def reads_source_in_place(stmt: AssignStmt) -> bool:
    """reference_array's result is a view of the source, read in place, never a copy: a whole
    array copied or transposed (no section, no collapsed, reduced or spread dimension, no
    shift); reference_array then reads no value of `a`."""
    return not (stmt.src_section or stmt.dst_section or stmt.collapsed or stmt.reduces) and \
        stmt.op in (Op.COPY, Op.TRANSPOSE) and min(stmt.perm, default=0) >= 0


def reference_result(stmt: AssignStmt, a: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The statement applied to the global source with numpy, Fortran's semantics: the
    destination array (zero outside the section; a view of `a` for a whole-array copy or
    transpose) and, per destination dim, the mask of the indices it writes (the elements
    written are their product)."""
    return reference_array(stmt, a), reference_due(stmt)


def reference_array(stmt: AssignStmt, a: np.ndarray) -> np.ndarray:
    """reference_result's destination array alone (what every run of a statement needs; the
    masks are the statement's, StatementFacts.expected)."""
    section = a[np.ix_(*(t.indices() for t in stmt.src_triplets))] if stmt.src_section else a
    collapsed = stmt.collapsed
    if stmt.reduces:
        value = REDUCE_FUNCTIONS[stmt.op](section, axis=collapsed).astype(a.dtype)
    else:
        value = section.reshape([n for d, n in enumerate(section.shape) if d not in collapsed])
    kept = [d for d in range(a.ndim) if d not in collapsed]
    value = np.transpose(value, [kept.index(p) for p in stmt.perm if p >= 0])
    axis = 0
    for p, k in zip(stmt.perm, stmt.shift):
        if p < 0:
            continue
        if stmt.op is Op.CSHIFT:
            value = np.roll(value, -k, axis=axis)
        elif stmt.op is Op.EOSHIFT and k:  # end-off: position j gets j + k, or 0 past the ends
            shifted = np.zeros_like(value)
            n = value.shape[axis]
            if abs(k) < n:  # else every position is past the end: all boundary
                dst = [slice(None)] * value.ndim
                src = [slice(None)] * value.ndim
                dst[axis], src[axis] = slice(max(0, -k), n - max(0, k)), slice(max(0, k), n + min(0, k))
                shifted[tuple(dst)] = value[tuple(src)]
            value = shifted
        axis += 1
    triplets = stmt.dst_triplets
    for d, p in enumerate(stmt.perm):
        if p < 0:  # spread's new dim (or a scalar subscript of the destination): copies
            value = np.repeat(np.expand_dims(value, d), triplets[d].count, axis=d)
    if not stmt.dst_section:
        return value
    b = np.zeros(stmt.dst.shape, dtype=a.dtype)
    b[np.ix_(*(t.indices() for t in triplets))] = value
    return b


def reference_due(stmt: AssignStmt) -> list[np.ndarray]:
    """Per destination dim, the mask of the indices the statement writes (its section, and
    a pipeline stage's window along the cut dimension)."""
    due = []
    for extent, t in zip(stmt.dst.shape, stmt.dst_triplets):
        due.append(np.zeros(extent, dtype=bool))
        due[-1][t.indices()] = True
    if stmt.window is not None:  # one pipeline stage: its indices along the cut dimension
        stage = np.zeros(stmt.dst.shape[stmt.window.dim], dtype=bool)
        stage[stmt.window.indices()] = True
        due[stmt.window.dim] &= stage
    return due


def to_destination_layout(stmt: AssignStmt, block: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A block read from the source (source dim order, collapsed dims included) in the
    destination's layout of `shape`: combined or dropped along collapsed dims, transposed,
    copied along spread dims."""
    collapsed = stmt.collapsed
    if collapsed:
        block = (REDUCE_FUNCTIONS[stmt.op](block, axis=collapsed).astype(block.dtype)
                 if stmt.reduces else block.reshape([n for d, n in enumerate(block.shape)
                                                     if d not in collapsed]))
    kept = [d for d in range(len(stmt.src.shape)) if d not in collapsed]
    order = [kept.index(p) for p in stmt.perm if p >= 0]
    if order != sorted(order):
        block = np.transpose(block, order)
    for d, p in enumerate(stmt.perm):
        if p < 0:
            block = np.expand_dims(block, d)
    return np.broadcast_to(block, shape) if block.shape != shape else block
