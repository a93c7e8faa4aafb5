"""Errors of `repeat`: a count below 1, and nested repeats that run a statement too often."""

from __future__ import annotations

from conftest import error_of

DECLS = """target ideal:4
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
"""


def test_a_repeat_count_below_one_is_refused_where_it_is_written():
    text = error_of(DECLS + "B = A\n  repeat 0 {\n  B = A\n}\n", file="r.phx")
    assert "r.phx:6:3: error: repeat needs a count of at least 1, got 0" in text
    assert "write e.g. `repeat 10 { ... }`, or drop the repeat to run the body once" in text


def test_nested_repeats_that_multiply_past_the_limit_are_refused_at_the_inner_one():
    text = error_of(DECLS + "repeat 100000 {\n repeat 10000 {\n  B = A\n }\n}\n", file="r.phx")
    assert ("r.phx:6:2: error: repeat runs its body 1000000000 times in all (nested repeats "
            "multiply), more than 100000000") in text and "repeat fewer times" in text


def test_a_big_repeat_compiles_without_unrolling():
    from conftest import compile_text

    compiled = compile_text(DECLS + "repeat 1000000 {\n  B = A\n  A = B\n}\n")
    assert len(compiled.schedules) == 2 and compiled.plan.run_count == 2_000_000
