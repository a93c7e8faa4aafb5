"""bench/regret.py's results file: a run of some kinds replaces those cases only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, load_bench_script

load_bench_script("bench/regret_programs.py", "regret_programs")  # bench/regret.py imports it
regret = load_bench_script("bench/regret.py", "regret")


def committed_rows(target: str) -> list[dict]:
    rows = json.loads((ROOT / "bench" / "results_regret.json").read_text())["rows"]
    return [r for r in rows if r["target"] == target and "not_runnable" not in r]


def test_a_run_of_one_kind_keeps_the_other_kinds_of_its_targets(tmp_path: Path):
    rows = committed_rows("ideal:16")
    assert {r["kind"] for r in rows} >= {"alltoall", "broadcast"}
    out = tmp_path / "results.json"
    regret.write(out, "", rows, 1.0)
    rerun = [r | {"regret": 1.5} for r in rows if r["kind"] == "broadcast"]
    report = regret.write(out, "", rerun, 1.0)
    assert len(report["rows"]) == len(rows)
    by_case = {regret.case_key(r): r for r in report["rows"]}
    assert all(by_case[regret.case_key(r)]["regret"] == 1.5 for r in rerun)
    kept = [r for r in rows if r["kind"] != "broadcast"]
    assert all(by_case[regret.case_key(r)] == r for r in kept)
    assert report["rows"] == sorted(report["rows"], key=regret.case_order)
    assert report["summary_target"]["max"] == 1.5


def test_a_kind_without_a_program_is_refused_by_name():
    assert regret.measured_kinds("alltoall, broadcast") == [regret.Kind.ALLTOALL, regret.Kind.BROADCAST]
    with pytest.raises(SystemExit) as err:
        regret.measured_kinds("alltoall,alltoallv")
    assert str(err.value) == ("regret: --kinds alltoallv is not measured here (no program of it); "
                              "the kinds: " + ", ".join(regret.KINDS))
