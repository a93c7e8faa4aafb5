"""Every program in examples/ compiles, runs on its own target and delivers its data.

A new example is picked up automatically (it must compile, run and verify); the table
below adds the collective kinds each known example must be recognized as, in order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_section_examples import MACHINES as SECTION_MACHINES

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import TARGETS, parse_spec
from phalanx.runtime.simulate import checked_run, simulate

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.phx"))
# The runs other tests make as these would (the same compile, the same seed, its data checked),
# with more checks of their own: not made twice. The example on its own target, default cost:
OWN_TARGET_RUN_ELSEWHERE = {"summa.phx": "tests/test_section_examples.py::test_the_summa_numbers_in_the_docs"}
# (example, target) compiled with `--cost closed-form` and run with seed 1:
PENCIL_MACHINES = ["ideal:64", "paragon:8x8", "iwarp:8x8", "torus:8x8"]
OTHER_TARGET_RUN_ELSEWHERE = {
    **{("summa.phx", spec): "tests/test_section_examples.py::test_summa_broadcasts_the_panels"
       for spec in SECTION_MACHINES},
    **{("halo2d.phx", spec): "tests/test_section_examples.py::test_halo2d_moves_only_the_strips"
       for spec in SECTION_MACHINES},
    **{("fft3d_pencil.phx", spec): "test_pencil_fft_runs_as_alltoall_in_groups_on_the_issue_targets"
       for spec in PENCIL_MACHINES},
}

EXPECTED_KINDS = {
    "transpose.phx": ["alltoall"],
    "fft2d_iwarp.phx": ["alltoall", "alltoall"],
    "adi.phx": ["alltoall"] * 4,  # two transposes per step, repeat 2
    "matvec.phx": ["allgather"],
    "nbody.phx": ["allgather"] * 3,
    "cyclic_to_block.phx": ["alltoall", "sparse"],
    "bcast_reduce.phx": ["broadcast", "reduce", "allreduce"],
    "fft3d_pencil.phx": ["alltoall", "alltoall"],  # each in 8 groups of 8 (test below)
    "summa.phx": ["broadcast"] * 16,  # in 8 groups of 8 (tests/test_section_examples.py)
    "rowsum.phx": ["reduce"],  # in 8 groups of 8 (test below)
    "ksr1_collectives.phx": ["broadcast", "cshift", "gather", "allgather", "allreduce", "reduce"],
}


def own_target(path: Path) -> str:
    match = re.search(r"^\s*target\s+(\S+)", path.read_text(), re.M)
    assert match, f"{path.name} declares no target: every example names the machine it is for"
    return match.group(1)


def test_the_examples_of_the_issue_exist():
    assert set(EXPECTED_KINDS) <= {p.name for p in EXAMPLES}


def test_the_runs_made_elsewhere_are_of_examples_that_exist():
    names = {p.name for p in EXAMPLES}
    assert set(OWN_TARGET_RUN_ELSEWHERE) <= names
    assert {name for name, _ in OTHER_TARGET_RUN_ELSEWHERE} <= names


OWN_TARGET = [p for p in EXAMPLES if p.name not in OWN_TARGET_RUN_ELSEWHERE]


@pytest.mark.parametrize("path", OWN_TARGET, ids=[p.name for p in OWN_TARGET])
def test_example_runs_and_verifies(path: Path):
    spec = own_target(path)
    if parse_spec(spec)[0] not in TARGETS:
        pytest.skip(f"target '{spec}' of {path.name} is not registered")
    compiled = compile_program(path)
    run = checked_run(compiled, seed=1)  # simulate()'s run, without the own-time replays (none read)
    assert not any(run.problems.values()), f"{path.name}: delivered data did not verify: {run.problems}"
    assert run.execution.total_time_s > 0
    kinds = [compiled.collectives[i].kind for i in compiled.plan.runs()]  # a repeat's every run
    assert len(run.problems) == len(kinds)  # every run checked
    if path.name in EXPECTED_KINDS:
        assert kinds == EXPECTED_KINDS[path.name]


@pytest.mark.parametrize("spec", PENCIL_MACHINES)
def test_pencil_fft_runs_as_alltoall_in_groups_on_the_issue_targets(spec: str):
    """Issue 19: the pencil FFT's transposes are all-to-alls inside the grid's columns, then
    its rows, on every machine of the issue, and deliver their data."""
    path = next(p for p in EXAMPLES if p.name == "fft3d_pencil.phx")
    compiled = compile_program(path, target=spec, cost="closed-form")  # recognition, not auto's choice
    columns = tuple(tuple(range(c, 64, 8)) for c in range(8))
    rows = tuple(tuple(range(8 * r, 8 * r + 8)) for r in range(8))
    assert [(c.kind, c.groups) for c in compiled.collectives] == [("alltoall", columns),
                                                                  ("alltoall", rows)]
    result = simulate(compiled, seed=1)
    assert result.verified
    assert [c["groups"]["count"] for c in result.to_json()["collectives"]] == [8, 8]


@pytest.mark.parametrize("name", ["proteus_exchange.phx", "proteus_fft2d.phx",
                                  "proteus_complete_exchange.phx"])
def test_proteus_examples_write_a_report(name: str, tmp_path):
    """Issue 6 asks that the Proteus examples run in CI with a report."""
    from phalanx.runtime.report import write_report

    # ranked by the closed forms: the report is checked here, auto's choice by
    # test_example_runs_and_verifies
    result = simulate(compile_program(Path(__file__).resolve().parent.parent / "examples" / name,
                                      cost="closed-form"), seed=1)
    index = write_report(result, tmp_path / "report")
    assert result.verified and "<svg" in index.read_text()
    # a timeline per PP (gantt.svg) and per link (links-gantt.svg), as the issue asks
    assert (tmp_path / "report" / "gantt.svg").exists()
    assert "cluster 0 link out" in (tmp_path / "report" / "links-gantt.svg").read_text()


# A 64-node size of every registered target: every example fits (the largest needs 64
# processors), and most run on arrangements smaller than the machine.
SIXTY_FOUR = {"ideal": "ideal:64", "iwarp": "iwarp:8x8", "torus": "torus:8x8", "paragon": "paragon:8x8",
              "sp2": "sp2:64", "cs2": "cs2:64", "hypercube": "hypercube:6",
              "proteus": "proteus:groups=2,links=1", "ksr1": "ksr1:64"}


def test_every_registered_target_has_a_64_node_size():
    assert set(SIXTY_FOUR) == set(TARGETS)


def test_row_sums_are_a_reduce_in_every_grid_row():
    """What is recognized; the example's run on its own target (compiled by `auto`, seed 1) is
    test_example_runs_and_verifies'."""
    compiled = compile_program(Path(__file__).resolve().parent.parent / "examples" / "rowsum.phx",
                               cost="closed-form")
    (c,) = compiled.collectives
    assert (c.kind, [len(g) for g in c.groups], c.block_bytes) == ("reduce", [8] * 8, 64 * 8)


