"""Schedule checks that hold on every target: matched sends and receives, nodes in range."""

from __future__ import annotations

from collections import Counter

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
        problems.append(f"send {t.src}->{t.dst} of block {t.origin}->{t.final} has no receive")
    for t in sorted((received - sent).elements(), key=repr):
        problems.append(f"receive {t.src}->{t.dst} of block {t.origin}->{t.final} has no send")
    return problems


def contention_free_ports(s: Schedule) -> bool:
    """True when no node sends or receives more than one network message per phase."""
    for phase in s.phases:
        net = [t for t in phase.sends if t.src != t.dst]
        srcs, dsts = Counter(t.src for t in net), Counter(t.dst for t in net)
        if any(v > 1 for v in srcs.values()) or any(v > 1 for v in dsts.values()):
            return False
    return True
