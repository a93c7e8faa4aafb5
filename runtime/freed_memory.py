"""Freed memory given back to the system where glibc would keep it (issue 30, item 3).

NumPy takes an array below glibc's mmap threshold from the heap, and glibc raises that
threshold up to 32 MB as larger arrays are freed; a heap's freed pages stay resident until
something gives them back. ScheduleColumns.of (runtime/plan_columns.py) frees hundreds of MB
of such temporaries (a million-transfer schedule's int64 columns are 15 MB each): kept, they
set the peak of the run that follows (torus:16x16's bidirectional-rings reduce: 170 MB).
`give_back` is glibc's malloc_trim(0), which returns every free page of the heap; elsewhere
(another C library) it does nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

_GLIBC = sys.platform == "linux" and "CS_GNU_LIBC_VERSION" in os.confstr_names and \
    bool(os.confstr("CS_GNU_LIBC_VERSION"))
_LIBC = ctypes.CDLL(None) if _GLIBC else None


def give_back() -> None:
    """Return the heap's free pages to the system (glibc's malloc_trim); nothing elsewhere."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
