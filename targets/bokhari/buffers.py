"""The Paragon's receive-buffer limit for the library's all-to-alls: rounds behind barriers.

Seed 003 Sec. 5, Fig. 12: a node posts receives for everything due to it between two barriers
it takes part in, and the OS could post only 255 receives of 1728 bytes. Bokhari's exchange
family meets the limit by cutting blocks into pieces, each piece's exchange a round behind a
barrier (hypercube.pieces_to_fit). A library all-to-all of local phases whose messages each
fit (`grid-direct`'s whole blocks of 64 KB) meets it with fewer start-ups by ending a round
with a barrier wherever the next phase's receives would overflow a node's buffers: a barrier
costs the machine about 8 message start-ups at 64 nodes (Table 1: 126 d - 113 us), pieces a
start-up per message.

A barrier phase's receives are counted on both sides of its barrier (`rounds_within`): the
runtime posts them before the barrier (the phase's messages, then the barrier), and the
target's proof (`BokhariTarget.check_receive_buffers`) counts them after it.

Where one phase's messages alone overflow a node's buffers (`engine-rounds`' whole blocks of
1 MB, against 255 x 1728 bytes), no placement of barriers helps: `in_fewest_pieces` cuts every
block into the fewest pieces whose rounds fit and runs the schedule once per piece, as the
exchange family does (hypercube.pieces_to_fit), for schedules of direct messages (a relaying
schedule, Bruck's, would pay its relays' start-ups once per piece: it is left as it is, and
`fits` keeps `auto` from it).
"""

from __future__ import annotations

import dataclasses
import math

from phalanx.compiler.schedule import WHOLE, Phase, Schedule, SyncMode, Transfer


def phase_receives(phase: Phase, nprocs: int) -> list[int]:
    """Bytes each node receives from other nodes in the phase."""
    got = [0] * nprocs
    for t in phase.recvs:
        if t.src != t.dst:
            got[t.dst] += t.nbytes
    return got


def rounds_within(schedule: Schedule, limit_bytes: float) -> Schedule | None:
    """`schedule` with barriers where a node's receive buffers would overflow, or None where no
    placement of barriers keeps them within `limit_bytes`. A barrier phase's receives count in
    the round it ends (the runtime's order) and in the round it opens (the target's proof): a
    barrier goes at the overflowing phase where its round still fits so, else at the phase
    before. A schedule that fits is returned as it is; one with barriers of its own that does
    not fit keeps them and gets those of its phases as local ones besides (a barrier more only
    shortens a round, so the union fits)."""
    n, phases = schedule.nprocs, list(schedule.phases)
    own = [k for k, p in enumerate(phases) if p.sync == SyncMode.BARRIER]
    if own:
        if fits_within(schedule, limit_bytes):
            return schedule
        local = [dataclasses.replace(p, sync=SyncMode.LOCAL, barrier_groups=()) for p in phases]
        fitted = rounds_within(dataclasses.replace(schedule, phases=tuple(local)), limit_bytes)
        if fitted is None:
            return None
        return dataclasses.replace(fitted, phases=tuple(
            phases[k] if k in own else p for k, p in enumerate(fitted.phases)))
    got = [phase_receives(p, n) for p in phases]
    # the receives since the round's start as the proof counts them (from the latest barrier
    # phase on) and as the runtime posts them (after it)
    proof, posted = [0] * n, [0] * n
    placed = -1

    def fits(*rounds: list[int]) -> bool:
        return all(max(r) <= limit_bytes for r in rounds)

    def plus(a: list[int], b: list[int]) -> list[int]:
        return [x + y for x, y in zip(a, b)]

    for k in range(len(phases)):
        if fits(plus(proof, got[k]), plus(posted, got[k])):
            proof, posted = plus(proof, got[k]), plus(posted, got[k])
        elif fits(plus(posted, got[k])):  # the barrier at k: this round ends with it
            placed, proof, posted = k, list(got[k]), [0] * n
        elif k - 1 > placed and fits(plus(got[k - 1], got[k])):  # at k - 1
            placed, proof, posted = k - 1, plus(got[k - 1], got[k]), list(got[k])
        else:
            return None
        if placed >= 0 and placed in (k, k - 1) and phases[placed].sync != SyncMode.BARRIER:
            phases[placed] = dataclasses.replace(phases[placed], sync=SyncMode.BARRIER)
    return schedule if placed < 0 else dataclasses.replace(schedule, phases=tuple(phases))


def posted_bytes(schedule: Schedule) -> list[int]:
    """Per node, the most bytes it receives between two barriers it takes part in (its receives
    are posted for all of them at once), a barrier phase's receives counted on both sides."""
    worst, posted = [0] * schedule.nprocs, [0] * schedule.nprocs
    for phase in schedule.phases:
        for nodes in phase.barriers(schedule.nprocs):
            for p in nodes:
                worst[p], posted[p] = max(worst[p], posted[p]), 0
        for t in phase.recvs:
            if t.src != t.dst:
                posted[t.dst] += t.nbytes
    return [max(w, p) for w, p in zip(worst, posted, strict=True)]


def fits_within(schedule: Schedule, limit_bytes: float) -> bool:
    """Whether no node receives more than `limit_bytes` between two barriers it takes part in
    (as BokhariTarget.check_receive_buffers)."""
    return max(posted_bytes(schedule)) <= limit_bytes


def in_pieces(schedule: Schedule, pieces: int) -> Schedule:
    """`schedule` once per piece: run r moves bytes [m r / pieces, m (r + 1) / pieces) of every
    transfer of m bytes (its block's, or its segment's, from the segment's offset on), empty
    pieces left out (hypercube.multiphase_phases cuts the family's blocks alike)."""
    def piece(t: Transfer, r: int) -> Transfer | None:
        start = t.nbytes * r // pieces
        size = t.nbytes * (r + 1) // pieces - start
        if size == 0:
            return None
        return t._replace(nbytes=size, offset=start if t.offset == WHOLE else t.offset + start)

    phases = []
    for r in range(pieces):
        for phase in schedule.phases:
            sends = tuple(p for t in phase.sends if (p := piece(t, r)) is not None)
            recvs = tuple(p for t in phase.recvs if (p := piece(t, r)) is not None)
            phases.append(dataclasses.replace(phase, sends=sends, recvs=recvs))
    return dataclasses.replace(schedule, phases=tuple(phases))


def in_fewest_pieces(schedule: Schedule, limit_bytes: float) -> Schedule | None:
    """A schedule of direct messages in the fewest pieces (in_pieces) whose rounds fit
    `limit_bytes` (rounds_within); None for a relaying schedule, or where none is found. A
    phase's receives must fit on their own, so the search starts at the pieces that make the
    largest of them do (k0); from 2 k0 on every phase receives at most half the limit (but for
    a byte per transfer of rounding), any two neighbouring phases fit, and rounds_within places
    its barriers: the search ends there."""
    if not schedule.direct_messages():
        return None
    largest = max((max(phase_receives(p, schedule.nprocs)) for p in schedule.phases), default=0)
    first = max(math.ceil(largest / limit_bytes), 1)
    for pieces in range(first, 2 * first + 2):
        fitted = rounds_within(in_pieces(schedule, pieces), limit_bytes)
        if fitted is not None:
            return fitted
    return None
