"""Pipelined binary trees for long messages: the block in segments flowing down a binary tree
(a reduce: partials combined on the way up), and the split-binary tree (each half of the block
down one subtree, the halves exchanged between the subtrees at the end).

Open MPI's tuned broadcast (`bintree`, `split_bintree`) and MPICH's segmented trees. Members by
virtual rank (members.rooted_order), each tree in heap order: the children of the i-th member of
a tree are its (2i + 1)-th and (2i + 2)-th. A node sends one message per slot: segment j to its
first child in slot o + 1 + 2j and to its second in slot o + 2 + 2j, where o is the slot in which
it received segment 0 (the root's o is -1). Each slot is one phase, so a node receives at most
one message and sends at most one per phase; its first child's o is o + 1, its second's o + 2.
The closed forms of these schedules on a one-port machine are in cost.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rooted import _with_copies, element_pieces, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, WHOLE, Phase, SyncMode, Transfer

MAX_SEGMENTS = 4096


def heap_children(members: list[int]) -> dict[int, list[int]]:
    """Children of each member of a heap-ordered binary tree over `members` (the first is its root)."""
    return {v: [members[c] for c in (2 * i + 1, 2 * i + 2) if c < len(members)]
            for i, v in enumerate(members)}


def first_slots(children: dict[int, list[int]], root: int) -> dict[int, int]:
    """The slot in which each node receives segment 0 (the root: -1): a node's k-th child
    (k = 0, 1) receives it k + 1 slots after the node did."""
    slots, todo = {root: -1}, [root]
    while todo:
        v = todo.pop()
        for k, c in enumerate(children.get(v, [])):
            slots[c] = slots[v] + 1 + k
            todo.append(c)
    return slots


def binary_fill_slots(n: int) -> int:
    """Slots until the last node of an n-member heap binary tree holds segment 0."""
    return max(first_slots(heap_children(list(range(n))), 0).values()) + 1 if n > 1 else 0


def split_trees(n: int) -> tuple[list[int], list[int]]:
    """The members 1..n-1 of a split-binary tree in two halves, the first as large or one more."""
    half = n // 2
    return list(range(1, 1 + half)), list(range(1 + half, n))


def split_fill_slots(n: int) -> int:
    """Slots until the last node of a split-binary tree holds its half's segment 0."""
    left, right = split_trees(n)
    children = {0: [t[0] for t in (left, right) if t]} | heap_children(left) | heap_children(right)
    return max(first_slots(children, 0).values()) + 1 if n > 1 else 0


def best_segments(fill_slots: int, per_byte_s: float, startup_s: float, nbytes: int) -> int:
    """Segments s minimising (fill_slots - 2 + 2 s)(alpha + beta nbytes / s), the time of a
    pipelined binary tree (cost.py): s = sqrt((fill_slots - 2) beta nbytes / (2 alpha)), at
    least 1 and at most one per byte."""
    if fill_slots <= 2 or startup_s <= 0 or nbytes <= 1:
        return 1
    best = math.sqrt((fill_slots - 2) * per_byte_s * nbytes / (2 * startup_s))
    return max(1, min(nbytes, round(best), MAX_SEGMENTS))


def _slotted(children: dict[int, list[int]], root: int, count: int,
             send: Callable[[int, int, int], list[Transfer]]) -> list[list[Transfer]]:
    """Phases of a pipelined tree: node v sends segment j to its k-th child c in slot
    first_slots[v] + 1 + 2 j + k, as send(v, c, j)."""
    starts = first_slots(children, root)
    phases: dict[int, list[Transfer]] = {}
    for v, kids in children.items():
        for k, c in enumerate(kids):
            for j in range(count):
                phases.setdefault(starts[v] + 1 + 2 * j + k, []).extend(send(v, c, j))
    return [phases.get(t, []) for t in range(max(phases, default=-1) + 1)]


def binary_segments(coll: Collective, machine: Machine) -> int:
    """Segments of a pipelined binary tree's block (a reduce: of its partial, cut between
    elements, with the merge of a segment's elements added to its bytes' time)."""
    n, port = len(rooted_order(coll)), machine.port
    if coll.kind is Kind.REDUCE:
        if coll.element_bytes is None or coll.block_bytes is None:
            return 1
        elements = coll.block_bytes // coll.element_bytes
        per_element_s = port.s_per_byte * coll.element_bytes + port.combine_s_per_op
        return best_segments(binary_fill_slots(n), per_element_s, port.startup_s, elements)
    return best_segments(binary_fill_slots(n), port.s_per_byte, port.startup_s,
                         coll.block_bytes or 1)


