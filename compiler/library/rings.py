"""Allgather by bidirectional rings on a torus or mesh, every link busy in both directions.

Each part is cut in 8 pieces (rooted.segments). Pieces 0-3 (half X) go round the rows, then
round the columns carrying whole rows; pieces 4-7 (half Y) go round the columns first, then
the rows: the two halves use the row links and the column links at the same time, and a node
drives its four links at once (a torus node's streams, registry.PortModel).

Round a ring of L nodes the bundle a node holds goes both ways at once: in step k (1 <= k <=
floor(L / 2)) each node sends east the bundle of the node k - 1 places west of it and west the
bundle of the node k - 1 places east, so after floor(L / 2) steps every bundle is everywhere; on
an even L the node opposite gets half of the bundle from each side in the last step (the pieces
split by position, so each byte still arrives once). Each link carries (L - 1) / 2 bundles, the
least a ring allows, in floor(L / 2) start-ups.
"""

from __future__ import annotations

from phalanx.compiler.library.members import contributors
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

PIECES = 8  # per part: 4 per half, so that a half can be halved twice (once per stage)
Item = tuple[int, int]  # (origin, piece)


def _halves(bundle: frozenset[Item], stage: int) -> tuple[frozenset[Item], frozenset[Item]]:
    """A bundle in two halves by piece: in the first stage pieces {0, 1} of a half from {2, 3}
    (4-7 likewise), in the second by the piece's parity, so both stages halve evenly."""
    def first(item: Item) -> bool:
        return item[1] % 4 < 2 if stage == 0 else item[1] % 2 == 0
    return (frozenset(i for i in bundle if first(i)), frozenset(i for i in bundle if not first(i)))


def ring_steps(line: list[int], bundles: dict[int, frozenset[Item]],
               stage: int) -> list[list[tuple[int, int, frozenset[Item]]]]:
    """(sender, receiver, items) of each step round the ring `line`, both ways at once."""
    n = len(line)
    steps = []
    for k in range(1, n // 2 + 1):
        sends = []
        for i, v in enumerate(line):
            east, west = bundles[line[(i - k + 1) % n]], bundles[line[(i + k - 1) % n]]
            if 2 * k == n:  # the node opposite: half from each side
                east, west = _halves(east, stage)[0], _halves(west, stage)[1]
            sends += [(v, line[(i + 1) % n], east), (v, line[(i - 1) % n], west)]
        steps.append(sends)
    return steps


def _lines(machine: Machine) -> tuple[list[list[int]], list[list[int]]]:
    rows, cols = machine.grid or (1, machine.nnodes)
    return ([[r * cols + c for c in range(cols)] for r in range(rows)],
            [[r * cols + c for r in range(rows)] for c in range(cols)])


def bidirectional_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Half X rows then columns, half Y columns then rows, each stage by bidirectional rings."""
    rows, cols = _lines(machine)
    own = set(contributors(coll))
    pieces = segments(coll.block_bytes or 0, PIECES)
    holds: dict[int, set[Item]] = {v: set() for v in range(coll.nprocs)}
    half_x = {v: frozenset((v, j) for j in range(4)) if v in own else frozenset()
              for v in range(coll.nprocs)}
    half_y = {v: frozenset((v, j) for j in range(4, 8)) if v in own else frozenset()
              for v in range(coll.nprocs)}
    phases: list[list[Transfer]] = []
    for stage, (lines_x, lines_y) in enumerate(((rows, cols), (cols, rows))):
        steps: list[list[tuple[int, int, frozenset[Item]]]] = []
        for lines, bundles in ((lines_x, half_x), (lines_y, half_y)):
            for line in lines:
                for k, sends in enumerate(ring_steps(line, bundles, stage)):
                    steps += [[] for _ in range(k + 1 - len(steps))]
                    steps[k] += sends
        for sends in steps:
            phases.append([Transfer(src, dst, pieces[j][1], o, dst, COMBINED, pieces[j][0])
                           for src, dst, items in sends for o, j in sorted(items)])
            for _, dst, items in sends:
                holds[dst] |= items
        half_x = {v: frozenset(i for i in holds[v] | half_x[v] if i[1] < 4) for v in holds}
        half_y = {v: frozenset(i for i in holds[v] | half_y[v] if i[1] >= 4) for v in holds}
    return _with_copies(coll, phases)
