"""All-to-all on a torus of power-of-two rings: Bruck's index algorithm with each shift's worms on
wires of their own, and Bruck along the rows before direct messages along the columns (issue 27,
branch torusshort).

Bruck et al. 1997 move every block by the bits of its distance, one shift 2^k a round. On a
wormhole torus a shift by 2 or 4 along a ring puts several worms on a wire (every node sending
2 ahead: two worms a wire, each waiting on the next), and a round along the rows leaves the
columns' links idle. Here each shift s takes two rounds, and in each a checkerboard class of
the nodes moves along its row while the other class moves along its column; the classes swap
for the second round. A node's class for shift s is the parity of its row and column classes,
each the parity of the coordinate (s < n/2: the nodes 2 apart, whose worms of 2 hops cover a
ring's wires once) or of coordinate // (s/2) (s = n/2, half the ring, which the e-cube routes
take both ways round by the source's parity, targets/iwarp/topology.py: on a ring of 8 the
nodes 0, 1, 4 and 5, whose worms of 4 hops share no wire). A move by s keeps both parities, so
a block moved along one dimension in the first round sits at a node of its class and moves
along the other in the second. The shift by 1 takes a round along the rows and one along the
columns (every node 1 ahead: a wire each). On rings of 2, 4 and 8 nodes no two worms of a
round share a wire; on longer rings the shifts of 4 and more still do (the algorithm is right
there, only slower).

`checkerboard-bruck` moves each coordinate's distance (mod n) forward by its bits: one message
a node a round, 2 log2 n rounds on an n x n torus (6 on 8x8). `signed-checkerboard-bruck` moves
it the shorter way round the ring (-3 .. 4 on a ring of 8: -3 = -2 - 1), a round's blocks in two
messages, one each way: every block crosses its fewest hops, so the links carry no more than
the link-load bound's bytes, for two messages a node in most rounds.

`rows-bruck-columns-direct` moves every block to its final column by Bruck along the rows (the
distance's bits, half the row first: log2 cols rounds of one message a node), then each node
sends what it holds for each row straight down its column, one message a row. Where blocks
converge on a few rows (every node to the first eighth: one row) a node sends one message in
the second stage, so log2 cols + 1 start-ups in all, against the checkerboard's 2 log2 n.

Before a round a node packs the blocks of its own array that leave in it (they lie strided
in its array) into the round's buffer, a local copy at the machine's copy rate, as `bruck`
(index.py) packs. It packs them in the round before, after that round's messages
(`packs_ahead`): the tori's copy holds the node's processor (WormholeNetwork.copy_program),
which is idle while the round's worms stream, and a node starts its messages before its copies
(compiler/plan_walk.py `messages`); the first round's packs go with the node's own block's copy.
A block it received is not copied again: the deposit model puts incoming
data where it is used (001_569dde0e56ec3e6f.txt Sec. 3.1, "direct deposit of incoming data to
its final destination"), which at a relay is the buffer of the round that forwards it (the
intermediate nodes' "buffer allocation and address calculation" Sec. 1 names for Bokhari and
Berryman's hybrid exchange). An intermediate node keeps what it receives and forwards it;
every block reaches its destination once and is checked there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from phalanx.compiler.columns import MessagePhase, PhaseColumns, rows
from phalanx.compiler.library.index import ForwardedBlocks, joined, local_copy_rows
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.requirements import whole_grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase


def torus_rings(coll: Collective, machine: Machine) -> str | None:
    """A torus (rows and columns rings) whose rows and columns are powers of two, every node
    taking part (node ids are grid places)."""
    if (why := whole_grid(coll, machine)) is not None:
        return why
    rows_, cols = machine.grid
    if rows_ & (rows_ - 1) or cols & (cols - 1):
        return f"its shifts need rows and columns that are powers of two, not {rows_}x{cols}"
    if machine.route is None:
        return "the machine does not name its routes' links"
    ring = (cols < 3 or len(machine.route(0, cols - 1)) == 1) and \
        (rows_ < 3 or len(machine.route(0, (rows_ - 1) * cols)) == 1)
    if not ring:
        return "its rows and columns are the lines of a mesh, not rings"
    return None


def ring_class(coord: np.ndarray, shift: int, size: int) -> np.ndarray:
    """The class (0 or 1) of each coordinate whose worms of `shift` along a ring of `size`
    share no wire with the others of its class: the coordinate's parity, or for half the ring
    its parity in units of shift / 2 (module docstring); 0 where the ring has no such shift."""
    if shift >= size:
        return np.zeros_like(coord)
    unit = max(shift // 2, 1) if 2 * shift == size else 1
    return coord // unit % 2


def ring_distances(origin: np.ndarray, final: np.ndarray, size: int, signed: bool) -> np.ndarray:
    """Each block's distance along a ring: forward (mod size), or the shorter way, ties (half
    the ring) forward as signed."""
    forward = (final - origin) % size
    return np.where(signed & (2 * forward > size), forward - size, forward)


@dataclass
class Round:
    """One round's moves: the blocks `moved` (indices into ForwardedBlocks), each by `step`
    along dimension `dim` (0: the row, 1: the column) of its holder; with `nearest_first` a
    holder's messages go in order of distance, else its larger message first."""

    moved: np.ndarray
    dim: np.ndarray
    step: np.ndarray
    nearest_first: bool = False


