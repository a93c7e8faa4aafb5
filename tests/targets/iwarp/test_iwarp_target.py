"""Target specs, parameters, Eq. 1 and the lower bound."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.schedule import SyncMode
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.targets.iwarp.cost import lower_bound_s, lower_bounds
from phalanx.targets.iwarp.params import IWarpParams, peak_aggregate_Bps
from phalanx.targets.iwarp.topology import Torus
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE, SwitchTag


def test_eq1_peak_is_2_56_GBps_for_8x8():
    # 001_569dde0e56ec3e6f.txt Eq. 1 and Sec. 4: 32 n S / T_t = 2.56 GB/s, exact.
    assert peak_aggregate_Bps(IWarpParams(), 8) == pytest.approx(2.56e9, rel=1e-12)
    assert IWarpParams().link_Bps == pytest.approx(40e6)  # Sec. 3.1: 40 MB/s per link


def test_lower_bound_of_a_uniform_aapc_is_eq1():
    n, block = 8, 1 << 20
    m = np.full((n * n, n * n), block)
    bound = lower_bound_s(IWarpParams(), Torus(n, n), m)
    off_diagonal = block * (n ** 4 - n ** 2)
    # Eq. 1 counts the send-to-self bytes as well; without them, (1 - 1/n^2) of the peak.
    expected = off_diagonal / (peak_aggregate_Bps(IWarpParams(), n) * (1 - 1 / n ** 2))
    assert bound == pytest.approx(expected + IWarpParams().overhead_s, rel=1e-9)


def test_a_band_of_rows_bounds_traffic_that_converges_on_it():
    """Every node of a 4x4 torus to the four nodes of row 0: 12 x 4 blocks enter the band of
    row 0 across its two ring cuts, 2 x 4 links each way, where a half-cut (rows 0-1) takes
    8 x 4 blocks over as many links."""
    p, b = IWarpParams(), 4096
    m = np.zeros((16, 16), dtype=np.int64)
    m[:, :4] = b
    found = lower_bounds(p, Torus(4, 4), m)
    assert found["cut"] == pytest.approx(p.overhead_s + p.data_s(12 * 4 * b / 8), rel=1e-12)


@pytest.mark.parametrize("rows, cols", [(4, 4), (3, 5), (1, 6), (6, 2)])
def test_band_cuts_from_column_sums_are_the_node_by_node_sums(rows: int, cols: int):
    """The band cuts summed over the bytes between columns (rows) give, exactly, what summing
    every node's bytes into and out of each band gives (what cost.py did before: O(n^2 P^2),
    minutes at torus:64x64), on uneven integer matrices of square and other tori."""
    p, torus = IWarpParams(), Torus(rows, cols)
    m = np.random.default_rng(rows * 10 + cols).integers(0, 1 << 20, (torus.nnodes,) * 2).astype(np.float64)
    np.fill_diagonal(m, 0)
    x, y = np.arange(torus.nnodes) % cols, np.arange(torus.nnodes) // cols
    worst = 0.0
    for coord, size, across in ((x, cols, rows), (y, rows, cols)):
        for first in range(size):
            for width in range(1, size):
                band = (coord - first) % size < width
                worst = max(worst, m[band][:, ~band].sum() / (2 * across),
                            m[~band][:, band].sum() / (2 * across))
    assert lower_bounds(p, torus, m)["cut"] == p.overhead_s + p.data_s(worst)


def test_switch_tags_round_trip_and_stay_apart_from_other_message_ids():
    tags = [SwitchTag(c, k) for c in (0, 1, 7) for k in (0, 1, 255)]
    assert [SwitchTag.of(t.message) for t in tags] == tags
    assert len({t.message for t in tags}) == len(tags)
    assert SwitchTag.of(0) is None and SwitchTag.of(1) is None and SwitchTag.of(LIBRARY_MESSAGE) is None
    with pytest.raises(ValueError, match=r"phase in 0..1048575, not SwitchTag\(collective=0, phase=1048576"):
        _ = SwitchTag(0, 1 << 20).message


def test_specs_and_overrides():
    t = resolve("iwarp:16x16")
    assert t.nnodes == 256 and "phased" in t.algorithms("alltoall")
    w = resolve("torus:4x6,link_MBps=80,overhead_cycles=100")
    assert w.params.link_Bps == pytest.approx(80e6) and w.params.overhead_cycles == 100
    assert "phased" not in w.algorithms("alltoall")  # not n x n with n a multiple of 8
    assert resolve("iwarp").spec == "iwarp:8x8"


@pytest.mark.parametrize("spec, message", [
    ("iwarp:8x4", "is not square"),
    ("iwarp:eight", "bad torus shape 'eight'"),
    ("torus:8x8,link_MBps=0", "must be > 0"),
    ("torus:8x8,hops=3", "unknown parameter 'hops'"),
])
def test_bad_specs_say_what_to_do(spec, message):
    with pytest.raises(PhalanxError) as info:
        resolve(spec)
    assert message in info.value.diagnostic.render()


def test_the_targets_schedule_proof_accepts_phased_and_rejects_a_broken_schedule():
    import dataclasses

    from phalanx.compiler.recognize import recognize

    target = resolve("iwarp:8x8")
    coll = recognize(0, np.full((64, 64), 8, dtype=np.int64), "A", "B", 1)
    schedule = target.generate(coll, "phased")
    assert target.schedule_problems(schedule) == []
    phases = list(schedule.phases)
    phases[0], phases[1] = phases[1], dataclasses.replace(phases[0], sends=phases[0].sends[1:])
    assert any("is not a message of the construction's phase 0" in p for p in
               target.schedule_problems(dataclasses.replace(schedule, phases=tuple(phases))))
    assert "has n^3/8 = 64 phases, not 63" in target.schedule_problems(
        dataclasses.replace(schedule, phases=schedule.phases[1:]))[0]


def test_the_schedule_proof_names_a_repeated_pair_and_a_message_off_the_construction():
    import dataclasses

    from phalanx.compiler.recognize import recognize
    from phalanx.compiler.schedule import Phase

    target = resolve("iwarp:8x8")
    coll = recognize(0, np.full((64, 64), 8, dtype=np.int64), "A", "B", 1)
    schedule = target.generate(coll, "phased")
    phases = list(schedule.phases)
    again, stray = phases[2].sends[0], phases[9].sends[1]
    phases[5] = Phase(tuple(phases[5].sends) + (again, stray), tuple(phases[5].recvs), phases[5].sync)
    problems = target.schedule_problems(dataclasses.replace(schedule, phases=tuple(phases)))
    # phase 5's extra transfers, in its order: both off phase 5; the first also repeats phase 2's
    # pair, which names it off the construction (the first problem a transfer has)
    assert problems == [f"phase 5: {again.src}->{again.dst} is not a message of the construction's phase 5",
                        f"phase 5: {stray.src}->{stray.dst} is not a message of the construction's phase 5",
                        f"phase 9: pair {stray.src}->{stray.dst} appears twice"]


def test_phased_columns_are_the_construction_phase_by_phase(monkeypatch):
    # The columns are built a block of phases at a time: they must be each phase's messages whose
    # block is not empty, by sender (the engines' walk order; a node sends one per phase), each
    # tagged with its phase for the switch.
    from phalanx.compiler.recognize import recognize
    from phalanx.targets.iwarp import schedules
    from phalanx.targets.iwarp.phases import phased_torus_phases

    n = 16
    monkeypatch.setattr(schedules, "PHASE_BLOCK", 100)  # 512 phases: blocks of 100 and one of 12
    m = np.random.default_rng(5).integers(0, 3, (n * n, n * n)) * 8
    m[0] = 8  # some blocks empty, not all
    coll = recognize(0, m, "A", "B", 1)
    for empty_messages in (False, True):
        cols = schedules.phased_columns(coll, Torus(n, n), SyncMode.LOCAL, empty_messages=empty_messages)
        for k, phase in enumerate(phased_torus_phases(n)):
            assert len(np.unique(phase[:, 0])) == len(phase)
            phase = phase[np.argsort(phase[:, 0])]
            src, dst = phase[:, 0], phase[:, 1]
            keep = np.ones(len(src), bool) if empty_messages else m[src, dst] > 0
            tag = SwitchTag(0, k).message if empty_messages else 0  # switched only when complete
            want = np.column_stack([src[keep], dst[keep], m[src, dst][keep], src[keep], dst[keep],
                                    np.full(keep.sum(), tag), np.full(keep.sum(), -1)])
            assert np.array_equal(cols.phase_rows(k), want), k


def test_auto_does_not_pick_head_of_line_blocked_message_passing_at_2KB():
    # The deposit library moves one message each way at a time, so message passing is an
    # input-queued switch with head-of-line blocking (targets/iwarp/cost.py); without that term
    # auto chose it at 2 KB, where it simulates 3x slower than phased. The cost model stays
    # rough: what it picks must simulate within 35% of phased here.
    source = alltoall_program(64, 2048)
    auto = compile_program(source, target="iwarp:8x8", algorithm="auto", file="<t>")
    chosen = auto.plan.schedules()[0].algorithm
    assert not chosen.startswith("message-passing")
    phased = compile_program(source, target="iwarp:8x8", algorithm="phased", file="<t>",
                             cost="closed-form")
    assert simulate(auto).total_time_s <= 1.35 * simulate(phased).total_time_s


def test_unswitched_phases_save_the_switch_software_and_refuse_uneven_blocks():
    """phased-unswitched: the phased construction's messages without the switch, so a phase
    costs a start-up and its block, not also the 760 cycles of phase software (38 us). On
    iwarp:8x8 at 2 KB: 64 phases of 20 + 51.2 us and hops, 4.584 ms against phased's 6.978;
    the data arrive; the schedule is the construction's (schedule_problems). Uneven blocks
    are refused with the reason, and so is a torus the construction does not fit."""
    from phalanx.compiler.recognize import recognize

    target = resolve("iwarp:8x8")
    source = alltoall_program(64, 2048)
    run = simulate(compile_program(source, target="iwarp:8x8", algorithm="phased-unswitched",
                                   file="<t>"))
    assert run.verified and run.collectives[0].algorithm == "phased-unswitched"
    phased = simulate(compile_program(source, target="iwarp:8x8", algorithm="phased", file="<t>"))
    assert run.collectives[0].time_s * 1e3 == pytest.approx(4.5836, rel=1e-4)
    assert phased.collectives[0].time_s * 1e3 == pytest.approx(6.9776, rel=1e-4)
    coll = recognize(0, np.full((64, 64), 2048, dtype=np.int64), "A", "B", 1)
    assert target.schedule_problems(target.generate(coll, "phased-unswitched")) == []
    uneven = np.full((64, 64), 2048, dtype=np.int64)
    uneven[3, 5] = 1024
    assert "every block of one size" in target.unmet(recognize(0, uneven, "A", "B", 1),
                                                     "phased-unswitched")
    assert "n x n torus with n a multiple of 8" in resolve("torus:4x4").unmet(
        recognize(0, np.full((16, 16), 64, dtype=np.int64), "A", "B", 1), "phased-unswitched")
    with pytest.raises(PhalanxError, match="every block of one size"):
        target.generate(recognize(0, uneven, "A", "B", 1), "phased-unswitched")
