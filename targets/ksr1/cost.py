"""Cost models of the KSR-1 target: the analytic model `auto` uses, the lower bound, and the
paper's fitted formulas (seed 002_1e1cb805508c9dd7.txt Sec. 5) that tests cross-check against.

Analytic model: in each phase a reader's read loops run one after another; a loop of n
subpages from a holder costs n turns of the reading loop (params.read_loop_us) and n
unloaded reads (Table 1: 175 cycles on one ring:0, 600 over ring:1), divided by the prefetch
depth but never below the loop's own time; a phase lasts as long as its slowest reader or
its busiest ARD (one packet per ard_service_ns). Broadcast readers of shared data do not add up
(responses pass every waiting cell, Sec. 5.2); poststore pushes each subpage once.

Paper fits, T in ms with the size in subpages, as the seed names it (N_subpages): the
cshift fit then gives Table 3's distance-1 entries at 128 subpages a cell (experiments.py).
An earlier reading took N in KB to make the broadcast's 54 us per subpage agree with
Table 2's 6-7 us; it puts Table 3 at 128 KB a cell, 4 MB in 3.88 ms on one ring:0, more
than ring:0's 1 GB/s (Sec. 2.2). docs/targets_ksr1.md lists what each reading contradicts.
"""

from __future__ import annotations

import math
from collections import defaultdict

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.cost import combined_bytes
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.targets.ksr1.params import KsrParams
from phalanx.targets.ksr1.ring import RingGeometry
from phalanx.targets.ksr1.tags import Read, ReadMode


def subpages(nbytes: int, params: KsrParams) -> int:
    return max(math.ceil(nbytes / params.subpage_bytes), 1)


Loop = tuple[int, int, int]  # a read loop: (reader, holder, message id or -1 - a single's index)


def read_loops(phase: Phase) -> dict[Loop, list[Transfer]]:
    """The remote transfers of a phase by read loop: a combined message's one loop, each single
    transfer its own."""
    loops: dict[Loop, list[Transfer]] = defaultdict(list)
    for i, t in enumerate(phase.sends):
        if t.src != t.dst:
            loops[(t.dst, t.src, t.message if t.message > 0 else -1 - i)].append(t)
    return loops


def _loop_bytes(phase: Phase, kind: Kind) -> dict[Loop, int]:
    """Bytes per read loop of a phase: partials fetched in one loop travel combined (one
    element, or a block or piece of a reduction along dims, per destination); other blocks add
    up."""
    return {k: combined_bytes(ts) if kind in REDUCTIONS else sum(t.nbytes for t in ts)
            for k, ts in read_loops(phase).items()}


def phase_time_s(phase: Phase, kind: Kind, params: KsrParams, geo: RingGeometry,
                 element_bytes: int = 8) -> float:
    readers: dict[int, float] = defaultdict(float)
    ard: dict[int, int] = defaultdict(int)
    push_s = 0.0
    for (q, h, message), nbytes in _loop_bytes(phase, kind).items():
        if kind in REDUCTIONS:  # the reader's processor merges what the loop brings, an element at a time
            readers[q] += nbytes / element_bytes / (params.arith_MFLOPS * 1e6)
        n = subpages(nbytes, params)
        mode = Read.of(message).mode
        cross = geo.ring(q) != geo.ring(h)
        if mode == ReadMode.POSTSTORE:
            rate_s = max(params.slot_s, params.access_s / params.cius_per_cell)
            lift_s = 2 * params.slot_s + params.ring1_transit_s if geo.nrings > 1 else 0.0
            read_s = n * (params.access_s + params.read_loop_s)
            if Read.of(message).content:  # shared: one push for every reader, before their reads
                push_s = max(push_s, params.access_s + n * rate_s + params.rotation_s + lift_s)
                readers[q] += read_s
            else:  # private: pushed when its reader's engine comes to it (network.py), then read
                ride_s = geo.hops(geo.station(h), geo.station(q)) * params.hop_s if not cross \
                    else params.rotation_s + lift_s
                readers[q] += params.access_s + n * rate_s + ride_s + read_s
            continue
        # a write (ReadMode.WRITE) costs a read: one ownership request round the ring
        latency = params.ring1_read_s if cross else params.ring0_read_s
        depth = min(params.prefetch_outstanding, n) if mode == ReadMode.PREFETCH else 1.0  # within a loop
        step_s = params.read_loop_s + latency  # the loop's own time, then the read
        # prefetched, the reads overlap the loop's turns but the last one's latency
        tail_s = latency if depth > 1 else 0.0
        readers[q] += n * max(step_s / depth, params.read_loop_s, params.slot_s) + tail_s
        if cross:
            ard[geo.ring(q)] += n
            ard[geo.ring(h)] += n
    copies = max((math.ceil(t.nbytes / params.subpage_bytes) * params.access_s
                  for t in phase.sends if t.src == t.dst), default=0.0)
    busiest_ard_s = max(ard.values(), default=0) * params.ard_s
    return max(max(readers.values(), default=0.0) + push_s, busiest_ard_s, copies)


