"""The `simgrid` cost model: what a schedule costs on SimGrid's flow-level network.

`--backend simgrid` runs schedules on SimGrid's CM02 model, where the flows on a link share
its bandwidth (max-min) instead of holding it whole as the built-in wormhole models do. A
schedule that the wormhole model punishes for contention (all of iWarp's messages posted at
once, Fig. 6 of 001_569dde0e56ec3e6f.txt) can be the fastest there, so `auto` for that
backend minimises this model instead of the target's own (`compile --cost simgrid`).

Per phase, on the platform SimGrid runs (platforms.py): the busiest link's bytes over its
bandwidth, after the first start-up, or the busiest sender's chain of start-ups (and, where
a node sends one message at a time, its own bytes), whichever is longer, plus the longest
route's latency; or a node's local copies, where longer (they run beside the messages); plus
the barrier of a `barrier` phase (the largest of its sets, for a barrier scoped to groups:
each group's of its own size). Phases add up. A message's bytes are those SimGrid moves
(simgrid.py's wire bytes): a reduction's partials bound for one destination combine on the
way (cost.combined_bytes), so recursive doubling's last message carries one partial, not the
P/2 it stands for; SimGrid charges no time for the combining, and neither does this model.
This is a bound-based estimate, not the simulator: tests compare it with SimGrid's runs.
"""

from __future__ import annotations

from collections import defaultdict

from phalanx.compiler.library.cost import combined_bytes
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.plan_walk import messages
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule
from phalanx.compiler.target import CostModel, Target, no_argument, register_cost_model
from phalanx.runtime.backends.platforms import Platform, platform_for


def phase_time_s(platform: Platform, phase: Phase, nprocs: int, reduction: bool) -> float:
    """One phase's time; `reduction`: the schedule's partials combine on the way."""
    assert platform.routes is not None, "the flow model needs the target's own routes"
    chain: dict[int, float] = defaultdict(float)  # a sender's start-ups (and serial bytes)
    copies: dict[int, float] = defaultdict(float)
    load: dict[str, float] = defaultdict(float)  # bytes per link
    first_start, latency = float("inf"), 0.0
    for group in messages(list(phase.sends)):
        first = group[0]
        nbytes = combined_bytes(group) if reduction else sum(t.nbytes for t in group)
        if first.src == first.dst:
            copies[first.src] += platform.copy_time_s(nbytes)
            continue
        route = platform.routes[(first.src, first.dst)]
        start = platform.overhead_s(first)
        chain[first.src] += start
        first_start = min(first_start, start)
        if platform.serial_sender:
            chain[first.src] += nbytes / platform.links[route[0]][0]
        for link in route:
            load[link] += nbytes
        latency = max(latency, sum(platform.links[link][1] for link in route))
    network = max((b / platform.links[link][0] for link, b in load.items()), default=0.0)
    senders = max(chain.values(), default=0.0)
    moved = max(senders, first_start + network) if load else 0.0
    # a node's copies run beside its messages (simgrid_worker: exec_async at the phase's start)
    time_s = max(moved + latency, max(copies.values(), default=0.0))
    return time_s + max((platform.barrier_time_s(len(nodes)) for nodes in phase.barriers(nprocs)),
                        default=0.0)


def schedule_time_s(platform: Platform, schedule: Schedule) -> float:
    reduction = schedule.kind in REDUCTIONS
    return sum(phase_time_s(platform, phase, schedule.nprocs, reduction) for phase in schedule.phases)


def predict_time_s(target: Target, coll: Collective, algorithm: str) -> float:
    """The flow model's time of `coll` by `algorithm` on `target`'s SimGrid platform."""
    schedule = target.schedule_for(coll, algorithm)
    pairs = {(t.src, t.dst) for phase in schedule.phases for t in phase.sends}
    return schedule_time_s(platform_for(target, pairs), schedule)


def register_simgrid_cost_model() -> None:
    """Make `--cost simgrid` available (phalanx.register_all calls this)."""
    register_cost_model("simgrid", no_argument("simgrid", CostModel(predict_time_s)))
