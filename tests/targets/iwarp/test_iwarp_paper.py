"""The measurements of 001_569dde0e56ec3e6f.txt reproduced on iwarp:8x8 (Sec. 4), with tolerances.

Figures in the comments are what this simulator measures (seed 0); the seed's are in the names.
"""

from __future__ import annotations

from functools import cache

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.targets.iwarp.params import IWarpParams, peak_aggregate_Bps

PEAK = peak_aggregate_Bps(IWarpParams(), 8)


@cache
def bandwidth_Bps(algorithm: str, block_bytes: int) -> float:
    compiled = compile_program(alltoall_program(64, block_bytes), target="iwarp:8x8",
                               algorithm=algorithm, file=f"<{algorithm} {block_bytes}>")
    result = simulate(compiled).collectives[0]
    assert result.verified
    return result.aggregate_bandwidth_Bps


def test_fig7_phased_exceeds_2_GBps_at_large_messages():
    # Sec. 4.1 / abstract: > 2 GB/s, 80% of 2.56 GB/s. Measured 2208 MB/s (86%) at 16 KB.
    assert bandwidth_Bps("phased", 16384) >= 0.78 * PEAK


# The seed's message passing uses "a randomized message schedule" (Sec. 1, Sec. 3): the seeded
# order of message-passing-random. (Fig. 6's literal natural order sends every node to node 0
# first, a hot spot the seed did not measure: 518 MB/s at 8 KB here.)
MP = "message-passing-random"


def test_fig7_message_passing_is_about_20_percent_of_peak():
    # Sec. 4.1: about 500 MB/s, 20%. Measured 645 MB/s (25%) at 8 KB: tolerance 15-30% of peak.
    assert 0.15 * PEAK <= bandwidth_Bps(MP, 8192) <= 0.30 * PEAK


def test_fig7_message_passing_pays_its_per_message_costs_at_small_sizes():
    # Sec. 3.1's ~400-cycle overhead at sender and receiver, one message at a time per node:
    # small messages run far below the large-message level, and two-stage beats message passing
    # at 512 B (Sec. 4.1). Sec. 4.4 implies ~105 MB/s at 512 B (801,000 cycles for two 2 MB
    # AAPCs) against ~500 at large sizes. Measured 234 MB/s at 512 B, 645 at 8 KB, two-stage
    # 720 at 512 B: tolerance MP(512 B) under half of MP(8 KB).
    assert bandwidth_Bps(MP, 512) < 0.5 * bandwidth_Bps(MP, 8192)
    assert bandwidth_Bps("two-stage", 512) > 2 * bandwidth_Bps(MP, 512)


def test_fig7_store_forward_is_memory_bound_near_800_MBps():
    # Sec. 4.1: approaches 800 MB/s, about 30%, below half of peak (memory bound).
    # Measured 933 MB/s (36%) at 8 KB: tolerance 800 MB/s +-25%, and under half the peak.
    measured = bandwidth_Bps("store-forward", 8192)
    assert measured == pytest.approx(800e6, rel=0.25) and measured < 0.5 * PEAK


def test_fig7_two_stage_wins_small_messages_and_phased_wins_large_ones():
    # Sec. 4.1: two-stage best for small messages, phased best above ~1500 bytes.
    # Measured crossover between 1024 B (phased 773 vs two-stage 746 MB/s) and 512 B.
    assert bandwidth_Bps("two-stage", 512) > 1.4 * bandwidth_Bps("phased", 512)
    assert bandwidth_Bps("phased", 2048) > 1.5 * bandwidth_Bps("two-stage", 2048)
    assert bandwidth_Bps("phased", 16384) > 2.5 * bandwidth_Bps("two-stage", 512)


def test_fig8_local_sync_beats_global_barriers_for_small_messages_and_they_converge():
    # Sec. 4.1, Fig. 8. Measured local/global: 2.15 at 512 B, 1.17 at 16 KB.
    small = bandwidth_Bps("phased", 512) / bandwidth_Bps("phased-global", 512)
    large = bandwidth_Bps("phased", 16384) / bandwidth_Bps("phased-global", 16384)
    assert small > 1.5 and 1.0 < large < 1.25


def frames_per_s(examples, algorithm: str) -> float:
    compiled = compile_program(examples / "fft2d_iwarp.phx", algorithm=f"alltoall={algorithm}",
                               cost="closed-form")  # forced: the candidates need no simulation
    result = simulate(compiled)
    assert result.verified
    return 1 / result.total_time_s


def test_sec44_fft_frames_per_second_with_phased(examples):
    # Sec. 4.4: about 21 frames/s with phased AAPC. Measured 21.7, tolerance 10%. A consistency
    # check: phase_software_cycles is derived from Sec. 4.4's 184,400 cycles, and the phased
    # primitive pays no packing (pack_cycles_per_word, test_iwarp_packing.py).
    assert frames_per_s(examples, "phased") == pytest.approx(21, rel=0.10)


def test_sec44_fft_frames_per_second_with_message_passing(examples):
    # Sec. 4.4: about 13 frames/s with message passing, tolerance 15%. Measured 13.04 (18.35
    # before the packing of the Fx compiler's code was modelled). Not independent of the fit:
    # pack_cycles_per_word is fitted to the 801,000 cycles, and the example's compute time comes
    # from them and the 52%, so this checks the bookkeeping (docs/targets.md).
    assert frames_per_s(examples, MP) == pytest.approx(13, rel=0.15)
