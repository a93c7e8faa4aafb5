"""Memory that a run frees is reused by its next arrays, not given back to the kernel and faulted in again.

glibc's malloc serves a request of 32 MB or more with its own mmap and gives it back (munmap) when
it is freed; the next such array is fresh memory again, faulted in by the kernel 4 KB at a time
(32 MB: 8,192 faults; here 1 GB of fresh pages took 0.3-0.9 s of system time where writing
its words took 0.15 s). Phalanx's compile and data check make many arrays of tens of MB
for a short while: the 16 KB all-to-all on torus:16x16 (arrays of 4M indices, 32 MB each)
faulted 225,800 pages in its compile, about 0.9 GB, for a peak of 440 MB.

`reuse_freed_memory` raises malloc's mmap threshold to 64 MB, so that arrays below it come from
the heap and what is freed there serves the next ones, and its trim threshold to 256 MB, so that
the heap keeps up to that much free memory at its top rather than give it back at once (at 64 MB
torus:16x16's run faulted 23,000 pages more). Arrays of 64 MB or more (a run's payloads, the
16.8M-entry columns of a 4096-node all-to-all) are mapped and unmapped as before: with the
threshold at 256 MB the heap's holes raised ideal:4096's checked run from 6,629 MB to 7,706 MB.
Set once, when `phalanx` is imported, before the first big array (glibc on Linux; elsewhere
nothing changes). glibc's own variables (MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_, GLIBC_TUNABLES) choose otherwise: where one is set this leaves malloc alone.
"""

from __future__ import annotations

import ctypes
import os

# mallopt's parameters (glibc malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_BYTES = 64 << 20  # arrays below this come from the heap and are reused
TRIM_THRESHOLD_BYTES = 256 << 20  # free memory the heap's top keeps before giving it back
GLIBC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def glibc() -> bool:
    """The process runs on glibc (whose malloc `reuse_freed_memory` tunes)."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError):  # (no such name outside glibc)
        return False


def reuse_freed_memory() -> bool:
    """Set malloc's mmap and trim thresholds (the module's docstring says why); False where it
    leaves malloc alone: not glibc, or the user set glibc's own variables."""
    if not glibc() or any(name in os.environ for name in GLIBC_VARIABLES):
        return False
    libc = ctypes.CDLL(None)  # (the process's own symbols: glibc's mallopt)
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and \
        bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
