"""runtime/api.py and the package's public names: what `import phalanx` offers a notebook."""

from __future__ import annotations

import pytest

import phalanx


def test_the_package_lists_its_public_api():
    assert phalanx.__all__ == ["compile", "sweep", "Program", "Run", "Sweep", "PhalanxError",
                               "UsageError", "register_all", "__version__"]
    assert dir(phalanx) == sorted(phalanx.__all__)
    from phalanx.grammar.diagnostics import PhalanxError, UsageError
    from phalanx.runtime import api

    for name in phalanx.__all__:  # every listed name resolves, to the object it names
        assert getattr(phalanx, name) is not None
    assert (phalanx.compile, phalanx.sweep, phalanx.Run) == (api.compile, api.sweep, api.Run)
    assert (phalanx.PhalanxError, phalanx.UsageError) == (PhalanxError, UsageError)
    with pytest.raises(AttributeError, match="module 'phalanx' has no attribute 'simulate'"):
        phalanx.simulate  # noqa: B018


def test_compile_and_run_a_program_through_the_api():
    program = phalanx.compile("processors P(4)\narray A(8, 8) of float64 distribute (BLOCK, *) onto P\n"
                              "array B(8, 8) of float64 distribute (*, BLOCK) onto P\nB = A\n",
                              "ideal:4")
    assert isinstance(program, phalanx.Program) and program.target == "ideal:4"
    run = program.run()
    assert isinstance(run, phalanx.Run) and run.verified
    assert [c.kind for c in run.collectives] == ["alltoall"]


def test_a_misspelled_kind_is_an_error_in_the_api_too(examples):
    with pytest.raises(phalanx.UsageError) as info:
        phalanx.compile(examples / "transpose.phx", algorithm="allgater=ring")
    d = info.value.diagnostic
    assert d.message == "unknown collective kind 'allgater' in the algorithm choice 'allgater=ring'"
    assert d.hint.startswith("valid kinds: alltoall, alltoallv, broadcast")
