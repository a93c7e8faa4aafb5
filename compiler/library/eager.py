"""Pipelined relays in eager phases: a node forwards its next segment while the previous ones
still stream (compiler/schedule.py SyncMode.EAGER, issue 27).

In a `local` phase a node goes on only when its sends are delivered, so a pipelined tree pays
per segment its start-ups and then the segment's streaming, one after the other
(spanning.tree_segments). In an `eager` phase it goes on once its receives of the phase are in
and its sends are posted: the next segment's start-ups run on its processor while the
previous segment's bytes stream on its links.

`eager-spanning-trees`: four edge-disjoint spanning trees of a square torus, one tree turned
four times about the root (Johnsson and Ho 1989), the shallow ones of shallowtrees.py (depth 10
on 8x8, where spanning.py's local `spanning-trees` keep theirs of depth 2n - 1 = 15), the same
transfers in the same phases as spanning.py (segment j into a node of depth d in phase
j + d - 1), every phase eager, segments from `eager_segments`, a node's messages of a phase
started tallest subtree first (`tallest_first`). `eager(generator)`: any
algorithm's local phases made eager (the cut scatter-doubling broadcasts on the tori).

The segment count minimises T(s) below, with s segments of b = B / (4 s) bytes per tree. A node
enters its next phase once all four of the phase's receives are in, and its four parents start
their four messages one after another (4 h, h the start-up's hold), so a phase lasts at least
4 h, the latency and a segment's bytes on a link, b beta; a node's streams carry its four sends
(4 b beta / streams, or with its four receives 8 b beta over the streams they share). Through
the depth D and the s - 1 further segments:

    T(s) = (s + D - 1) max(4 h + lambda + b beta, 4 b beta / streams, 8 b beta / shared)

Declared gap: T is what the count is chosen by, not a prediction; the simulator runs 0.75 to
1.5 T. On torus:8x8 (D = 10) it takes 1.09, 2.05, 3.10 and 20.82 ms for 16 KB, 64 KB, 128 KB
and 1 MB at the counts T picks (3, 7, 11, 81), T says 1.37, 2.22, 3.09 and 14.56 (torus:4x4,
D = 5, 16 KB: 0.63 against 0.79; 0.71 before the sends went tallest first): T counts the fill's
phases as long as the steady ones, and at 1 MB leaves out that a relay's receives and sends
meet on its streams out of step. With the trees of
depth 15 and the count of T's earlier form (the fill's hops at h + lambda + b beta each, the
steady phases at the busier of 4 h and the streams) the simulator took 3.51 ms at 128 KB
(20 segments); the same trees at T's count now (12) 3.43 ms, the depth-10 trees 3.11 ms. Offered
where a node streams several messages at once: on one port (ideal, paragon, sp2) the eager
phases measured no faster or slower (chain, binary and two-tree broadcasts of 64 KB: the same
on ideal:64, 14-69% slower on paragon:8x8 and sp2:64, whose engines the early sends take from
the receives).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Generator, Machine
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.library.shallowtrees import shallow_trees
from phalanx.compiler.library.spanning import TREES, Edge, _down, depths
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, SyncMode, Transfer

MAX_SEGMENTS = 256


def eager_tree_s(machine: Machine, nbytes: int, depth: int, count: int) -> float:
    """T(count) of the module docstring: `nbytes` per tree in `count` segments, down trees of
    `depth` hops."""
    port = machine.port
    seg_s = nbytes / count * port.s_per_byte
    phase_s = TREES * port.hold_s + port.latency_s + seg_s
    data_s = TREES * seg_s / port.streams
    if port.engine_streams:
        data_s = max(data_s, 2 * TREES * seg_s / port.engine_streams)
    return (count + depth - 1) * max(phase_s, data_s)


def eager_segments(machine: Machine, nbytes: int, depth: int) -> int:
    """The segment count of least eager_tree_s, at most one byte a segment."""
    return min(range(1, max(1, min(nbytes, MAX_SEGMENTS)) + 1),
               key=lambda count: eager_tree_s(machine, nbytes, depth, count))


def eager_spanning_trees_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """A broadcast down the four spanning trees from the root in eager phases."""
    n = (machine.grid or (1, 1))[0]
    root = rooted_order(coll)[0]
    trees = shallow_trees(n, root)
    depth = max(depths(trees[0], root).values())
    total = coll.block_bytes or 0
    count = eager_segments(machine, max(1, total // TREES), depth)
    quarters = segments(total, TREES)
    parts = [[(start + off, size) for off, size in segments(length, count)]
             for start, length in quarters]
    tall = [heights(tree, root) for tree in trees]
    phases = [tallest_first(sends, tall, quarters) for sends in _down(coll, trees, root, parts)]
    return eager_of(_with_copies(coll, phases))


def heights(tree: list[Edge], root: int) -> dict[int, int]:
    """Each node's height in `tree`: the hops from it down to its deepest descendant."""
    children: dict[int, list[int]] = {}
    for a, b in tree:
        children.setdefault(a, []).append(b)
    depth = depths(tree, root)
    out: dict[int, int] = {}
    for v in sorted(depth, key=lambda v: -depth[v]):  # children before their parents
        out[v] = max((out[c] + 1 for c in children.get(v, [])), default=0)
    return out


def tallest_first(sends: list[Transfer], tall: list[dict[int, int]],
                  quarters: list[tuple[int, int]]) -> list[Transfer]:
    """A phase's transfers with each node's messages in the order its processor should start
    them: to the child with the most levels below it first (`tall`: the heights in each tree;
    the tree from the transfer's quarter), so the segment with the longest way still to go
    leaves first; ties keep the trees' order. Measured on torus:8x8 against the trees' order:
    128 KB 3.111 -> 3.097 ms, 1 MB 20.97 -> 20.82, 64 KB 2.128 -> 2.051."""
    def tree_of(t: Transfer) -> int:
        return next(i for i, (start, length) in enumerate(quarters)
                    if start <= t.offset < start + length)
    return sorted(sends, key=lambda t: (t.src, -tall[tree_of(t)][t.dst]))


FORWARD_GAP = 2  # phases from a block's send to its forwarding, with due_next's receives


def due_next(sends: Sequence[Sequence[Transfer]]) -> list[tuple[Transfer, ...]]:
    """Per eager phase, the receives due in it: the phase before's sends, and the last phase's
    own (an eager phase's sends are received in the next, so a node forwards a block
    FORWARD_GAP phases after the one that brings it)."""
    last = len(sends) - 1
    return [tuple(sends[k - 1] if k else ()) + (tuple(sent) if k == last else ())
            for k, sent in enumerate(sends)]


def eager_due_next(sends: Sequence[Sequence[Transfer]]) -> list[Phase]:
    """Eager phases of the sends, each phase's received in the next (the last one's in it)."""
    return [Phase(tuple(sent), due, SyncMode.EAGER) for sent, due in zip(sends, due_next(sends))]


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