def checkerboard_moves(blocks: ForwardedBlocks, grid: tuple[int, int], signed: bool) -> Iterator[Round]:
    """The rounds of the module docstring: per shift, largest first, two rounds (a
    checkerboard class along the rows, the other along the columns, then swapped). The
    consumer moves the blocks (`blocks.at`) before asking for the next round."""
    rows_, cols = grid
    distance = {0: ring_distances(blocks.origin % cols, blocks.final % cols, cols, signed),
                1: ring_distances(blocks.origin // cols, blocks.final // cols, rows_, signed)}
    for bit in reversed(range((max(rows_, cols) - 1).bit_length())):
        shift = 1 << bit
        for second in (0, 1):
            at = blocks.at
            where = {0: at % cols, 1: at // cols}
            if shift == 1:
                dim = np.full(len(at), second)
            else:
                dim = (ring_class(where[0], shift, cols) + ring_class(where[1], shift, rows_)
                       + second) % 2
            moving_x, moving_y = (dim == 0) & (np.abs(distance[0]) & shift > 0), \
                (dim == 1) & (np.abs(distance[1]) & shift > 0)
            step = np.zeros(len(at), dtype=np.int64)
            step[moving_x] = np.sign(distance[0][moving_x]) * shift
            step[moving_y] = np.sign(distance[1][moving_y]) * shift
            moved = np.flatnonzero(moving_x | moving_y)
            yield Round(moved, dim[moved], step[moved])


def rows_bruck_columns_direct_moves(blocks: ForwardedBlocks, grid: tuple[int, int]) -> Iterator[Round]:
    """Bruck along the rows (the distance's bits, half the row first), then each block
    straight down its column the shorter way, the nearest rows first."""
    rows_, cols = grid
    forward = (blocks.final % cols - blocks.origin % cols) % cols
    for bit in reversed(range((cols - 1).bit_length())):
        moved = np.flatnonzero(forward >> bit & 1)
        yield Round(moved, np.zeros(len(moved), dtype=np.int64),
                    np.full(len(moved), 1 << bit, dtype=np.int64))
    down = ring_distances(blocks.at // cols, blocks.final // cols, rows_, signed=True)
    moved = np.flatnonzero(down != 0)
    yield Round(moved, np.ones(len(moved), dtype=np.int64), down[moved], nearest_first=True)


def _round_tables(blocks: ForwardedBlocks, move: Round, grid: tuple[int, int]) -> list[np.ndarray]:
    """A round's pack phase (each holder copies the round's blocks of its own array into the
    round's buffer) and its send phase (a holder's larger message first, forward first where
    they are alike, or by distance), and moves the blocks.

    The larger first: the second message's start-up runs while the first streams, so a round
    of messages of w1 and w2 wire time ends near max(h + w1, 2 h + w2), least with w1 >= w2
    (uneven blocks: alltoallv 128 B on torus:8x8 0.6023 -> 0.5799 ms; equal blocks send as
    many bytes each way, forward first as before)."""
    moved = move.moved
    here, ahead = blocks.at[moved], _ahead(blocks.at[moved], move, grid)
    order = np.lexsort((blocks.final[moved], blocks.origin[moved], move.step < 0,
                        _first(blocks, move), here))
    moved, here, ahead = moved[order], here[order], ahead[order]
    o, f, b = blocks.origin[moved], blocks.final[moved], blocks.nbytes[moved]
    blocks.at[moved] = ahead
    own = here == o
    return [rows(here[own], here[own], b[own], o[own], f[own], COMBINED),
            rows(here, ahead, b, o, f, COMBINED)]


def _round_messages(blocks: ForwardedBlocks, move: Round, grid: tuple[int, int]) -> Iterator[MessagePhase]:
    """_round_tables' phases as the cost model groups them (estimate.message_sizes: one
    message per sender and receiver, in the order of its first row), from sums per holder and
    step: no row per block is made (each record's tables took 0.6-0.8 GB at 32x32, 16 times
    that at 64x64, in every compile that lists the candidates)."""
    moved = move.moved
    if not len(moved):
        return
    here, nbytes = blocks.at[moved], blocks.nbytes[moved]
    own = here == blocks.origin[moved]
    packers = np.unique(here[own])
    if len(packers):
        packed = np.bincount(here[own], weights=nbytes[own], minlength=blocks.nprocs)
        yield MessagePhase(packers, packers, np.rint(packed[packers]).astype(np.int64))
    # a part: a holder's blocks of one step, contiguous among _round_tables' rows
    span = 2 * int(np.abs(move.step).max()) + 1
    parts, block_part = np.unique(here * span + move.step + span // 2, return_inverse=True)
    block_part = block_part.ravel()
    some_block = np.empty(len(parts), dtype=np.int64)
    some_block[block_part] = np.arange(len(moved))  # a holder's blocks share its dim
    part_bytes = np.bincount(block_part, weights=nbytes)
    part_here, part_step = parts // span, parts % span - span // 2
    part_ahead = _ahead(part_here, Round(some_block, move.dim[some_block], part_step), grid)
    first = np.abs(part_step) if move.nearest_first else -part_bytes
    order = np.lexsort((part_step < 0, first, part_here))
    # parts from one holder to one receiver (half a ring either way) are one message
    pairs, at_first, pair_of = np.unique(part_here[order] * blocks.nprocs + part_ahead[order],
                                         return_index=True, return_inverse=True)
    message_bytes = np.bincount(pair_of.ravel(), weights=part_bytes[order])
    in_order = np.argsort(at_first, kind="stable")
    blocks.at[moved] = _ahead(here, move, grid)
    yield MessagePhase(pairs[in_order] // blocks.nprocs, pairs[in_order] % blocks.nprocs,
                       np.rint(message_bytes[in_order]).astype(np.int64))


def _ahead(here: np.ndarray, move: Round, grid: tuple[int, int]) -> np.ndarray:
    """Where each block of `move` held at `here` goes."""
    rows_, cols = grid
    xs, ys = here % cols, here // cols
    xs = np.where(move.dim == 0, (xs + move.step) % cols, xs)
    ys = np.where(move.dim == 1, (ys + move.step) % rows_, ys)
    return ys * cols + xs


def _first(blocks: ForwardedBlocks, move: Round) -> np.ndarray:
    """The rank of each block's message among its holder's: its distance, or its bytes negated
    (the larger message first)."""
    if move.nearest_first:
        return np.abs(move.step)
    message = blocks.at[move.moved] * 2 + (move.step < 0)
    return -np.bincount(message, weights=blocks.nbytes[move.moved])[message]


Moves = Callable[[ForwardedBlocks], Iterator[Round]]  # a record's rounds over its blocks
Uniform = Callable[[tuple[int, int], int], Iterator[MessagePhase]]  # a complete exchange's phases


Joinable = TypeVar("Joinable", np.ndarray, MessagePhase)


def packs_ahead(phases: Iterable[Joinable], copies_only: Callable[[Joinable], bool],
                join: Callable[[Joinable, Joinable], Joinable]) -> Iterator[Joinable]:
    """The phases (row tables, or the cost model's message phases) with each phase of local
    copies only (a round's packs) joined to the phase before it (module docstring): the copies
    of its own blocks a node can make early ride in the previous round, after its messages."""
    before = None
    for phase in phases:
        if before is not None and copies_only(phase):
            before = join(before, phase)
            continue
        if before is not None:
            yield before
        before = phase
    if before is not None:
        yield before


def _copy_rows(table: np.ndarray) -> bool:
    return bool((table[:, 0] == table[:, 1]).all())


def _copy_messages(phase: MessagePhase) -> bool:
    return bool((phase.src == phase.dst).all())


def _joined_messages(a: MessagePhase, b: MessagePhase) -> MessagePhase:
    return MessagePhase(np.concatenate([a.src, b.src]), np.concatenate([a.dst, b.dst]),
                        np.concatenate([a.nbytes, b.nbytes]), a.sync)


def _tables(coll: Collective, machine: Machine, moves: Moves) -> PhaseColumns:
    blocks = ForwardedBlocks(coll.matrix)
    rounds = [t for move in moves(blocks) for t in _round_tables(blocks, move, machine.grid)]
    own = local_copy_rows(coll.matrix)
    tables = [t for t in (own, *rounds) if len(t)]
    return joined(list(packs_ahead(tables, _copy_rows, lambda a, b: np.concatenate([a, b]))) or [own])


def _messages(coll: Collective, machine: Machine, moves: Moves,
              uniform: Uniform) -> Iterator[MessagePhase]:
    """_phase_messages with each phase of copies only joined to the one before, as _tables
    joins them (packs_ahead)."""
    return packs_ahead(_phase_messages(coll, machine, moves, uniform), _copy_messages, _joined_messages)


def _phase_messages(coll: Collective, machine: Machine, moves: Moves,
                    uniform: Uniform) -> Iterator[MessagePhase]:
    """The local copies, then each round's phases: from counts where the exchange is complete
    and of one block size (`uniform`), else block by block (16.8M blocks at 64x64: 2 GB and
    20 s a record)."""
    own = np.flatnonzero(np.diagonal(coll.matrix) > 0)
    if len(own):
        yield MessagePhase(own, own, coll.matrix[own, own])
    block = coll.complete_block_bytes
    if block is not None:
        yield from uniform(machine.grid, block)
        return
    blocks = ForwardedBlocks(coll.matrix)
    for move in moves(blocks):
        yield from _round_messages(blocks, move, machine.grid)


def _uniform_checkerboard(grid: tuple[int, int], block: int, signed: bool) -> Iterator[MessagePhase]:
    """checkerboard_moves' phases for a complete exchange of `block`-byte blocks, from counts.
    Every node holds one block per distance vector d != 0 before each round (Bruck's
    invariant: a block's moves so far are its distance's higher bits, and a node's class, the
    parity its moves keep, is its blocks' origins'), so a node of class k moves in the shift
    s's first round the blocks whose |d| along dimension k has bit s, in the second those
    along the other dimension, the ones still at their origin packed first."""
    rows_, cols = grid
    nodes = np.arange(rows_ * cols)
    x, y = nodes % cols, nodes // cols
    dx, dy = (ring_distances(np.zeros(size, dtype=np.int64), np.arange(size), size, signed)
              for size in (cols, rows_))
    d = {0: np.repeat(dx[None, :], rows_, axis=0).ravel(), 1: np.repeat(dy, cols)}  # every d
    for bit in reversed(range((max(rows_, cols) - 1).bit_length())):
        shift = 1 << bit
        unmoved = (np.abs(d[0]) >> (bit + 1) == 0) & (np.abs(d[1]) >> (bit + 1) == 0)
        if shift == 1:
            klass = np.zeros(len(nodes), dtype=np.int64)
        else:
            klass = (ring_class(x, shift, cols) + ring_class(y, shift, rows_)) % 2
        for second in (0, 1):
            dim = np.full(len(nodes), second) if shift == 1 else (klass + second) % 2
            first_dim = 0 if shift == 1 else klass  # each node's dimension of the first round
            moves = [np.abs(d[k]) & shift > 0 for k in (0, 1)]
            own = [[unmoved & moves[k] & (~moves[first] if second else True) for first in (0, 1)]
                   for k in (0, 1)]
            packed = np.array([[int(own[k][f].sum()) for f in (0, 1)] for k in (0, 1)])[dim, first_dim]
            ahead = np.array([int((moves[k] & (d[k] > 0)).sum()) for k in (0, 1)])[dim]
            back = np.array([int((moves[k] & (d[k] < 0)).sum()) for k in (0, 1)])[dim]
            if packed.any():
                packers = np.flatnonzero(packed)
                yield MessagePhase(packers, packers, packed[packers] * block)
            yield from _two_messages(nodes, _grid_step(x, y, dim, shift, grid), ahead * block,
                                     _grid_step(x, y, dim, -shift, grid), back * block)


def _uniform_rows_bruck_columns_direct(grid: tuple[int, int], block: int) -> Iterator[MessagePhase]:
    """rows_bruck_columns_direct_moves' phases for a complete exchange of `block`-byte blocks,
    from counts: Bruck's rounds along the rows (every node sends the blocks whose forward
    distance along x has the round's bit, packing those with no higher bit), then each node
    holds the `cols` blocks of each final row, its own one of them packed, and sends them in
    one message a row, the nearest rows first, forward before back."""
    rows_, cols = grid
    nodes = np.arange(rows_ * cols)
    x, y = nodes % cols, nodes // cols
    dx = np.arange(cols)
    for bit in reversed(range((cols - 1).bit_length())):
        moving = dx >> bit & 1 > 0
        packed = int((moving & (dx >> (bit + 1) == 0)).sum()) * rows_
        if packed:
            yield MessagePhase(nodes, nodes, np.full(len(nodes), packed * block, dtype=np.int64))
        yield MessagePhase(nodes, y * cols + (x + (1 << bit)) % cols,
                           np.full(len(nodes), int(moving.sum()) * rows_ * block, dtype=np.int64))
    down = ring_distances(np.zeros(rows_ - 1, dtype=np.int64), np.arange(1, rows_), rows_, signed=True)
    if not len(down):
        return
    yield MessagePhase(nodes, nodes, np.full(len(nodes), len(down) * block, dtype=np.int64))
    down = down[np.lexsort((down < 0, np.abs(down)))]
    dst = ((y[:, None] + down[None, :]) % rows_ * cols + x[:, None]).ravel()
    yield MessagePhase(np.repeat(nodes, len(down)), dst, np.full(len(dst), cols * block, dtype=np.int64))


def _grid_step(x: np.ndarray, y: np.ndarray, dim: np.ndarray, step: int,
               grid: tuple[int, int]) -> np.ndarray:
    """Each node (x, y) moved by `step` along its dimension `dim`, round its ring."""
    rows_, cols = grid
    return np.where(dim == 0, y * cols + (x + step) % cols, (y + step) % rows_ * cols + x)


def _two_messages(nodes: np.ndarray, forward: np.ndarray, forward_bytes: np.ndarray,
                  backward: np.ndarray, backward_bytes: np.ndarray) -> Iterator[MessagePhase]:
    """A phase of at most two messages a node, nodes in order, the larger first, forward first
    where alike; one message where both go to one node (half a ring either way); none of 0
    bytes."""
    same = forward == backward
    forward_bytes = np.where(same, forward_bytes + backward_bytes, forward_bytes)
    backward_bytes = np.where(same, 0, backward_bytes)
    back_first = backward_bytes > forward_bytes
    dst = np.stack([np.where(back_first, backward, forward), np.where(back_first, forward, backward)], axis=1)
    nbytes = np.stack([np.where(back_first, backward_bytes, forward_bytes),
                       np.where(back_first, forward_bytes, backward_bytes)], axis=1)
    src = np.repeat(nodes, 2)
    dst, nbytes = dst.ravel(), nbytes.ravel()
    keep = nbytes > 0
    if keep.any():
        yield MessagePhase(src[keep], dst[keep], nbytes[keep].astype(np.int64))


def checkerboard_rounds(coll: Collective, machine: Machine, signed: bool) -> PhaseColumns:
    """The rounds of checkerboard_moves: per round a send phase, the next round's packs after
    its messages (packs_ahead; the local copies and the first round's packs first); a signed
    round's messages forward first, then back."""
    return _tables(coll, machine, lambda blocks: checkerboard_moves(blocks, machine.grid, signed))


def rows_bruck_columns_direct_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """`rows-bruck-columns-direct`: Bruck along the rows, then one message a node per final
    row straight along its column (the nearest rows first, forward before back)."""
    return _tables(coll, machine, lambda blocks: rows_bruck_columns_direct_moves(blocks, machine.grid))


def checkerboard_bruck_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    return _messages(coll, machine, lambda blocks: checkerboard_moves(blocks, machine.grid, False),
                     lambda grid, block: _uniform_checkerboard(grid, block, False))


def signed_checkerboard_bruck_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    return _messages(coll, machine, lambda blocks: checkerboard_moves(blocks, machine.grid, True),
                     lambda grid, block: _uniform_checkerboard(grid, block, True))


def rows_bruck_columns_direct_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    return _messages(coll, machine, lambda blocks: rows_bruck_columns_direct_moves(blocks, machine.grid),
                     _uniform_rows_bruck_columns_direct)


def checkerboard_bruck_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """`checkerboard-bruck`: every distance forward by its bits, one message a node a round."""
    return checkerboard_rounds(coll, machine, signed=False)


def signed_checkerboard_bruck_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """`signed-checkerboard-bruck`: every distance the shorter way, a message each way a round."""
    return checkerboard_rounds(coll, machine, signed=True)


def checkerboard_bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(checkerboard_bruck_columns(coll, machine).phases())


def signed_checkerboard_bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(signed_checkerboard_bruck_columns(coll, machine).phases())


def rows_bruck_columns_direct_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(rows_bruck_columns_direct_columns(coll, machine).phases())
