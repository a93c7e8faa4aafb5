"""All-to-all for short blocks: Bruck's index algorithm and its dimension-wise form.

Bruck, Ho, Kipnis, Upfal and Weathersby, "Efficient algorithms for all-to-all communications
in multiport message-passing systems", IEEE TPDS 8(11), 1997, Sec. 3 (the index operation,
radix 2): block (o, f) sits at position j = (f - o) mod P of its origin's buffer after a local
rotation; in round k = 0 .. ceil(log2 P) - 1 every node sends the blocks at positions with
bit k set, as one message, to the node 2^k ahead, which keeps them at the same positions.
After the rounds each block has moved j = f - o ahead: it is at f. So ceil(log2 P) start-ups,
each message carrying about half the blocks, against P - 1 start-ups of `direct`.

Each block is a Transfer per hop with its own origin and final (compiler/schedule.py): an
intermediate node keeps what it receives and forwards it (runtime/data.py's BlockStore holds
a block wherever it has arrived until it is sent on), so every block reaches its destination
exactly once and is checked there. Before each send the sender packs the blocks it sends into
one buffer, a local copy of their bytes (the rotation and packing of Bruck's phases 1 and 2;
the inverse rotation is the receiver's unpacking), charged at the machine's copy rate. Where
the message layer deposits incoming data where it is used (PortModel.deposits: iWarp's deposit
library, seed 001 Sec. 3.1) a relay's received blocks already lie in the buffer of the round
that forwards them, so a round packs only the blocks still at their origin, as
checkerboard.py's rounds do; elsewhere (the Paragon's, SP2's, CS-2's libraries, seed 003
Sec. 4) a relay packs them again.

A sparse pattern (every node to a few: the first eighth of the nodes) takes the same rounds
with its blocks only: ceil(log2 P) start-ups per node at most, where `direct` starts one per
destination; what each round's messages carry follows from the pattern (the general path of
bruck_round_messages), so there is no closed form beyond the rounds' sum.

Dimension-wise: on a torus, mesh or hypercube (registry.Machine.dimensions), Bruck along
each dimension in turn, fastest-varying (along the rows) first; position j is then taken per
coordinate, so every message stays inside one row, column or cube dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from math import prod

import numpy as np

from phalanx.compiler.columns import MessagePhase, PhaseColumns, rows
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase


def rounds(size: int) -> int:
    """ceil(log2 size): Bruck's rounds along a line of `size` nodes."""
    return (size - 1).bit_length()


Step = Callable[[np.ndarray], np.ndarray]  # a round's partner of each node given


class ForwardedBlocks:
    """Every block of `m` that crosses the network, followed round by round by the index
    algorithms (here and radix.py): numpy columns in the order of o, then f, `at` the node
    holding each block now."""

    def __init__(self, m: np.ndarray, deposits: bool = False) -> None:
        self.nprocs = len(m)
        self.origin, self.final = np.nonzero((m > 0) & ~np.eye(self.nprocs, dtype=bool))
        self.nbytes, self.at = m[self.origin, self.final], self.origin.copy()
        self.deposits = deposits  # PortModel.deposits: a relay forwards what it got uncopied

    def to_pack(self, moved: np.ndarray) -> np.ndarray:
        """Those of the blocks `moved` that their holder copies into the round's buffer: all of
        them, or where the message layer deposits (PortModel.deposits) those still at their
        origin (a received block already lies where the round that forwards it sends it)."""
        return moved[self.at[moved] == self.origin[moved]] if self.deposits else moved

    def round_tables(self, moved: np.ndarray, step: Step, packed: bool = True) -> list[np.ndarray]:
        """A round's pack phase and send phase of the blocks `moved` (their Transfers, by
        (sender, o, f)), each sent to `step` of its holder, which then holds it; the send
        phase alone where not `packed` (the blocks lie side by side in the sender's buffer)."""
        packs = self.pack_rows(moved) if packed else None
        sent = self.send_rows(moved, step)
        return [packs, sent] if packs is not None else [sent]  # packed per node

    def pack_rows(self, moved: np.ndarray) -> np.ndarray:
        """The blocks `moved` that their holders pack (to_pack), packed where they are (one
        local copy per holder), in round_tables' order."""
        moved = self.to_pack(moved)
        moved = moved[np.lexsort((self.final[moved], self.origin[moved], self.at[moved]))]
        here = self.at[moved]
        return rows(here, here, self.nbytes[moved], self.origin[moved], self.final[moved], COMBINED)

    def send_rows(self, moved: np.ndarray, step: Step) -> np.ndarray:
        """The blocks `moved` sent to `step` of their holder (round_tables' send phase), which
        then holds them."""
        moved = moved[np.lexsort((self.final[moved], self.origin[moved], self.at[moved]))]
        here = self.at[moved]
        ahead = step(here)
        self.at[moved] = ahead
        return rows(here, ahead, self.nbytes[moved], self.origin[moved], self.final[moved], COMBINED)

    def round_messages(self, moved: np.ndarray, step: Step, packed: bool = True) -> Iterator[MessagePhase]:
        """round_tables' phases as messages from counts: each holder of a moved block packs
        them into one local copy (where `packed`) and sends them as one message, the bytes
        summed, holders in ascending order."""
        if not len(moved):
            return
        if packed:
            packs = self.to_pack(moved)
            totals = np.bincount(self.at[packs], weights=self.nbytes[packs], minlength=self.nprocs)
            packers = np.flatnonzero(np.bincount(self.at[packs], minlength=self.nprocs))
            if len(packers):
                yield MessagePhase(packers, packers, np.rint(totals[packers]).astype(np.int64))
        at = self.at[moved]
        totals = np.bincount(at, weights=self.nbytes[moved], minlength=self.nprocs)
        holders = np.flatnonzero(np.bincount(at, minlength=self.nprocs))
        yield MessagePhase(holders, step(holders), np.rint(totals[holders]).astype(np.int64))
        self.at[moved] = step(at)


