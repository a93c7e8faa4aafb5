"""`halving-fan-in` reduce: recursive halving over the lowest k rank bits, then two fan-ins.

halving-direct (knomial.py) halves the partials over the lowest k rank bits and reduces each of
the 2^k pieces over the other d - k bits by a binomial tree (d - k start-ups) before the pieces
go straight to the root. Receiving costs no start-up in the port models (docs/bounds.md), so
the binomial part can be one phase as well: every member sends its piece at once to the member
of its column (the same k low bits) whose other bits are 0, which takes 2^(d-k) - 1 pieces
through its port, and then those 2^k members send theirs to the root, which takes 2^k - 1. That
is k + 2 start-ups where halving-direct takes d + 1, for pieces of n / 2^k bytes through the
collectors' ports: on ideal:64 at 2 KB, k = 4: 6 alpha + (15/16 + 3/16 + 15/16) n beta plus
merges, 105.0 us against halving-direct's 112.9 (halving_fan_in_s, the closed form, checked in
tests/compiler/library/test_halvingfanin.py). Issue 27's 2 KB reduces; docs/efficiency.md
(branch reducebound). k = d is halving-direct with k = d; k = 0 every partial straight to the
root (knomial with k = P).
"""

from __future__ import annotations

from collections.abc import Hashable

from phalanx.compiler.library.eager import eager_of
from phalanx.compiler.library.members import local_copies, rooted_order
from phalanx.compiler.library.registry import Machine, PortModel, Route
from phalanx.compiler.library.rooted import Halving, _with_copies
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer


def fan_in_s(pieces: int, piece_bytes: float, element_bytes: int, port: PortModel,
             links: int = 1) -> float:
    """`pieces` messages of `piece_bytes` into one member at once: one start-up, the pieces
    through its port (over `links` at once), each merged while the next arrives
    (cost.knomial_reduce_s's round): alpha + m beta' + (c - 1) max(m beta', m gamma / e) +
    m gamma / e with beta' = beta / links; 0 for no pieces."""
    if pieces <= 0:
        return 0.0
    move_s = piece_bytes * port.s_per_byte / links
    merge_s = piece_bytes / element_bytes * port.combine_s_per_op
    return port.startup_s + move_s + (pieces - 1) * max(move_s, merge_s) + merge_s


def halving_fan_in_s(members: int, halved: int, partial_bytes: int, element_bytes: int,
                     port: PortModel, links: int = 1) -> float:
    """halving_fan_in_phases on 2^d members, a closed form on a one-port machine: k = `halved`
    rounds of recursive halving, each alpha + m (beta + gamma / e) for m = n / 2, ..., n / 2^k
    (twice the bytes' time on a shared engine: an estimate there), then the column fan-in of
    2^(d-k) - 1 pieces of n / 2^k into each collector and the 2^k - 1 collectors' pieces into
    the root (fan_in_s each, over `links`; the root is its column's collector, so the two
    follow each other on its port)."""
    d = members.bit_length() - 1
    per_byte_s = port.s_per_byte * (2 if port.shared_engine else 1) + port.combine_s_per_op / element_bytes
    piece = partial_bytes / 2 ** halved
    halves = sum(partial_bytes / 2 ** i for i in range(1, halved + 1))
    return (halved * port.startup_s + halves * per_byte_s
            + fan_in_s(2 ** (d - halved) - 1, piece, element_bytes, port, links)
            + fan_in_s(2 ** halved - 1, piece, element_bytes, port, links))


def fan_in_halved_rounds(coll: Collective, machine: Machine, members: int, links: int = 1) -> int:
    """The k in 0..lg P of least halving_fan_in_s (fan-ins over `links`) for the collective's
    partials (the larger of equals: smaller pieces)."""
    nbytes = coll.block_bytes or int(coll.network_matrix.max())
    element = coll.element_bytes or nbytes
    return min(range(members.bit_length()), key=lambda k: (
        halving_fan_in_s(members, k, nbytes, element, machine.port, links), -k))


def halving_fan_in_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """halving_fan_in_over with k of least halving_fan_in_s."""
    return halving_fan_in_over(coll, fan_in_halved_rounds(coll, machine, len(rooted_order(coll))))


