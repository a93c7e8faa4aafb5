"""Errors of sections, spread, eoshift, reductions along a dim and placed arrangements: each
says what is wrong, where (file:line:col, caret) and what to do."""

from __future__ import annotations

import pytest

from conftest import error_of

GRID = """target ideal:16
processors P(4)
array A(8, 8) of float64 distribute (BLOCK, *) onto P
array B(8, 8) of float64 distribute (*, BLOCK) onto P
array X(8) of float64 distribute BLOCK onto P
"""
L = "t.phx:6:"  # the statement's line

CASES = [
    ("section out of bounds", "B(:, 0:3) = A(:, 5:8)\n", L + "18",
     "the subscript 5:8 of 'A' is out of bounds: dimension 2 has indices 0 to 7",
     "indices count from 0; the upper bound is included"),
    ("negative lower bound", "X(0:3) = X(-1:2)\n", L + "12",
     "the subscript -1:2 of 'X' is out of bounds: dimension 1 has indices 0 to 7", None),
    ("stride 0", "B = A(0:7:0, :)\n", L + "7", "stride 0 in a subscript of 'A'",
     "a triplet's stride is a nonzero integer"),
    ("empty section", "X(0:3) = X(7:4)\n", L + "12", "the subscript 7:4 of 'X' selects no elements",
     "give a lower bound at most the upper bound"),
    ("empty backwards section", "X = X(::-1)\n", L + "7",
     "the subscript ::-1 of 'X' selects no elements", "e.g. 7:0:-1"),
    ("index out of bounds", "X = A(8, :)\n", L + "7",
     "index 8 is out of bounds for dimension 1 of 'A' (8, 8)", "indices count from 0 to 7"),
    ("subscript count", "X = A(0:7)\n", L + "5",
     "array 'A' has 2 dimension(s) but the section gives 1 subscript(s)", "one subscript"),
    ("non-conforming shapes", "B(:, 0:3) = A(:, 0:4)\n", L + "1",
     "shape mismatch: 'B(:, 0:3)' is (8, 4) but the right-hand side is (8, 5)",
     "make the sections' extents agree"),
    ("rank of a section", "B = A(3, :)\n", L + "1",
     "rank mismatch: 'B' has 2 dimension(s), the right-hand side 1", None),
    ("keyword as subscript", "X = A(dim=1, :)\n", L + "7",
     "subscript 1 of 'A' must be an index or a triplet lo:hi:stride", None),
    ("spread without ncopies", "B = spread(X, dim=2)\n", L + "5", "spread needs ncopies=",
     "spread(A, dim=d, ncopies=n)"),
    ("spread without copies", "B = spread(X, dim=2, ncopies=0)\n", L + "22",
     "spread ncopies=0 makes no copies", "ncopies=1 or more"),
    ("spread dim", "B = spread(X, dim=3, ncopies=8)\n", L + "15",
     "spread dim=3 is out of range: spreading the 1-D array 'X' makes 2 dimensions",
     "dim=1 to dim=2"),
    ("sum dim", "X = sum(A, dim=3)\n", L + "12", "sum dim=3 is out of range for the 2-D array 'A'",
     None),
    ("sum into a wrong shape", "B = sum(A, dim=1)\n", L + "1",
     "rank mismatch: 'B' has 2 dimension(s), the right-hand side 1", None),
    ("eoshift shift", "B = eoshift(A, X, dim=1)\n", L + "16", "the shift of eoshift must be an integer",
     None),
    ("eoshift boundary", "B = eoshift(A, 1, boundary=3)\n", L + "19",
     "eoshift has no argument 'boundary'", "keywords: dim"),
    ("section of a scalar reduction", "X(0:0) = sum(A)\n", L + "1",
     "a sum of a whole array goes into a one-element array, not a section", None),
    ("spread of a shift", "B = spread(cshift(X, 1), dim=2, ncopies=8)\n", L + "12",
     "spread of cshift(...): the only nesting allowed is spread of a reduction along a "
     "dimension", "spread(sum(A, dim=d1), dim=d2, ncopies=n)"),
    ("reduction of a spread", "X = sum(spread(X, dim=2, ncopies=8), dim=2)\n", L + "9",
     "sum of spread(...): the only nesting allowed is spread of a reduction along a "
     "dimension", None),
    ("spread of a reduction without dim", "B = spread(sum(A), dim=2, ncopies=8)\n", L + "12",
     "the sum inside spread needs dim=", "spread(sum(A, dim=d1), dim=d2, ncopies=n)"),
    ("spread of a reduction, wrong copies", "B = spread(sum(A, dim=2), dim=2, ncopies=4)\n",
     L + "1", "shape mismatch: 'B' is (8, 8) but the right-hand side is (8, 4)", None),
    ("spread of a reduction, dim", "B = spread(max(A, dim=2), dim=3, ncopies=8)\n", L + "27",
     "spread dim=3 is out of range: spreading the 1-D max of array 'A' makes 2 dimensions",
     "use dim=1 to dim=2"),
    ("reduction inside spread, dim", "B = spread(sum(A, dim=3), dim=2, ncopies=8)\n", L + "19",
     "sum dim=3 is out of range for the 2-D array 'A'", None),
    ("reduction of a section without dim", "X = sum(A(0:3, :))\n", L + "9",
     "sum of an array section needs dim=", "sum(A(0:3, :), dim=d)"),
    ("nested call", "B = cshift(transpose(A), 1)\n", L + "12",
     "cshift of transpose(...): the only nesting allowed is spread of a reduction along a "
     "dimension", "assign the inner call to an array first"),
    ("section of an arrangement", "B = P(0:3)\n", L + "5",
     "'P' is a processor arrangement, not an array", None),
]


@pytest.mark.parametrize("name, statement, where, message, hint", CASES, ids=[c[0] for c in CASES])
def test_section_error(name, statement, where, message, hint):
    text = error_of(GRID + statement)
    first, _, caret = text.splitlines()[:3]
    assert first == f"{where}: error: {message}"
    assert caret.index("^") == 4 + int(where.split(":")[2]) - 1
    if hint:
        assert text.splitlines()[-1].startswith("hint: ") and hint in text.splitlines()[-1]


def test_an_arrangement_placed_past_the_machine():
    text = error_of("target ideal:16\nprocessors P(4)\nprocessors Q(2, 4) at 12\n"
                    "array A(8) of byte distribute BLOCK onto P\narray B(8, 8) of byte distribute "
                    "(BLOCK, BLOCK) onto Q\nB(0, :) = A\n")
    first, _, caret = text.splitlines()[:3]
    assert first == ("t.phx:3:1: error: processor arrangement 'Q' at node 12 needs nodes 12 to 19 "
                     "but target 'ideal:16' has 16 nodes (0 to 15)")
    assert caret.index("^") == 4
    assert text.splitlines()[-1] == "hint: place it at node 8 or lower, or use a larger target"


def test_the_same_section_both_sides_moves_nothing():
    text = error_of(GRID + "X(0:3) = X(0:3)\n")
    assert text.splitlines()[0] == "t.phx:6:1: error: 'X(0:3) = X(0:3)' moves nothing"
