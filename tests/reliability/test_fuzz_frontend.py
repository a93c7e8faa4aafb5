"""Fuzzing the whole front end and compiler: grammar-generated and byte-mutated programs.

500 cases in CI (bench/fuzz.py runs 20,000): each must end in a result or a Diagnostic, never an
uncaught exception or a hang, both parsers must accept or reject alike, and a program that
compiles and is small enough to simulate must verify.
"""

from __future__ import annotations

import random

from fuzz_programs import Outcome, grammar_program, mutate, run_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=250, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def check(outcome: Outcome, source) -> None:
    assert outcome.kind != "bug", f"{outcome.detail}\nprogram: {source!r}"
    assert outcome.parsers_agree, f"lark and antlr disagree on {source!r}"


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_grammar_generated_programs(rng: random.Random):
    source = grammar_program(rng)
    check(run_case(source), source)


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_byte_mutated_programs(tmp_path_factory, rng: random.Random):
    source = mutate(rng, grammar_program(rng))
    check(run_case(source, tmp_path_factory.mktemp("fuzz")), source)


def test_the_harness_catches_a_crash_and_a_hang(monkeypatch):
    """The harness itself can fail: an exception or a hang in the compiler is reported as a bug."""
    import fuzz_programs

    def boom(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(fuzz_programs, "compile_program", boom)
    assert run_case("processors P(2)\n").kind == "bug"

    def hang(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(fuzz_programs, "compile_program", hang)
    monkeypatch.setattr(fuzz_programs, "CASE_TIMEOUT_S", 0.2)
    outcome = run_case("processors P(2)\n")
    assert outcome.kind == "bug" and outcome.detail.startswith("Hang")


def test_non_utf8_bytes_are_a_diagnostic(tmp_path):
    outcome = run_case(b"processors P(4)\n\xff\xfe\n", tmp_path)
    assert outcome.kind == "diagnostic" and "UTF-8" not in outcome.detail
    assert outcome.detail.startswith("cannot read program")


def test_found_by_fuzzing_integer_reductions_wrap_like_the_reference():
    """A sum of bytes wraps in uint8; the receiver's combination must wrap the same way."""
    from conftest import compile_text
    from phalanx.runtime.simulate import simulate

    result = simulate(compile_text("target ideal:4\nprocessors P(4)\narray A(16, 3) of byte "
                                   "distribute (BLOCK, *) onto P\narray s(1) of byte replicated "
                                   "onto P\ns = sum(A)\n"), seed=1)
    assert result.verified, result.collectives[0].problems
