"""Every data object the interpreter runs with declares runtime/data.py's CollectiveData: a
method left out of one of them (as `strided_bytes` once was, breaking a merge) fails here,
not in the middle of a run."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.data import AssignmentData, CollectiveData, ReductionData, build_data
from phalanx.runtime.synthetic import SyntheticData
from phalanx.runtime.timing import TimingData

PROGRAM = """target ideal:4
processors P(4)
array A(16) of float64 distribute BLOCK onto P
array B(16) of float64 distribute CYCLIC onto P
array s(1) of float64 replicated onto P
B = A
s = sum(A)
"""


def _program_data() -> list[object]:
    compiled = compile_program(PROGRAM, file="d.phx")
    rng = np.random.default_rng(0)
    return [build_data(stmt, rng, {}) for stmt in compiled.communications]


def test_every_data_object_declares_the_interface():
    assignment, reduction = _program_data()
    assert isinstance(assignment, AssignmentData) and isinstance(reduction, ReductionData)
    objects = [assignment, reduction, SyntheticData(np.full((4, 4), 8), 1), TimingData(False)]
    for data in objects:
        assert isinstance(data, CollectiveData), type(data).__name__


@pytest.mark.parametrize("missing", ["strided_bytes", "problems", "wire_bytes"])
def test_an_object_without_one_method_is_not_collective_data(missing):
    class Partial(TimingData):
        pass

    setattr(Partial, missing, None)  # a data object that does not offer this method
    assert not isinstance(Partial(False, 4), CollectiveData)
