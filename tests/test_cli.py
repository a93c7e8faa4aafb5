"""The `phalanx` command line: JSON contracts, emits, reports and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from phalanx.runtime.limits import ARRAY_COPIES, WRITE_COUNT_BYTES

RUN_KEYS = {"target", "backend", "total_time_s", "verified", "collectives", "program", "seed",
            "choice"}
COLLECTIVE_KEYS = {"line", "kind", "nprocs", "block_bytes", "total_bytes", "algorithm", "phases",
                   "time_s", "lower_bound_s", "efficiency", "aggregate_bandwidth_Bps",
                   "candidates", "verified", "lower_bound_binds", "left_out", "stage", "iteration",
                   "start_s", "end_s", "elapsed_s", "groups"}


def test_run_json_contract(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert set(data) == RUN_KEYS and data["backend"] == "sim" and data["verified"] is True
    assert data["target"]["name"] == "ideal" and data["target"]["params"]["nodes"] == 16
    (c,) = data["collectives"]
    assert set(c) == COLLECTIVE_KEYS
    assert (c["kind"], c["line"], c["block_bytes"], c["phases"], c["algorithm"]) == \
        ("alltoall", 8, 2048, 15, "direct")
    assert c["groups"] is None  # a whole-statement collective (docs/reports.md)
    closed_form = 15 * (10e-6 + 0.01e-6 * 2048)
    assert abs(c["time_s"] - closed_form) <= 1e-9 * closed_form
    assert abs(data["total_time_s"] - (1.5e-3 + closed_form)) <= 1e-9 * data["total_time_s"]
    assert [(x["algorithm"], x["figure"], x["source"]) for x in c["candidates"]] == [
        ("direct", "predicted", "predicted"), ("bruck", "predicted", "predicted"),
        ("radix-bruck", "predicted", "predicted")]
    assert c["candidates"][0]["time_s"] < min(x["time_s"] for x in c["candidates"][1:])


def test_run_target_override_and_text_output(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--target", "ideal:16,alpha_us=0")
    assert result.code == 0
    assert "verified: True" in result.out and "alltoall by direct, 15 phases" in result.out


@pytest.mark.parametrize("emit, needle", [
    ("ast", '"node": "Module"'), ("dist", '"dist.assign"'), ("coll", '"coll.alltoall"'),
    ("sched", "\"sched.schedule\""), ("mlir", '"builtin.module"() ({'), ("dot", "digraph"),
    ("json", '"kind": "alltoall"'),
])
def test_compile_emits(cli, examples, emit, needle):
    result = cli("compile", str(examples / "transpose.phx"), "--emit", emit)
    assert result.code == 0, result.err
    assert needle in result.out


def test_compile_to_file(cli, examples, tmp_path):
    out = tmp_path / "t.json"
    assert cli("compile", str(examples / "transpose.phx"), "--emit", "json", "-o", str(out)).code == 0
    assert json.loads(out.read_text())["collectives"][0]["phases"] == 15


def test_report_directory(cli, examples, tmp_path):
    result = cli("run", str(examples / "transpose.phx"), "--report", str(tmp_path / "r"))
    assert result.code == 0, result.err
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["verified"] is True
    assert "| 8 | alltoall | direct | 15 |" in (tmp_path / "r" / "report.md").read_text()
    assert "<svg" in (tmp_path / "r" / "schedule.svg").read_text()


def test_program_error_exit_1_with_location(cli, tmp_path):
    bad = tmp_path / "bad.phx"
    bad.write_text("target ideal:4\nprocessors P(4)\narray A(8) of byte distribute BLOCK onto P\n"
                   "B = A\n")
    result = cli("run", str(bad))
    assert result.code == 1 and result.out == ""
    assert result.err.splitlines()[0] == f"{bad}:4:1: error: undeclared array 'B'"
    assert "Traceback" not in result.err


@pytest.mark.parametrize("argv, message", [
    (["run", "PROG", "--target", "ideal:0"], "bad node count '0' for target 'ideal'"),
    (["run", "PROG", "--algorithm", "alltoall=bogus"],
     "unknown algorithm 'bogus' for an alltoall on target 'ideal"),
    (["run", "PROG", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["compile", "PROG", "--emit", "llvm"], "argument --emit: invalid choice: 'llvm'"),
    (["sweep", "--target", "ideal:4", "--collective", "alltoall", "--sizes", "1X"],
     "bad message size '1X' in --sizes"),
    (["sweep", "--target", "ideal:4", "--collective", "sparse", "--sizes", "64"],
     "cannot sweep collective 'sparse' yet"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_usage_errors_exit_2(cli, examples, argv, message):
    argv = [str(examples / "transpose.phx") if a == "PROG" else a for a in argv]
    result = cli(*argv)
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("command", ["compile", "run"])
def test_unreadable_file_is_a_usage_error(cli, tmp_path, command):
    missing = tmp_path / "nope.phx"
    result = cli(command, str(missing))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"phalanx: error: cannot read program '{missing}': [Errno 2]")
    assert "hint: check the path and that the file is UTF-8 text" in result.err
    binary = tmp_path / "binary.phx"
    binary.write_bytes(b"\xff\xfe\x00")
    result = cli(command, str(binary), "--parser", "antlr")
    assert result.code == 2 and f"cannot read program '{binary}'" in result.err


def test_targets_and_algorithms_json(cli):
    targets = cli("targets", "--json").json()["targets"]
    assert "ideal" in [t["name"] for t in targets]
    algorithms = cli("algorithms", "--target", "ideal:8", "--json").json()["algorithms"]
    assert algorithms["ideal:8"]["alltoall"] == ["auto", "direct", "bruck", "radix-bruck"]
    assert algorithms["ideal:8"]["broadcast"] == ["auto", "direct", "linear", "binomial",
                                                  "farthest-binomial", "scatter-allgather",
                                                  "scatter-doubling",
                                                  "cut-scatter-doubling", "chain", "binary",
                                                  "split-binary", "two-tree",
                                                  "two-tree-copy-beside", "gray-two-tree",
                                                  "dimension-pipeline"]


def test_sweep_json(cli):
    result = cli("sweep", "--target", "ideal:8", "--collective", "alltoall", "--sizes", "64,2K",
                 "--json", "--workers", "1")
    assert result.code == 0, result.err
    data = result.json()
    assert data["collective"] == "alltoall" and data["target"]["name"] == "ideal"
    sizes = [(r["algorithm"], r["block_bytes"]) for r in data["results"]]
    assert sizes == [("direct", 64), ("direct", 2048), ("bruck", 64), ("bruck", 2048),
                     ("radix-bruck", 64), ("radix-bruck", 2048)]
    for r in data["results"][:2]:
        assert r["time_s"] == pytest.approx(7 * (10e-6 + 0.01e-6 * r["block_bytes"]), rel=1e-9)
        assert set(r) >= {"time_s", "lower_bound_s", "efficiency", "aggregate_bandwidth_Bps"}


def test_console_script_runs():
    exe = Path(sys.executable).with_name("phalanx")
    if not exe.exists():
        pytest.skip("the phalanx console script is not on PATH (package not installed)")
    done = subprocess.run([exe, "targets"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ideal" in done.stdout


def _closed_pipe_run(*argv: str) -> subprocess.CompletedProcess:
    """Run the CLI in a child process whose stdout is a pipe nobody reads (`| head` gone)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-c", "import sys; from phalanx.cli import main; "
                               "sys.exit(main())", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [("targets", "--json"), ("run", "transpose.phx", "--json")])
