"""A scatter and an allgather in 2x2 subcubes of a 2^a x 2^b torus or mesh, both dimensions at
once (issue 27, branch torusbcast).

Nodes are row-major, so XOR with a column bit 2^i moves a node 2^i columns (2^i hops, the
shorter way round a ring) and XOR with a row bit 2^i moves it 2^i rows. Distance class i is
column bit i with row bit i (alone where the other dimension has no bit i). Where every node
swaps along one bit of class i at once, each link of a ring carries 2^i of the messages under
dimension-ordered routes (the pairs c, c XOR 2^i all cross one stretch of it). A class is done
in one round with the three other nodes of a node's 2x2 subcube (its column partner, its row
partner and the diagonal one, whose route shares a link with one of the other two), or in two
rounds of one partner each: `class_rounds` takes the one of smaller `round_s`.

- `subcube-doubling` allgather: recursive doubling by classes, farthest first, so that the
  rounds that move the most (half of everything at the end) go between neighbours, each member
  sending all it holds;
- `subcube-scatter`: the root's blocks down the same subcubes, nearest class first (the first
  messages carry the most blocks), each holder passing a partner the blocks of that partner's
  share of the subcube; node v's part is relative to the root (offset v XOR root).

On torus:8x8 at 128 B: the allgather in 0.284 ms (its diagonal partner first,
`diagonal_first`) where row then column rings (`dim-ordered`) take 0.484 and recursive doubling
in node order 0.729 (its 32-block swap four rows apart puts four messages on a link); the
scatter in 0.247 ms against `dim-ordered`'s 0.310. No closed form (`PORT_MODEL_GAP`):
`round_s` only ranks a class's two shapes.
"""

from __future__ import annotations

from phalanx.compiler.library.group import carry
from phalanx.compiler.library.members import group_order, local_copies, root_of
from phalanx.compiler.library.registry import Machine, PortModel
from phalanx.compiler.library.rooted import _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

Round = tuple[int, ...]  # the XOR masks a round spans: one bit, or a column and a row bit


def distance_classes(rows: int, cols: int) -> list[tuple[int, ...]]:
    """Class i's node masks, nearest first: column bit i and row bit i (row bit i is node bit
    log2(cols) + i), or the one of them the grid has."""
    col_bits, row_bits = cols.bit_length() - 1, rows.bit_length() - 1
    return [tuple(mask for bits, mask in ((col_bits, 1 << i), (row_bits, cols << i)) if i < bits)
            for i in range(max(col_bits, row_bits))]


def round_s(partners: int, message_bytes: float, hops: int, port: PortModel) -> float:
    """A round's time as `class_rounds` ranks it: a start-up per partner, then the message's
    bytes once for each of the `hops` messages that share a link of the ring (twice as many
    with three partners: the diagonal's route shares one of the others')."""
    sharing = hops * (2 if partners == 3 else 1)
    return partners * port.hold_s + sharing * message_bytes * port.s_per_byte


def class_rounds(masks: tuple[int, ...], held_bytes: float, hops: int, port: PortModel,
                 doubling: bool) -> list[Round]:
    """One round of the subcube, or one round per mask, whichever round_s ranks faster. A node
    enters the class holding `held_bytes`: a doubling member sends all of it and holds twice as
    much after one partner; a scatter's holder passes each partner its share (a half, or a
    quarter with three partners)."""
    if len(masks) == 1:
        return [masks]
    if doubling:
        both = round_s(3, held_bytes, hops, port)
        apart = round_s(1, held_bytes, hops, port) + round_s(1, 2 * held_bytes, hops, port)
    else:
        both = round_s(3, held_bytes / 4, hops, port)
        apart = round_s(1, held_bytes / 2, hops, port) + round_s(1, held_bytes / 4, hops, port)
    return [masks] if both <= apart else [(mask,) for mask in masks]


def span(masks: Round) -> list[int]:
    """The XOR offsets a round's masks span (0, the node itself, first)."""
    out = [0]
    for mask in masks:
        out += [s ^ mask for s in out]
    return out


def diagonal_first(offsets: list[int]) -> list[int]:
    """A doubling round's partners in the order a member sends to them: with three, the
    diagonal one first. Its route shares a link with the column partner's, so started first it
    streams while the processor starts the other two (torus:8x8, 128 B: 0.284 ms against 0.323
    for column, row, diagonal; a scatter's holder keeps that order, 0.247 against 0.253)."""
    partners = offsets[1:]
    return partners[-1:] + partners[:-1] if len(partners) == 3 else partners


def subcube_doubling_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The allgather: by classes farthest first, each member sending all it holds to the other
    members of its round's subcube (module docstring)."""
    rows, cols = machine.grid or (1, coll.nprocs)
    n, port = coll.nprocs, machine.port
    part = max((b for row in coll.byte_matrix for b in row), default=0)
    members = set(group_order(coll))
    held = [{v} & members for v in range(n)]
    phases: list[list[Transfer]] = []
    for i, masks in reversed(list(enumerate(distance_classes(rows, cols)))):
        count = len(held[0])
        for masks_of_round in class_rounds(masks, count * part, 1 << i, port, doubling=True):
            offsets = span(masks_of_round)
            phases.append([t for v in range(n) for s in diagonal_first(offsets)
                           for t in carry(coll, v, v ^ s, sorted(held[v]))])
            held = [set().union(*(held[v ^ s] for s in offsets)) for v in range(n)]
    if phases:
        phases[-1] += local_copies(coll)  # beside the last, largest exchange (group.py)
    return [Phase.of(p) for p in phases]


def subcube_scatter_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """The scatter: by classes nearest first, each holder passing each partner of its round's
    subcube the blocks of the nodes that partner then serves (module docstring)."""
    rows, cols = machine.grid or (1, coll.nprocs)
    n, port, m = coll.nprocs, machine.port, coll.byte_matrix
    root = root_of(coll)
    block = max(m[root][d] for d in range(n) if d != root) if n > 1 else 0
    held = {0: set(range(1, n))}  # holder offset -> the offsets of the nodes whose blocks it holds
    phases: list[list[Transfer]] = []
    for i, masks in enumerate(distance_classes(rows, cols)):
        for masks_of_round in class_rounds(masks, len(held[0]) * block, 1 << i, port, doubling=False):
            whole = 0
            for mask in masks_of_round:
                whole |= mask
            phase = []
            for h, offsets in list(held.items()):
                for s in span(masks_of_round)[1:]:
                    passed = {x for x in offsets if (x ^ h) & whole == s}
                    held[h] = held[h] - passed
                    held[h ^ s] = passed - {h ^ s}
                    phase += [Transfer(root ^ h, root ^ h ^ s, m[root][root ^ x], root, root ^ x,
                                       COMBINED) for x in sorted(passed) if m[root][root ^ x]]
            phases.append(phase)
    return _with_copies(coll, phases)