def binary_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Pipelined binary tree: a broadcast's segments go down the heap tree of the members, a
    reduce's come up it (the broadcast's slots in reverse), each node combining its children's
    partial segments with its own before sending the sum on."""
    order = rooted_order(coll)
    n, root, m = len(order), order[0], coll.byte_matrix
    children = heap_children(list(range(n)))
    count = binary_segments(coll, machine)
    if coll.kind is Kind.REDUCE:
        pieces = element_pieces(coll, count)
        below = _descendants(children)

        def up(v: int, c: int, j: int) -> list[Transfer]:
            offset, nbytes = pieces[j]
            return [Transfer(order[c], order[v], nbytes if count > 1 else m[order[o]][root],
                             order[o], root, COMBINED, offset if count > 1 else WHOLE)
                    for o in below[c] if m[order[o]][root]]
        return _with_copies(coll, _slotted(children, 0, count, up)[::-1])
    pieces = segments(coll.block_bytes or 0, count)

    def down(v: int, c: int, j: int) -> list[Transfer]:
        offset, nbytes = pieces[j]
        dst = order[c]
        if count == 1:
            return [Transfer(order[v], dst, m[root][dst], root, dst)] if m[root][dst] else []
        return [Transfer(order[v], dst, nbytes, root, dst, offset=offset)]
    return _with_copies(coll, _slotted(children, 0, count, down))


def _descendants(children: dict[int, list[int]]) -> dict[int, list[int]]:
    """Each node and the nodes below it."""
    out: dict[int, list[int]] = {}

    def walk(v: int) -> list[int]:
        out[v] = [v] + [u for c in children.get(v, []) for u in walk(c)]
        return out[v]
    walk(0)
    return out


def split_segments(coll: Collective, machine: Machine) -> int:
    """Segments of each half in a split-binary tree."""
    port = machine.port
    return best_segments(split_fill_slots(len(rooted_order(coll))), port.s_per_byte,
                         port.startup_s, (coll.block_bytes or 2) // 2)


def split_binary_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """Split-binary tree (Open MPI's split_bintree): the members past the root in two halves,
    each a heap binary tree; the first half of the block flows down the first tree and the
    second down the other, in segments; then the i-th members of the two trees swap halves
    (the first tree's extra member, if any, gets the second half from the root)."""
    order = rooted_order(coll)
    n, root = len(order), order[0]
    block = coll.block_bytes or 0
    count = split_segments(coll, machine)
    halves = [(0, block // 2), (block // 2, block - block // 2)]
    parts = [[(h0 + off, nbytes) for off, nbytes in segments(size, count)] for h0, size in halves]
    left, right = split_trees(n)
    half_of = {v: 0 for v in left} | {v: 1 for v in right}
    children = {0: [t[0] for t in (left, right) if t]} | heap_children(left) | heap_children(right)

    def piece(src: int, dst: int, offset: int, nbytes: int, tag: int = 0) -> Transfer:
        return Transfer(order[src], order[dst], nbytes, root, order[dst], tag, offset)

    def down(v: int, c: int, j: int) -> list[Transfer]:
        return [piece(v, c, *parts[half_of[c]][j])]
    phases = _slotted(children, 0, count, down)
    partners = list(zip(left, right)) + [(0, v) for v in left[len(right):]]
    swaps = [(a, b) for a, b in partners] + [(b, a) for a, b in partners if a]
    phases.append([piece(src, dst, *p, COMBINED) for src, dst in swaps
                   for p in parts[1 - half_of[dst]]])
    out = _with_copies(coll, phases)
    if partners:  # partners meet before they swap (a rendezvous): no half may queue at a
        # receive port still taking its tree's segments and hold them up
        last = out[-2]
        out[-2] = Phase(last.sends, last.recvs, SyncMode.BARRIER,
                        tuple((order[a], order[b]) for a, b in partners))
    return out
