"""The phased AAPC construction of 001_569dde0e56ec3e6f.txt Sec. 2.1 and its proof."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.targets.iwarp.phases import (
    phase_problems,
    phased_torus_phases,
    ring_tuples,
    tournament_rounds,
)
from phalanx.targets.iwarp.topology import Torus


def test_tournament_reproduces_the_papers_n8_tuples():
    # Sec. 2.1: M1 = ((0,1),(2,3)), M2 = ((0,2),(1,3)), M3 = ((0,3),(1,2)), M0 = ((0,0),(2,2)).
    assert tournament_rounds(4) == [[(0, 1), (2, 3)], [(0, 2), (1, 3)], [(0, 3), (1, 2)]]
    m0 = ring_tuples(8, clockwise=True)[0]
    assert [p[0][:2] for p in m0] == [(0, 4), (2, 6)]  # (0,0) and (2,2): the half-way runners


@pytest.mark.parametrize("n", [8, 16])
def test_every_phase_uses_every_link_once_and_every_pair_once(n):
    phases = phased_torus_phases(n)
    assert phases.shape == (n ** 3 // 8, 8 * n, 4)  # Eq. 2's bound n^3/8, 8n messages each
    assert phase_problems(Torus(n, n), phases) == []


def test_the_verifier_catches_a_literal_reversal_of_a_message():
    phases = np.array(phased_torus_phases(8))
    # Replace a message by its literal reverse: that pair is now sent twice, another never.
    j = int(np.flatnonzero(phases[0, :, 2] != 0)[0])
    src, dst, sx, sy = phases[0, j]
    phases[0, j] = (dst, src, -sx, -sy)
    problems = phase_problems(Torus(8, 8), phases, limit=1000)
    assert any("appears 2 times" in p for p in problems)
    assert any("pairs never appear" in p for p in problems)


def test_n_not_a_multiple_of_eight_is_refused():
    with pytest.raises(ValueError, match="multiple of 8"):
        phased_torus_phases(12)
