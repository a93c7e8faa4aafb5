"""Lower bounds no schedule can beat, for every kind, and which of them binds.

- start-up: a node starts one message at a time, so the nodes that hold some of one node's
  data at most double per start-up: a broadcast, scatter, allgather or allreduce over n
  members needs ceil(log2 n) start-ups along its critical path (in groups, n of the largest
  group: the groups run at once; the port and cut bounds below hold for any byte matrix).
  Receiving costs no start-up in these port models, so a gather or reduce (and any other
  pattern) needs only one;
- port bandwidth: each node must send and receive at least the data that leaves or reaches
  it, counted once however it is forwarded (a broadcast's root sends its block once; an
  allreduce's or reduce's partials combine to one partial: an element, or a reduction along
  dimensions' block), at its port rate (both directions on one engine where the machine has
  one);
- cut: what must cross a cut of the topology (a torus's or mesh's bisection) at its links'
  rate, where the target names cuts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from phalanx.compiler import groups
from phalanx.compiler.library.members import (
    GROUP,
    REDUCTIONS,
    contributors,
    receivers,
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


def needs(coll: Collective, port: PortModel) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each port must send and must receive at least (distinct data, once). Traffic
    between nodes of one port (a Proteus cluster) needs no port."""
    n = coll.nprocs
    g = np.array([port.port(p) for p in range(n)])
    m = coll.network_matrix * (g[:, None] != g[None, :])
    send, recv = np.zeros(g.max() + 1, np.int64), np.zeros(g.max() + 1, np.int64)
    if coll.kind not in DISTINCT_KINDS or coll.kind in ("scatter", "gather"):
        np.add.at(send, g, m.sum(axis=1))
        np.add.at(recv, g, m.sum(axis=0))
        return send, recv
    part = coll.network_matrix.max(axis=1)  # an origin's block (the same bytes for all receivers)
    item = int(m.max(initial=0))
    for p in range(n):
        if not m[p].any():
            continue
        send[g[p]] = max(send[g[p]], item) if coll.kind in REDUCTIONS else send[g[p]] + part[p]
        for port_in in set(g[m[p] > 0].tolist()):
            if coll.kind in REDUCTIONS:
                recv[port_in] = item
            else:
                recv[port_in] += part[p]
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


def startup_rounds(coll: Collective, port: PortModel) -> int:
    """Start-ups on the critical path; nodes sharing a port count once (they talk in memory).
    In groups, the groups start at once: the largest group's count."""
    if coll.total_bytes == 0:
        return 0
    if coll.groups:
        return max(startup_rounds(groups.embedded(coll, g), port) for g in coll.groups)
    members = set(senders(coll)) | set(receivers(coll)) | (
        set(contributors(coll)) if coll.kind in GROUP else set())
    ports = {port.port(p) for p in members}
    if len(ports) < 2:
        return 0
    if coll.kind in ("broadcast", "scatter", "allgather", "allreduce"):
        return math.ceil(math.log2(len(ports)))
    return 1


def bounds(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = ()) -> dict[str, float]:
    """Every bound in seconds, by name."""
    if coll.total_bytes == 0:
        return {"none": 0.0}
    send, recv = needs(coll, port)
    load = float((send + recv if port.shared_engine else np.maximum(send, recv)).max())
    out = {"start-up": startup_rounds(coll, port) * port.startup_s,
           "port bandwidth": (port.startup_s + port.s_per_byte * load / port.streams) if load else 0.0}
    if cuts and port.link_s_per_byte > 0:
        out["cut"] = port.startup_s + max(must_cross(coll, c.side) / c.links for c in cuts) \
            * port.link_s_per_byte
    return out


def lower_bound(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = ()) -> tuple[float, str]:
    """(seconds, name of the binding bound)."""
    found = bounds(coll, port, cuts)
    name = max(found, key=lambda k: found[k])
    return found[name], name
