"""A native run's timeline (runtime/native_spans.py): the core's columns, each Span made when
read, the same spans as the Python engine keeps, read one by one, by slice or whole."""

from __future__ import annotations

import pickle

import pytest

from conftest import compile_text
from phalanx.runtime.native_spans import NativeSpans
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program


@pytest.fixture(scope="module")
def runs():
    """A broadcast of scattered pieces (pieces' labels), then an all-to-all (whole blocks):
    the Python engine's spans and the native run's."""
    source = kind_program("broadcast", 8, 1000)
    compiled = compile_text(source, target="ideal:8", algorithm="scatter-allgather", cost="closed-form")
    python = simulate(compiled, engine_choice="python").execution.spans
    native = simulate(compiled, engine_choice="native").execution.spans
    return python, native


def test_a_native_run_keeps_its_spans_as_columns(runs):
    python, native = runs
    assert isinstance(native, NativeSpans) and isinstance(python, list)
    assert len(native) == len(python) > 0
    assert native == python and python == native
    labels = {s.label for s in native}
    assert "0->1 bytes [0, 125) to 1, 125 B" in labels and "0->0 to 0, 1000 B" in labels  # a piece, a block


def test_native_spans_read_as_a_list_reads(runs):
    python, native = runs
    assert [native[i] for i in range(len(native))] == python
    assert native[-1] == python[-1] and native[0] == python[0]
    assert native[3:9] == python[3:9] and native[::-5] == python[::-5]
    assert {s.label for s in native if s.kind == "send"} == {s.label for s in python if s.kind == "send"}
    with pytest.raises(IndexError):
        native[len(native)]


def test_native_spans_differ_where_a_span_does(runs):
    python, native = runs
    assert native != python[:-1] and native != [*python[:-1], python[0]]


def test_native_spans_pickle(runs):
    _, native = runs
    assert pickle.loads(pickle.dumps(native)) == native


def test_whole_blocks_and_messages_of_several_blocks_are_labelled_as_the_python_engine_does():
    compiled = compile_text(kind_program("alltoall", 8, 64), target="ideal:8", algorithm="auto",
                            cost="closed-form")
    python = simulate(compiled, engine_choice="python").execution.spans
    native = simulate(compiled, engine_choice="native").execution.spans
    assert list(native) == python
    assert "4 blocks to 1, 256 B" in {s.label for s in native}  # (Bruck's combined messages)