def test_closed_pipe_exits_quietly_141(examples, argv):
    argv = tuple(str(examples / a) if a.endswith(".phx") else a for a in argv)
    done = _closed_pipe_run(*argv)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("argv, message, hint", [
    (["run", "PROG", "--seed", "-1"], "--seed -1 is negative; a seed is a whole number from 0 up",
     "e.g. --seed 1"),
    (["sweep", "--target", "ideal:4", "--collective", "alltoall", "--sizes", "64", "--seed", "-3"],
     "--seed -3 is negative", "e.g. --seed 1"),
    (["run", "PROG", "--backend", "mpi", "-n", "0"], "-n 0 must be at least 1 (it counts MPI processes)",
     "leave -n out"),
    (["run", "PROG", "--seed", "x"], "argument --seed: invalid int value: 'x'", "see `phalanx run --help`"),
])
def test_bad_numbers_are_usage_errors(cli, examples, argv, message, hint):
    argv = [str(examples / "transpose.phx") if a == "PROG" else a for a in argv]
    result = cli(*argv)
    assert result.code == 2 and result.out == ""
    assert message in result.err and hint in result.err
    assert "internal error" not in result.err and "Traceback" not in result.err


def test_out_of_memory_is_a_clear_error(cli, examples, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr("phalanx.runtime.simulate.simulate", exhausted)
    result = cli("run", str(examples / "transpose.phx"), "--force")
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == ("phalanx: error: out of memory: this run needs more memory "
                                          "than the machine could give it")
    assert "hint: make the arrays or the machine smaller" in result.err
    assert "internal error" not in result.err and "bug" not in result.err


def _program(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_summary_groups_repeats_and_verbose_lists_every_run(cli, tmp_path):
    from conftest import HEADER

    prog = _program(tmp_path, "rep.phx", HEADER + "repeat 3 {\n  B = A\n  A = B\n}\n")
    out = cli("run", prog).out.splitlines()
    lines = [line for line in out if not line.startswith("note: auto chose")]
    assert len(lines) == 3 and len(out) == 4  # both statements have a choice: the program is searched
    assert lines[1].startswith("  line 6: alltoall by direct, 15 phases, 3 runs (iterations 0-2): "
                               "mean 0.457200 ms, total 1.371600 ms, efficiency ")
    assert lines[2].startswith("  line 7: ")
    verbose = [line for line in cli("run", prog, "--verbose").out.splitlines()[1:]
               if not line.startswith("note: auto chose")]
    assert [v.split(":")[0] for v in verbose] == [
        f"  line {line} iteration {k}" for k in range(3) for line in (6, 7)]
    assert verbose[1].endswith("from 0.457200 to 0.914400 ms")


def test_pipeline_json_has_distinct_stages_with_start_and_end(cli, tmp_path):
    from conftest import pipeline_source

    result = cli("run", _program(tmp_path, "pipe.phx", pipeline_source(0.5)), "--json")
    runs = result.json()["collectives"]
    assert [c["stage"] for c in runs] == [0, 1, 2, 3]
    assert all(c["start_s"] < c["end_s"] for c in runs)
    assert len({(c["start_s"], c["end_s"]) for c in runs}) == 4
    text = cli("run", _program(tmp_path, "pipe.phx", pipeline_source(0.5))).out.splitlines()
    assert len(text) == 2 and "4 runs (stages 0-3): mean " in text[1]


def test_a_misspelled_kind_in_algorithm_is_a_usage_error(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--algorithm", "allgater=ring")
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == ("phalanx: error: unknown collective kind 'allgater' in "
                                          "the algorithm choice 'allgater=ring'")
    assert "hint: valid kinds: alltoall, alltoallv, broadcast, scatter, gather, allgather" in result.err


def test_an_unwritable_report_directory_exits_2_before_the_run(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--report", "/proc/nope")
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == ("phalanx: error: cannot create report directory "
                                          "'/proc/nope': No such file or directory")
    assert "hint: choose a writable path for --report" in result.err
    sweep = cli("sweep", "--target", "ideal:4", "--collective", "alltoall", "--sizes", "64",
                "--report", "/proc/nope")
    assert sweep.code == 2 and "cannot create report directory '/proc/nope'" in sweep.err


@pytest.mark.parametrize("shape", ["1000000000000", "1000000, 1000000"])
def test_a_1d_array_too_big_is_refused_as_the_2d_one_is(cli, tmp_path, shape):
    dims = "BLOCK" if "," not in shape else "(BLOCK, *)"
    other = "CYCLIC" if "," not in shape else "(*, BLOCK)"
    prog = _program(tmp_path, "big.phx", f"target ideal:4\nprocessors P(4)\n"
                    f"array A({shape}) of float64 distribute {dims} onto P\n"
                    f"array B({shape}) of float64 distribute {other} onto P\nB = A\n")
    result = cli("run", prog)
    assert result.code == 2 and result.out == ""
    first = result.err.splitlines()[0]
    floor_gib = 1e12 * (ARRAY_COPIES * 8 + WRITE_COUNT_BYTES) / 2**30  # runtime/limits.py's floor
    assert first.startswith(f"phalanx: error: {prog} on ideal:4 is too big to simulate here: it "
                            f"needs at least {floor_gib:.1f} GiB of memory"), first
    assert "out of memory" not in result.err


@pytest.mark.parametrize("parser", ["lark", "antlr"])
def test_a_cost_without_a_unit_says_so(cli, tmp_path, parser):
    prog = _program(tmp_path, "cost.phx", 'target ideal:4\nprocessors P(4)\ncompute "x" on P cost 5\n')
    result = cli("compile", prog, "--parser", parser)
    assert result.code == 1 and result.out == ""
    lines = result.err.splitlines()
    assert lines[0] == f"{prog}:3:24: error: syntax error: the cost 5 has no time unit"
    assert lines[2] == " " * 27 + "^"
    assert lines[3] == "hint: write a unit after the number: s, ms, us or cycles (e.g. cost 5 ms)"


@pytest.mark.parametrize("target", ["ideal:4", "iwarp:2x2", "paragon:2x2"])
def test_an_all_local_statement_has_no_efficiency_on_any_target(cli, tmp_path, target):
    prog = _program(tmp_path, "local.phx", "processors P(4)\n"
                    "array A(64) of float64 distribute BLOCK onto P\n"
                    "array B(64) of float64 distribute BLOCK onto P\nB = A\n")
    result = cli("run", prog, "--target", target)
    assert result.code == 0, result.err
    assert result.out.splitlines()[1].endswith("ms, no efficiency (nothing crosses the network)")
    (c,) = cli("run", prog, "--target", target, "--json").json()["collectives"]
    assert (c["efficiency"], c["lower_bound_s"], c["lower_bound_binds"], c["total_bytes"]) == \
        (None, 0.0, "nothing crosses the network", 0)
