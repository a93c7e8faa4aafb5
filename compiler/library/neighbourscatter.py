"""`neighbour-scatter`: the root's blocks to its four grid neighbours in chunks, each neighbour
sending its region's blocks straight on, and `neighbour-gather`, the same backwards (issue 27,
branch tbc).

On the tori a scatter's root has four links and a memory for four streams, but its processor
starts a message every 20 us and a 2 KB block takes 51 us on a link: sent straight, the 63
blocks cost 63 start-ups, and most leave on the two links of the first dimension of their
routes (`turned-dim-ordered` spreads them by quarters of blocks: 1.434 ms at 2 KB on 8x8). Here
every other node belongs to the region of its nearest neighbour of the root (ties to the
smaller region: 16, 16, 16 and 15 nodes on 8x8), the root sends each neighbour its region's
blocks in c chunks, one message a chunk, the four of a chunk on the four links at once, and in
the next phase the neighbour sends the chunk's blocks straight to their owners (farthest from
the root first: 0.972 ms at 2 KB on 8x8 against 1.036 nearest first, 16 KB 7.046 against
7.437) while the root's next chunk streams in. Every phase is eager (eager.py): a node
goes on once its receives are in, so the root starts chunk k + 1 while chunk k streams.

The chunk count minimises, with n the largest region's blocks, b beta a block's time on a
link, h the start-up's hold and alpha the start-up:

    T(c) = alpha + c max(4 h, ceil(n / c) b beta) + ceil(n / c) h + alpha + b beta,

the root's cycle (four start-ups, or a chunk on each link, whichever is longer) c times, then
the last chunk's neighbour starting its messages and the last block. Declared gap: T is what
the count is chosen by; on torus:8x8 the simulator takes 1.00-1.07 T (2 KB: c = 8, 0.972 ms
against T's 0.951; 16 KB: c = 16, 7.046 against 7.024; 128 B: c = 2, 0.389 against 0.364).
Offered on tori of at least 3 x 3 (four distinct neighbours) whose nodes stream several
messages at once.

`neighbour-gather` runs it backwards: in phase k the nodes of each region's chunk k send their
blocks straight to their neighbour of the root (nearest to the root first, the neighbour's own
block in chunk 0), and in phase k + 1 the neighbour sends the chunk on to the root as one
message. A node sends once, so it sends at once; the chunks only cut the neighbours' messages,
each a start-up and a chunk on a root link:

    T(c) = 2 alpha + ceil(n / c) b beta + c max(h, ceil(n / c) b beta),

the first chunk into its neighbour, then c cycles. On torus:8x8: 128 B c = 2, 0.111 ms (c = 3:
0.106; `turned-dim-ordered` 0.114), 2 KB c = 16, 0.862 ms (0.964), 16 KB c = 16, 6.596 ms.
"""

from __future__ import annotations

import math

from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


def four_neighbours(coll: Collective, machine: Machine) -> str | None:
    """The root needs four distinct neighbours on the grid's rings (precondition)."""
    assert machine.grid is not None
    rows, cols = machine.grid
    if rows < 3 or cols < 3:
        return f"the root needs four distinct neighbours, but a {rows}x{cols} grid's rings are shorter than 3"
    return None


