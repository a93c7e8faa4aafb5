"""Lower bounds no schedule can beat, for every kind, and which of them binds.

- start-up: a node starts one message at a time, so the nodes that hold some of one node's
  data at most double per start-up: a broadcast, scatter, allgather or allreduce over n
  members needs ceil(log2 n) start-ups along its critical path. Receiving costs no start-up
  in these port models, so a gather or reduce (and any other pattern) needs only one;
- port bandwidth: each node must send and receive at least the data that leaves or reaches
  it, counted once however it is forwarded (a broadcast's root sends its block once; an
  allreduce's partials combine to one element), at its port rate (both directions on one
  engine where the machine has one);
- cut: what must cross a cut of the topology (a torus's or mesh's bisection) at its links'
  rate, where the target names cuts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.library.members import (
    GROUP,
    REDUCTIONS,
    contributors,
    receivers,
    root_of,
    senders,
)
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

DISTINCT_KINDS = ("broadcast", "scatter", "gather", "reduce", "allgather", "allreduce")


@dataclass(frozen=True)
class Cut:
    """Nodes on one side of a cut and the link directions that cross it each way."""

    side: frozenset[int]
    links: int


def needs(coll: Collective) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each node must send and must receive at least (distinct data, once)."""
    n, m = coll.nprocs, coll.network_matrix
    if coll.kind not in DISTINCT_KINDS:
        return m.sum(axis=1), m.sum(axis=0)
    send, recv = np.zeros(n, np.int64), np.zeros(n, np.int64)
    part = m.max(axis=1)  # an origin's block (the same bytes for every receiver where shared)
    if coll.kind in REDUCTIONS:
        item = int(m.max(initial=0))
        for q in receivers(coll):
            recv[q] = item
        for p in senders(coll):
            send[p] = item
    elif coll.kind == "broadcast":
        send[root_of(coll)] = part[root_of(coll)]
        recv[:] = m.max(axis=0)
    elif coll.kind in ("scatter", "gather"):
        send, recv = m.sum(axis=1), m.sum(axis=0)
    else:  # allgather: every node sends its part once and receives every other part
        send[:] = part
        recv[:] = m.sum(axis=0)
    return send, recv


def must_cross(coll: Collective, side: frozenset[int]) -> float:
    """Bytes that must cross from `side` to the rest (the larger direction)."""
    n, m = coll.nprocs, coll.network_matrix
    inside = np.array([p in side for p in range(n)])
    worst = 0.0
    for a, b in ((inside, ~inside), (~inside, inside)):
        flows = m[a][:, b]
        if coll.kind in REDUCTIONS:
            crossing = float(flows.max(initial=0))
        elif coll.kind in ("broadcast", "allgather"):
            crossing = float(flows.max(axis=1, initial=0).sum())  # each origin's part once
        else:
            crossing = float(flows.sum())
        worst = max(worst, crossing)
    return worst


def startup_rounds(coll: Collective) -> int:
    if coll.total_bytes == 0:
        return 0
    if coll.kind in ("broadcast", "scatter", "allgather", "allreduce"):
        members = set(senders(coll)) | set(receivers(coll))
        if coll.kind in GROUP:
            members |= set(contributors(coll))
        return max(1, math.ceil(math.log2(len(members))))
    return 1


def bounds(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = ()) -> dict[str, float]:
    """Every bound in seconds, by name."""
    if coll.total_bytes == 0:
        return {"none": 0.0}
    send, recv = needs(coll)
    load = send + recv if port.shared_engine else np.maximum(send, recv)
    out = {"start-up": startup_rounds(coll) * port.startup_s,
           "port bandwidth": port.startup_s + port.s_per_byte * float(load.max()) / port.streams}
    if cuts and port.link_s_per_byte > 0:
        out["cut"] = port.startup_s + max(must_cross(coll, c.side) / c.links for c in cuts) \
            * port.link_s_per_byte
    return out


def lower_bound(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = ()) -> tuple[float, str]:
    """(seconds, name of the binding bound)."""
    found = bounds(coll, port, cuts)
    name = max(found, key=lambda k: found[k])
    return found[name], name
