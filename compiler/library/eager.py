"""Pipelined relays in eager phases: a node forwards its next segment while the previous ones
still stream (compiler/schedule.py SyncMode.EAGER, issue 27).

In a `local` phase a node goes on only when its sends are delivered, so a pipelined tree pays
per segment its start-ups and then the segment's streaming, one after the other
(spanning.tree_segments). In an `eager` phase it goes on once its receives of the phase are in
and its sends are posted: the next segment's start-ups run on its processor while the
previous segment's bytes stream on its links.

`eager-spanning-trees`: Johnsson and Ho's four edge-disjoint spanning trees of a square torus
(spanning.py), the same transfers in the same phases (segment j into a node of depth d in phase
j + d - 1), every phase eager, segments from `eager_segments`. `eager(generator)`: any
algorithm's local phases made eager (the cut scatter-doubling broadcasts on the tori).

The segment count minimises T(s) below, with s segments of b = B / (4 s) bytes per tree: a
node's processor starts four messages a segment (4 h, h the start-up's hold) and its streams
carry a segment's four sends (4 b beta / streams, or 8 b beta over the streams its sends and
receives share); the pipeline takes its depth D in hops, each a hold, the latency and a
segment's bytes, then s - 1 more segments at the busier of processor and streams:

    T(s) = D (h + lambda + b beta) + (s - 1) max(4 h, 4 b beta / streams, 8 b beta / shared)

Declared gap: T is what the count is chosen by, not a prediction; the simulator runs 1.3 to
1.5 T. On torus:8x8 it takes 1.29, 2.24 and 3.51 ms for 16, 64 and 128 KB at the counts T
picks (4, 10, 20), T says 0.93, 1.65 and 2.61 (torus:4x4, 16 KB: 0.80 against 0.54): during
the fill a relay's memory streams carry its receives and its sends at once, which doubles
b beta per hop. The simulator's best counts are near T's (16 KB: 4; 64 KB: 10; 128 KB: 16
segments, 3.38 ms); T with the doubled fill follows the times within 4% but picks 6, 12 and
21 segments, up to 9% slower. Offered where a node streams several messages at once: on one port
(ideal, paragon, sp2) the eager phases measured no faster or slower (chain, binary and
two-tree broadcasts of 64 KB: the same on ideal:64, 14-69% slower on paragon:8x8 and sp2:64,
whose engines the early sends take from the receives).
"""

from __future__ import annotations

import dataclasses

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Generator, Machine
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.library.spanning import TREES, _down, depths, spanning_trees
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode

MAX_SEGMENTS = 256


def eager_tree_s(machine: Machine, nbytes: int, depth: int, count: int) -> float:
    """T(count) of the module docstring: `nbytes` per tree in `count` segments, down trees of
    `depth` hops."""
    port = machine.port
    seg_s = nbytes / count * port.s_per_byte
    data_s = TREES * seg_s / port.streams
    if port.engine_streams:
        data_s = max(data_s, 2 * TREES * seg_s / port.engine_streams)
    cycle_s = max(TREES * port.hold_s, data_s)
    return depth * (port.hold_s + port.latency_s + seg_s) + (count - 1) * cycle_s


def eager_segments(machine: Machine, nbytes: int, depth: int) -> int:
    """The segment count of least eager_tree_s, at most one byte a segment."""
    return min(range(1, max(1, min(nbytes, MAX_SEGMENTS)) + 1),
               key=lambda count: eager_tree_s(machine, nbytes, depth, count))


def eager_spanning_trees_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """A broadcast down the four spanning trees from the root in eager phases."""
    n = (machine.grid or (1, 1))[0]
    root = rooted_order(coll)[0]
    trees = spanning_trees(n, root)
    depth = max(depths(trees[0], root).values())
    total = coll.block_bytes or 0
    count = eager_segments(machine, max(1, total // TREES), depth)
    parts = [[(start + off, size) for off, size in segments(length, count)]
             for start, length in segments(total, TREES)]
    return eager_of(_with_copies(coll, _down(coll, trees, root, parts)))


def eager_of(phases: list[Phase]) -> list[Phase]:
    """The local phases made eager. A node still sends in phase k + 1 only what it holds once
    its receives of phase k are in, so the data moves as in the local schedule."""
    for phase in phases:
        if phase.sync != SyncMode.LOCAL:
            raise ValueError(f"eager phases replace local ones, not {phase.sync}")
    return [dataclasses.replace(p, sync=SyncMode.EAGER) for p in phases]


def eager(generator: Generator) -> Generator:
    """`generator`'s algorithm with its phases eager (eager_of)."""
    return lambda coll, machine: eager_of(generator(coll, machine))
