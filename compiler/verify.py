"""Schedule checks that hold on every target: matched sends and receives, nodes in range."""

from __future__ import annotations

from collections import Counter

import numpy as np

from phalanx.compiler.columns import column_ranges
from phalanx.compiler.schedule import Schedule


def schedule_problems(s: Schedule) -> list[str]:
    """Empty for a well-formed schedule; each entry names the phase and the transfer."""
    problems = []
    sent, received = Counter(), Counter()
    for k, phase in enumerate(s.phases):
        for t in phase.sends + phase.recvs:
            if not (0 <= t.src < s.nprocs and 0 <= t.dst < s.nprocs):
                problems.append(f"phase {k}: transfer {t.src}->{t.dst} names a node outside "
                                f"0..{s.nprocs - 1}")
            if t.nbytes <= 0:
                problems.append(f"phase {k}: transfer {t.src}->{t.dst} moves {t.nbytes} bytes")
        sent.update(phase.sends)
        received.update(phase.recvs)
    for t in sorted((sent - received).elements(), key=repr):
        problems.append(f"send {t.src}->{t.dst} of {t.block_name} has no receive")
    for t in sorted((received - sent).elements(), key=repr):
        problems.append(f"receive {t.src}->{t.dst} of {t.block_name} has no send")
    return problems


def table_problems(nprocs: int, sends: np.ndarray, send_offsets: np.ndarray, recvs: np.ndarray,
                   recv_offsets: np.ndarray) -> list[str]:
    """`schedule_problems` on the IR's (n, 7) int64 tables of sends and recvs (phase k's rows
    [offsets[k], offsets[k + 1])), vectorised: the first bad transfer of each phase, the sends'
    phases before the recvs'; no sort where each phase receives what it sends."""
    send_problems = _row_problems(nprocs, sends, send_offsets)
    if np.array_equal(send_offsets, recv_offsets) and (sends is recvs or np.array_equal(sends, recvs)):
        return send_problems * 2  # each phase receives what it sends (Phase.of): nothing to sort
    problems = send_problems + _row_problems(nprocs, recvs, recv_offsets)
    all_sends, all_recvs = _sorted_rows(sends), _sorted_rows(recvs)
    if all_sends.shape != all_recvs.shape or not np.array_equal(all_sends, all_recvs):
        problems.append(f"sends and receives do not match: {len(all_sends)} sends, "
                        f"{len(all_recvs)} receives, or some send has no receive")
    return problems


def _row_problems(nprocs: int, table: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Per phase, its first transfer naming a node outside 0..nprocs-1 and its first moving no
    bytes, in phase order (the table's column ranges say at once when there is none)."""
    ranges = column_ranges(table)
    if ranges is None or (ranges[0][:2].min() >= 0 and ranges[1][:2].max() < nprocs and ranges[0][2] > 0):
        return []
    found = []  # (phase, which check, row)
    outside = ((table[:, :2] < 0) | (table[:, :2] >= nprocs)).any(axis=1)
    for check, bad in enumerate((outside, table[:, 2] <= 0)):
        rows = np.flatnonzero(bad)
        phases = np.searchsorted(offsets, rows, side="right") - 1  # empty phases share an offset
        _, first = np.unique(phases, return_index=True)
        found += [(int(phases[i]), check, int(rows[i])) for i in first]
    problems = []
    for phase, check, row in sorted(found):
        src, dst, nbytes = (int(x) for x in table[row, :3])
        problems.append(f"phase {phase}: transfer {src}->{dst} names a node outside 0..{nprocs - 1}"
                        if check == 0 else f"phase {phase}: transfer {src}->{dst} moves {nbytes} bytes")
    return problems


def _sorted_rows(table: np.ndarray) -> np.ndarray:
    return table[np.lexsort(table.T[::-1])] if len(table) else table


def contention_free_ports(s: Schedule) -> bool:
    """True when no node sends or receives more than one network message per phase."""
    for phase in s.phases:
        net = [t for t in phase.sends if t.src != t.dst]
        srcs, dsts = Counter(t.src for t in net), Counter(t.dst for t in net)
        if any(v > 1 for v in srcs.values()) or any(v > 1 for v in dsts.values()):
            return False
    return True
