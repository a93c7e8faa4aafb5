"""Faults in the simulated network: failed links, link errors with retransmission, corruption.

Under every fault mode a block is delivered exactly once (the data layer's conservation check)
or the run fails loudly; never silently wrong.
"""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, HEADER, compile_text
from phalanx.grammar.diagnostics import PhalanxError, UsageError
from phalanx.runtime.faults import FaultSpec, parse_faults
from phalanx.runtime.simulate import simulate

TRANSPOSE = HEADER + "B = A\n"  # ideal:16, 240 network messages of 2048 bytes
FFT = EXAMPLES / "fft2d_iwarp.phx"
# The line of the FFT's first transpose, where the faults below strike.
FIRST_TRANSPOSE = 1 + FFT.read_text().splitlines().index("B = transpose(A)")
SHIFT = ("target paragon:4x4\nprocessors P(16)\narray A(64) of float64 distribute BLOCK onto P\n"
         "array B(64) of float64 distribute BLOCK onto P\nB = cshift(A, 20)\n")


def run(source: str, faults: str, algorithm: str = "auto", seed: int = 0):
    # a forced algorithm ranks no candidates: none is simulated (closed-form)
    compiled = compile_text(source, algorithm=algorithm,
                            cost="target" if algorithm == "auto" else "closed-form")
    return simulate(compiled, seed, faults=parse_faults(faults))


def test_spec_parsing():
    spec = parse_faults("link-fail=3:E, 5:-y;error-rate=0.01;corrupt-rate=0.001;seed=7;retries=4")
    assert spec == FaultSpec(((3, "E"), (5, "-Y")), 0.01, 0.001, 4, 7, True)
    assert parse_faults("checksum=off").checksum is False


@pytest.mark.parametrize("text, message", [
    ("error-rate=2", "error-rate='2' in --faults is not a probability in [0, 1)"),
    ("corrupt-rate=x", "corrupt-rate='x' in --faults is not a probability in [0, 1)"),
    ("link-fail=3", "bad failed link '3' in --faults"),
    ("link-fail=3:Q", "bad failed link '3:Q' in --faults"),
    ("melt=1", "unknown fault 'melt' in --faults"),
    ("error-rate", "fault setting 'error-rate' has no value"),
    ("retries=0", "retries='0' in --faults is not a positive integer"),
    ("checksum=maybe", "checksum='maybe' in --faults must be on or off"),
])
def test_bad_specs_say_what_is_wrong(text, message):
    with pytest.raises(UsageError) as info:
        parse_faults(text)
    assert info.value.diagnostic.message == message and info.value.diagnostic.hint


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.2, 0.4])
def test_error_rate_sweep_retransmits_and_conserves(rate):
    """Every run verifies (each block exactly once); retransmissions follow the rate: the
    attempts per message are geometric, so retransmissions ~ messages * rate / (1 - rate)."""
    base = run(TRANSPOSE, "")
    result = run(TRANSPOSE, f"error-rate={rate};seed=3")
    stats = result.faults
    assert result.verified and stats["messages"] == 240
    expected = 240 * rate / (1 - rate)
    assert stats["retransmissions"] == stats["link_errors"]
    assert abs(stats["retransmissions"] - expected) <= 4 * (expected ** 0.5) + 1
    assert (result.total_time_s > base.total_time_s) == (stats["retransmissions"] > 0)


def test_corruption_is_caught_by_the_checksum_and_resent():
    result = run(TRANSPOSE, "corrupt-rate=0.2;seed=5")
    stats = result.faults
    assert result.verified
    assert stats["corrupted"] == stats["corrupted_caught"] > 20 and stats["corrupted_delivered"] == 0


def test_without_the_checksum_corruption_fails_verification_loudly():
    result = run(TRANSPOSE, "corrupt-rate=0.2;checksum=off;seed=5")
    stats = result.faults
    assert stats["corrupted_delivered"] > 0
    assert not result.verified
    problems = [p for c in result.collectives for p in c.problems]
    assert any("delivered values differ from the reference" in p for p in problems)


