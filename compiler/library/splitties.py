"""Sparse patterns on a torus: blocks whose route runs half way round a ring split both ways.

Where a ring has an even number of nodes, a block that must go half way round it has two
shortest ways, and e-cube routing picks one by the source's coordinate (targets/iwarp/
topology.py `ring_step`): all the sources of one row or column take the same way. In the
grid's sparse pattern (every node to the first eighth, row 0 of torus:8x8) every block from row
4 goes down the + way, so the links into row 0 from row 7 carry 32 blocks each and those from
row 1 24, where the band cut needs 28 (docs/bounds.md, "Cuts and links").

`split-ties` keeps `direct`'s pairwise steps (step s: node r to r XOR s, or r + s mod P) and
sends half of such a block straight and half to a relay one hop along the ring the other way,
chosen so that the relay's route to the destination shares no link with the direct one; the
relay forwards it in the next step. The pattern's blocks then go both ways round (28 and 28).
Measured on torus:8x8 (docs/efficiency.md, branch cshift): 0.75-0.78 of the bound -> 0.86-0.90
from 2 KB; at 128 B the extra start-ups lose (0.29 against `direct`'s 0.53), and on an all-to-all
or a transpose, whose ties already go both ways by the sources' parity, it is slower than
`direct`, so it is offered for sparse patterns only. No closed form: like `direct` on the
torus its time is the wormhole simulator's (links held by worms in flight).
"""

from __future__ import annotations

from phalanx.compiler.algorithms import direct_partner
from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.requirements import whole_grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer


def tie_relay(machine: Machine, src: int, dst: int) -> int | None:
    """The neighbour of src one hop along a ring the other way from a half-way-round route to
    dst, whose route on to dst is as short and shares no link with src's; None if there is
    none (no tie, or the two ways share links)."""
    assert machine.grid is not None and machine.route is not None
    rows, cols = machine.grid
    sx, sy, dx, dy = src % cols, src // cols, dst % cols, dst // cols
    options = []
    if rows % 2 == 0 and (dy - sy) % rows == rows // 2:
        options += [((sy + step) % rows) * cols + sx for step in (1, -1)]
    if cols % 2 == 0 and (dx - sx) % cols == cols // 2:
        options += [sy * cols + (sx + step) % cols for step in (1, -1)]
    direct = machine.route(src, dst)
    for via in options:
        first, then = machine.route(src, via), machine.route(via, dst)
        if len(first) + len(then) == len(direct) and not set(then) & set(direct):
            return via
    return None


def tie_relays(coll: Collective, machine: Machine) -> str | None:
    """Precondition: a torus that names its routes, the collective on all its nodes, blocks of
    2 bytes or more, and some block half way round a ring with a link-disjoint other way."""
    if (why := whole_grid(coll, machine)) is not None:
        return why
    if machine.route is None:
        return "the machine names no routes to tell the two ways round a ring apart"
    m, n = coll.byte_matrix, coll.nprocs
    blocks = [(p, q) for p in range(n) for q in range(n) if p != q and m[p][q]]
    if any(m[p][q] < 2 for p, q in blocks):
        return "a block of 1 byte cannot go half each way"
    if not any(tie_relay(machine, p, q) is not None for p, q in blocks):
        return "no block's route runs half way round a ring with another way that shares no link"
    return None


def split_ties_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """`direct`'s steps, each tie block half straight and half through its relay, which
    forwards it in the next step (tie_relays holds)."""
    m, n = coll.byte_matrix, coll.nprocs
    out: list[list[Transfer]] = [local_copies(coll)] + [[] for _ in range(n)]
    for step in range(1, n):
        for p in range(n):
            q = direct_partner(p, step, n)
            nbytes = int(m[p][q])
            if not nbytes:
                continue
            via = tie_relay(machine, p, q)
            if via is None:
                out[step].append(Transfer(p, q, nbytes, p, q))
                continue
            half = nbytes // 2
            out[step].append(Transfer(p, q, half, p, q, 0, 0))
            out[step].append(Transfer(p, via, nbytes - half, p, q, 0, half))
            out[step + 1].append(Transfer(via, q, nbytes - half, p, q, 0, half))
    return [Phase.of(phase) for phase in out if phase]
