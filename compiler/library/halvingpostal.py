"""`halving-postal` reduce: recursive halving over the lowest k rank bits, then a postal tree in
every column, then the columns' pieces straight to the root (issue 27, branch redx).

halving-fan-in (halvingfanin.py) reduces each of the 2^k pieces over its column (the members with
the same k low bits) by one fan-in into the column's first member, which takes 2^(d-k) - 1
pieces through its port; the postal tree (postaltree.py) reduces a partial through the tree of
least time when every member sends its combined partial once, children ready early sending
early. Here each column's piece goes up its column's postal tree (postal_tree_parents of
2^(d-k) members and n / 2^k bytes, the column's first member its root), and the 2^k - 1 other
columns' first members then send their pieces to the root at once. paragon:8x8 at 16 KB, k = 3:
1.014 ms, its closed form, where halving-fan-in takes 1.042 (docs/efficiency.md, branch redx);
on cs2:64 the columns' trees cross leaf switches, whose one link from above the four nodes of a
leaf then share (2.284 ms at k = 3 against the closed form's 1.884), and halving-direct stays
best. k of least halving_postal_s; k = 0 is the postal tree alone, k = d halving-direct with
k = d.
"""

from __future__ import annotations

from phalanx.compiler.library.halvingfanin import fan_in_s
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.postaltree import postal_tree_parents, postal_tree_s
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import Halving, _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase


def halving_postal_s(members: int, halved: int, partial_bytes: int, element_bytes: int,
                     port: PortModel) -> float:
    """The closed form: k = `halved` halving rounds, each alpha + m (beta + gamma / e) for
    m = n / 2, ..., n / 2^k (twice the bytes' time on a shared engine), then the postal tree of a
    column (2^(d-k) members, pieces of n / 2^k), then the fan-in of the 2^k - 1 other columns'
    pieces into the root (fan_in_s)."""
    d = members.bit_length() - 1
    per_byte_s = port.s_per_byte * (2 if port.shared_engine else 1) + port.combine_s_per_op / element_bytes
    piece = partial_bytes / 2 ** halved
    halves = sum(partial_bytes / 2 ** i for i in range(1, halved + 1))
    return (halved * port.startup_s + halves * per_byte_s
            + postal_tree_s(2 ** (d - halved), max(1, int(piece)), element_bytes, port)
            + fan_in_s(2 ** halved - 1, piece, element_bytes, port))


def postal_halved_rounds(coll: Collective, machine: Machine, members: int) -> int:
    """The k in 0..lg P of least halving_postal_s (the larger of equals: smaller pieces), with at
    least one element a piece."""
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    element = coll.element_bytes or nbytes
    options = [k for k in range(members.bit_length()) if 2 ** k * element <= nbytes] or [0]
    return min(options, key=lambda k: (halving_postal_s(members, k, nbytes, element, machine.port), -k))


def halving_postal_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Members by virtual rank (root 0, 2^d of them): k halving rounds (rooted.Halving); then in
    column c (members c + 2^k u, u = 0 .. 2^(d-k) - 1) member u sends all it holds to its postal
    parent in the phase of its height, leaves first; then members 1 .. 2^k - 1 send theirs to the
    root."""
    members = len(rooted_order(coll))
    halving = Halving(coll, postal_halved_rounds(coll, machine, members))
    count, send, held = halving.count, halving.send, halving.held
    phases = halving.rounds()
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    element = coll.element_bytes or nbytes
    column = members // count
    parents = postal_tree_parents(column, max(1, nbytes // count), element, machine.port)
    height = [0] * column
    for u in range(column - 1, 0, -1):  # children have higher ranks than their parents
        height[parents[u]] = max(height[parents[u]], height[u] + 1)
    for level in range(max(height[1:], default=-1) + 1):
        phases.append([t for c in range(count) for u in range(1, column) if height[u] == level
                       for t in send(c + count * u, c + count * parents[u], set(held[c + count * u]))])
    phases.append([t for v in range(1, count) for t in send(v, 0, set(held[v]))])
    return _with_copies(coll, [p for p in phases if p])
