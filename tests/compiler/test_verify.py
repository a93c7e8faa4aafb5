"""compiler/verify.py's checks on the IR's tables and the sched op's own, vectorised: held to
the per-transfer loop (schedule_problems) and to numpy's min and max."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.columns import FIELDS, column_ranges, rows, transfers_of
from phalanx.compiler.ir.dialects import sched
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Phase, Schedule
from phalanx.compiler.verify import schedule_problems, table_problems


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 3000])
def test_column_ranges_are_each_column_s_min_and_max(n):
    table = np.random.default_rng(n).integers(-50, 50, size=(n, FIELDS))
    if n == 0:
        assert column_ranges(table) is None
        return
    lo, hi = column_ranges(table)
    assert lo.tolist() == table.min(axis=0).tolist() and hi.tolist() == table.max(axis=0).tolist()


def random_phases(rng, nprocs: int, bad: bool) -> list[np.ndarray]:
    """Phases of random transfers (some empty); with `bad`, a few name nodes outside 0..nprocs-1
    or move no bytes, in the middle of long phases as well as in short ones."""
    out = []
    for _ in range(int(rng.integers(1, 6))):
        count = int(rng.choice([0, 3, 300, 700])) if out else 300
        src, dst = rng.integers(0, nprocs, count), rng.integers(0, nprocs, count)
        table = rows(src, dst, rng.integers(1, 100, count), src, dst)
        for _ in range(int(rng.integers(1, 3)) if bad and count else 0):
            row, column = int(rng.integers(0, count)), int(rng.integers(0, 3))
            table[row, column] = [-1, nprocs, nprocs + 5][int(rng.integers(0, 3))] if column < 2 else \
                int(rng.integers(-2, 1))
        out.append(table)
    return out


def offsets_of(tables: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum([len(t) for t in tables])))


def problems_phase_by_phase(nprocs: int, phases: list[tuple[np.ndarray, np.ndarray]]) -> list[str]:
    """What table_problems said when it went phase by phase (its sends' tables, then its recvs')."""
    problems = []
    tables = [t for t, _ in phases] + [r for _, r in phases]
    for k, table in enumerate(tables):
        bad = table[(table[:, :2] < 0).any(axis=1) | (table[:, :2] >= nprocs).any(axis=1)]
        if len(bad):
            problems.append(f"phase {k % len(phases)}: transfer {bad[0, 0]}->{bad[0, 1]} names a "
                            f"node outside 0..{nprocs - 1}")
        small = table[table[:, 2] <= 0]
        if len(small):
            problems.append(f"phase {k % len(phases)}: transfer {small[0, 0]}->{small[0, 1]} moves "
                            f"{small[0, 2]} bytes")
    return problems


@pytest.mark.parametrize("seed", range(12))
def test_table_problems_name_what_the_phase_by_phase_loop_named(seed):
    rng = np.random.default_rng(seed)
    nprocs = 9
    sends = random_phases(rng, nprocs, bad=seed % 3 != 0)
    recvs = sends if seed % 2 else [t[rng.permutation(len(t))] for t in sends]
    if seed % 4 == 3:  # a receive that no send matches
        recvs = [t.copy() for t in recvs]
        next(t for t in recvs if len(t))[0, 2] += 1
    s_all = np.concatenate(sends)
    r_all = s_all if recvs is sends else np.concatenate(recvs)
    got = table_problems(nprocs, s_all, offsets_of(sends), r_all, offsets_of(recvs))
    assert [p for p in got if p.startswith("phase ")] == \
        problems_phase_by_phase(nprocs, list(zip(sends, recvs)))
    # and what the per-transfer loop finds: the same bad transfers, the same mismatch
    phases = tuple(Phase(transfers_of(s), transfers_of(r)) for s, r in zip(sends, recvs))
    loop = schedule_problems(Schedule(0, Kind.SPARSE, "test", nprocs, phases))
    assert {p for p in got if p.startswith("phase ")} <= set(loop)
    assert any(p.startswith("phase ") for p in got) == any(p.startswith("phase ") for p in loop)
    assert any("do not match" in p for p in got) == any("has no" in p for p in loop)
    assert seed % 3 == 0 or got


def bad_op(column: int, value: int) -> sched.ScheduleOp:
    """A 600-transfer schedule on 4 nodes with one bad entry in row 300 (inside the column
    ranges' long rows)."""
    src = np.arange(600) % 4
    table = rows(src, (src + 1) % 4, np.full(600, 8), src, (src + 1) % 4)
    table[300, column] = value
    return sched.schedule_to_ir(Schedule(0, Kind.SPARSE, "test", 4, (Phase.of(transfers_of(table)),)))


@pytest.mark.parametrize("column, value, message", [
    (2, -3, "sends: bytes must be >= 0"),
    (0, 4, r"sends: src = 4 outside 0\.\.3"),
    (1, -1, r"sends: dst = -1 outside 0\.\.3"),
    (3, 7, r"sends: origin = 7 outside 0\.\.3"),
    (4, 9, r"sends: final = 9 outside 0\.\.3"),
    (6, -5, "sends: offset = -5: a piece's first byte is >= 0"),
])
def test_the_op_names_its_first_bad_entry(column, value, message):
    with pytest.raises(VerifyException, match=message):
        bad_op(column, value).verify()
    bad_op(6, 0).verify()  # a piece from its first byte is well formed
