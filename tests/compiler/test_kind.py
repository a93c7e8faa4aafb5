"""A collective kind is a typed value: recognition and the IR give Kind members, text from
outside becomes one at the edge (or a usage error naming the kinds), and its text is what
JSON, reports and the IR have always written."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from conftest import HEADER, compile_text
from phalanx.compiler.ir.conversion.lower_coll_to_sched import parse_algorithm_option
from phalanx.compiler.ir.dialects.sched import schedule_from_ir, schedule_to_ir
from phalanx.compiler.kind import Kind, parse_kind
from phalanx.compiler.recognize import Collective, classify
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.explore import explore_kind
from phalanx.runtime.sweep import sweep_kind


def test_recognition_gives_kind_members():
    assert classify(np.array([[0, 3], [3, 0]])) is Kind.ALLTOALL
    assert classify(np.array([[0, 3], [4, 0]])) is Kind.ALLTOALLV
    compiled = compile_text(HEADER + "B = A\n")
    assert compiled.collectives[0].kind is Kind.ALLTOALL
    assert all(s.kind is Kind.ALLTOALL for s in compiled.schedules)


def test_a_collective_refuses_a_kind_given_as_text():
    text = "reduce"  # a variable: /work/wt/kind_codemod.py rewrites Collective(0, "reduce", ...)
    with pytest.raises(TypeError, match="Collective.kind must be a Kind, not 'reduce'"):
        Collective(0, text, 2, ((0, 8), (8, 0)), "A", "B", 1)  # type: ignore[arg-type]


def test_a_kind_writes_its_text():
    assert json.dumps({Kind.REDUCE: [Kind.ALLREDUCE]}) == '{"reduce": ["allreduce"]}'
    assert f"{Kind.CSHIFT} by {Kind.PERMUTATION!s}" == "cshift by permutation"
    assert [k.value for k in Kind] == ["alltoall", "alltoallv", "broadcast", "scatter", "gather",
                                       "allgather", "reduce", "allreduce", "cshift", "permutation",
                                       "sparse"]


def test_parse_kind_takes_a_kind_name_with_blanks():
    assert parse_kind(" allgather ", "--kinds") is Kind.ALLGATHER


@pytest.mark.parametrize("text, message", [
    ("allgater", "unknown collective kind 'allgater' in --kinds"),
    ("", "unknown collective kind '' in --kinds"),
    ("Reduce", "unknown collective kind 'Reduce' in --kinds"),
])
def test_parse_kind_says_what_where_and_the_valid_kinds(text, message):
    with pytest.raises(UsageError) as info:
        parse_kind(text, "--kinds")
    d = info.value.diagnostic
    assert d.message == message
    assert d.hint == ("valid kinds: alltoall, alltoallv, broadcast, scatter, gather, allgather, "
                      "reduce, allreduce, cshift, permutation, sparse")


def test_the_algorithm_option_keys_kinds():
    choices = parse_algorithm_option("reduce=binomial,alltoall=bruck")
    assert list(choices) == [Kind.REDUCE, Kind.ALLTOALL]
    assert all(type(k) is Kind for k in choices)


def test_sweep_and_explore_turn_their_collective_into_a_kind():
    assert sweep_kind("reduce") is Kind.REDUCE and explore_kind(" cshift") is Kind.CSHIFT
    with pytest.raises(UsageError) as info:
        sweep_kind("sparse")  # a kind, but not one a sweep has a program for
    assert info.value.diagnostic.message == "cannot sweep collective 'sparse' yet"
    assert info.value.diagnostic.hint.startswith("sweepable: alltoall, broadcast")
    with pytest.raises(UsageError) as info:
        explore_kind("bcast")
    assert info.value.diagnostic.message == "cannot explore collective 'bcast'"


def test_the_sched_ir_keeps_the_kind_and_refuses_unknown_text():
    s = Schedule(0, Kind.GATHER, "direct", 2, (Phase.of([Transfer(1, 0, 8, 1, 0)]),))
    op = schedule_to_ir(s)
    op.verify()
    assert op.kind.data == "gather" and schedule_from_ir(op).kind is Kind.GATHER
    bad = schedule_to_ir(Schedule(0, "gathr", "direct", 2, s.phases))  # type: ignore[arg-type]
    with pytest.raises(VerifyException, match="kind must be one of alltoall, .*, got 'gathr'"):
        bad.verify()
