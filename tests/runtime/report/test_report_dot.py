"""Graphviz dumps: every phase on small machines, a summary that says so on big ones."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from phalanx.compiler.algorithms import direct_schedule
from phalanx.compiler.recognize import Collective
from phalanx.runtime.dot import DotLimits, sampled_phases, schedule_to_dot, summary_note
from phalanx.runtime.report import render_svg


def alltoall(n: int, block_bytes: int = 2048):
    m = np.full((n, n), block_bytes)
    return direct_schedule(Collective(0, "alltoall", n, tuple(map(tuple, m.tolist())), "A", "B", 8))


def test_sampled_phases_keep_first_and_last():
    assert sampled_phases(5, 8) == [0, 1, 2, 3, 4]
    assert sampled_phases(63, 8) == [0, 9, 18, 27, 35, 44, 53, 62]


def test_small_schedule_is_drawn_whole():
    dot = schedule_to_dot([alltoall(8)], "t")
    assert summary_note(alltoall(8), DotLimits()) == ""
    assert "summarised" not in dot and dot.count('subgraph "cluster_c0_p') == 7
    assert 'label="phase 0: 8 messages of 2 KB + 8 local copies (local sync)"' in dot


def test_big_schedule_is_summarised_and_says_so():
    dot = schedule_to_dot([alltoall(64)], "t")
    assert dot.count('subgraph "cluster_c0_p') == 8
    assert "// collective 0: summarised: 8 of 63 phases drawn (0, 9, 18, 27, 35, 44, 53, 62)" in dot
    assert '"c0gap9" [shape=plaintext, fixedsize=false, label="... 8 phases\\nnot drawn ..."]' in dot
    assert "cluster_c0_p62" in dot and "cluster_c0_p1\"" not in dot


def test_messages_per_phase_are_capped():
    dot = schedule_to_dot([alltoall(16)], "t", DotLimits(max_phases=20, max_edges_per_phase=5))
    assert "at most 5 messages drawn per phase" in dot
    assert 'label="phase 3: 16 messages of 2 KB (local sync, 5 drawn)"' in dot
    assert len(re.findall(r'"c0p3s\d+" -> "c0p3r\d+" \[constraint=false\]', dot)) == 5


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_summarised_dump_renders():
    svg = render_svg(schedule_to_dot([alltoall(64)], "t"))
    assert svg.count('class="cluster"') == 9 and "not drawn" in svg
