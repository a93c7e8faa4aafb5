"""A native run's timeline (runtime/native_spans.py): the core's columns, each Span made when
read, the same spans as the Python engine keeps, read one by one, by slice or whole."""

from __future__ import annotations

import pickle

import numpy as np
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


def test_the_span_columns_are_the_cores_memory_read_in_place(runs):
    """Core.take_spans hands its vectors over (runtime/engine_core/src/owned.rs), not copies:
    each column is a read-only array over an OwnedColumn, of the type NativeSpans reads."""
    import phalanx_engine_core as core_module

    _, native = runs
    columns = (native.node, native.kind, native.start_s, native.end_s, native.label)
    for column, dtype in zip(columns, (np.uint32, np.uint8, np.float64, np.float64, np.uint32)):
        assert column.dtype == dtype and len(column) == len(native)
        assert isinstance(column.base.obj, core_module.OwnedColumn) and not column.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            column[0] = 1


def test_an_owned_column_refuses_a_writable_view_and_gives_its_format():
    import ctypes

    import phalanx_engine_core as core_module

    core = core_module.Core(2, 1, 0)
    log = core.take_log(8)  # nothing logged yet: an empty column
    assert isinstance(log, core_module.OwnedColumn) and len(log) == 0 and not log
    view = memoryview(log)
    assert view.format == "I" and view.itemsize == 4 and view.readonly and view.shape == (0,)
    with pytest.raises(TypeError, match="not writable"):
        (ctypes.c_char * 0).from_buffer(log)
