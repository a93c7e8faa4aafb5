"""`pipelined-2dmesh`: the two-dimensional all-to-all (each block along its column to its final
row, then along that row to its final node: MPICH's and SimGrid's `2dmesh`) on a torus of 8 x 8,
every ring distance -3..4 in one message, one message a node an eager phase (issue 27,
docs/efficiency.md "the 2-D all-to-all in a solver's order").

Each node sends 14 messages: its 7 moves along its column (y by +-1, +-2, +-3 and 4) and its 7
along its row. Node (x, y) is of class (x + y) mod 4 and sends its moves in that class's order of
ORDERS, one a phase (`--`: none in that phase). A block at ring distance (dx, dy) goes y then x
where its second move comes at least two phases after its first, else x then y: an eager
phase's sends are received in the next phase (compiler/schedule.py SyncMode.EAGER), so a block
is never forwarded in the phase after the one that brings it. In each phase no directed wire
carries two worms: the order was found by a constraint solver (bench/torus_a2a_orders.py, which
checks this for the torus's routes, topology.ring_step; the 4-hop worms go forward from
coordinates 0 and 2 mod 4) and is stored here; tests/compiler/library/test_pipelined2d.py checks
both again on the targets' own routes (`check_orders`: every class sends each move once).

Packs. A message's blocks that are still at their origin are copied into the message's buffer
first (a local copy at the machine's copy rate, in the eager phase before the message's, after
that phase's message: the tori's copy holds the processor while the worm streams; the first
message's in the local phase before the eager ones),
as the Bruck family packs them (index.py), unless the message carries only such blocks and they
are one run of the origin's array: blocks for consecutive final ranks where the collective's
layout lays an origin's blocks out in rank order (Collective.sends_in_rank_order, as an
all-to-all of BLOCK rows into BLOCK columns does). A received block is not copied again (the
deposit model, checkerboard.py). In the order below every block with dy != 0 goes y first, so a
node's column messages are its 7 rows of 8 blocks, one run each where the layout allows, and
only the 7 blocks of its own row are packed (into its row messages).

Declared gap: no closed form. On torus:8x8 and iwarp:8x8 an all-to-all of 128 B blocks takes
about 16 phases of one 1 KB worm a node: about 27 us a phase (a 20 us start-up overlapped with
the previous worm's 25.6 us on the link) after the 11.2 us of packs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from phalanx.compiler.library.checkerboard import ring_distances, torus_rings
from phalanx.compiler.library.eager import due_next
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer

RING = 8
Move = tuple[int, int]  # (dimension: 0 along the row, x; 1 along the column, y; signed hops)
Klass = Callable[[int, int], Hashable]  # a node's class from its coordinates (x, y)
SHIFTS = (1, 2, 3, -1, -2, -3, 4)  # every ring distance -3..4, its fewest hops
MOVES = tuple((dim, shift) for dim in (0, 1) for shift in SHIFTS)


def diagonal(x: int, y: int) -> int:
    """The order's classes: (x + y) mod 4 (4 is the period of the 4-hop worms' direction)."""
    return (x + y) % 4


@dataclass(frozen=True)
class Orders:
    """Each class's move in each eager phase (None: no move), and the classes of the nodes."""

    moves: dict[Hashable, tuple[Move | None, ...]]
    klass: Klass

    def slot(self, node: int, move: Move) -> int:
        return self.moves[self.klass(node % RING, node // RING)].index(move)

    @property
    def phases(self) -> int:
        return len(next(iter(self.moves.values())))


def parse_orders(rows: tuple[str, ...]) -> dict[int, tuple[Move | None, ...]]:
    """Order rows as moves, class by class: `x+3` is (0, 3), `y-1` (1, -1), `--` no move."""
    return {c: tuple(None if word == "--" else ("xy".index(word[0]), int(word[1:]))
                     for word in row.split()) for c, row in enumerate(rows)}


# Per class (x + y) mod 4, its move in each eager phase: `python bench/torus_a2a_orders.py 16
# diagonal 60` (OR-Tools 9.15, seed 1), which prints these rows.
ORDERS = Orders(parse_orders((
    "y+3 --  y+2 y+1 y-3 y-1 y-2 y+4 --  x+1 x+4 x+2 x-2 x-3 x+3 x-1",
    "y-3 y+4 y-2 y+3 y-1 y+1 y+2 --  x+4 x+3 --  x-2 x+2 x-1 x-3 x+1",
    "y-1 y+4 y+2 y-3 y+1 y+3 y-2 --  x+4 x-3 --  x+2 x-2 x+1 x-1 x+3",
    "y+1 --  y-2 y-1 y+3 y-3 y+2 y+4 --  x-1 x+4 x-2 x+2 x+3 x+1 x-3",
)), diagonal)


def moved(node: int, move: Move) -> int:
    """The node a move from `node` reaches."""
    x, y = node % RING, node // RING
    dim, shift = move
    if dim == 0:
        return y * RING + (x + shift) % RING
    return (y + shift) % RING * RING + x


def legs(orders: Orders, origin: int, final: int) -> list[tuple[int, Move, int]]:
    """Block (origin, final)'s moves as (holder, move, phase): y then x where the second move
    comes two phases after the first, else x then y (a ValueError where neither does)."""
    dx = int(ring_distances(origin % RING, final % RING, RING, signed=True))  # -3..4
    dy = int(ring_distances(origin // RING, final // RING, RING, signed=True))
    if dx == 0 or dy == 0:
        move = (1, dy) if dx == 0 else (0, dx)
        return [(origin, move, orders.slot(origin, move))]
    for first, second in (((1, dy), (0, dx)), ((0, dx), (1, dy))):
        relay = moved(origin, first)
        one, two = orders.slot(origin, first), orders.slot(relay, second)
        if two >= one + 2:
            return [(origin, first, one), (relay, second, two)]
    raise ValueError(f"block {origin}->{final} moves in two consecutive phases either way")


def check_orders(moves: dict[Hashable, tuple[Move | None, ...]]) -> str | None:
    """What is wrong with an order table (every class each move once, one phase count), or None."""
    count = len(next(iter(moves.values())))
    for c, row in moves.items():
        if len(row) != count:
            return f"class {c} has {len(row)} phases, another {count}"
        if sorted(m for m in row if m is not None) != sorted(MOVES):
            return f"class {c} does not send each of the 14 moves once"
    return None


def torus_8x8(coll: Collective, machine: Machine) -> str | None:
    """Rings of 8 both ways (the order is the one of a torus of 8 x 8), every node taking part."""
    if (why := torus_rings(coll, machine)) is not None:
        return why
    if machine.grid != (RING, RING):
        rows, cols = machine.grid
        return f"its order is one of an 8x8 torus, not {rows}x{cols}"
    return None


def _packed(coll: Collective, message: list[Transfer]) -> list[Transfer]:
    """The blocks of a message that its sender packs (module docstring)."""
    own = [t for t in message if t.src == t.origin]
    finals = sorted(t.final for t in own)
    one_run = coll.sends_in_rank_order and len(own) == len(message) and \
        finals == list(range(finals[0], finals[0] + len(finals)))
    return [] if one_run else own


def pipelined_2dmesh_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return eager_phases(coll, ORDERS)


def eager_phases(coll: Collective, orders: Orders) -> list[Phase]:
    """The local phase (each node keeps its own block and packs its first message), then one
    eager phase per phase of the orders, each phase's sends received in the next (the last
    one's in it) and each followed by the packs of the sender's next message."""
    m, nodes = coll.matrix, coll.nprocs
    messages: dict[tuple[int, int], list[Transfer]] = {}
    for origin in range(nodes):
        for final in range(nodes):
            nbytes = int(m[origin, final])
            if final == origin or nbytes == 0:
                continue
            for holder, move, phase in legs(orders, origin, final):
                t = Transfer(holder, moved(holder, move), nbytes, origin, final, COMBINED)
                messages.setdefault((phase, holder), []).append(t)
    count = orders.phases
    local = [Transfer(n, n, int(m[n, n]), n, n) for n in range(nodes) if m[n, n] > 0]
    packs: list[list[Transfer]] = [[] for _ in range(count)]  # packed in the phase before the send
    for (phase, _), message in messages.items():
        (packs[phase - 1] if phase else local).extend(t._replace(dst=t.src) for t in _packed(coll, message))
    local.sort(key=lambda t: (t.src, t.final))
    sends: list[list[Transfer]] = [[] for _ in range(count)]
    for (phase, _), message in sorted(messages.items()):
        sends[phase] += message
    phases = [Phase(tuple(local), tuple(local), SyncMode.LOCAL)]
    for sent, due, packed in zip(sends, due_next(sends), packs):
        phases.append(Phase(tuple(sent) + tuple(packed), due + tuple(packed), SyncMode.EAGER))
    return phases
