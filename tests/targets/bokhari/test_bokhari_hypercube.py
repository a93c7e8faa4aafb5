"""compiler/hypercube.py: partitions, the multiphase schedules and the theory's cost formula."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler import hypercube as h
from phalanx.compiler.recognize import recognize
from phalanx.compiler.verify import schedule_problems
from phalanx.grammar.diagnostics import UsageError


def alltoall(n: int, block: int = 8):
    return recognize(0, np.full((n, n), block, dtype=np.int64), "A", "B", 1)


def test_partitions_of_5_are_the_papers_seven():
    # 003_f18cb429ce0a4177.txt Sec. 2.3 lists them for d = 5.
    parts = {tuple(sorted(p)) for p in h.partitions(5)}
    assert parts == {(1, 1, 1, 1, 1), (1, 1, 1, 2), (1, 2, 2), (1, 1, 3), (1, 4), (2, 3), (5,)}
    eq = {tuple(sorted(p)) for p in h.partitions(5) if h.is_equipartition(p)}
    # Sec. 2.3's definition gives one equipartition per cardinality; its list of the
    # optimal ones for d = 5 omits {1,1,1,2}, which the definition includes.
    assert eq == {(1, 1, 1, 1, 1), (1, 1, 1, 2), (1, 2, 2), (2, 3), (5,)}


def test_family_names_and_parsing():
    assert h.family(5)[:3] == ("standard", "direct", "multiphase:2,3")
    assert len(h.family(6)) == 11
    assert h.parse_partition("multiphase:3,2", 5) == (3, 2)
    assert h.parse_partition("multiphase:2+3", 5) == (3, 2)
    assert h.algorithm_name((1, 1, 1)) == "standard" and h.algorithm_name((3,)) == "direct"


@pytest.mark.parametrize("name", ["multiphase:2,2", "multiphase:", "multiphase:a,b", "fast",
                                  "multiphase:0,5"])
def test_bad_partition_names(name):
    with pytest.raises(UsageError) as info:
        h.parse_partition(name, 5)
    assert f"'{name}' is not a multiphase exchange on 32 nodes" in info.value.diagnostic.message
    assert "summing to d = 5" in info.value.diagnostic.hint


def test_non_power_of_two_is_refused():
    with pytest.raises(UsageError, match="needs a power-of-two number of processors, not 12"):
        h.multiphase_schedule(alltoall(12), "standard")


@pytest.mark.parametrize("algorithm", ["standard", "direct", "multiphase:2,3", "multiphase:1,1,3"])
def test_schedules_are_well_formed_and_combine_blocks(algorithm):
    s = h.multiphase_schedule(alltoall(32), algorithm)
    assert schedule_problems(s) == []
    parts = h.parse_partition(algorithm, 5)
    sends = [p for p in s.phases if any(t.src != t.dst for t in p.sends)]
    assert len(sends) == sum(2 ** w - 1 for w in parts)  # steps: sum of 2^d_g - 1
    # Each step: every node sends one combined message of 2^(d - d_g) blocks.
    widths = [w for w in parts for _ in range(2 ** w - 1)]
    for phase, w in zip(sends, widths):
        assert len(phase.sends) == 32 * 2 ** (5 - w)
        assert {t.message for t in phase.sends} == {h.COMBINED}
        assert len({(t.src, t.dst) for t in phase.sends}) == 32
    barriers = [p for p in s.phases if p.sync == "barrier"]
    assert len(barriers) == len(parts)  # one before each phase of the partition


@pytest.mark.parametrize("algorithm", ["standard", "multiphase:2,3", "multiphase:1,2,2",
                                       "multiphase:1,4", "direct", "multiphase:1,1,3"])
def test_shuffle_formula_counts_the_schedules_copies(algorithm):
    s = h.multiphase_schedule(alltoall(32), algorithm)
    copies = [t for p in s.phases for t in p.sends if t.src == t.dst and t.origin != t.final]
    assert len(copies) == 32 * h.shuffle_blocks(h.parse_partition(algorithm, 5))


def test_formula_for_direct_is_n_minus_1_messages():
    cost = h.ExchangeCost(75.0, 0.011, 0.014, 517.0)
    # 31 messages of m bytes, one barrier, one own-block copy.
    expected = (31 * (75 + 0.011 * 2048) + 517 + 0.014 * 2048) * 1e-6
    assert h.multiphase_time_s((5,), 2048, cost) == pytest.approx(expected)
    assert h.phase_receive_bytes((8,), 1728) == [255 * 1728]