def test_too_many_failures_stop_the_run_with_an_error():
    with pytest.raises(PhalanxError) as info:
        run(TRANSPOSE, "error-rate=0.9;retries=2;seed=1")
    message = info.value.diagnostic.message
    assert message.startswith("the run failed: the message from node ")
    assert "of the alltoall at line 5 did not get through in 2 attempts (2 link errors" in message


def test_faulty_runs_are_reproducible_by_seed():
    a = run(TRANSPOSE, "error-rate=0.1;corrupt-rate=0.05;seed=9").network.summary()
    b = run(TRANSPOSE, "error-rate=0.1;corrupt-rate=0.05;seed=9").network.summary()
    c = run(TRANSPOSE, "error-rate=0.1;corrupt-rate=0.05;seed=10").network.summary()
    assert a == b and a != c


def test_torus_routes_around_a_failed_link():
    """Message passing on the 8x8 iWarp torus with (0,0)+X down: the pairs whose e-cube route
    used it go the other way round the X ring; everything still arrives once."""
    fft = FFT.read_text()
    plain = simulate(compile_text(fft, algorithm="message-passing", cost="closed-form"))
    result = run(fft, "link-fail=0:E", "message-passing")
    stats = result.faults
    assert result.verified and stats["rerouted_pairs"] > 0
    assert result.total_time_s != plain.total_time_s


def test_torus_without_a_way_round_names_the_phase_and_the_link():
    with pytest.raises(PhalanxError) as info:
        run(FFT.read_text(), "link-fail=0:E,0:W", "message-passing")
    assert info.value.diagnostic.message == (
        f"phase 0 of the alltoall at line {FIRST_TRANSPOSE}: no route from node 0 to node 1 "
        "avoids the failed "
        "link (0,0)+X; the routing allows no way around it")


def test_phased_schedule_cannot_be_rerouted():
    with pytest.raises(PhalanxError) as info:
        run(FFT.read_text(), "link-fail=0:E", "phased")
    message = info.value.diagnostic.message
    assert message.startswith(
        f"phase 0 of the alltoall at line {FIRST_TRANSPOSE}: the phased message from node 0")
    assert "synchronizing switch" in message and "message-passing" in info.value.diagnostic.hint


def test_mesh_falls_back_to_column_row_routing():
    result = run(SHIFT, "link-fail=5:W")  # 5 -> 0 goes north first, then west
    assert result.verified and result.faults["rerouted_pairs"] == 1


def test_mesh_neighbours_have_no_way_round():
    with pytest.raises(PhalanxError) as info:
        run(SHIFT.replace("cshift(A, 20)", "cshift(A, 4)"), "link-fail=1:W")
    assert info.value.diagnostic.message == (
        "phase 0 of the cshift at line 5: no route from node 1 to node 0 avoids the failed link "
        "(0,1)->(0,0); the routing allows no way around it")


@pytest.mark.parametrize("source, faults, message", [
    (SHIFT, "link-fail=3:E", "failed link 3:E is not a link of the 4x4 mesh of paragon:4x4"),
    (TRANSPOSE, "link-fail=3:E", "link-fail is not supported on ideal:16: its network has no "
                                 "torus or mesh links to fail"),
])
def test_links_that_cannot_fail(source, faults, message):
    with pytest.raises(UsageError) as info:
        run(source, faults)
    assert info.value.diagnostic.message == message


def test_cli_reports_faults(cli, tmp_path):
    prog = tmp_path / "t.phx"
    prog.write_text(TRANSPOSE)
    out = cli("run", str(prog), "--json", "--faults", "error-rate=0.1;seed=2")
    assert out.code == 0
    data = out.json()
    assert data["verified"] and data["faults"]["retransmissions"] > 0
    bad = cli("run", str(prog), "--faults", "error-rate=7")
    assert bad.code == 2 and "is not a probability" in bad.err