def predict_time_s(schedule: Schedule, kind: Kind, params: KsrParams, nnodes: int,
                   element_bytes: int = 8) -> float:
    geo = RingGeometry(params, nnodes)
    return sum(phase_time_s(p, kind, params, geo, element_bytes) for p in schedule.phases)


def lower_bound_s(coll: Collective, params: KsrParams) -> float:
    """The busiest reader gets at most one subpage per slot time and runs its reading loop
    once per subpage (read_loop_us), after at least one holder access and one hop; nothing
    else is assumed."""
    m = coll.network_matrix
    if not m.any():
        return 0.0
    if coll.kind in REDUCTIONS:  # at least one partial, combined
        most = subpages(int(m.max()), params)
    else:
        # a read loop may pack blocks of several cells into one subpage (a tree's levels)
        most = max(math.ceil(int(m[:, q].sum()) / params.subpage_bytes) for q in range(coll.nprocs))
    return params.access_s + params.hop_s + most * max(params.slot_s, params.read_loop_s)


def reading_rounds_bound_s(coll: Collective, params: KsrParams) -> float:
    """Reading-loop rounds (docs/bounds.md, "The KSR-1's reading rounds"): a cell takes in data
    only by transfers its read engine runs one at a time, a turn of the reading loop
    (read_loop_us) per subpage (a plain, prefetched or writing read runs it before the subpage
    moves, a poststored one after the push passes), and a transfer brings what its source held
    when it was posted, before those turns. So the cells whose data (a reduction: whose inputs,
    byte by byte) any cell holds by j turns are at most 2^j, and a cell that needs the
    data of n - 1 others is not done before ceil(log2 n) turns. A reduction's cell needs that
    for every byte of its partial, and its i-th turn from the last brings at most a subpage of
    bytes, each with at most min(2^(i-1), n - 1) inputs: it needs the least N turns whose bytes
    times inputs cover its partial's bytes times n - 1."""
    m = coll.network_matrix
    others = int((m > 0).sum(axis=0).max(initial=0))
    if others == 0:
        return 0.0
    if coll.kind not in REDUCTIONS:
        return math.ceil(math.log2(others + 1)) * params.read_loop_s
    # every byte of the partial depends on every input; a turn brings at most a subpage of them
    partial = int(m.max())
    per_turn = min(int(params.subpage_bytes), partial)
    missing = partial * others  # (byte, input) pairs the busiest cell lacks
    turns = 0
    while missing > 0:
        missing -= per_turn * min(2 ** turns, others)
        turns += 1
    return turns * params.read_loop_s


# -- the seed's fitted formulas (Sec. 5), T in ms, size in subpages (see module doc) -----

def paper_fit_ms(algorithm: str, nprocs: int, subpages: float) -> float | None:
    """The seed's fit for `algorithm` on `nprocs` cells moving `subpages` (None: not given)."""
    p, n, log_p = nprocs, subpages, math.log2(max(nprocs, 1))
    if algorithm == "broadcast":  # Sec. 5.2
        return 0.054 * n if p <= 32 else 0.419 + 0.069 * n
    if algorithm == "cshift":  # Sec. 5.4 (distance 1)
        return 0.007 * p + 0.029 * n
    if algorithm == "gather-seq":  # Sec. 5.5 algorithm 1
        return 0.050 * p + 0.030 * n
    if algorithm == "gather-tree":  # Sec. 5.5 algorithm 2
        return 0.442 * log_p + 0.029 * n
    if algorithm == "allgather-seq-bcast":  # Sec. 5.6 algorithm 1
        return 0.091 * p + 0.064 * n
    if algorithm == "allgather-cshift":  # Sec. 5.6 algorithm 3
        return 0.074 + 0.058 * p + 0.022 * n
    return None  # Sec. 5.6 algorithm 2: C7 (the size term) is not given in the seed
