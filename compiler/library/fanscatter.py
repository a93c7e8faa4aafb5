"""`fan-scatter`: a scatter down the tree whose fan-outs a closed form picks, ranks along a
Hilbert curve (issue 27, branch reducebound).

A holder of n blocks (its own and its subtree's) starts its messages one after another, `hold_s`
apart, largest subtree first; child j's message arrives `startup_s + s_j b beta` after it
started, and the child then scatters its s_j blocks the same way. The time a subtree of n
takes is

    f(1) = 0,  f(n) = min over s_1 >= ... of  max_j ((j - 1) hold_s + startup_s + s_j b beta + f(s_j)),

solved by `fan_out` over the first child's size (the rest is a holder of n - s_1 blocks that
starts `hold_s` later). On torus:8x8 at 128 B (20 us start-ups, 3.2 us a block) the root's
fan-out is 17, 14, 11, 8, 5, 4, 2, 1, 1: the first messages carry most while the processor
starts the others, where a binomial's 32-block first message streams 102 us before its subtree
starts. Subtrees are runs of consecutive ranks along a Hilbert curve of the grid turned to start
at the root (hilbert.py), so that a subtree's routes stay in a compact region; a child is the
first rank of its run, the runs follow their parent's rank in the order it sends, the largest
nearest: 0.215 ms on torus:8x8 at 128 B, where the largest farthest takes 0.224.

Closed form `fan_out(P)[0]` on a machine where messages do not share links or memory streams;
on the tori the routes that still share a link and a node's streams beyond its memory's four
are the declared gap (`PORT_MODEL_GAP`).
"""

from __future__ import annotations

from functools import cache

from phalanx.compiler.library.hilbert import hilbert_point
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


def fan_out(nodes: int, block_bytes: float, port: PortModel) -> tuple[float, tuple[int, ...]]:
    """(f(nodes) in seconds, the subtree sizes of the holder's children in the order it sends)."""
    times = (port.hold_s, port.startup_s, block_bytes * port.s_per_byte)
    for n in range(1, nodes):  # the smaller holders first, so that _best recurses one level
        _best(n, *times)
    return _best(nodes, *times)


@cache
def _best(n: int, hold_s: float, startup_s: float, block_s: float) -> tuple[float, tuple[int, ...]]:
    """fan_out's f(n) and fan-out (module docstring), shared by every holder of a schedule."""
    if n == 1:
        return 0.0, ()
    choice: tuple[float, tuple[int, ...]] = (float("inf"), ())
    for first in range(1, n):
        first_s = startup_s + first * block_s + _best(first, hold_s, startup_s, block_s)[0]
        rest_s, rest = _best(n - first, hold_s, startup_s, block_s)
        time_s = max(first_s, hold_s + rest_s) if rest else first_s
        if time_s < choice[0]:
            choice = (time_s, (first,) + rest)
    return choice


def several_streams(coll: Collective, machine: Machine) -> str | None:
    """The fan-outs assume a holder's messages stream at once (PortModel.streams, precondition)."""
    if machine.port.streams < 2:
        return ("a node of this machine streams one message at a time, so a holder's messages "
                "would queue at its port instead of streaming while it starts the next")
    return None


def curve_order(coll: Collective, machine: Machine) -> list[int]:
    """The members in rank order, the root first: along the Hilbert curve of the square 2^k grid
    (precondition hilbert.square_power_of_two_grid) turned to start at the root."""
    assert machine.grid is not None
    order = rooted_order(coll)
    members = set(order)
    side = machine.grid[1]
    line = [row * side + col for row, col in (hilbert_point(d, side) for d in range(side * side))]
    start = line.index(order[0])
    return [v for v in line[start:] + line[:start] if v in members]


def fan_scatter_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The root's blocks down `fan_out`'s tree over `curve_order` (module docstring)."""
    m = coll.byte_matrix
    ranks = curve_order(coll, machine)
    root = ranks[0]
    block = max((m[root][d] for d in ranks[1:]), default=0)
    phases: list[list[Transfer]] = []

    def scatter(first: int, n: int, depth: int) -> None:
        """Rank `first` holds the blocks of ranks first .. first + n - 1 at `depth`."""
        child = first + 1
        for size in fan_out(n, block, machine.port)[1]:
            while len(phases) <= depth:
                phases.append([])
            phases[depth] += [Transfer(ranks[first], ranks[child], m[root][ranks[x]], root,
                                       ranks[x], COMBINED)
                              for x in range(child, child + size) if m[root][ranks[x]]]
            scatter(child, size, depth + 1)
            child += size

    scatter(0, len(ranks), 0)
    return _with_copies(coll, phases)
