"""Graphviz dumps: every phase on small machines, a summary that says so on big ones."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from phalanx.compiler.algorithms import direct_schedule
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.runtime.dot import DotLimits, drawn_schedules, sampled_phases, schedule_to_dot, summary_note
from phalanx.runtime.phase_matrix import phase_matrix_svg
from phalanx.runtime.report import render_svg


def alltoall(n: int, block_bytes: int = 2048):
    m = np.full((n, n), block_bytes)
    return direct_schedule(Collective(0, Kind.ALLTOALL, n, tuple(map(tuple, m.tolist())), "A", "B", 8))


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


@pytest.mark.graphviz
def test_summarised_dump_renders():
    svg = render_svg(schedule_to_dot([alltoall(64)], "t"))
    assert svg.count('class="cluster"') == 9 and "not drawn" in svg


def statement(line: int, n: int = 8, collective: int = 0):
    """A run of the all-to-all statement at `line` (its collective number `collective`)."""
    return replace(alltoall(n), line=line, collective=collective)


def test_runs_of_one_statement_are_drawn_once_and_said_so():
    runs = [statement(7 + i % 2, collective=i) for i in range(100)]
    drawn, note = drawn_schedules(runs, DotLimits())
    assert [(s.line, count) for s, count in drawn] == [(7, 50), (8, 50)]
    assert note == ("100 collective runs of 2 statements: each statement's schedule is drawn "
                    "once (its runs share it)")
    dot = schedule_to_dot(runs, "t")
    assert dot.count('subgraph "cluster_c') == 2 + 2 * 7 and "50 runs" in dot


def test_statements_past_the_budget_are_left_out_and_named():
    runs = [statement(line) for line in range(1, 11)]
    drawn, note = drawn_schedules(runs, DotLimits(max_collectives=3))
    assert len(drawn) == 3
    assert note == "3 of 10 statements drawn (picture budget); not drawn: line 4, line 5, line 6, " \
        "line 7, line 8, line 9, line 10"
    drawn, note = drawn_schedules(runs, DotLimits(max_edges=130))  # 64 sends per statement
    assert len(drawn) == 2 and "2 of 10 statements drawn" in note


def test_graphviz_out_of_time_is_none_not_an_error(monkeypatch):
    def slow(*args, **kwargs):
        raise subprocess.TimeoutExpired("dot", kwargs["timeout"])
    monkeypatch.setattr(subprocess, "run", slow)
    assert render_svg("digraph { a -> b }", timeout_s=1.0) is None


def test_phase_matrices_count_messages_and_say_what_is_left_out():
    svg = phase_matrix_svg([alltoall(64)], "schedule of t")
    assert "phase 0 of 63: 64 messages" in svg and "destination node" in svg
    assert "55 phases not drawn" in svg and "message size (KB)" in svg
