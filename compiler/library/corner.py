"""Permutations on a grid's dimension-ordered routes, the longest messages relayed round the
other corner of their route.

On a torus or mesh every pair's route is fixed: along the source's row to the destination's
column, then down that column (iWarp's e-cube, the Paragon's row-column routes). A transpose
onto a transposed grid sends node (r, c) to (c, r), so every route turns at a diagonal node and
the links next to the diagonal carry the most: 4 blocks on one torus:8x8 link, 7 on one
paragon:8x8 link (docs/bounds.md, "Fixed routes"), where the others carry one or none.

`corner-relay` sends the messages whose routes are the longest through the other corner of
their route's rectangle, the node in the destination's row and the source's column: its
routes there and on take the source's column first, then the destination's row, links the
dimension-ordered routes of a transpose leave idle (the corner is a diagonal node, which sends
nothing of its own). Relayed messages pay a second start-up and a store and forward, so only
the longest go round: `corner-relay` those of the longest route length, `corner-relay-wide`
those of the two longest. A relayed block goes in pieces where its wire time is long against
a start-up (one piece per two start-ups of it, at most MAX_PIECES): piece k leaves its source
in phase k and its corner in phase k + 1, so the corner forwards one piece while the next
arrives. Direct messages and the local copies go in the first phase.

Measured (docs/efficiency.md, branch relayperm): the transposes on torus:8x8 and iwarp:8x8
from 0.25-0.31 of their bounds to 0.36-0.41, on paragon:8x8 from 0.32-0.49 to 0.42-0.54 (against
the relay ports bound, docs/bounds.md). Relaying more (half of every message, or the relays
chosen for the least busy link) overloads the diagonal relays and was slower.
"""

from __future__ import annotations

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Generator, Machine
from phalanx.compiler.library.requirements import whole_grid
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

MAX_PIECES = 4


def grid_routes(coll: Collective, machine: Machine) -> str | None:
    """A torus or mesh that names its fixed routes, the collective on all its nodes (node ids
    are then grid places)."""
    if machine.grid is not None and machine.route is None:
        return "the machine names no fixed routes to relay round"
    return whole_grid(coll, machine)


def corner(machine: Machine, src: int, dst: int) -> int | None:
    """The node in dst's row and src's column, where the routes through it take other links
    than the direct route and are no longer; None where there is no such node."""
    assert machine.grid is not None and machine.route is not None
    cols = machine.grid[1]
    via = dst // cols * cols + src % cols
    if via in (src, dst):
        return None
    route = machine.route
    direct, first, then = route(src, dst), route(src, via), route(via, dst)
    if len(first) + len(then) > len(direct) or set(first) | set(then) == set(direct):
        return None
    return via


def pieces(nbytes: int, machine: Machine) -> int:
    """One piece per two start-ups of the block's wire time, 1 to MAX_PIECES."""
    port = machine.port
    wire_s = nbytes * port.s_per_byte
    return max(1, min(MAX_PIECES, int(wire_s // (2 * port.startup_s)), nbytes))


def corner_relay(lengths: int) -> Generator:
    """The generator relaying the messages of the `lengths` longest route lengths."""
    def phases(coll: Collective, machine: Machine) -> list[Phase]:
        assert machine.route is not None  # grid_routes holds
        m, n = coll.byte_matrix, coll.nprocs
        pairs = [(p, q, m[p][q]) for p in range(n) for q in range(n) if p != q and m[p][q]]
        hops = [len(machine.route(p, q)) for p, q, _ in pairs]
        corners = [corner(machine, p, q) for p, q, _ in pairs]
        longest = sorted({h for h, via in zip(hops, corners) if via is not None}, reverse=True)
        least = longest[lengths - 1] if len(longest) >= lengths else (longest[-1] if longest else 0)
        out: list[list[Transfer]] = [local_copies(coll)]
        for (p, q, nbytes), h, via in zip(pairs, hops, corners):
            if via is None or h < least:
                out[0].append(Transfer(p, q, nbytes, p, q))
                continue
            count = pieces(nbytes, machine)
            while len(out) < count + 1:
                out.append([])
            if count == 1:  # the whole block, stored and forwarded
                out[0].append(Transfer(p, via, nbytes, p, q))
                out[1].append(Transfer(via, q, nbytes, p, q))
                continue
            size = nbytes // count
            for k in range(count):
                offset = k * size
                part = nbytes - offset if k == count - 1 else size
                out[k].append(Transfer(p, via, part, p, q, 0, offset))
                out[k + 1].append(Transfer(via, q, part, p, q, 0, offset))
        return [Phase.of(p) for p in out]
    return phases
