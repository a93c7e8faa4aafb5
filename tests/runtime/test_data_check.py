"""runtime/data_check.py's comparison of what landed with the reference (same_values): the
native core's byte rows (runtime/engine_core/src/data.rs same_bytes) and numpy's words agree."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.runtime import data_check
from phalanx.runtime.data_check import same_values


def strided_pair() -> tuple[np.ndarray, np.ndarray]:
    """Two equal byte views with the strides of a node's columns of a global array (rows of 24
    bytes, 64 apart), one of them reversed along its first axis."""
    base = np.arange(8 * 64, dtype=np.uint64).astype(np.uint8).reshape(8, 64)
    other = base[::-1].copy()[::-1]
    return base[:, 16:40], other[:, 16:40]


@pytest.mark.parametrize("native", [True, False])
def test_a_byte_that_differs_anywhere_is_found(native, monkeypatch):
    assert data_check.same_bytes is not None, "make setup builds phalanx_engine_core"
    if not native:
        monkeypatch.setattr(data_check, "same_bytes", None)
    got, ref = strided_pair()
    assert same_values(got, ref)
    for at in [(0, 0), (3, 11), (7, 23)]:
        changed = ref.copy()
        changed[at] ^= 1
        assert not same_values(got, changed)
    assert not same_values(got, ref[:, :-1])  # another shape


def test_the_core_compares_rows_of_any_strides_and_types():
    assert data_check.same_bytes is not None, "make setup builds phalanx_engine_core"
    words = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    view = words.transpose(1, 0, 2)  # outer axes strided, rows contiguous
    assert same_values(view, view.copy())
    flags = np.zeros((4, 6), bool)
    flags[2, 5] = True
    assert same_values(flags[:, 1:], flags[:, 1:].copy())
    assert not same_values(flags[:, 1:], np.zeros((4, 5), bool))
    assert same_values(np.zeros((0, 3), np.uint8), np.zeros((0, 3), np.uint8))


def test_the_core_leaves_rows_that_are_not_contiguous_to_numpy():
    assert data_check.same_bytes is not None, "make setup builds phalanx_engine_core"
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert data_check.same_bytes(a.T, a.T.copy()) is None
    assert same_values(a.T, a.T.copy()) and not same_values(a.T, a.copy().T[::-1])


def test_the_core_refuses_arrays_of_two_shapes():
    assert data_check.same_bytes is not None, "make setup builds phalanx_engine_core"
    with pytest.raises(ValueError, match="same_bytes compares arrays of one shape"):
        data_check.same_bytes(np.zeros(3, np.uint8), np.zeros(4, np.uint8))


def test_views_of_the_same_bytes_are_equal_and_others_still_compared():
    """B = A's delivered values and reference are both the source read in place (same_memory):
    equal without a comparison; a view one byte off, or of other strides, is compared byte for
    byte; a float array is always compared (NaN differs from itself)."""
    words = np.arange(4 * 64, dtype=np.uint64).astype(np.uint8).reshape(4, 64)
    assert data_check.same_memory(words[:, 8:], words[:, 8:]) and same_values(words[:, 8:], words[:, 8:])
    assert not data_check.same_memory(words[:, 8:], words[:, 8:].copy())
    assert not same_values(words[:, 1:], words[:, :-1])  # shifted by one byte: other bytes
    assert not data_check.same_memory(words[::2], words[:2])  # same first byte, other strides
    nan = np.array([[0.0, np.nan]])
    assert not data_check.same_memory(nan, nan) and not same_values(nan, nan)
    assert not data_check.same_memory(words.view(np.int8), words)  # another type
