"""The `direct` exchange: P-1 phases, every pair once, one send and one receive per node."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from phalanx.compiler.algorithms import direct_partner, direct_schedule
from phalanx.compiler.recognize import recognize
from phalanx.compiler.verify import contention_free_ports, schedule_problems


def uniform(n: int, b: int = 64):
    return recognize(0, np.full((n, n), b), "A", "B", 1)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 16])
def test_direct_covers_every_pair_once(n):
    s = direct_schedule(uniform(n))
    assert len(s.phases) == max(n - 1, 1)
    pairs = Counter((t.src, t.dst) for p in s.phases for t in p.sends)
    assert pairs == Counter((i, j) for i in range(n) for j in range(n))
    assert contention_free_ports(s) and schedule_problems(s) == []


def test_xor_pairing_on_powers_of_two_and_shift_otherwise():
    assert [direct_partner(5, s, 8) for s in range(1, 8)] == [4, 7, 6, 1, 0, 3, 2]
    assert [direct_partner(1, s, 6) for s in range(1, 6)] == [2, 3, 4, 5, 0]


def test_empty_blocks_send_nothing():
    m = np.zeros((4, 4), dtype=np.int64)
    m[0, 3] = 8
    s = direct_schedule(recognize(0, m, "A", "B", 1))
    assert [t for p in s.phases for t in p.sends] == [s.phases[2].sends[0]]
    assert (s.phases[2].sends[0].src, s.phases[2].sends[0].dst) == (0, 3)
