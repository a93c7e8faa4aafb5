"""bench/fidelity.py's records against the tests that hold them: every record names an existing
test, its xfail reason is that test's, and every strict xfail of those tests has a record."""

from __future__ import annotations

from pathlib import Path

from conftest import load_bench_script

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return load_bench_script("bench/fidelity.py", "bench_fidelity")


FIDELITY = load_bench()
RECORDS = FIDELITY.all_records()  # declares the records; measures nothing


def test_every_record_names_an_existing_test_in_one_of_the_held_files():
    modules = {path: FIDELITY.load_test(key) for key, path in FIDELITY.TESTS.items()}
    for record in RECORDS:
        if not record.test:
            assert record.seed == "000" and record.where == "Table 3", record
            continue
        path, name = record.test.split("::")
        assert callable(getattr(modules[path], name, None)), record.test
        assert record.seed in FIDELITY.SEEDS and record.published != 0


def test_every_strict_xfail_of_the_held_tests_has_a_not_reproduced_record():
    reasons = {r.xfail for r in RECORDS if r.xfail}
    for key in FIDELITY.TESTS:
        module = FIDELITY.load_test(key)
        for name, obj in vars(module).items():
            if not name.startswith("test_"):
                continue
            assert FIDELITY.xfail_reason(obj) in reasons | {""}, name
            for mark in FIDELITY.marks_of(obj):
                if mark.name == "parametrize":
                    for param in mark.args[1]:
                        assert FIDELITY.xfail_reason(param) in reasons | {""}, (name, param)


def test_status_follows_the_test_marks():
    assert FIDELITY.status_of(RECORDS[0], None) == "not measured in this run"
    for record in RECORDS:
        status = FIDELITY.status_of(record, record.published)
        assert status == ("not reproduced" if record.xfail else
                          "calibrated" if record.calibrated else "reproduced"), record
