"""The vectorized fast path for proven contention-free phased schedules.

A network model may offer `fast_plan(schedule) -> FastPlan | None`: the messages of every phase
(including the empty messages a synchronizing switch needs) with their routes, for schedules in
which every phase uses every link at most once and every node sends and receives at most one
message (its target's verifier proves that). Then no resource is ever contended except by the
same link's message of an earlier phase, and each message's times follow one max-plus recurrence:
  header at hop j:  h = max(h, tail of the link's previous message) + hop
  end:              h + data time;  copies: start + copy time
  node's next phase starts when its own sends and receives end (local), or after a barrier.
These are the event path's operations in the same order, so both give identical floats (a test
checks that). Data still moves block by block through runtime/data.py and is verified. A schedule
with an `eager` phase (compiler/schedule.py SyncMode: a node goes on before its sends end) does
not follow that recurrence; the interpreter does not ask for its fast plan (Schedule.eager).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.schedule import Schedule
from phalanx.runtime.data import move


@dataclass
class FastPhase:
    src: np.ndarray  # int64 per message
    dst: np.ndarray
    nbytes: np.ndarray  # 0 for an empty message
    links: np.ndarray  # (messages, max hops) link ids, -1 padded
    gated: bool  # the link's previous tail must pass before the header takes it


@dataclass
class FastPlan:
    nnodes: int
    nlinks: int
    phases: list[FastPhase]
    overhead_s: float  # processor time before a message's header leaves
    hop_s: float
    data_s: Callable[[np.ndarray], np.ndarray]
    copy_s: Callable[[np.ndarray], np.ndarray]
    barrier_s: float | None  # None: local sync
    # Adds the busy time the plan's messages give the network's resources (utilisation
    # reports); called once per run that takes the plan, so that asking for a plan books nothing.
    book: Callable[[], None] = lambda: None


def run_fast(plan: FastPlan, start_s: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-node end times of the whole schedule from per-node start times, and messages run."""
    node_t = start_s.astype(np.float64).copy()
    tail = np.zeros(plan.nlinks, dtype=np.float64)
    messages = 0
    for ph in plan.phases:
        end = node_t.copy()
        net = ph.src != ph.dst
        if net.any():
            ends = _network_messages(plan, ph, net, node_t, tail)
            np.maximum.at(end, ph.src[net], ends)
            np.maximum.at(end, ph.dst[net], ends)
            messages += int(net.sum())
        copies = ~net & (ph.nbytes > 0)
        if copies.any():
            np.maximum.at(end, ph.src[copies], node_t[ph.src[copies]] + plan.copy_s(ph.nbytes[copies]))
        if plan.barrier_s is not None:
            end[:] = end.max() + plan.barrier_s
        node_t = end
    return node_t, messages


def _network_messages(plan: FastPlan, ph: FastPhase, net: np.ndarray, node_t: np.ndarray,
                      tail: np.ndarray) -> np.ndarray:
    links = ph.links[net]
    h = node_t[ph.src[net]] + plan.overhead_s
    for j in range(links.shape[1]):
        hop = links[:, j]
        on = hop >= 0
        here = h[on]
        if ph.gated:
            here = np.maximum(here, tail[hop[on]])
        h[on] = here + plan.hop_s
    ends = h + plan.data_s(ph.nbytes[net])
    used = links >= 0
    tail[links[used]] = np.broadcast_to(ends[:, None], links.shape)[used]
    return ends


def move_data(schedule: Schedule, data) -> None:
    """Move every block of the schedule in phase order (take from the sender, put at the receiver)."""
    for phase in schedule.phases:
        for t in phase.sends:
            move(data, t)
