"""Schedule checks that hold on every target: matched sends and receives, nodes in range."""

from __future__ import annotations

from collections import Counter

import numpy as np

from phalanx.compiler.schedule import TRANSFER_FIELDS, Schedule


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


def table_problems(nprocs: int, phases: list[tuple[np.ndarray, np.ndarray]]) -> list[str]:
    """`schedule_problems` on the IR's (sends, recvs) int64 tables, vectorised."""
    problems = []
    sends = [t for t, _ in phases]
    recvs = [r for _, r in phases]
    for k, table in enumerate(sends + recvs):
        bad = table[(table[:, :2] < 0).any(axis=1) | (table[:, :2] >= nprocs).any(axis=1)]
        if len(bad):
            problems.append(f"phase {k % len(phases)}: transfer {bad[0, 0]}->{bad[0, 1]} names a "
                            f"node outside 0..{nprocs - 1}")
        small = table[table[:, 2] <= 0]
        if len(small):
            problems.append(f"phase {k % len(phases)}: transfer {small[0, 0]}->{small[0, 1]} moves "
                            f"{small[0, 2]} bytes")
    if all(s.shape == r.shape and np.array_equal(s, r) for s, r in phases):
        return problems  # each phase receives what it sends (Phase.of): nothing to sort
    none = np.zeros((0, len(TRANSFER_FIELDS)), np.int64)
    all_sends = _sorted_rows(np.concatenate(sends) if sends else none)
    all_recvs = _sorted_rows(np.concatenate(recvs) if recvs else none)
    if all_sends.shape != all_recvs.shape or not np.array_equal(all_sends, all_recvs):
        problems.append(f"sends and receives do not match: {len(all_sends)} sends, "
                        f"{len(all_recvs)} receives, or some send has no receive")
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