# On the KSR-1 (its coherence protocol runs in Python: the slowest runs of the test below) an
# example whose statements take the code paths of another's is not run again: the same kinds by
# the same algorithms, in groups or not, with strided blocks or not (`paths`; checked by
# test_the_ksr1_runs_left_out_take_the_paths_of_one_that_runs). {example: the one that covers it}
KSR1 = SIXTY_FOUR["ksr1"]
KSR1_SAME_PATHS = {"adi.phx": "transpose.phx",
                   "proteus_complete_exchange.phx": "fft2d_iwarp.phx",
                   "proteus_fft2d.phx": "proteus_exchange.phx"}


def paths(compiled) -> set[tuple[str, str, bool, bool]]:
    """(kind, algorithm, in groups, strided) of each statement of a compiled program."""
    return {(c.kind, s.algorithm, bool(c.groups), bool(c.strided))
            for s, c in zip(compiled.schedules, compiled.collectives)}


def test_the_ksr1_runs_left_out_take_the_paths_of_one_that_runs():
    for name, cover in KSR1_SAME_PATHS.items():
        left_out, kept = (paths(compile_program(EXAMPLES[0].parent / n, target=KSR1, cost="closed-form"))
                          for n in (name, cover))
        assert left_out <= kept and cover not in KSR1_SAME_PATHS, (name, left_out, cover, kept)


def other_targets() -> list:
    """(example, 64-node spec) for every target but the example's own, but for the runs
    another test makes (OTHER_TARGET_RUN_ELSEWHERE) and the KSR-1's of KSR1_SAME_PATHS."""
    return [pytest.param(path, spec, id=f"{path.name}-{spec}") for path in EXAMPLES
            for spec in sorted(SIXTY_FOUR.values())
            if parse_spec(spec)[0] != parse_spec(own_target(path))[0]
            and (path.name, spec) not in OTHER_TARGET_RUN_ELSEWHERE
            and not (spec == KSR1 and path.name in KSR1_SAME_PATHS)]


@pytest.mark.parametrize(("path", "spec"), other_targets())
def test_example_runs_with_auto_on_every_target(path: Path, spec: str):
    """Issue 22: `auto` offers only algorithms that can run, on any machine. `auto` ranks them
    by the closed forms (`--cost closed-form`): which one it takes is not what is checked here
    (tests/runtime/test_timing.py checks how each cost model ranks), and simulating every
    candidate of 15 programs on 9 machines would be most of the suite's time. An example on its
    own target is run by test_example_runs_and_verifies, with the default cost model and
    simulate(); here the program runs and its data are checked, nothing else."""
    problems = checked_run(compile_program(path, target=spec, cost="closed-form"), seed=1).problems
    assert problems and not any(problems.values()), problems
