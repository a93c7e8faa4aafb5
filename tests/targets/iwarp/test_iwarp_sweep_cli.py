"""`phalanx sweep` with Fig. 9's options (--variance, --zero-probability, --samples) on iWarp, and
SyntheticData's own checks (runtime/synthetic.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.synthetic import SyntheticData, block_bytes_of, execute, lower, varied_matrix


def test_sweep_with_variation_prints_and_reports_each_case(cli, tmp_path):
    r = cli("sweep", "--target", "iwarp:8x8", "--collective", "alltoall", "--sizes", "256",
            "--algorithm", "phased", "--algorithm", "two-stage", "--zero-probability", "0,0.5",
            "--samples", "2", "--seed", "4", "--json", "--report", str(tmp_path), "--quiet", "--workers", "1")
    assert r.code == 0, r.err
    data = r.json()
    assert data["variation"] == {"variances": [0.0], "zero_probabilities": [0.0, 0.5],
                                 "samples": 2, "seed": 4}
    cases = {(p["algorithm"], p["zero_probability"]) for p in data["results"]}
    assert cases == {(a, p) for a in ("phased", "two-stage") for p in (0.0, 0.5)}
    assert all(p["verified"] and p["samples"] == 2 for p in data["results"])
    assert "probability P of a zero-length message" in (tmp_path / "sweep-variation.svg").read_text()


@pytest.mark.parametrize("args, message", [
    (("--variance", "0,2"), "bad variance '2'"),
    (("--zero-probability", "x"), "bad zero-message probability 'x'"),
    (("--samples", "0"), "--samples 0 must be at least 1"),
])
def test_bad_variation_options_say_what_to_write(cli, args, message):
    r = cli("sweep", "--target", "iwarp:8x8", "--collective", "alltoall", "--sizes", "64", *args)
    assert r.code != 0 and message in r.err


def test_varied_matrices_are_seeded_and_in_range():
    a = varied_matrix(64, 1000, 0.5, 0.25, seed=7)
    assert np.array_equal(a, varied_matrix(64, 1000, 0.5, 0.25, seed=7))
    assert not np.array_equal(a, varied_matrix(64, 1000, 0.5, 0.25, seed=8))
    sizes = a[a > 0]
    assert sizes.min() >= 500 and sizes.max() <= 1500 and 0.2 < (a == 0).mean() < 0.3
    with pytest.raises(PhalanxError, match="variance 1.5 is outside"):
        varied_matrix(8, 10, 1.5)


def test_synthetic_data_catches_a_lost_block_and_a_corrupted_one():
    machine = resolve("iwarp:8x8")
    coll, schedule = lower(machine, varied_matrix(64, 32, 0.5, 0.0, seed=2), "message-passing")
    dropped = dataclasses.replace(schedule, phases=(dataclasses.replace(
        schedule.phases[0], sends=schedule.phases[0].sends[1:], recvs=schedule.phases[0].recvs[1:]),))
    assert "1 blocks never arrived" in execute(machine, coll, dropped).problems[0]
    data = SyntheticData(coll.matrix)
    t = schedule.phases[0].sends[0]
    data.put(t, block_bytes_of(t.origin, t.final, t.nbytes, seed=1))  # another seed's bytes
    assert f"block {t.origin}->{t.final} arrived with wrong bytes" in data.problems()
