"""The payload words of byte arrays (runtime/data_values.py payload_words): splitmix64 of the
word's index, written by the native core (runtime/engine_core/src/data.rs) or by numpy."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.runtime import data_values
from phalanx.runtime.data_values import PAYLOAD_CHUNK_WORDS, payload_words

# splitmix64's first outputs from state 0 (its reference implementation, Vigna's splitmix64.c):
# word k of seed 0 is the output of state k * GOLDEN, so words 1, 2, 3 are these
SPLITMIX64_FROM_ZERO = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_numpy_computes_splitmix64_of_the_word_index(monkeypatch):
    monkeypatch.setattr(data_values, "fill_payload_words", None)
    assert payload_words(4, 0).tolist() == [0, *SPLITMIX64_FROM_ZERO]


def test_the_core_writes_the_words_numpy_computes(monkeypatch):
    """Across numpy's chunks, for a seed with the top bit set; every word distinct."""
    assert data_values.fill_payload_words is not None, "make setup builds phalanx_engine_core"
    n, seed = PAYLOAD_CHUNK_WORDS + 5, 0xFEDCBA9876543210
    native = payload_words(n, seed)
    monkeypatch.setattr(data_values, "fill_payload_words", None)
    assert np.array_equal(native, payload_words(n, seed))
    assert len(np.unique(native)) == n


def test_the_core_refuses_a_read_only_array():
    assert data_values.fill_payload_words is not None, "make setup builds phalanx_engine_core"
    words = np.zeros(4, np.uint64)
    words.flags.writeable = False
    with pytest.raises(ValueError, match="writable, C-contiguous uint64 array"):
        data_values.fill_payload_words(words, 0, 0)


def test_the_core_writes_a_large_payload_in_shares_that_join_up():
    """Past 64 MB (data.rs FILL_WORDS_PER_THREAD) a few threads each write their share of the
    words: every word is still splitmix64 of its own index, at the shares' edges too."""
    assert data_values.fill_payload_words is not None, "make setup builds phalanx_engine_core"
    n, seed = (1 << 23) + 17, 0xFEDCBA9876543210
    words = payload_words(n, seed)
    at = np.array([0, 1, n // 4 - 1, n // 4, n // 4 + 1, n // 2 - 1, n // 2, n // 2 + 1, n - 1], np.uint64)
    z = np.uint64(seed) + at * data_values.GOLDEN
    z = (z ^ (z >> np.uint64(30))) * data_values.MIX1
    z = (z ^ (z >> np.uint64(27))) * data_values.MIX2
    assert np.array_equal(words[at.astype(np.int64)], z ^ (z >> np.uint64(31)))
