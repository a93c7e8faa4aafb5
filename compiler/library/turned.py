"""Turned copies: an algorithm run four times at once on a torus or mesh, each copy on a quarter
of the data and on the grid turned about the root, so that a node drives its four links at once.

Where a node streams several messages at once (iWarp's and the torus's four links,
PortModel.streams), one copy of a tree or a reduce-scatter keeps one of them busy. The grid's
symmetries that fix the root (node 0 for the group kinds) map the collective onto itself: on a
square grid the rotations by 0, 90, 180 and 270 degrees, which send a row's links to a column's
and east to west; otherwise the identity and the row, column and point reflections. Copy c runs
the algorithm's schedule for a collective of quarter c of each block (cut between elements for
a reduction: rooted.element_pieces), with every node, origin and final relabelled by turn c, so
copy c's messages take the turned links of copy 0's. Phase k of the turned schedule is phase k
of every copy: a node's messages of one phase, one per copy, leave on different links.

The copies' segments are chosen as if a start-up cost `copies` times as much (a node's
processor starts its copies' messages one after another), by a machine whose port says so.

`copies` = 2 (branch bcastpipe) runs two copies, the grid and its half turn, each on half of
the data: a phase then costs a node two start-ups on its processor instead of four, for half
the links' rate. Where a phase's start-ups outweigh its bytes (the cut scatter-doubling
broadcast of 16 KB on torus:8x8) two copies win; four where the bytes do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from itertools import zip_longest

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import GROUP, group_order, rooted_order
from phalanx.compiler.library.registry import Generator, Machine, Requirement
from phalanx.compiler.library.requirements import on_grid
from phalanx.compiler.library.rooted import element_pieces, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import WHOLE, Phase, SyncMode, Transfer

COPIES = 4
Turn = Callable[[int], int]


def turns(machine: Machine, centre: int, copies: int = COPIES) -> list[Turn]:
    """The `copies` (4 or 2) symmetries of the rows x cols torus that fix node `centre`
    (row-major): four as the module docstring says, or the identity and the half turn."""
    rows, cols = machine.grid or (1, machine.nnodes)
    r0, c0 = divmod(centre, cols)

    def node(r: int, c: int) -> int:
        return (r0 + r) % rows * cols + (c0 + c) % cols

    def rel(v: int) -> tuple[int, int]:
        r, c = divmod(v, cols)
        return r - r0, c - c0

    def identity(v: int) -> int:
        return node(*rel(v))

    def half_turn(v: int) -> int:
        return node(-rel(v)[0], -rel(v)[1])

    if copies == 2:
        return [identity, half_turn]
    if rows == cols:
        return [identity, lambda v: node(rel(v)[1], -rel(v)[0]),
                half_turn, lambda v: node(-rel(v)[1], rel(v)[0])]
    return [identity, lambda v: node(-rel(v)[0], rel(v)[1]),
            lambda v: node(rel(v)[0], -rel(v)[1]), half_turn]


def turn_tables(machine: Machine, centre: int, copies: int, nnodes: int) -> list[list[int]]:
    """Each turn of `turns` as a table, turn[v] for nodes v < `nnodes`: a schedule's millions
    of node ids are turned by indexing rather than by a call each."""
    return [[turn(v) for v in range(nnodes)] for turn in turns(machine, centre, copies)]


def centre_of(coll: Collective) -> int:
    """The node every turn fixes: the root, or a group kind's first member."""
    return group_order(coll)[0] if coll.kind in GROUP else rooted_order(coll)[0]


def quarters(coll: Collective, copies: int = COPIES) -> list[tuple[int, int]]:
    """(offset, bytes) of each copy's part of a block, cut between a reduction's elements."""
    if coll.kind in (Kind.REDUCE, Kind.ALLREDUCE):
        return element_pieces(coll, copies)
    return segments(coll.block_bytes or 0, copies)


def part(coll: Collective, nbytes: int) -> Collective:
    """The collective with every block (and every local block) of `nbytes` bytes."""
    return dataclasses.replace(coll, byte_matrix=tuple(tuple(nbytes if b else 0 for b in row)
                                                       for row in coll.byte_matrix))


