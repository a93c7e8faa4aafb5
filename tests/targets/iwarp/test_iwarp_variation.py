"""Fig. 9 and Table 1 of 001_569dde0e56ec3e6f.txt (Sec. 4.2, 4.3) on iwarp:8x8, run as synthetic
collectives (runtime/synthetic.py): random message sizes, empty messages, sparse patterns.

Figures in the comments are what this simulator measures (seed 0); the seed's are in the names.
Message passing is the seeded random order: the seed's "randomized message schedule" (Sec. 1).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from phalanx.compiler.schedule import SyncMode
from phalanx.compiler.target import resolve
from phalanx.runtime.sweep import Variation, sweep
from phalanx.runtime.synthetic import execute, lower, run_matrix, varied_matrix
from phalanx.targets.iwarp.schedules import phased_schedule

TARGET = "iwarp:8x8"
MP = "message-passing-random"


@cache
def fig9(variation: Variation) -> dict[tuple[str, float, float], float]:
    """Aggregate bandwidth (B/s) per (algorithm, V, P) at B = 4 KB, two matrices per point."""
    data = sweep(TARGET, "alltoall", [4096], ["phased", MP], seed=0, variation=variation)
    assert all(r["verified"] for r in data["results"]) and "failures" not in data
    return {(r["algorithm"], r["variance"], r["zero_probability"]): r["aggregate_bandwidth_Bps"]
            for r in data["results"]}


def test_fig9a_phased_degrades_with_size_variance_message_passing_stays_flat():
    # Sec. 4.2 / Fig. 9(a): phased falls as V grows, message passing is unaffected, phased stays
    # ahead. Measured at 4 KB: phased 1611 -> 1157 MB/s (V 0 -> 1), message passing 562 -> 526.
    bw = fig9(Variation((0.0, 1.0), (0.0,), 2))
    phased = bw[("phased", 1.0, 0.0)] / bw[("phased", 0.0, 0.0)]
    passing = bw[(MP, 1.0, 0.0)] / bw[(MP, 0.0, 0.0)]
    assert phased < 0.8 and passing == pytest.approx(1.0, abs=0.15) and passing > phased + 0.05
    assert bw[("phased", 1.0, 0.0)] > bw[(MP, 1.0, 0.0)]


def test_fig9b_phased_falls_linearly_with_empty_messages_and_loses_at_high_p():
    # Fig. 9(b): phased decreases linearly in P; message passing is relatively unaffected and
    # wins as P grows (Sec. 4.3: "if only 10% of the messages are non-zero"). Measured at 4 KB
    # (two matrices): phased 1611 / 815 / 240 MB/s at P = 0 / 0.5 / 0.9, message passing
    # 562 / 525 / 466 (its busiest link carries more than the mean once sizes are uneven).
    bw = fig9(Variation((0.0,), (0.0, 0.5, 0.9), 2))
    phased = [bw[("phased", 0.0, p)] / bw[("phased", 0.0, 0.0)] for p in (0.5, 0.9)]
    passing = [bw[(MP, 0.0, p)] / bw[(MP, 0.0, 0.0)] for p in (0.5, 0.9)]
    assert phased[0] == pytest.approx(0.5, abs=0.1) and phased[1] == pytest.approx(0.1, abs=0.1)
    assert 0.7 <= passing[0] <= 1.15 and passing[1] > 0.6 and passing[0] > phased[0] + 0.2
    assert bw[(MP, 0.0, 0.9)] > bw[("phased", 0.0, 0.9)]


def pattern(kind: str, block_bytes: int) -> np.ndarray:
    """Table 1's nearest-neighbour (4 torus neighbours) and hypercube (6 XOR partners) steps."""
    torus, m = resolve(TARGET).torus, np.zeros((64, 64), dtype=np.int64)
    for v in range(64):
        x, y = torus.coords(v)
        partners = ([torus.node(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
                    if kind == "nearest" else [v ^ (1 << b) for b in range(6)])
        m[v, partners] = block_bytes
    return m


# Table 1 gives no block size. 8 KB is the power of two at which the phased subsets (which do not
# depend on the message passing model) come closest to the seed's AAPC column: 373 and 521 MB/s
# against 485 and 511 (16 KB: 546 and 740). The message passing column is then a prediction.
TABLE1_BLOCK = 8192


@cache
def table1(kind: str) -> tuple[float, float, float]:
    """(phased subset MB/s, message passing MB/s, their factor) at TABLE1_BLOCK."""
    runs = {a: run_matrix(resolve(TARGET), pattern(kind, TABLE1_BLOCK), a) for a in ("phased", MP)}
    assert all(r.verified for r in runs.values())
    bw = {a: r.collective.total_bytes / r.time_s / 1e6 for a, r in runs.items()}
    return bw["phased"], bw[MP], bw[MP] / bw["phased"]


def test_table1_nearest_neighbour_as_an_aapc_subset_vs_message_passing():
    # Table 1: nearest neighbour 485 MB/s as AAPC subset vs 1425 with message passing (2.9x).
    # Measured: 373 vs 1268 MB/s (3.40x). Tolerances: subset 25% (the block size is unknown),
    # message passing 15%, factor 20%. Four one-hop routes share no link: what holds message
    # passing to 20 MB/s per node is the library (one message each way, overhead at both ends).
    subset, passing, ratio = table1("nearest")
    assert subset == pytest.approx(485, rel=0.25) and passing == pytest.approx(1425, rel=0.15)
    assert ratio == pytest.approx(2.9, rel=0.20)


def test_table1_hypercube_exchange_as_an_aapc_subset_vs_message_passing():
    # Table 1: hypercube 511 MB/s as AAPC subset vs 1083 with message passing (2.1x).
    # Measured: 521 vs 980 MB/s (1.88x). Tolerances as for the nearest neighbour.
    subset, passing, ratio = table1("hypercube")
    assert subset == pytest.approx(511, rel=0.25) and passing == pytest.approx(1083, rel=0.15)
    assert ratio == pytest.approx(2.1, rel=0.20)


def test_empty_messages_keep_the_switch_on_the_event_path_and_match_the_fast_path():
    # Fig. 5: with half the blocks empty, the event path with 0-byte empty messages gives exactly
    # the fast path's time; without them (the compiler's IR has no 0-byte transfer) the phases
    # run unswitched, which is a different (faster) machine.
    machine = resolve(TARGET)
    coll, schedule = lower(machine, varied_matrix(64, 1024, 0.0, 0.5, seed=3), "phased")
    fast = execute(machine, coll, schedule, fast=True)
    switched = phased_schedule(coll, machine.torus, SyncMode.LOCAL, empty_messages=True)
    slow = execute(machine, coll, switched, fast=False)
    assert fast.verified and slow.verified and fast.execution.fast_messages == 64 * 63
    assert slow.time_s == fast.time_s  # exactly
    assert execute(machine, coll, schedule, fast=False).time_s < 0.8 * fast.time_s
    assert machine.schedule_problems(switched) == [] and machine.schedule_problems(schedule) == []


def test_a_uniform_synthetic_collective_times_like_the_compiled_program():
    from phalanx.runtime.sweep import sweep_point
    for algorithm in ("phased", "two-stage"):
        run = run_matrix(resolve(TARGET), np.full((64, 64), 512), algorithm)
        assert run.verified and run.collective.kind == "alltoall"
        assert run.time_s == sweep_point(TARGET, "alltoall", 512, algorithm)["time_s"]


def test_the_subset_proof_rejects_a_message_outside_its_phase():
    machine = resolve(TARGET)
    _, schedule = lower(machine, pattern("nearest", 64), "phased")
    phases = list(schedule.phases)
    k = next(i for i, p in enumerate(phases) if p.sends)
    phases[k + 1], phases[k] = phases[k], phases[k + 1]  # swap a busy phase with its neighbour
    import dataclasses
    problems = machine.schedule_problems(dataclasses.replace(schedule, phases=tuple(phases)))
    assert any("is not a message of the construction's phase" in p for p in problems)