def _hops(a: int, b: int, grid: tuple[int, int]) -> int:
    """Links between nodes a and b on the torus's shortest way."""
    rows, cols = grid
    dx, dy = abs(a % cols - b % cols), abs(a // cols - b // cols)
    return min(dx, cols - dx) + min(dy, rows - dy)


def regions(coll: Collective, machine: Machine) -> dict[int, list[int]]:
    """Each of the root's four neighbours (east, south, west, north) with the receivers it
    serves, itself first, then farthest from the root first: every receiver goes to a nearest
    neighbour, those with fewer choices first, a tie to the neighbour with fewer so far."""
    assert machine.grid is not None
    rows, cols = machine.grid
    order = rooted_order(coll)
    root = order[0]
    x, y = root % cols, root // cols
    neighbours = [y * cols + (x + 1) % cols, (y + 1) % rows * cols + x,
                  y * cols + (x - 1) % cols, (y - 1) % rows * cols + x]
    served: dict[int, list[int]] = {n: [] for n in neighbours}
    nearest = {}
    for v in order[1:]:
        least = min(_hops(n, v, machine.grid) for n in neighbours)
        nearest[v] = [n for n in neighbours if _hops(n, v, machine.grid) == least]
    for v in sorted(nearest, key=lambda v: (len(nearest[v]), v)):
        served[min(nearest[v], key=lambda n: (len(served[n]), neighbours.index(n)))].append(v)
    for n, members in served.items():
        rest = sorted((v for v in members if v != n), key=lambda v: (-_hops(root, v, machine.grid), v))
        served[n] = ([n] if n in members else []) + rest
    return served


def chunk_count(blocks: int, block_bytes: float, port: PortModel) -> int:
    """The c of least T(c) (module docstring) for a region of `blocks` blocks."""
    hold, alpha, block_s = port.hold_s, port.startup_s, block_bytes * port.s_per_byte

    def time_s(c: int) -> float:
        chunk = math.ceil(blocks / c)
        return alpha + c * max(4 * hold, chunk * block_s) + chunk * hold + alpha + block_s

    return min(range(1, max(blocks, 1) + 1), key=time_s)


def gather_chunk_count(blocks: int, block_bytes: float, port: PortModel) -> int:
    """neighbour-gather's c of least T(c) (module docstring) for a region of `blocks` blocks."""
    hold, alpha, block_s = port.hold_s, port.startup_s, block_bytes * port.s_per_byte

    def time_s(c: int) -> float:
        chunk_s = math.ceil(blocks / c) * block_s
        return 2 * alpha + chunk_s + c * max(hold, chunk_s)

    return min(range(1, max(blocks, 1) + 1), key=time_s)


def neighbour_gather_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Local phases of the gather (module docstring): in phase k each region's chunk k to its
    neighbour, nearest to the root first, and in phase k + 1 the neighbour's chunk to the root."""
    m = coll.byte_matrix
    root = rooted_order(coll)[0]
    served = {n: members[:1] + members[:0:-1] for n, members in regions(coll, machine).items()}
    block = max((m[v][root] for members in served.values() for v in members), default=0)
    chunks = gather_chunk_count(max(len(members) for members in served.values()), block, machine.port)
    phases: list[list[Transfer]] = [[] for _ in range(chunks + 1)]
    for n, members in served.items():
        for k in range(chunks):
            chunk = members[k * len(members) // chunks:(k + 1) * len(members) // chunks]
            phases[k] += [Transfer(v, n, m[v][root], v, root) for v in chunk if v != n and m[v][root]]
            phases[k + 1] += [Transfer(n, root, m[v][root], v, root, COMBINED) for v in chunk if m[v][root]]
    return _with_copies(coll, phases)


def neighbour_scatter_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Local phases of the chunks (module docstring): in phase k the root sends each neighbour
    its chunk k as one message, and each neighbour sends chunk k - 1's blocks to their owners."""
    m = coll.byte_matrix
    root = rooted_order(coll)[0]
    served = regions(coll, machine)
    block = max((m[root][v] for members in served.values() for v in members), default=0)
    chunks = chunk_count(max(len(members) for members in served.values()), block, machine.port)
    phases: list[list[Transfer]] = [[] for _ in range(chunks + 1)]
    for n, members in served.items():
        for k in range(chunks):
            chunk = members[k * len(members) // chunks:(k + 1) * len(members) // chunks]
            phases[k] += [Transfer(root, n, m[root][v], root, v, COMBINED) for v in chunk if m[root][v]]
            phases[k + 1] += [Transfer(n, v, m[root][v], root, v) for v in chunk if v != n and m[root][v]]
    return _with_copies(coll, phases)
