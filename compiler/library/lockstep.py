"""A prediction of a schedule's time on a network whose worms hold their routes' links: its
phases one after another, each as long as its busiest node or its busiest link.

For a candidate too big to simulate (runtime/simcost.py's budget) on a machine whose closed
form leaves the links out (the Bokhari machines' exchange family: a contention-free hypercube's
time, targets/bokhari/machine.py). Phase k takes the longer of

- its busiest node: a start-up (`hold_s`) per message it sends, its bytes on its port
  (bounds.port_loads_s: on a shared engine its sends and receives add up) and its local copies;
- its busiest link under the machine's fixed routes: bounds.fixed_routes_bound_s of the
  phase's bytes per link (a worm holds every link of its route for its whole wire time, so
  the worms of one link pass one after another, none before the start-up);

and a phase entered with a barrier adds the port's barrier. What it leaves out: phases of
local sync overlap (a node goes on once its own messages are done), and a worm that waits for
a link holds the links behind it. It is a prediction, not a bound, and not the simulator:
tests/compiler/library/test_lockstep.py holds it to the simulator's times.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from phalanx.compiler.columns import table
from phalanx.compiler.library.bounds import fixed_routes_bound_s, port_loads_s
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.schedule import Schedule, SyncMode

# (src, dst, bytes, phase, phases) of every network message -> bytes per (phase, link)
LinkLoads = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


def lockstep_s(schedule: Schedule, port: PortModel, link_loads: LinkLoads) -> float:
    """The schedule's phases one after another, each as long as its busiest node or link."""
    counts = [len(phase.sends) for phase in schedule.phases]
    if not counts:
        return 0.0
    rows = np.concatenate([table(list(phase.sends)) for phase in schedule.phases])
    nphases, n = len(counts), schedule.nprocs
    phase = np.repeat(np.arange(nphases), counts)
    src, dst, nbytes, message = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 5]
    net = src != dst

    def per_node(nodes: np.ndarray, weights: np.ndarray, where: np.ndarray) -> np.ndarray:
        return np.bincount(phase[where] * n + nodes[where], weights=weights[where],
                           minlength=nphases * n).reshape(nphases, n)

    # a message: the transfers of one phase with one (src, dst, message id > 0); id 0 goes alone
    together = net & (message > 0)
    pair = (phase * n + src) * n + dst  # (phase, sender) = pair // n
    ids = int(message.max(initial=0)) + 1
    grouped = np.unique(pair[together] * ids + message[together]) // ids
    senders = np.concatenate([grouped // n, (pair // n)[net & ~together]])
    starts = np.bincount(senders, minlength=nphases * n).reshape(nphases, n)
    node_s = (starts * port.hold_s
              + port_loads_s(per_node(src, nbytes, net), per_node(dst, nbytes, net), port)
              + per_node(src, nbytes, ~net) * port.copy_s_per_byte)
    loads = link_loads(src[net], dst[net], nbytes[net], phase[net], nphases)
    link_s = np.array([fixed_routes_bound_s(port, load) for load in loads])
    barriers = sum(p.sync == SyncMode.BARRIER for p in schedule.phases) * port.barrier_s
    return float(np.maximum(node_s.max(axis=1), link_s).sum()) + barriers
