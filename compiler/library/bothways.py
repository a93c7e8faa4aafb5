"""Shifts by one along a torus's rings, each block split between the short way and the long way.

A shift by one along a ring of n nodes sends every block one step, one way. Under any routing a
byte crosses one link the short way or n - 1 the long way (a move along the other dimension
moves nothing along the ring), so a fraction f of each block sent the long way loads each
short-way link with (1 - f) b and each long-way link with (n - 1) f b: at best f = 1/n and
(n - 1)/n of a block on every link (docs/bounds.md, "Weighted links": that is the bound), where
`colouring`'s one phase of direct messages puts a whole block on every short-way link.

`both-ways` cuts each block into n parts. In phase k (k = 1 .. n - 1) every node sends one part
of its own block straight to its destination, and one long-way part one hop on: its own in
phase 1, in phase k the part it received in phase k - 1. The long-way parts walk the
destination's ring (the first hop also takes the step along the other dimension, if any), so
every phase puts one part on each link of the ring both ways, every leg is one hop (or that
hop and the other dimension's step) and no two legs of a phase share a link: each phase is a
start-up per message and a part's wire time, n - 1 phases of local steps (a node waits only
for its neighbour's part):

    T = (n - 1) (2 h + lat + ceil(b / n) beta),  against the bound  h + (n - 1)/n b beta,

which wins where a part's wire time outweighs the n - 1 extra start-ups (torus:8x8 from about
128 KB). It runs where every block moves one step along one dimension's ring of n >= 3 nodes
(the same way for all), at most one along the other, and each node sends and receives at most
one block (a shift of a row-major array: the last of a row moves to the next row).
"""

from __future__ import annotations

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.requirements import whole_grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def _blocks(coll: Collective) -> list[tuple[int, int, int]]:
    """(source, destination, bytes) of every block between two nodes."""
    m, n = coll.byte_matrix, coll.nprocs
    return [(p, q, int(m[p][q])) for p in range(n) for q in range(n) if p != q and m[p][q]]


def _ring(machine: Machine, blocks: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """(dimension, step) of a shift by one along a ring (0: along a row, x; 1: along a column,
    y; step +1 or -1) that every block makes, each at most one step along the other dimension;
    None if there is none."""
    assert machine.grid is not None
    rows, cols = machine.grid
    sizes = (cols, rows)
    for dimension in (0, 1):
        size, other_size = sizes[dimension], sizes[1 - dimension]
        for step in (1, -1):
            if size >= 3 and all(
                    (_coord(q, dimension, cols) - _coord(p, dimension, cols) - step) % size == 0
                    and (_coord(q, 1 - dimension, cols) - _coord(p, 1 - dimension, cols)) % other_size
                    in (0, 1, other_size - 1)
                    for p, q, _ in blocks):
                return dimension, step
    return None


def _coord(node: int, dimension: int, cols: int) -> int:
    return node % cols if dimension == 0 else node // cols


def _node(x: int, y: int, machine: Machine) -> int:
    assert machine.grid is not None
    rows, cols = machine.grid
    return (y % rows) * cols + x % cols


def ring_shift(coll: Collective, machine: Machine) -> str | None:
    """Precondition: a torus (its rows and columns rings), the collective on all its nodes, one
    block out of and into each node at most, every block one step along one ring (n >= 3), the
    same way, and at most one along the other dimension, blocks of at least n bytes."""
    if (why := whole_grid(coll, machine)) is not None:
        return why
    assert machine.grid is not None
    if machine.route is None:
        return "the machine names no routes to tell a torus from a mesh"
    rows, cols = machine.grid
    if (cols > 2 and len(machine.route(0, cols - 1)) != 1) or \
            (rows > 2 and len(machine.route(0, (rows - 1) * cols)) != 1):
        return "its rows and columns are lines, not rings: there is no long way round"
    blocks = _blocks(coll)
    if not blocks:
        return "no block crosses the network"
    senders = [p for p, _, _ in blocks]
    receivers = [q for _, q, _ in blocks]
    if len(set(senders)) != len(senders) or len(set(receivers)) != len(receivers):
        return "a node sends or receives more than one block"
    found = _ring(machine, blocks)
    if found is None:
        return ("not every block moves one step along one ring of 3 or more nodes, the same way, "
                "and at most one along the other dimension")
    size = (cols, rows)[found[0]]
    least = min(nbytes for _, _, nbytes in blocks)
    if least < size:
        return f"a {least}-byte block is smaller than its {size} parts (one per node of the ring)"
    return None


def both_ways_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """n - 1 local phases: in phase k a node sends part k - 1 of its block direct and a long-way
    part one hop on along the destination's ring (ring_shift holds)."""
    found = _ring(machine, _blocks(coll))
    assert machine.grid is not None and found is not None
    dimension, step = found
    rows, cols = machine.grid
    size = (cols, rows)[dimension]
    out: list[list[Transfer]] = [[] for _ in range(size - 1)]
    out[0] += local_copies(coll)
    for p, q, nbytes in _blocks(coll):
        cuts = [i * nbytes // size for i in range(size + 1)]
        long_offset, long_bytes = cuts[size - 1], nbytes - cuts[size - 1]
        # The long way's nodes along q's ring: one, two, ... steps against `step` from p's place
        # on it, the last q itself.
        px, py = p % cols, p // cols
        qx, qy = q % cols, q // cols
        hops = []
        for k in range(1, size):
            if dimension == 0:
                hops.append(_node(px - k * step, qy, machine))
            else:
                hops.append(_node(qx, py - k * step, machine))
        assert hops[-1] == q
        here = p
        for k, there in enumerate(hops):
            out[k].append(Transfer(here, there, long_bytes, p, q, 0, long_offset))
            out[k].append(Transfer(p, q, cuts[k + 1] - cuts[k], p, q, 0, cuts[k]))
            here = there
    return [Phase.of(phase) for phase in out]
