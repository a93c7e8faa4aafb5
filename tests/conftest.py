"""Shared fixtures: paths, a CLI runner and a compiler for inline programs."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import phalanx
from phalanx.cli import main
from phalanx.compiler.driver import compile_program, recognized_collectives
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Phase, Plan, Schedule
from phalanx.grammar.diagnostics import PhalanxError

phalanx.register_all()

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(autouse=True)
def point_cache_in_tmp(tmp_path_factory, monkeypatch):
    """Sweeps cache their points (runtime/point_cache.py): keep each test's cache its own, out
    of the home directory."""
    directory = tmp_path_factory.mktemp("points")
    monkeypatch.setattr("phalanx.runtime.point_cache.default_cache_dir", lambda: directory)


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    def run(*argv: str) -> CliResult:
        code = main(list(argv))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def load_bench_script(relative: str, name: str):
    """A bench/ script (not a package) as a module, registered under `name` (its dataclasses
    look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_text(source: str, target: str | None = None, algorithm: str = "auto",
                 file: str = "t.phx", cost: str = "target"):
    """`cost="closed-form"` where the test forces the algorithm or does not check `auto`'s
    choice: the candidates are then not simulated."""
    return compile_program(source, target=target, algorithm=algorithm, file=file, cost=cost)


def error_of(source: str, target: str | None = None, file: str = "t.phx") -> str:
    """The rendered diagnostic of a program that must fail to compile."""
    with pytest.raises(PhalanxError) as info:
        compile_text(source, target, file=file)
    return info.value.diagnostic.render()


HEADER = """target ideal:16
processors P(16)
array A(256, 256) of float64 distribute (BLOCK, *) onto P
array B(256, 256) of float64 distribute (*, BLOCK) onto P
"""


# hypercube:4 as a 4 x 4 grid: Y = X trades X's first two dimensions within each grid
# column (nodes j, j+4, j+8, j+12: a 2-cube whose exchanges share no link), so it is an
# `alltoall in 4 groups of 4` of 512-byte blocks.
GROUPED_EXCHANGE = ("target hypercube:4\nprocessors Q(4, 4)\n"
                    "array X(16, 16, 16) of float64 distribute (*, BLOCK, BLOCK) onto Q\n"
                    "array Y(16, 16, 16) of float64 distribute (BLOCK, *, BLOCK) onto Q\n"
                    "Y = X\n")


def whole_machine_barriers(schedule):
    """The schedule with every barrier spanning all its nodes (Phase.barrier_groups dropped)."""
    return dataclasses.replace(schedule, phases=tuple(dataclasses.replace(p, barrier_groups=())
                                                      for p in schedule.phases))


def pipeline_source(work_ms: float) -> str:
    """A transpose on ideal:4 in a 4-stage pipeline behind `work_ms` of compute per stage."""
    return ("target ideal:4\nprocessors P(4)\n"
            "array A(64, 64) of float64 distribute (BLOCK, *) onto P\n"
            "array B(64, 64) of float64 distribute (*, BLOCK) onto P\n"
            'compute "setup" on P cost 0.2 ms\n'
            f'pipeline stages=4 {{\n  compute "work" on P cost {work_ms:g} ms\n  B = A\n}}\n')


# -- tests that need an external tool ----------------------------------------------------------
# Each marker (registered in pyproject.toml) names a tool a test runs; `make setup` installs them
# all and CI runs every test. Where a tool is missing, its marked tests are skipped, saying what
# to install; `pytest -m "not simgrid and not mpi"` leaves them out on purpose.

def _missing_simgrid() -> str | None:
    from phalanx.runtime.backends.simgrid import simgrid_missing

    why = simgrid_missing()
    return None if why is None else f"SimGrid unavailable: {why}"


def _missing_mpi() -> str | None:
    from phalanx.compiler.native import missing_tools
    from phalanx.runtime.backends.mpi import mpi_missing

    why = mpi_missing() or ", ".join(missing_tools(("mpicc", "mpirun")))
    return f"MPI unavailable: {why}" if why else None


def _missing_native(*names: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        from phalanx.compiler.native import missing_tools

        absent = missing_tools(names)
        return "not installed: " + ", ".join(absent) if absent else None
    return missing


def _missing_program(name: str, *names: str, package: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if any(shutil.which(n) for n in (name, *names)):
            return None
        return f"{name} is not installed (apt-get install {package})"
    return missing


TOOLS: dict[str, Callable[[], str | None]] = {
    "simgrid": _missing_simgrid,
    "mpi": _missing_mpi,
    "mlir_opt": _missing_native("mlir-opt-22", "mlir-translate-22"),
    "clang": _missing_native("clang-22"),
    "chromium": _missing_program("chromium", "chromium-browser", package="chromium"),
    "graphviz": _missing_program("dot", package="graphviz"),
}


@functools.cache
def tool_missing(marker: str) -> str | None:
    """Why the tool of `marker` cannot run here (asked once per session), or None."""
    return TOOLS[marker]()


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in TOOLS:
        if item.get_closest_marker(marker) is not None and (why := tool_missing(marker)):
            pytest.skip(why)


# -- the longest tests first --------------------------------------------------------------------
SLOW_FIRST = ROOT / "tests" / "slow_first.txt"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests slow_first.txt lists run first, longest first; the others keep their order."""
    ids = [line for line in SLOW_FIRST.read_text().splitlines() if line and not line.startswith("#")]
    rank = {nodeid: i for i, nodeid in enumerate(ids)}
    items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))


def two_node_compiled():
    """A 2-node transpose on ideal:2: the smallest program whose schedule tests can rewrite."""
    return compile_text("target ideal:2\nprocessors P(2)\narray A(2, 2) of byte distribute "
                        "(BLOCK, *) onto P\narray B(2, 2) of byte distribute (*, BLOCK) onto P\n"
                        "B = A\n")


def with_schedule(compiled, schedule):
    """`compiled` with its schedule replaced by `schedule` (a hand-made wrong one, say)."""
    steps = tuple(schedule if isinstance(s, Schedule) else s for s in compiled.plan.steps)
    return dataclasses.replace(compiled, plan=Plan(compiled.plan.nprocs, steps))


def crossed(compiled):
    """`compiled`'s one-phase schedule split so that each node waits in phase 0 for what the
    other sends only in phase 1: a deadlock."""
    (schedule,) = compiled.schedules
    (phase,) = schedule.phases
    copies = tuple(t for t in phase.sends if t.src == t.dst)
    net = tuple(t for t in phase.sends if t.src != t.dst)
    return dataclasses.replace(schedule, phases=(Phase(copies, copies + net), Phase(net, ())))


def every_pair(nnodes: int):
    """(src, dst, bytes) of every ordered pair of distinct nodes, bytes differing from message
    to message: the messages the network-column tests compare."""
    import numpy as np

    src, dst = np.nonzero(~np.eye(nnodes, dtype=bool))
    return src, dst, (src * 37 + dst * 1001) % 5000


def assert_program_columns_match(spec: str) -> None:
    """The network's transfer programs as columns are transfer_program's, op for op, for every
    pair of the machine."""
    from phalanx.compiler.schedule import Transfer
    from phalanx.compiler.target import resolve
    from phalanx.runtime.engine import Engine

    target = resolve(spec)
    network = target.build_network(Engine())
    src, dst, nbytes = every_pair(target.nnodes)
    columns = network.transfer_programs(src, dst, nbytes, 0 * src)
    for i in range(len(src)):
        program = network.transfer_program(Transfer(int(src[i]), int(dst[i]), int(nbytes[i]), 0, 0))
        assert columns.program(i) == program


def assert_forced_run_verifies(spec: str, kind: str, algorithm: str, size: int) -> None:
    """The sweep's program of `kind` with `algorithm` forced runs, delivers every block and
    does not beat its lower bound."""
    from phalanx.compiler.target import resolve
    from phalanx.runtime.simulate import simulate
    from phalanx.runtime.sweep import kind_program

    machine = resolve(spec)
    compiled = compile_program(kind_program(kind, machine.nnodes, size), target=spec,
                               algorithm=f"{kind}={algorithm}")
    result = simulate(compiled).collectives[0]
    assert result.algorithm == algorithm
    assert result.verified, result.problems
    assert result.time_s >= result.lower_bound_s


def assert_run_at_inner_root_verifies(spec: str, kind: Kind, algorithm: str) -> None:
    """A scatter from (gather to) node 5 of 16, inside a 4x4 grid, 100 bytes a node, forced to
    `algorithm`: it runs and delivers every block."""
    from phalanx.runtime.simulate import simulate

    rooted, spread = "of byte on P(5)", "of byte distribute BLOCK onto P"
    source, dest = (rooted, spread) if kind is Kind.SCATTER else (spread, rooted)
    program = (f"processors P(16)\narray S(1600) {source}\narray D(1600) {dest}\nD = S\n")
    result = simulate(compile_program(program, target=spec,
                                      algorithm=f"{kind}={algorithm}")).collectives[0]
    assert result.algorithm == algorithm
    assert result.verified, result.problems


def whole_machine_collective(machine, size: int, kind: Kind = Kind.REDUCE):
    """The sweep's collective of `kind` with `size`-byte blocks (partials) on the whole machine,
    as recognized (driver.recognized_collectives: no candidate's schedule generated), where some
    algorithm's preconditions hold for it."""
    from phalanx.runtime.sweep import kind_program

    (coll,) = recognized_collectives(kind_program(kind, machine.nnodes, size), target=machine.spec)
    if all(unmet is not None for _, unmet in machine.candidates(coll)):
        raise AssertionError(f"no algorithm lowers a {kind} on {machine.spec}")
    return coll


def runnable_times(machine, coll) -> list[tuple[str, float]]:
    """Each candidate of `coll` whose preconditions hold, with its simulated time; a schedule the
    machine refuses at this size (e.g. the Paragon's receive buffers) is left out."""
    from phalanx.runtime.timing import simulated_time_s

    out = []
    for algorithm, unmet in machine.candidates(coll):
        if unmet is not None:
            continue
        try:
            out.append((algorithm, simulated_time_s(machine, coll, algorithm)))
        except PhalanxError:
            continue
    return out
