"""`dimension-pipeline`: a broadcast or reduce of n pieces in n + d - 1 rounds on 2^d members.

Round t pairs every member v with v XOR 2^(t mod d) (the dimensions in turn, as recursive
doubling takes them once), and each member sends its partner the newest piece it holds that
the partner lacks; the root holds piece j from round j on, so it starts a new piece each
round. Every member then holds all n pieces after n + d - 1 rounds, the fewest rounds of one
message out per member that n pieces can take (lg P rounds for the last piece after its n - 1
predecessors; Bar-Noy, Kipnis and Schieber 2000 and Traff and Ripke 2008, "Optimal broadcast
for fully connected processor-node networks", J. Parallel Distrib. Comput. 68(7), give
schedules of that length for any P; this greedy one is for 2^d members, and its length is
checked by the generator and the tests). Each member sends at most one message and receives
at most one in a round, and each piece reaches each member once: a piece's messages form a
spanning tree from the root.

On a machine whose one engine carries a node's sends and its receives (the Paragon, SP2 and
CS-2) a round pairs members both ways, so each engine runs one start-up and two pieces' wire
times, alpha + 2 w a round while all pairs keep in step; the two-tree's slots join members in
cycles, many of odd length, whose three wire times cannot overlap (alpha + 3 w a slot,
measured on sp2:64). Out of step, a message of the next round takes a partner's engine
between the two wires of its round and delays that pair. The root's pair is one way (the root
has every piece), so it ends each round a wire early: on sp2:64 the rounds then measured
alpha + 2.7 w (1 MB: 137.7 ms). There the root takes its own result through the network
instead (`root_receives`): its partners send it the pieces as they send any member's, one
round more, every full round's pairs exchange both ways, and the rounds keep in step: 99.3 ms,
3.5% under the closed form (its first and last rounds are one way). On the Paragon's mesh and
the CS-2's fat tree a round's pairs also share links (docs/efficiency.md, branch pipeline).

The reduce runs the broadcast's rounds backwards: in the mirror of the round in which v sent
piece j to u, u sends v the sum of piece j over the members below u in piece j's tree, its own
merged with those it took from them in the later rounds' mirrors (twotree.py does the same
with its slots). Where the root takes its result through the network, its own partial goes
out to its partners and comes back in the sums. Elsewhere the root takes a piece's sum in
every round, and its copy of its own partial goes in pieces beside those
(rootcopy.copy_beside_receives), not whole before the first: on ideal:64 at 1 MB the whole
copy, charged as merges, held every round up by 1.2 ms (14.57 -> 13.39 ms, the closed form);
on hypercube:6, where the whole copy overlaps the first rounds, the pieces cost 1% (18.12 ->
18.37 ms).

Closed form (`dimension_pipeline_s` below): (n + d - 1) (alpha + c B / n), c = beta on a
port that sends and receives at once, 2 beta and n + d rounds on a shared engine, plus the
merge of a byte (gamma / e) in a reduce; n at its least, about sqrt((d - 1) c B / alpha).
Declared gap: the links a round's pairs share inside the network (the mesh, the fat tree),
rounds out of step, and the root's copy of its own block (beside its sends, rootcopy.py).
"""

from __future__ import annotations

import math

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import rooted_order
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.library.rootcopy import copy_beside_receives, copy_beside_sends
from phalanx.compiler.library.rooted import _with_copies, segments
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, Transfer

MAX_PIECES = 512

Round = list[tuple[int, int, int]]  # (sender, receiver, piece) in virtual ranks, root 0


def rounds(dims: int, pieces: int, root_receives: bool = False) -> list[Round]:
    """The rounds of the module docstring on 2^dims virtual ranks (root 0), `pieces` pieces.
    `root_receives`: the root also takes every piece from its partners (its own result's),
    one round more, so that every pair of a full round exchanges both ways."""
    members, everything = 1 << dims, (1 << pieces) - 1
    held = [0 if root_receives else everything] + [0] * (members - 1)  # bit j: piece j in
    most = pieces + dims - (0 if root_receives else 1)
    out: list[Round] = []
    while any(h != everything for h in held):
        if len(out) >= most:
            raise AssertionError(f"dimension-pipeline: {pieces} pieces on 2^{dims} members "
                                 f"need more than {most} rounds")
        t, bit = len(out), 1 << (len(out) % dims)
        offer = [(1 << min(t + 1, pieces)) - 1] + held[1:]  # the root's pieces so far
        sends = [(v, v ^ bit, (offer[v] & ~held[v ^ bit]).bit_length() - 1)
                 for v in range(members) if offer[v] & ~held[v ^ bit]]
        for _, u, j in sends:
            held[u] |= 1 << j
        out.append(sends)
    return out


