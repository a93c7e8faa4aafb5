"""iWarp's cost model (what `auto` minimises) and lower bound (what `efficiency` divides).

The lower bound generalises Eq. 1 (001_569dde0e56ec3e6f.txt Sec. 2) to any byte matrix: every
byte must cross as many links as its shortest route has hops and all 4RC links run at once; no
node can inject or eject faster than its links and memory allow; the bisections (Eq. 2) must
carry what crosses them; and some message pays one start-up.
"""

from __future__ import annotations

import math

import numpy as np

from phalanx.compiler.library.offer import grid_weightings
from phalanx.compiler.recognize import Collective
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.topology import Torus


def lower_bound_s(p: IWarpParams, torus: Torus, matrix: np.ndarray) -> float:
    return max(lower_bounds(p, torus, matrix).values())


def lower_bounds(p: IWarpParams, torus: Torus, matrix: np.ndarray) -> dict[str, float]:
    """Each bound by name: link load (every byte over its hops), the same with other weights on
    the links (a square torus's diagonals weighing twice, each ring's two directions weighed
    apart: bounds.py `weighted_links_bound_s`), injection, bisection cut."""
    m = matrix.astype(np.float64).copy()
    np.fill_diagonal(m, 0)
    if not m.any():
        return {"none": 0.0}
    link_hops = float((m * torus.hop_matrix).sum()) / torus.nlinks
    node_streams = min(4.0, p.memory_streams)  # four links, or the memory if it is narrower
    injection = max(m.sum(axis=1).max(), m.sum(axis=0).max()) / node_streams
    weightings = grid_weightings(torus.rows, torus.cols, wrap=True)
    weighted = {"weighted links": p.overhead_s + p.data_s(max(w.load(m) for w in weightings))} \
        if weightings else {}
    return {"link load": p.overhead_s + p.data_s(link_hops), **weighted,
            "port bandwidth": p.overhead_s + p.data_s(injection),
            "cut": p.overhead_s + p.data_s(_bisection_bytes(torus, m))}


def _bisection_bytes(torus: Torus, m: np.ndarray) -> float:
    """Bytes per link across the busiest band cut, per direction: any band of consecutive rows
    (or columns), wrapping round, is entered and left across two ring cuts, each with one link
    per direction in each column (row). The half-cuts are Eq. 2's argument; a narrower band
    binds where traffic converges on a few rows (every node to the first eighth: row 0).
    The bytes from each column (row) to each other are summed first: a band is a set of them."""
    grid = m.reshape(torus.rows, torus.cols, torus.rows, torus.cols)
    worst = 0.0
    for flows, size, across in ((grid.sum(axis=(0, 2)), torus.cols, torus.rows),
                                (grid.sum(axis=(1, 3)), torus.rows, torus.cols)):
        links = 2 * across  # a cut of a ring crosses two places, each with one link per direction
        coord = np.arange(size)
        for first in range(size):
            for width in range(1, size):
                band = (coord - first) % size < width
                worst = max(worst, flows[band][:, ~band].sum() / links,
                            flows[~band][:, band].sum() / links)
    return worst


HOL_SATURATION = 2 - math.sqrt(2)  # FIFO input queueing, uniform traffic, many ports


def _start_s(p: IWarpParams, torus: Torus) -> float:
    """A message's overhead and its header across the torus's diameter."""
    return p.overhead_s + (torus.rows // 2 + torus.cols // 2) * p.hop_s


def _largest_block(coll: Collective) -> float:
    m = coll.network_matrix
    return float(m.max()) if m.size else 0.0


def phased_time_s(p: IWarpParams, torus: Torus, coll: Collective, global_barrier: bool = False) -> float:
    """n^3/8 phases, each a start-up, the switch's per-phase software and the largest block
    (a global barrier between phases for phased-global)."""
    per_phase = _start_s(p, torus) + p.phase_software_s + p.data_s(_largest_block(coll))
    if global_barrier:
        per_phase += p.barrier_s(torus.rows, torus.cols)
    return torus.cols ** 3 / 8 * per_phase


def unswitched_time_s(p: IWarpParams, torus: Torus, coll: Collective) -> float:
    """The phases without the switch's per-phase software."""
    return torus.cols ** 3 / 8 * (_start_s(p, torus) + p.data_s(_largest_block(coll)))


def two_stage_time_s(p: IWarpParams, torus: Torus, coll: Collective) -> float:
    """Two stages of n^2/8 phases of n combined blocks."""
    n = torus.cols
    return 2 * (n * n / 8) * (_start_s(p, torus) + p.data_s(n * _largest_block(coll)))


def store_forward_time_s(p: IWarpParams, torus: Torus, coll: Collective) -> float:
    """n hops per block; each node sources and sinks 4 streams on memory for memory_streams."""
    m = coll.network_matrix
    share = max(1.0, 8.0 / p.memory_streams)
    per_link = m.sum() / torus.nlinks * torus.hop_matrix.mean()
    diameter = torus.rows // 2 + torus.cols // 2
    return diameter * (p.overhead_s + p.hop_s) + share * p.data_s(per_link)


def direct_time_s(p: IWarpParams, torus: Torus, coll: Collective) -> float:
    """P - 1 pairwise steps, and the busiest link twice."""
    loads = torus.link_loads(coll.network_matrix)
    return (coll.nprocs - 1) * _start_s(p, torus) + p.data_s(loads.max()) * 2


def message_passing_time_s(p: IWarpParams, torus: Torus, coll: Collective) -> float:
    """Every send posted at once through the deposit library (Fig. 6)."""
    m = coll.network_matrix
    loads = torus.link_loads(m)
    # worms hold their whole route while streaming, so a link is busy only while every other
    # link of each route through it is free: about mean-hops/2 of the time lost.
    blocking = max(1.0, torus.hop_matrix.mean() / 2)
    # The deposit library (Sec. 3.1): both processors pay an overhead per message, and a node
    # moves library_streams messages each way at a time, each for its receive overhead + data.
    sent = m > 0
    cpu = (sent.sum(axis=1) * p.overhead_s + sent.sum(axis=0) * p.receive_overhead_s).max()
    busy = sent * p.receive_overhead_s + p.data_s(m)
    node = max(busy.sum(axis=1).max(), busy.sum(axis=0).max()) / max(int(p.library_streams), 1)
    if int(p.library_streams) == 1:
        # One message at a time each way is an input-queued switch with head-of-line
        # blocking: a sender waits on a busy receiver while others are idle. Under uniform
        # traffic such a switch saturates at 2 - sqrt(2) of its capacity (Karol, Hluchyj and
        # Morgan, IEEE Trans. Commun. 1987); the simulator, whose blocked headers also hold
        # links, does worse still (bench: 3-4x the unblocked node time on 8x8).
        node /= HOL_SATURATION
    return max(cpu, node, p.data_s(loads.max()) * blocking) + _start_s(p, torus)
