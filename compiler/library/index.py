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
the inverse rotation is the receiver's unpacking), charged at the machine's copy rate.

Dimension-wise: on a torus, mesh or hypercube (registry.Machine.dimensions), Bruck along
each dimension in turn, fastest-varying (along the rows) first; position j is then taken per
coordinate, so every message stays inside one row, column or cube dimension.
"""

from __future__ import annotations

from math import prod

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer


def rounds(size: int) -> int:
    """ceil(log2 size): Bruck's rounds along a line of `size` nodes."""
    return (size - 1).bit_length()


def bruck_rounds(coll: Collective, dims: tuple[int, ...]) -> list[Phase]:
    """Bruck along each dimension of `dims` (mixed radix over node ids, last fastest), from
    the last: a pack phase and a send phase per round, the local copies first."""
    m, n = coll.byte_matrix, coll.nprocs
    strides = [prod(dims[i + 1:]) for i in range(len(dims))]
    where = {(o, f): o for o in range(n) for f in range(n) if o != f and m[o][f]}
    phases = [Phase.of(local_copies(coll))]
    for axis in reversed(range(len(dims))):
        size, stride = dims[axis], strides[axis]
        for k in range(rounds(size)):
            sends = []
            for (o, f), at in where.items():
                j = (f // stride - o // stride) % size
                if j >> k & 1:
                    coord = at // stride % size
                    ahead = at + ((coord + (1 << k)) % size - coord) * stride
                    sends.append(Transfer(at, ahead, m[o][f], o, f, COMBINED))  # packed per node
            sends.sort(key=lambda t: (t.src, t.origin, t.final))
            phases.append(Phase.of([Transfer(t.src, t.src, t.nbytes, t.origin, t.final, COMBINED)
                                    for t in sends]))
            phases.append(Phase.of(sends))
            for t in sends:
                where[(t.origin, t.final)] = t.dst
    return [p for p in phases if p.sends] or [Phase.of([])]


def bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Bruck's index algorithm over the collective's P processors, one line of P."""
    return bruck_rounds(coll, (coll.nprocs,))


def dim_bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Bruck along each of the machine's dimensions in turn (requirements.on_dimensions)."""
    return bruck_rounds(coll, machine.dimensions)