def per_byte_s(coll: Collective, machine: Machine) -> float:
    """What a byte of a piece costs a round: its wire time, twice on an engine that carries
    the node's send and receive alike, plus its merge in a reduce."""
    port = machine.port
    wire = port.s_per_byte / port.streams * (2 if port.shared_engine else 1)
    if coll.kind is Kind.REDUCE:
        return wire + port.combine_s_per_op / (coll.element_bytes or 1)
    return wire


def dimension_pipeline_s(dims: int, pieces: int, nbytes: int, startup_s: float,
                         per_byte: float, root_receives: bool = False) -> float:
    """(n + d - 1) rounds of a start-up and a piece, one more where the root receives
    (module docstring)."""
    return (pieces + dims - 1 + root_receives) * (startup_s + per_byte * nbytes / pieces)


def piece_count(coll: Collective, machine: Machine, dims: int, units: int) -> int:
    """The n of least dimension_pipeline_s, at most one unit (byte or element) a piece."""
    nbytes, startup_s = coll.block_bytes or 1, machine.port.startup_s
    per_byte, more = per_byte_s(coll, machine), root_receives(coll, machine)
    if dims + more <= 1 or startup_s <= 0:
        return 1
    near = math.sqrt((dims - 1 + more) * per_byte * nbytes / startup_s)
    top = max(1, min(units, MAX_PIECES))
    candidates = {max(1, min(top, c)) for c in (math.floor(near), math.ceil(near))}
    return min(candidates, key=lambda n: (dimension_pipeline_s(dims, n, nbytes, startup_s,
                                                               per_byte, more), n))


def root_receives(coll: Collective, machine: Machine) -> bool:
    """On an engine that carries a node's sends and receives, the root takes its own result
    (its block, or the sum with its own partial) through the network: every pair of a round
    then exchanges both ways and the rounds keep in step (module docstring); elsewhere it
    copies its own block, no round more."""
    root = rooted_order(coll)[0]
    return machine.port.shared_engine and coll.byte_matrix[root][root] > 0


def _sums(dims: int, schedule: list[Round], pieces: int) -> list[list[list[int]]]:
    """For each round and each of its sends (v, u, j), the members below u in piece j's tree
    (u too) when u got the piece: whose values u's mirrored message to v sums."""
    below = [[[v] for v in range(1 << dims)] for _ in range(pieces)]
    out: list[list[list[int]]] = []
    for sends in reversed(schedule):  # a child is sent the piece after its parent got it
        out.append([list(below[j][u]) for _, u, j in sends])
        for (v, _, j), origins in zip(sends, out[-1]):
            below[j][v] += origins
    return out[::-1]


def dimension_pipeline_phases(coll: Collective, machine: Machine) -> list[Phase]:
    order = rooted_order(coll)
    members, root = len(order), order[0]
    dims = members.bit_length() - 1
    if members < 2:
        return _with_copies(coll, [])
    element = (coll.element_bytes or 1) if coll.kind is Kind.REDUCE else 1
    units = (coll.block_bytes or 0) // element
    count = piece_count(coll, machine, dims, units)
    parts = [(off * element, size * element) for off, size in segments(units, count)]
    m, through_network = coll.byte_matrix, root_receives(coll, machine)
    schedule = rounds(dims, count, through_network)
    phases: list[list[Transfer]] = []
    if coll.kind is Kind.REDUCE:  # backwards: each piece's sum from the child up to its parent
        sums = _sums(dims, schedule, count)
        for sends, origins in zip(reversed(schedule), reversed(sums)):
            phases.append([Transfer(order[u], order[v], parts[j][1], order[o], root, COMBINED,
                                    parts[j][0])
                           for (v, u, j), below in zip(sends, origins) for o in below
                           if m[order[o]][root]])
        if through_network:  # the root's partial goes out and comes back in the sums
            return [Phase.of(p) for p in phases]
        return copy_beside_receives(_with_copies(coll, phases), root)
    for sends in schedule:
        phases.append([Transfer(order[v], order[u], parts[j][1], root, order[u],
                                offset=parts[j][0]) for v, u, j in sends])
    if through_network:  # its own block reaches the root from its partners
        return [Phase.of(p) for p in phases]
    return copy_beside_sends(_with_copies(coll, phases), root)
