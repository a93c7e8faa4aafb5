"""Textbook cases (issue 27): on `ideal`, each textbook algorithm's simulated time is its closed
form within 2%, and its data arrives intact.

The forms are the papers', in alpha-beta-gamma form on ideal's port model (targets/ideal.py: a
message of m bytes holds its sender's port for the start-up alpha, then both ports for beta m;
a node sends one message and receives one at a time; its processor merges a reduction's
partials at gamma per element). p members, b bytes per member's block, n bytes of a broadcast's
block or of a reduction's partial (e = n / 8 float64 elements), lg = ceil(log2).

- Thakur, Rabenseifner and Gropp, "Optimization of collective communication operations in
  MPICH", IJHPCA 19(1), 2005 (Sec. 4): binomial and van de Geijn's scatter + allgather
  broadcast, the binomial scatter and gather they are built of, ring and recursive-doubling
  allgather, pairwise all-to-all, binomial and Rabenseifner's reduce, recursive-doubling and
  Rabenseifner's allreduce; the ring allreduce of Patarasuk and Yuan, JPDC 69(2), 2009. The
  forms are the papers' for p a power of two where the paper gives no other (p = 8, 16); the
  cases that hold for any p also run on p = 12.
- Bruck, Ho, Kipnis, Upfal and Weathersby, IEEE TPDS 8(11), 1997: the concatenation (allgather)
  and index (all-to-all) algorithms.
- A one-message shift: every node sends its one message at once.

Where the port model charges what the paper does not, the row adds that term and names it;
docs/bounds.md ("Textbook cases") derives it. One such term: the receiver of a reduction's
message merges every element it brings, also a reduced piece it only stores (the gather or
allgather half of the reduce-scatter-based algorithms), where the papers charge gamma on the
reduce-scatter half alone: (p - 1) / p e gamma more.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.library import cost
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program

TOLERANCE = 0.02
SHORT, LONG = 8, 64 * 1024
PIECES_SHORT = 256  # a short block (partial) that still cuts into 16 pieces (of float64 elements)
ELEMENT = 8  # the sweep's reductions are of float64 (runtime/sweep.py reduction_arrays)


def lg(p: int) -> int:
    return (p - 1).bit_length()


def stored_merges(p: int, n: int, port: PortModel) -> float:
    """What the port model charges beyond the papers on a reduce-scatter-based reduction: the
    (p - 1) / p e elements of reduced pieces a member takes in the second half, each merged."""
    return (p - 1) / p * n / ELEMENT * port.combine_s_per_op


@dataclass(frozen=True)
class Case:
    kind: str
    algorithm: str
    paper: str
    time_s: Callable[[int, int, PortModel], float]  # (p, size in bytes, port) -> seconds
    members: tuple[int, ...] = (8, 16, 12)
    sizes: tuple[int, int] = (SHORT, LONG)


def _a(port: PortModel) -> float:
    return port.startup_s


def _b(port: PortModel) -> float:
    return port.s_per_byte


def _g(port: PortModel) -> float:
    return port.combine_s_per_op / ELEMENT  # per byte of float64 partial


CASES = (
    Case("broadcast", "binomial", "Thakur 2005 4.1: lg p (alpha + n beta)",
         lambda p, n, port: lg(p) * (_a(port) + n * _b(port))),
    Case("broadcast", "scatter-allgather", "van de Geijn, Thakur 2005 4.1: binomial scatter "
         "lg p alpha + (p-1)/p n beta, ring allgather (p-1) alpha + (p-1)/p n beta",
         lambda p, n, port: (lg(p) + p - 1) * _a(port) + 2 * (p - 1) / p * n * _b(port),
         sizes=(PIECES_SHORT, LONG)),
    Case("broadcast", "scatter-doubling", "Thakur 2005 4.1 (MPICH's scatter_recursive_doubling"
         "_allgather): binomial scatter lg p alpha + (p-1)/p n beta, recursive doubling lg p "
         "alpha + (p-1)/p n beta",
         lambda p, n, port: 2 * lg(p) * _a(port) + 2 * (p - 1) / p * n * _b(port),
         members=(8, 16), sizes=(PIECES_SHORT, LONG)),
    Case("scatter", "binomial", "van de Geijn's binomial scatter, Thakur 2005 4.1: lg p alpha + "
         "(p-1)/p (p b) beta",
         lambda p, b, port: lg(p) * _a(port) + (p - 1) * b * _b(port), members=(8, 16)),
    Case("gather", "binomial", "the binomial gather of Rabenseifner's reduce, Thakur 2005 4.4: "
         "lg p alpha + (p-1)/p (p b) beta",
         lambda p, b, port: lg(p) * _a(port) + (p - 1) * b * _b(port), members=(8, 16)),
    Case("allgather", "ring", "Thakur 2005 4.2: (p-1) alpha + (p-1)/p (p b) beta",
         lambda p, b, port: (p - 1) * (_a(port) + b * _b(port))),
    Case("allgather", "recursive-doubling", "Thakur 2005 4.2: lg p alpha + (p-1)/p (p b) beta",
         lambda p, b, port: lg(p) * _a(port) + (p - 1) * b * _b(port), members=(8, 16)),
    Case("allgather", "far-first-doubling", "recursive doubling relabelled (rank bits reversed): "
         "Thakur 2005 4.2's lg p alpha + (p-1)/p (p b) beta",
         lambda p, b, port: lg(p) * _a(port) + (p - 1) * b * _b(port), members=(8, 16)),
    Case("allgather", "bruck", "Bruck 1997 (concatenation), Thakur 2005 4.2: lg p alpha + "
         "(p-1)/p (p b) beta, any p",
         lambda p, b, port: lg(p) * _a(port) + (p - 1) * b * _b(port)),
    Case("alltoall", "bruck", "Bruck 1997 Sec. 3 (index, radix 2): round k sends the n_k blocks "
         "whose distance has bit k set, sum over k of (alpha + n_k b beta); p/2 b per round on 2^d",
         lambda p, b, port: sum(_a(port) + sum(j >> k & 1 for j in range(1, p)) * b * _b(port)
                                for k in range(lg(p)))),
    Case("alltoall", "direct", "pairwise exchange, Thakur 2005 4.3: (p-1) (alpha + b beta)",
         lambda p, b, port: (p - 1) * (_a(port) + b * _b(port))),
    Case("reduce", "binomial", "Thakur 2005 4.4 (short messages): lg p (alpha + n beta + n gamma)",
         lambda p, n, port: lg(p) * (_a(port) + n * _b(port) + n * _g(port)), members=(8, 16)),
    Case("reduce", "reduce-scatter-gather", "Rabenseifner, Thakur 2005 4.4: recursive halving "
         "lg p alpha + (p-1)/p n (beta + gamma), binomial gather lg p alpha + (p-1)/p n beta; "
         "plus the gather's stored merges",
         lambda p, n, port: (2 * lg(p) * _a(port) + 2 * (p - 1) / p * n * _b(port)
                             + (p - 1) / p * n * _g(port) + stored_merges(p, n, port)),
         members=(8, 16), sizes=(PIECES_SHORT, LONG)),
    Case("allreduce", "recursive-doubling", "Thakur 2005 4.5: lg p (alpha + n beta + n gamma)",
         lambda p, n, port: lg(p) * (_a(port) + n * _b(port) + n * _g(port)),
         members=(8, 16), sizes=(PIECES_SHORT, LONG)),
    Case("allreduce", "reduce-scatter-allgather", "Rabenseifner, Thakur 2005 4.5: 2 lg p alpha "
         "+ 2 (p-1)/p n beta + (p-1)/p n gamma; plus the allgather's stored merges",
         lambda p, n, port: (2 * lg(p) * _a(port) + 2 * (p - 1) / p * n * _b(port)
                             + (p - 1) / p * n * _g(port) + stored_merges(p, n, port)),
         members=(8, 16), sizes=(PIECES_SHORT, LONG)),
    Case("allreduce", "ring", "Patarasuk and Yuan 2009: reduce-scatter and allgather round the "
         "ring, 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma; plus the allgather's stored "
         "merges",
         lambda p, n, port: (2 * (p - 1) * _a(port) + 2 * (p - 1) / p * n * _b(port)
                             + (p - 1) / p * n * _g(port) + stored_merges(p, n, port)),
         sizes=(PIECES_SHORT, LONG)),
    Case("cshift", "colouring", "one message per node, all at once: alpha + b beta",
         lambda p, b, port: _a(port) + b * _b(port)),
)

POINTS = [(case, p, size) for case in CASES for p in case.members for size in case.sizes]


@pytest.mark.parametrize("case, p, size", POINTS, ids=[
    f"{c.kind}-{c.algorithm}-ideal:{p}-{size}B" for c, p, size in POINTS])
def test_each_textbook_case_meets_its_closed_form_on_ideal(case: Case, p: int, size: int):
    spec = f"ideal:{p}"
    compiled = compile_program(kind_program(case.kind, p, size), target=spec,
                               algorithm=f"{case.kind}={case.algorithm}")
    result = simulate(compiled).collectives[0]
    assert (result.kind, result.algorithm) == (case.kind, case.algorithm)
    assert result.verified, result.problems
    closed_form_s = case.time_s(p, size, resolve(spec).library.machine.port)
    assert abs(result.time_s / closed_form_s - 1) <= TOLERANCE, (case.paper, result.time_s,
                                                                 closed_form_s)


@pytest.mark.parametrize("p, n", [(8, 65536), (16, 256), (12, 65536)])
def test_the_cost_forms_of_the_reduce_scatter_reductions_are_the_rows_above(p: int, n: int):
    """cost.py's forms (what the library states for these algorithms) are the table's."""
    port = resolve("ideal:16").library.machine.port
    forms = {c.algorithm: c.time_s for c in CASES if c.kind == "allreduce"}
    if p & (p - 1) == 0:
        assert cost.rabenseifner_s(p, n, ELEMENT, port) == pytest.approx(
            forms["reduce-scatter-allgather"](p, n, port), rel=1e-12)
    piece_bytes = math.ceil(n / ELEMENT / p) * ELEMENT  # the ring's pieces, uneven on p = 12
    assert cost.ring_allreduce_s(p, n, ELEMENT, port) == pytest.approx(
        forms["ring"](p, piece_bytes * p, port), rel=1e-12)


@pytest.mark.parametrize("algorithm", ["ring", "reduce-scatter-allgather"])
def test_the_new_allreduces_refuse_what_they_cannot_cut_with_the_reason(algorithm: str):
    """A one-element partial (a scalar sum) cannot be cut into pieces: Rabenseifner's is refused
    with the reason; the ring sends it whole, P - 1 steps of one start-up and one element."""
    source = "processors P(8)\narray D(8) of float64 distribute BLOCK onto P\n" \
             "array s(1) of float64 replicated onto P\ns = sum(D)\n"
    if algorithm == "ring":
        result = simulate(compile_program(source, target="ideal:8",
                                          algorithm="allreduce=ring")).collectives[0]
        assert result.verified, result.problems
        port = resolve("ideal:8").library.machine.port
        assert result.time_s == pytest.approx(7 * (port.startup_s + 8 * port.s_per_byte
                                                   + port.combine_s_per_op), rel=0.02)
        return
    with pytest.raises(PhalanxError, match="each partial is one element, which cannot be split"):
        compile_program(source, target="ideal:8", algorithm=f"allreduce={algorithm}")