def eager_halving_fan_in_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """halving_fan_in_over's transfers in eager phases (eager.py) on a grid whose nodes stream
    several messages, k of least halving_fan_in_s with each fan-in over two links: in rank order
    (node order) the members that send a collector their pieces lie in its column, so their
    pieces come in by the column's two links at once, and the collectors are spread_collectors'
    where the machine names its routes; the first round's message in two parts
    (early_part_first). torus:8x8, 2 KB: k = 3, 197.45 us; 209.6 with the first round in one
    message, 214.55 with the collectors in the root's row besides; the one-port form's k = 4,
    219.95."""
    links = min(machine.port.streams, 2)
    order = rooted_order(coll)
    halved = fan_in_halved_rounds(coll, machine, len(order), links)
    collectors = (spread_collectors(order, 1 << halved, machine.route) if machine.route is not None
                  else None)
    halving, rounds = fan_in_rounds(coll, halved, collectors)
    copies = local_copies(coll)
    if halved < 2:
        return eager_of(_with_copies(coll, [r for r in rounds if r]))
    early, late = early_part_first(halving, rounds[0])
    return ([Phase(tuple(copies + early + late), tuple(copies + early), SyncMode.EAGER),
             Phase(tuple(rounds[1]), tuple(rounds[1] + late), SyncMode.EAGER)]
            + [Phase.of(r, SyncMode.EAGER) for r in rounds[2:] if r])


def early_part_first(halving: Halving, first: list[Transfer]) -> tuple[list[Transfer], list[Transfer]]:
    """The first halving round's transfers in two messages a pair: the pieces its receiver gives
    away in the second round (received in the first round's phase), then those it keeps after it
    (received in the second round's phase, another message id). An eager member then starts its
    second round's message once the first part is in and merged, while the second part still
    streams: the round costs its sender a second start-up (h) and saves the chain the second
    half's wire and merge (torus:8x8, 2 KB: the first two rounds end at 89.25 us, not 101.4;
    the second round split the same way too: 94.85)."""
    count, order = halving.count, halving.order
    rank = {node: v for v, node in enumerate(order)}
    piece = {offset: j for j, (offset, _) in enumerate(halving.pieces)}
    early, late = [], []
    for t in first:
        v = rank[t.dst]
        lo, hi = (0, count // 2) if not v & 1 else (count // 2, count)  # v's pieces after round 1
        mid = (lo + hi) // 2
        kept = (lo, mid) if not v & 2 else (mid, hi)  # and after round 2
        j = piece[t.offset]  # count >= 4 pieces of at least an element: distinct offsets
        if kept[0] <= j < kept[1]:
            late.append(t._replace(message=COMBINED + 1))
        else:
            early.append(t)
    return early, late


def spread_collectors(order: list[int], count: int, route: Route) -> list[int]:
    """For each piece j (the members v with v mod `count` = j, by virtual rank), the member that
    collects it and sends it to the root: the root for its own piece; for the others, nearest
    piece first, the member whose route's last link into the root carries the fewest collectors'
    pieces so far (then the nearest, then the lowest rank). In rank order the collectors of
    halving_fan_in_over (members 0 .. 2^k - 1) lie in the root's row and all come in by its two
    row links; spread, the root takes them by four (torus:8x8, 2 KB, k = 3: 214.55 -> 209.6 us,
    the same halving and column fan-ins)."""
    root = order[0]
    members = [[v for v in range(j, len(order), count)] for j in range(count)]

    def hops(v: int) -> int:
        return len(route(order[v], root))

    load: dict[Hashable, int] = {}
    chosen = [0] * count
    for j in sorted(range(1, count), key=lambda j: (min(hops(v) for v in members[j]), j)):
        best = min(members[j], key=lambda v: (load.get(route(order[v], root)[-1], 0), hops(v), v))
        last = route(order[best], root)[-1]
        load[last] = load.get(last, 0) + 1
        chosen[j] = best
    return chosen


def halving_fan_in_over(coll: Collective, halved: int, collectors: list[int] | None = None) -> list[Phase]:
    """fan_in_rounds' transfers in local phases, each node's copy of its own partial first."""
    return _with_copies(coll, [r for r in fan_in_rounds(coll, halved, collectors)[1] if r])


def fan_in_rounds(coll: Collective, halved: int,
                  collectors: list[int] | None = None) -> tuple[Halving, list[list[Transfer]]]:
    """Members by virtual rank (root 0, 2^d of them): with mask 1, 2, ..., 2^(k-1) member v keeps
    the half of its pieces on v's side and sends its partner v XOR mask the other half of every
    partial it holds (combined); then every member sends all it holds to its piece's collector
    (`collectors[v mod 2^k]`, by default v mod 2^k itself; the root collects its own piece),
    and the collectors other than the root send theirs to the root; k = `halved`. The halving's
    state and the k + 2 rounds' transfers."""
    halving = Halving(coll, halved)
    n, count, send, held = halving.n, halving.count, halving.send, halving.held
    collectors = collectors or list(range(count))
    rounds = halving.rounds()
    moves = [(v, collectors[v % count], set(held[v])) for v in range(1, n) if v != collectors[v % count]]
    rounds.append([t for v, to, tokens in moves for t in send(v, to, tokens)])
    moves = [(v, 0, set(held[v])) for v in collectors[1:]]
    rounds.append([t for v, to, tokens in moves for t in send(v, to, tokens)])
    return halving, rounds
