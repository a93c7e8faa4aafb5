"""bench/regret_programs.py's baseline search (issue 29 item 2): it does not start from auto's
choice, and where the statements' candidates are few it simulates every combination."""

from __future__ import annotations

import math

from conftest import compile_text, load_bench_script

programs = load_bench_script("bench/regret_programs.py", "regret_programs")
SUMS = programs.GRID + programs.group_programs()["column and row sums (reduces in groups)"] + "\n"


def candidates_by_line(compiled) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for c, each in zip(compiled.collectives, compiled.candidates):
        out.setdefault(c.line, [x.algorithm for x in each])
    return out


def test_few_combinations_are_searched_exhaustively_whatever_the_program_starts_from():
    auto = compile_text(SUMS, "ideal:16")
    candidates = candidates_by_line(auto)
    combinations = math.prod(len(names) for names in candidates.values())
    assert 1 < combinations <= programs.EXHAUSTIVE_MAX_COMBINATIONS
    found = programs.baseline(auto, candidates)
    assert found["search"] == "exhaustive" and found["evaluations"] == combinations
    # The same best from a program compiled with other algorithms: the search does not
    # start from the compiled choice.
    forced = compile_text(SUMS, "ideal:16", "reduce=linear", cost="closed-form")
    assert {s.algorithm for s in forced.schedules} == {"linear"}
    assert programs.baseline(forced, candidates)["best_s"] == found["best_s"]


def test_a_program_row_compares_auto_with_the_baseline():
    row = programs.measure_program("sums", SUMS, "ideal:16")
    assert row["baseline"]["search"] == "exhaustive"
    assert row["best_s"] == min(row["auto_s"], row["baseline"]["best_s"])
    assert row["regret"] == row["auto_s"] / row["best_s"] >= 1.0
    assert row["auto_beats_baseline"] is False  # exhaustive: nothing beats it