def local_copy_rows(m: np.ndarray) -> np.ndarray:
    """The rows of the blocks a node keeps, the index algorithms' first phase."""
    own = np.flatnonzero(np.diagonal(m) > 0)
    return rows(own, own, m[own, own], own, own)


def joined(tables: list[np.ndarray]) -> PhaseColumns:
    """The non-empty tables as one schedule (one empty table where all are)."""
    kept = [t for t in tables if len(t)]
    return PhaseColumns.of(kept or [tables[0][:0]])


def bruck_rounds(coll: Collective, dims: tuple[int, ...], deposits: bool = False) -> PhaseColumns:
    """Bruck along each dimension of `dims` (mixed radix over node ids, last fastest), from
    the last: a pack phase and a send phase per round, the local copies first. Every block
    (o, f) that crosses the network is followed at once (numpy columns, in the order of o,
    then f): `at` is the node holding it. With `deposits` (PortModel.deposits) a round packs
    only the blocks still at their origin."""
    m = coll.matrix
    strides = [prod(dims[i + 1:]) for i in range(len(dims))]
    blocks = ForwardedBlocks(m, deposits)
    tables = [local_copy_rows(m)]
    for axis in reversed(range(len(dims))):
        size, stride = dims[axis], strides[axis]
        distance = (blocks.final // stride - blocks.origin // stride) % size
        for k in range(rounds(size)):
            tables += blocks.round_tables(np.flatnonzero(distance >> k & 1),
                                          _ahead(size, stride, 1 << k))
    return joined(tables)


def _ahead(size: int, stride: int, step: int) -> Step:
    """The node `step` places ahead along the dimension of `size` nodes and `stride`."""
    def partner(nodes: np.ndarray) -> np.ndarray:
        coord = nodes // stride % size
        return nodes + ((coord + step) % size - coord) * stride
    return partner


def bruck_round_messages(coll: Collective, dims: tuple[int, ...],
                         deposits: bool = False) -> Iterator[MessagePhase]:
    """The messages of bruck_rounds' phases from counts, without its transfers: each node that
    holds blocks to move in a round packs them (with `deposits` those at their origin) into
    one local copy and sends them as one message, the bytes summed (as cost.messages groups
    them), nodes in ascending order."""
    m, n = coll.matrix, coll.nprocs
    strides = [prod(dims[i + 1:]) for i in range(len(dims))]
    own = np.flatnonzero(np.diagonal(m) > 0)
    if len(own):
        yield MessagePhase(own, own, m[own, own])
    block = coll.complete_block_bytes
    if block is None:  # the blocks followed one by one (16.8M on 4096 nodes: not when uniform)
        blocks = ForwardedBlocks(m, deposits)
    else:  # each distance 1 .. P - 1 (mixed radix over dims) moved by some earlier round yet
        moved_before = np.zeros(n - 1, dtype=bool)
    for axis in reversed(range(len(dims))):
        size, stride = dims[axis], strides[axis]
        if block is not None:  # complete and uniform: every node moves the same blocks
            yield from _uniform_round_messages(n, size, stride, block, moved_before, deposits)
            continue
        distance = (blocks.final // stride - blocks.origin // stride) % size
        for k in range(rounds(size)):
            yield from blocks.round_messages(np.flatnonzero(distance >> k & 1),
                                             _ahead(size, stride, 1 << k))


def _uniform_round_messages(n: int, size: int, stride: int, block: int, moved_before: np.ndarray,
                            deposits: bool) -> Iterator[MessagePhase]:
    """bruck_round_messages along one dimension of a complete exchange of `block`-byte blocks:
    before each round every node holds one block per distance vector 1 .. P - 1 (Bruck's
    invariant, Sec. 3), so in round k each node sends the blocks whose distance along the
    dimension has bit k set and packs them (with `deposits` those not moved before: their
    flags in `moved_before`, updated here)."""
    nodes = np.arange(n, dtype=np.int64)
    along = np.arange(1, n) // stride % size
    for k in range(rounds(size)):
        moving = (along >> k & 1) > 0
        packed = int((moving & ~moved_before).sum()) if deposits else int(moving.sum())
        moved_before |= moving
        coord = nodes // stride % size
        if packed:
            yield MessagePhase(nodes, nodes, np.full(n, packed * block, dtype=np.int64))
        yield MessagePhase(nodes, nodes + ((coord + (1 << k)) % size - coord) * stride,
                           np.full(n, int(moving.sum()) * block, dtype=np.int64))


def bruck_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    return bruck_round_messages(coll, (coll.nprocs,), machine.port.deposits)


def dim_bruck_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    return bruck_round_messages(coll, machine.dimensions, machine.port.deposits)


def bruck_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """Bruck's index algorithm over the collective's P processors, one line of P."""
    return bruck_rounds(coll, (coll.nprocs,), machine.port.deposits)


def dim_bruck_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    """Bruck along each of the machine's dimensions in turn (requirements.on_dimensions)."""
    return bruck_rounds(coll, machine.dimensions, machine.port.deposits)


def bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(bruck_columns(coll, machine).phases())


def dim_bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(dim_bruck_columns(coll, machine).phases())