def dearer(machine: Machine, copies: int = COPIES) -> Machine:
    """The machine as a copy's segments see it: start-ups `copies` times as long."""
    port = machine.port
    return dataclasses.replace(machine, port=dataclasses.replace(
        port, startup_s=port.startup_s * copies, latency_s=port.latency_s * copies))


def symmetric(coll: Collective, machine: Machine) -> str | None:
    """The turns map the collective onto itself (every block of one size, the centre fixed);
    the half turn is one of the four, so this holds for two copies too."""
    if coll.block_bytes is None:
        return "the blocks are not all of one size"
    pattern = coll.matrix > 0
    for table in turn_tables(machine, centre_of(coll), COPIES, coll.nprocs):
        moved = np.asarray(table)
        broken = np.argwhere(pattern != pattern[np.ix_(moved, moved)])  # row-major: the first p, q
        if len(broken):
            p, q = broken[0]
            return (f"turning the grid about node {centre_of(coll)} does not map the "
                    f"pattern onto itself (block {p}->{q})")
    return None


def several_streams(coll: Collective, machine: Machine) -> str | None:
    """The copies pay where a node streams several messages at once (PortModel.streams)."""
    if machine.port.streams < 2:
        return ("a node of this machine streams one message at a time, so four copies would "
                "only queue at its port")
    return None


def requirements(base: tuple[Requirement, ...], copies: int = COPIES) -> tuple[Requirement, ...]:
    """The turned algorithm's preconditions: every node of the grid, the symmetry, `copies`
    parts, and the base's own for each copy's part."""
    def enough_parts(coll: Collective, machine: Machine) -> str | None:
        """Each copy needs a part of at least one byte (one element of a reduction)."""
        if any(nbytes == 0 for _, nbytes in quarters(coll, copies)):
            return f"the {coll.block_bytes}-byte block cannot be cut in {copies} parts"
        return None

    def parts_ok(coll: Collective, machine: Machine) -> str | None:
        for requirement in base:  # what does not depend on the block's size
            reason = requirement(coll, machine)
            if reason is not None:
                return reason
        share = "a quarter" if copies == 4 else f"1/{copies}"
        for _, nbytes in quarters(coll, copies):
            for requirement in base:
                reason = requirement(part(coll, nbytes), machine)
                if reason is not None:
                    return f"{share} of the block: {reason}"
        return None
    return (on_grid, several_streams, symmetric, enough_parts, parts_ok)


def turned(base: Generator, alternate: bool = False, copies: int = COPIES) -> Generator:
    """The generator of `base` turned `copies` times (module docstring). `alternate`: a phase lists
    the copies' transfers in turn (the first of each copy, then the second of each...), so that
    a node sending several messages a phase starts them on different links one after another
    rather than queueing a copy's messages on one link while the others idle."""
    def phases(coll: Collective, machine: Machine) -> list[Phase]:
        runs: list[list[list[Transfer]]] = []
        slower = dearer(machine, copies)
        for turn, (start, nbytes) in zip(turn_tables(machine, centre_of(coll), copies, machine.nnodes),
                                         quarters(coll, copies)):
            copy = []
            for phase in base(part(coll, nbytes), slower):
                if phase.sync is not SyncMode.LOCAL:  # a barrier would hold the other copies too
                    raise ValueError(f"turned copies need local phases, not {phase.sync}")
                copy.append([Transfer(turn[t.src], turn[t.dst], t.nbytes, turn[t.origin],
                                      turn[t.final], t.message,
                                      start + (0 if t.offset == WHOLE else t.offset))
                             for t in phase.sends])
            runs.append(copy)
        merged: list[list[Transfer]] = []
        for k in range(max(len(copy) for copy in runs)):
            lists = [copy[k] for copy in runs if k < len(copy)]
            merged.append([t for ts in zip_longest(*lists) for t in ts if t is not None]
                          if alternate else [t for ts in lists for t in ts])
        return [Phase.of(p) for p in merged]
    return phases
