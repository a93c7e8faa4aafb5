"""Memory a run frees is reused by its next arrays (runtime/allocator.py, set when phalanx is imported)."""

from __future__ import annotations

import os
import resource

import numpy as np
import pytest

from phalanx.runtime import allocator

ARRAY_BYTES = 48 << 20  # past glibc's largest default mmap threshold (32 MB), below ours
FRESH_FAULTS = ARRAY_BYTES // 4096  # faults of as much fresh memory, a fault per 4 KB page


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.skipif(not allocator.glibc(), reason="tunes glibc's malloc only")
@pytest.mark.skipif(any(v in os.environ for v in allocator.GLIBC_VARIABLES),
                    reason="glibc's own variables set: malloc left alone")
def test_an_array_of_48_mb_reuses_the_memory_of_one_freed_before():
    """Without the thresholds glibc maps each such array afresh and unmaps it when freed: the
    second array would fault in its 12,288 pages again."""
    first = np.ones(ARRAY_BYTES, np.uint8)
    del first
    before = minor_faults()
    second = np.ones(ARRAY_BYTES, np.uint8)
    faults = minor_faults() - before
    assert second.sum() == ARRAY_BYTES
    assert faults < FRESH_FAULTS // 16, f"{faults} page faults: the freed memory was not reused"


@pytest.mark.parametrize("variable", allocator.GLIBC_VARIABLES)
def test_glibcs_own_variables_leave_malloc_alone(monkeypatch, variable):
    monkeypatch.setenv(variable, "1")
    assert not allocator.reuse_freed_memory()


@pytest.mark.skipif(not allocator.glibc(), reason="tunes glibc's malloc only")
def test_without_them_the_thresholds_are_set(monkeypatch):
    for variable in allocator.GLIBC_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert allocator.reuse_freed_memory()
