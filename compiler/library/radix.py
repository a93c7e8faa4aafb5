"""All-to-all for short and middle blocks: Bruck's index algorithm in radix k, k from a closed form.

Bruck, Ho, Kipnis, Upfal and Weathersby, "Efficient algorithms for all-to-all communications
in multiport message-passing systems", IEEE TPDS 8(11), 1997, Sec. 3 (the index operation in
radix r): block (o, f) has distance j = (f - o) mod P, written in base k as digits j_0, j_1, ...
For each digit i (lowest first) and each value m = 1 .. k - 1, one round: every node sends the
blocks it holds whose digit i is m, packed as one message, to the node m k^i ahead (mod P), which
keeps them. After the rounds each block has moved the sum of its digits' steps, j: it is at f.

On 2^d nodes with a radix 2^a the rounds pair nodes instead, as the hypercube's exchanges do
(Bokhari's multiphase exchange, seed 003, with packed messages): the digits are those of
j = o XOR f and a round's partner is the node XOR m k^i, so two nodes swap their messages, which
a multistage network (SP2, CS-2) carries without the conflicts of a shift.

The trade-off (Bruck et al. Sec. 3.3): radix k takes (k - 1) ceil(log_k P) rounds (fewer where
the top digit does not reach k - 1), each message carrying about P/k blocks, so each byte
crosses about (k - 1)/k log_k P messages. Radix 2 in shifts is `bruck` (log2 P start-ups, each
byte about log2(P)/2 times); radix P is `direct` (P - 1 start-ups, each byte once). Between
them, where a block's bytes cost about as much as a start-up (128 B - 2 KB on the seeds'
machines), a middle radix wins.

`radix-bruck` takes the plan of least time by a closed form of its rounds (node_rounds_s: each
node's start-ups, bytes and copies summed, the busiest node's sum): a radix among
`radices` and, in pairs, how many top bits of the distance go first as one digit of their own
(`Plan`). Those rounds send blocks still at their origin, each round one run of the send
buffer (the finals of another 2^(d - t)-node part), as they lie, unpacked (issue 27, branch
hcshort: hypercube:6 at 128 B 1.066 -> 1.004 ms, two top bits first, then radix 2).
`auto` ranks the chosen plan against the other algorithms as it ranks them all. Every block is
a Transfer per hop with its own origin and final, forwarded by the nodes it passes (as in
index.py), packed before each send at the machine's copy rate where its round packs (where
the port deposits, PortModel.deposits, only the blocks still at their origin: index.py).

Where a communication processor runs the messages (PortModel.shared_engine: the Paragon's
second i860, seed 003 Sec. 3.1; the SP2's and CS-2's, Sec. 1) the compute processor packs a
round while the previous round is sent: the blocks held before that round are packed in its
send phase, those it brought after it (radix_rounds' `overlap`; docs/targets.md), in every
plan (the top bits first send their runs unpacked, so the overlap starts with the lower
digits). There the plan is the least of overlapped_rounds_s (rounds in step: paragon:8x8
alltoall 128 B, two top bits first then radix 4, 1.304 -> 1.277 ms), unless a plan with its
top bits last ranks faster by engine_rounds_s, node by node: a sparse pattern's (paragon:8x8,
every node to the first 8 at 128 B: 0.644 -> 0.450 ms; issue 27, branch radix), with the busiest
link on the CS-2's fat tree (cs2:64, the same pattern: 1.419 -> 1.159 ms, radix 2 under the
top five bits last; issue 27, branch pgv2). On that fat tree, where the plan is in radix 4
(the lowest digit a leaf's four nodes), the leaf digit's rounds may go in halves beside the
first three higher rounds (Plan.split_leaf, split_steps), so that only two of a leaf's worms
come down its one link in those rounds; best_plan takes that form where worm_rounds_s ranks it
faster (cs2:64 alltoallv 128 B 2.541 -> 2.361 ms; issue 27, branch pgv3). On a mesh of
fixed routes (the Paragon's) the rounds whose worms all cross the middle of every row run two
by two with those that cross the middle of every column, a checkerboard class of the nodes on
each in turn (Plan.pairs, grid_pairs), where worm_rounds_s ranks that faster (paragon:8x8
alltoallv 128 B 1.3038 -> 1.2429 ms, 2 KB 10.45 -> 8.81; branch pgv3).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import NamedTuple

import numpy as np

from phalanx.compiler.columns import MessagePhase, PhaseColumns
from phalanx.compiler.library.index import ForwardedBlocks, Step, joined, local_copy_rows
from phalanx.compiler.library.registry import Machine, PortModel, Route
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase

MAX_RADIX = 32  # radices tried; above it a round carries under P/32 blocks, near `direct`
# Blocks above which best_plan does not rank the split or paired forms, whose estimate follows
# every block (a complete exchange's whole rounds are counted, not followed): paragon:32x32's
# 1M blocks take 0.7 CPU-s, a 4096-node exchange's 16.8M would take gigabytes.
FOLLOWED_BLOCKS_MAX = 1 << 22


def pairwise(nprocs: int, radix: int) -> bool:
    """Whether the rounds pair nodes by XOR: P and the radix powers of two."""
    return nprocs & (nprocs - 1) == 0 and radix & (radix - 1) == 0


def distances(origin: np.ndarray, final: np.ndarray, nprocs: int, radix: int) -> np.ndarray:
    """What each block's rounds spell in base `radix`: o XOR f where pairwise, else f - o mod P."""
    return origin ^ final if pairwise(nprocs, radix) else (final - origin) % nprocs


def partners(nodes: np.ndarray, step: int, nprocs: int, radix: int) -> np.ndarray:
    """Where `nodes` send in a round of `step` = m k^i: node XOR step, or step ahead."""
    return nodes ^ step if pairwise(nprocs, radix) else (nodes + step) % nprocs


def steps(nprocs: int, radix: int) -> list[tuple[int, int]]:
    """The rounds of radix `radix` on `nprocs` nodes, in order: (place value k^i, digit m),
    one per digit value some distance 1 .. P - 1 has."""
    out = []
    place = 1
    while place < nprocs:
        out += [(place, m) for m in range(1, radix) if m * place < nprocs]
        place *= radix
    return out


class Plan(NamedTuple):
    """What radix-bruck runs: the radix, and how many top bits of the distance form one digit
    of their own (0: none, every digit in `radix`, lowest place first), sent first and unpacked,
    or with `top_last` last and packed, after the lower digits lowest first."""

    radix: int
    top_bits: int
    top_last: bool = False
    split_leaf: bool = False  # the lowest digit's rounds in halves beside the others (split_steps)
    pairs: tuple[tuple[int, int, int], ...] = ()  # a grid's far rounds two by two (grid_pairs)


Round = tuple[int, int, int, bool]  # place value, the digit's base, the digit, packed


def ordered_steps(nprocs: int, plan: Plan) -> list[Round]:
    """The rounds as run. Top bits t > 0 (pairwise only): first, for each value m of the
    distance's top t bits, a round of the blocks whose top bits are m: blocks still at their
    origin (a block sent in one of them arrives with top bits 0), the finals whose top bits are
    the sender's XOR m: one run of side-by-side blocks of its send buffer, sent as they lie,
    not packed. Then the lower bits in `radix`, every round packing blocks from several
    messages, from the highest place down (the rounds commute; on cs2:64 and torus:8x8 this
    order ran 1-6% faster than lowest first, measured, not derived). t = 0: lowest place first,
    as before. (In shifts such a run wraps round the buffer's end: not offered.)
    With `top_last` the lower digits go lowest place first and the top digit's rounds last,
    packed (the blocks they carry have come from several nodes): where the pattern's blocks
    from one node share their top bits (every node to the first eighth), the lower rounds
    spread them and the top rounds are empty at most nodes (issue 27, branch radixplan)."""
    below = nprocs >> plan.top_bits
    def base(place: int) -> int:  # in pairs the top lower digit spans only the bits left
        return min(plan.radix, below // place) if pairwise(nprocs, plan.radix) else plan.radix
    lower = [(place, base(place), digit, True) for place, digit in steps(below, plan.radix)]
    top_digits = range(1, 1 << plan.top_bits) if plan.top_bits else range(0)
    if plan.top_last:
        return lower + [(below, 1 << plan.top_bits, digit, True) for digit in top_digits]
    if plan.top_bits:
        lower.sort(key=lambda r: (-r[0], r[2]))
    return [(below, 1 << plan.top_bits, digit, False) for digit in top_digits] + lower


LEAF = 4  # nodes under one leaf switch of the CS-2's fat tree: the lowest radix-4 digit


def splittable(nprocs: int, plan: Plan) -> bool:
    """Whether split_steps can run `plan`'s rounds: pairs in radix 4 (the lowest digit a leaf's
    four nodes), at least three rounds of the higher digits to go beside its halves."""
    return (plan.radix == LEAF and not plan.top_last and pairwise(nprocs, plan.radix)
            and sum(place > 1 for place, *_ in ordered_steps(nprocs, plan)) >= LEAF - 1)


def split_steps(nprocs: int, plan: Plan) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The rounds of a plan with `split_leaf`, each as (place, base, digit) of every leaf
    position (node mod 4), the position's partner the node XOR digit x place: the higher
    digits' rounds in ordered_steps' order, and each value m of the lowest digit (partners in
    the node's leaf) in two halves beside the first three of them: in round 2m - 1 the pair of
    positions {q, q XOR m} without position 0 swaps its blocks of digit m while the other pair
    runs higher round m, in round 2m the other way round. On the CS-2 every route into a leaf
    comes down one link (the `entry link` bound), so a round of the higher digits puts all
    four of a leaf's worms on it one after another while their engines wait; in the split
    rounds two (issue 27, branch pgv3). Both nodes of a pair of positions have run the same
    higher rounds when they swap, so every block still meets each of its digits' rounds at
    the nodes it passes (the rounds commute; the simulator checks the data)."""
    higher = [(place, base, digit) for place, base, digit, _packed
              in ordered_steps(nprocs, plan._replace(split_leaf=False)) if place > 1]
    positions = np.arange(LEAF)
    rounds = []

    def each(first: np.ndarray, leaf: tuple[int, int, int], other: tuple[int, int, int]):
        return tuple(np.where(first, a, b) for a, b in zip(leaf, other))

    for m in range(1, LEAF):
        first = (positions != 0) & ((positions ^ m) != 0)  # the pair without position 0 swaps first
        rounds += [each(first, (1, LEAF, m), higher[m - 1]), each(~first, (1, LEAF, m), higher[m - 1])]
    return rounds + [tuple(np.full(LEAF, v) for v in step) for step in higher[LEAF - 1:]]


def _split_rounds(blocks: ForwardedBlocks, plan: Plan) -> list[PlanRound]:
    """split_steps' rounds over `blocks`, followed from their origins: in a round the blocks at
    a node whose distance has its position's digit, sent to the node XOR digit x place."""
    at = blocks.origin.copy()
    out = []
    for place, base, digit in split_steps(blocks.nprocs, plan):
        step = place * digit
        here = at % LEAF
        moved = np.flatnonzero((at ^ blocks.final) // place[here] % base[here] == digit[here])
        at[moved] ^= step[here[moved]]
        out.append((moved, _split_to(step), True))
    return out


def grid_pairs(nprocs: int, plan: Plan, grid: tuple[int, int]) -> tuple[tuple[int, int, int], ...]:
    """The rounds a plan on a grid of 2^a x 2^b nodes (row-major: the column in the low bits)
    runs two by two (Plan.pairs): in ordered_steps' order, the steps that flip the column's top
    bit and not the row's (their worms all cross the middle of every row) with those that flip
    the row's top bit and not the column's (the middle of every column), first with first, as
    (row step, column step, mask), where the two are of different digits of one base (their
    rounds carry like shares of the blocks: paired unlike, paragon:8x8 alltoall 4-16 KB in radix
    32 under the top bit, and two values of one digit, paragon:4x8 alltoall 2 KB, ran 7-11%
    slower). The mask picks the lowest column bit and the lowest row bit
    that neither step flips: in a pair's two rounds the nodes whose masked bits have even
    parity (a checkerboard where both are there) run the row step, the others the column step,
    then the other way round, so half of a row's nodes send across its middle in each, and of a
    column's where a row bit is free (issue 27, branch pgv3). None where the plan is not in pairs
    of nodes or has other rounds apart."""
    rows, cols = grid
    if (plan.top_last or plan.split_leaf or not pairwise(nprocs, plan.radix)
            or rows & (rows - 1) or cols & (cols - 1) or rows < 2 or cols < 2):
        return ()
    col_bits = cols.bit_length() - 1
    col_mask, row_top = cols - 1, nprocs >> 1
    col_top = 1 << (col_bits - 1)
    digit_of = {place * digit: (place, base) for place, base, digit, _packed in ordered_steps(nprocs, plan)}
    along_rows = [step for step in digit_of if step & col_top and not step & row_top]
    along_cols = [step for step in digit_of if step & row_top and not step & col_top]
    pairs = []
    for across_row, across_col in zip(along_rows, along_cols):
        (row_place, row_base), (col_place, col_base) = digit_of[across_row], digit_of[across_col]
        if row_place == col_place or row_base != col_base:
            continue  # two values of one digit, or rounds that carry unlike shares of the blocks
        flipped = across_row | across_col
        free_col = [1 << i for i in range(col_bits) if not flipped & 1 << i]
        free_row = [1 << i for i in range(col_bits, nprocs.bit_length() - 1) if not flipped & 1 << i]
        mask = (free_col[0] if free_col else 0) | (free_row[0] if free_row else 0)
        if mask & col_mask:  # a column bit splits each row's senders across its middle
            pairs.append((across_row, across_col, mask))
    return tuple(pairs)


def _parity(nodes: np.ndarray, mask: int) -> np.ndarray:
    """Each node's parity of its bits in `mask` (0 or 1)."""
    bits = nodes & mask
    out = np.zeros_like(bits)
    while bits.any():
        out ^= bits & 1
        bits >>= 1
    return out


def _paired_rounds(blocks: ForwardedBlocks, plan: Plan) -> list[PlanRound]:
    """ordered_steps' rounds with Plan.pairs two by two (grid_pairs), each pair where its
    earlier step was: in its first round the even class of its mask runs the row step and the
    odd class the column step, in its second the other way round. A block needs each step at
    most once, its class stays through the pair's rounds (the mask's bits are flipped by
    neither), so every block meets each of its digits' rounds. Whole rounds keep their packing
    until the first pair (after it no block lies where an unpacked round expects it)."""
    n = blocks.nprocs
    fields = {place * digit: (place, base, digit) for place, base, digit, _packed in ordered_steps(n, plan)}
    paired = {step: pair for pair in plan.pairs for step in pair[:2]}
    at = blocks.origin.copy()
    out: list[PlanRound] = []
    done: set[int] = set()
    for place, _base, digit, packed in ordered_steps(n, plan):
        step = place * digit
        if step not in paired:
            moved = np.flatnonzero((at ^ blocks.final) // place % fields[step][1] == digit)
            at[moved] ^= step
            out.append((moved, _to(step, n, plan.radix), packed and not done))
            continue
        if step in done:
            continue
        across_row, across_col, mask = paired[step]
        done |= {across_row, across_col}
        for first, second in ((across_row, across_col), (across_col, across_row)):
            odd = _parity(at, mask)
            chosen = np.where(odd == 0, first, second)
            place_of, base_of, digit_of = (np.array([fields[s][i] for s in (first, second)])
                                           for i in range(3))
            moved = np.flatnonzero((at ^ blocks.final) // place_of[odd] % base_of[odd] == digit_of[odd])
            at[moved] ^= chosen[moved]
            out.append((moved, _paired_to(first, second, mask), True))
    return out


def _paired_to(even: int, odd: int, mask: int) -> Step:
    """partners' rule of a paired round: the even class XOR `even`, the odd XOR `odd`."""
    return lambda nodes: nodes ^ np.where(_parity(nodes, mask) == 0, even, odd)


def _split_to(step: np.ndarray) -> Step:
    """partners' rule of a split round: each node XOR its leaf position's step."""
    return lambda nodes: nodes ^ step[nodes % LEAF]


def radix_rounds(coll: Collective, plan: Plan, overlap: bool = False, deposits: bool = False) -> PhaseColumns:
    """The rounds of `plan`: the local copies first, then per round a pack phase (where
    ordered_steps packs) and a send phase. Every block (o, f) that crosses the network is
    followed at once (numpy columns, in the order of o, then f): `at` is the node holding it.
    With `deposits` (PortModel.deposits) a round packs only the blocks still at their origin.

    With `overlap` (a node whose communication processor sends while its compute processor
    copies), a round's pack is split: the blocks the node held before the previous round are
    packed in that round's send phase, beside its send; only those the previous round brought
    are packed after it (an unpacked round, ordered_steps' top bits first, packs nothing)."""
    m = coll.matrix
    blocks = ForwardedBlocks(m, deposits)
    rounds = plan_rounds(blocks, plan)
    if not overlap:
        tables = [local_copy_rows(m)]
        for moved, step, packed in rounds:
            tables += blocks.round_tables(moved, step, packed)
        return joined(tables)
    assert not deposits, "overlapped rounds pack every block (no machine both deposits and overlaps)"
    first = [blocks.pack_rows(rounds[0][0])] if rounds and rounds[0][2] else []
    tables = [np.concatenate([local_copy_rows(m)] + first)]
    for r, (moved, step, _) in enumerate(rounds):
        later = _next_packed(rounds, r, moved)
        brought = np.isin(later, moved)
        early = blocks.pack_rows(later[~brought])  # held before this round: packed beside its send
        tables += [np.concatenate([blocks.send_rows(moved, step), early]),
                   blocks.pack_rows(later[brought])]
    return joined(tables)


PlanRound = tuple[np.ndarray, Step, bool]  # the blocks a round moves, where to, whether packed


def plan_rounds(blocks: ForwardedBlocks, plan: Plan) -> list[PlanRound]:
    """ordered_steps' rounds over `blocks`: the blocks each moves (by their distance's digit),
    its partners' rule, and whether it packs."""
    if plan.split_leaf:
        return _split_rounds(blocks, plan)
    if plan.pairs:
        return _paired_rounds(blocks, plan)
    n, radix = blocks.nprocs, plan.radix
    distance = distances(blocks.origin, blocks.final, n, radix)
    return [(np.flatnonzero(distance // place % base == digit), _to(digit * place, n, radix), packed)
            for place, base, digit, packed in ordered_steps(n, plan)]


def _next_packed(rounds: list[PlanRound], r: int, moved: np.ndarray) -> np.ndarray:
    """The blocks the round after round r packs (none after the last, or where it sends its
    blocks as they lie)."""
    return rounds[r + 1][0] if r + 1 < len(rounds) and rounds[r + 1][2] else moved[:0]


def _to(step: int, nprocs: int, radix: int) -> Step:
    """partners' rule for a round of `step`, as a function of the nodes."""
    return lambda nodes: partners(nodes, step, nprocs, radix)


def radix_round_messages(coll: Collective, plan: Plan, overlap: bool = False,
                         deposits: bool = False) -> Iterator[MessagePhase]:
    """The messages of radix_rounds' phases from counts, without its transfers: each node that
    holds blocks to move in a round packs them into one local copy (where ordered_steps packs)
    and sends them as one message, the bytes summed (as cost.messages groups them), nodes in
    ascending order. With `overlap`, radix_rounds' overlapped phases."""
    m = coll.matrix
    if overlap:
        # 16.8M blocks on 4096 nodes: not followed (the split and paired forms are)
        block = None if plan.split_leaf or plan.pairs else coll.complete_block_bytes
        yield from (uniform_overlapped_round_messages(np.diagonal(m), plan, block)
                    if block is not None else overlapped_round_messages(m, plan))
        return
    own = np.flatnonzero(np.diagonal(m) > 0)
    if len(own):
        yield MessagePhase(own, own, m[own, own])
    yield from round_messages(coll, plan, deposits)


def round_messages(coll: Collective, plan: Plan, deposits: bool = False) -> Iterator[MessagePhase]:
    """radix_round_messages' rounds, without the own blocks' copies before them."""
    block = None if plan.split_leaf or plan.pairs else coll.complete_block_bytes
    if block is not None:  # 16.8M blocks on 4096 nodes: not followed
        yield from uniform_round_messages(coll.nprocs, plan, block, deposits)
    else:
        yield from followed_round_messages(coll.matrix, plan, deposits)


def uniform_overlapped_round_messages(own: np.ndarray, plan: Plan, block: int) -> Iterator[MessagePhase]:
    """overlapped_round_messages of a complete exchange of `block`-byte blocks (`own`: the
    bytes each node keeps), from counts as uniform_round_messages: every node holds the same
    blocks relative to itself, so a round's early pack is the distances of the next packed
    round that this round does not move, its late pack those it moves."""
    n = len(own)
    nodes = np.arange(n, dtype=np.int64)
    distance = np.arange(1, n)
    rounds = [(place * digit, distance // place % base == digit, packed)
              for place, base, digit, packed in ordered_steps(n, plan)]

    def phase(step: int | None, sent: int, packed: int) -> MessagePhase:
        senders = nodes if step is not None and sent else nodes[:0]
        copiers = nodes if packed else nodes[:0]
        to = partners(senders, step, n, plan.radix) if step is not None else senders
        return MessagePhase(np.concatenate([senders, copiers]), np.concatenate([to, copiers]),
                            np.concatenate([np.full(len(senders), sent * block, dtype=np.int64),
                                            np.full(len(copiers), packed * block, dtype=np.int64)]))

    first = int(rounds[0][1].sum()) if rounds and rounds[0][2] else 0
    keep = own.astype(np.int64) + first * block
    copiers = np.flatnonzero(keep > 0)
    yield MessagePhase(copiers, copiers, keep[copiers])
    for r, (step, moved, _) in enumerate(rounds):
        later = rounds[r + 1][1] if r + 1 < len(rounds) and rounds[r + 1][2] else np.zeros_like(moved)
        yield phase(step, int(moved.sum()), int((later & ~moved).sum()))
        late = int((later & moved).sum())
        if late:
            yield phase(None, 0, late)


def overlapped_round_messages(m: np.ndarray, plan: Plan) -> Iterator[MessagePhase]:
    """radix_rounds' phases with `overlap`, its blocks followed: the own blocks' and the first
    round's pack, then per round its sends with the next round's pack of the blocks held before
    it, then the pack of those it brought (each phase's sends, then its copies, nodes ascending)."""
    n = len(m)
    blocks = ForwardedBlocks(m)
    rounds = plan_rounds(blocks, plan)

    def held(moved: np.ndarray) -> np.ndarray:
        return np.bincount(blocks.at[moved], weights=blocks.nbytes[moved], minlength=n)

    def phase(sent: np.ndarray, step: Step | None, packed: np.ndarray) -> MessagePhase:
        send_nodes = np.flatnonzero(held(sent) > 0) if step is not None else sent[:0]
        send_bytes = np.rint(held(sent)[send_nodes]).astype(np.int64)
        copy_nodes = np.flatnonzero(packed > 0)
        to = step(send_nodes) if step is not None else send_nodes
        return MessagePhase(np.concatenate([send_nodes, copy_nodes]), np.concatenate([to, copy_nodes]),
                            np.concatenate([send_bytes, np.rint(packed[copy_nodes]).astype(np.int64)]))

    own = np.diagonal(m).astype(np.float64) + (held(rounds[0][0]) if rounds and rounds[0][2] else 0.0)
    yield phase(blocks.origin[:0], None, own)
    for r, (moved, step, _) in enumerate(rounds):
        later = _next_packed(rounds, r, moved)
        brought = np.isin(later, moved)
        early = held(later[~brought])
        sending = phase(moved, step, early)
        blocks.at[moved] = step(blocks.at[moved])
        yield sending
        late = held(later[brought])
        if late.any():
            yield phase(blocks.origin[:0], None, late)


def uniform_round_messages(n: int, plan: Plan, block: int, deposits: bool = False) -> Iterator[MessagePhase]:
    """radix_round_messages' rounds of a complete exchange of `block`-byte blocks: the rounds
    commute with a shift of every node (with an XOR where pairwise), so before each round every
    node holds the same blocks relative to itself, one per distance 1 .. P - 1 (Bruck et al.,
    Sec. 3), and sends those whose digit at the round's place is the round's digit (packing
    them, with `deposits` those no earlier round moved)."""
    nodes = np.arange(n, dtype=np.int64)
    distance = np.arange(1, n)
    moved_before = np.zeros(n - 1, dtype=bool)
    radix = plan.radix
    for place, base, digit, packed in ordered_steps(n, plan):
        moving = distance // place % base == digit
        count = int(moving.sum())
        packs = int((moving & ~moved_before).sum()) if deposits else count
        moved_before |= moving
        if count:
            if packed and packs:
                yield MessagePhase(nodes, nodes, np.full(n, packs * block, dtype=np.int64))
            yield MessagePhase(nodes, partners(nodes, digit * place, n, radix),
                               np.full(n, count * block, dtype=np.int64))


def followed_round_messages(m: np.ndarray, plan: Plan, deposits: bool = False) -> Iterator[MessagePhase]:
    """radix_round_messages' rounds for any matrix, its blocks followed round by round."""
    blocks = ForwardedBlocks(m, deposits)
    for moved, step, packed in plan_rounds(blocks, plan):
        yield from blocks.round_messages(moved, step, packed)


def radices(nprocs: int) -> list[int]:
    """The radices `radix-bruck` chooses from: on 2^d nodes the powers of two 2 .. min(P/2,
    MAX_RADIX) (pairwise rounds), else 3 .. min(P - 1, MAX_RADIX)."""
    if nprocs & (nprocs - 1) == 0:
        return [1 << a for a in range(1, nprocs.bit_length() - 1) if 1 << a <= MAX_RADIX]
    return list(range(3, min(nprocs - 1, MAX_RADIX) + 1))


def overlapped_rounds_s(coll: Collective, plan: Plan, port: PortModel) -> float:
    """A rounds-in-step estimate where a node copies beside its sends (radix_rounds' `overlap`): per phase the
    longer of its busiest sender's start-up and bytes (twice through the shared engine) and
    its busiest node's copy."""
    engine = 2.0 if port.shared_engine else 1.0
    total_s = 0.0
    for phase in radix_round_messages(coll, plan, overlap=True):
        copies = phase.src == phase.dst
        send_s = (port.startup_s + engine * port.s_per_byte / port.streams
                  * float(phase.nbytes[~copies].max(initial=0))) if (~copies).any() else 0.0
        total_s += max(send_s, port.copy_s_per_byte * float(phase.nbytes[copies].max(initial=0)))
    return total_s


def plans(nprocs: int, packing: bool) -> list[Plan]:
    """What best_plan chooses from: each radix with no top bits apart, then (on 2^d nodes, where
    `packing` costs time: the top bits save copies) top bits t = 1 .. min(d - 1, log2
    MAX_RADIX) first, under them each radix up to 2^(d - t), then t = 2 .. that last, packed,
    under them each radix below 2^t (a radix of 2^t or more lower bits first is close to the
    radix alone). Where copies are free the radices alone: ranking the 40 plans of an uneven
    exchange on 1024 nodes takes about 5 CPU-s, 5 plans 0.6."""
    whole = [Plan(radix, 0) for radix in radices(nprocs)]
    if nprocs & (nprocs - 1) or not packing:
        return whole
    d = nprocs.bit_length() - 1
    tops = range(1, min(d - 1, MAX_RADIX.bit_length() - 1) + 1)
    first = [Plan(radix, t) for t in tops for radix in radices(nprocs) if radix <= nprocs >> t]
    last = [Plan(radix, t, True) for t in tops if t >= 2
            for radix in radices(nprocs) if radix <= nprocs >> t and radix < 1 << t]
    return whole + first + last


def node_rounds_s(coll: Collective, plan: Plan, port: PortModel) -> float:
    """What best_plan ranks plans by on a port per node (not a shared engine): each node's own
    rounds, followed node by node: in a round a node that sends packs its blocks at the copy
    rate, pays a start-up and its bytes through its port; a node that receives is ready for
    the next round when the message has arrived (its sender's end). The plan's time is the
    latest node's. Rounds in step (a start-up for every round some node sends in) charge a
    sparse pattern's nodes for rounds they sit out: hypercube:6, every node to the first 8 at
    128 B, lower bits in radix 2 then the top four packed, 4 start-ups a node, simulates
    0.391 ms where rounds in step charge 17 and rank it 1.49 ms (issue 27, branch radixplan).
    Links shared by a round's messages are not counted."""
    n = coll.nprocs
    ready_s = np.zeros(n)
    send_s_per_byte = port.s_per_byte / port.streams
    packs_s = np.zeros(n)
    for phase in round_messages(coll, plan, port.deposits):
        copies = phase.src == phase.dst
        if copies.all():  # a round's pack, done by its senders before they send
            packs_s = np.bincount(phase.src, minlength=n, weights=port.copy_s_per_byte * phase.nbytes)
            continue
        src, dst = phase.src[~copies], phase.dst[~copies]
        end_s = ready_s[src] + packs_s[src] + port.startup_s + send_s_per_byte * phase.nbytes[~copies]
        ready_s[src] = end_s
        np.maximum.at(ready_s, dst, end_s)
        packs_s = np.zeros(n)
    return float(ready_s.max(initial=0.0))


def engine_rounds_s(coll: Collective, plan: Plan, port: PortModel, routes: Routes | None = None) -> float:
    """What best_plan ranks a shared engine's plans by (PortModel.shared_engine: the Paragon,
    SP2 and CS-2), node by node as node_rounds_s, the rounds overlapped (radix_rounds'
    `overlap`), each node's engine carrying its sends (a start-up and the bytes) and its
    receives (the bytes) in turn: in a phase a node is done when its copies (its compute
    processor, beside the engine), its engine's work and the messages it receives are. It
    follows a sparse pattern's nodes, most of which sit out most rounds: paragon:8x8 every
    node to the first 8 at 128 B, radix 2 under the top four bits last (issue 27, branch
    radix).

    Given the fixed routes (`routes`: best_plan passes the CS-2's fat tree), the plan also lasts as
    long as its busiest link: a link passes its worms one at a time, none before the first
    of their senders is ready and has paid a start-up, so it is done no sooner than that plus
    all its rounds' bytes at link_s_per_byte (LinkFloor). Nodes that sit out rounds run
    ahead, and their rounds' worms meet on the links: cs2:64, every node to the first 8 at
    128 B, where the fat tree brings every worm into a leaf of receivers down one link, ranks
    radix 2 under the top five bits last first, as the simulator does (issue 27, branch
    pgv2)."""
    n = coll.nprocs
    ready_s = np.zeros(n)
    send_s_per_byte = port.s_per_byte / port.streams
    links = LinkFloor(routes, port) if routes is not None and port.link_s_per_byte > 0 else None
    for phase in radix_round_messages(coll, plan, overlap=True):
        copies = phase.src == phase.dst
        copied_s = ready_s + np.bincount(phase.src[copies], minlength=n,
                                         weights=port.copy_s_per_byte * phase.nbytes[copies])
        if copies.all():  # a pack of what the previous round brought
            ready_s = copied_s
            continue
        src, dst, wire_s = phase.src[~copies], phase.dst[~copies], send_s_per_byte * phase.nbytes[~copies]
        if links is not None:
            links.add(src, dst, phase.nbytes[~copies], ready_s[src])
        engine_s = np.bincount(src, weights=port.startup_s + wire_s, minlength=n) \
            + np.bincount(dst, weights=wire_s, minlength=n)
        done_s = np.maximum(copied_s, ready_s + engine_s)
        np.maximum.at(done_s, dst, ready_s[src] + port.startup_s + wire_s)
        ready_s = done_s
    nodes_s = float(ready_s.max(initial=0.0))
    return max(nodes_s, links.done_s()) if links is not None else nodes_s


def worm_rounds_s(coll: Collective, plan: Plan, port: PortModel, routes: Routes) -> float:
    """engine_rounds_s with the worms of a phase that share a link passing it one after
    another: a message arrives no sooner than its sender is ready, a start-up, and the bytes
    of the phase's messages on the busiest link of its route. best_plan ranks a plan against
    its paired form by it on the Paragon's mesh (1.200 against 1.307 ms, simulated 1.243
    against 1.304, paragon:8x8 alltoallv 128 B), and against its split_leaf form on the CS-2's
    fat tree, where engine_rounds_s, which counts a
    link's bytes over all rounds, gives the same links' load to both and misses the four
    worms of a leaf in one round (cs2:64, the grid's alltoallv of 128 B, radix 4 under the
    top two bits, whole against split: engine_rounds_s 1.937 against 2.060 ms, this one 2.576
    against 2.336, simulated 2.541 against 2.361). Copies as engine_rounds_s counts them."""
    n = coll.nprocs
    ready_s = np.zeros(n)
    send_s_per_byte = port.s_per_byte / port.streams
    for phase in radix_round_messages(coll, plan, overlap=True):
        copies = phase.src == phase.dst
        copied_s = ready_s + np.bincount(phase.src[copies], minlength=n,
                                         weights=port.copy_s_per_byte * phase.nbytes[copies])
        if copies.all():
            ready_s = copied_s
            continue
        src, dst, nbytes = phase.src[~copies], phase.dst[~copies], phase.nbytes[~copies]
        wire_s = send_s_per_byte * nbytes
        links, lengths = routes.links(src, dst)
        load = np.zeros(len(routes.number))
        np.add.at(load, links, np.repeat(nbytes.astype(np.float64), lengths))
        busiest = np.maximum.reduceat(load[links], np.concatenate([[0], np.cumsum(lengths)[:-1]]))
        arrive_s = ready_s[src] + port.startup_s + np.maximum(wire_s, busiest * port.link_s_per_byte)
        engine_s = np.bincount(src, weights=port.startup_s + wire_s, minlength=n) \
            + np.bincount(dst, weights=wire_s, minlength=n)
        done_s = np.maximum(copied_s, ready_s + engine_s)
        np.maximum.at(done_s, src, arrive_s)
        np.maximum.at(done_s, dst, arrive_s)
        ready_s = done_s
    return float(ready_s.max(initial=0.0))


class Routes:
    """The machine's fixed routes as link numbers, each pair's found once (best_plan ranks many
    plans over the same pairs)."""

    def __init__(self, route: Route):
        self.route = route
        self.number: dict[Hashable, int] = {}
        self.paths: dict[tuple[int, int], np.ndarray] = {}

    def links(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The link numbers of every message's route, one after another, and each route's length."""
        paths = []
        for pair in zip(src.tolist(), dst.tolist()):
            path = self.paths.get(pair)
            if path is None:
                path = self.paths[pair] = np.array(
                    [self.number.setdefault(link, len(self.number)) for link in self.route(*pair)],
                    dtype=np.int64)
            paths.append(path)
        lengths = np.array([len(path) for path in paths], dtype=np.int64)
        return (np.concatenate(paths) if paths else np.zeros(0, dtype=np.int64)), lengths


class LinkFloor:
    """Each link's bytes over a plan's rounds and the earliest its first worm can start (its
    sender ready, as engine_rounds_s follows it), for engine_rounds_s's busiest link."""

    def __init__(self, routes: Routes, port: PortModel):
        self.routes, self.port = routes, port
        self.bytes = np.zeros(0)
        self.first_s = np.zeros(0)

    def add(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, ready_s: np.ndarray) -> None:
        links, lengths = self.routes.links(src, dst)
        grow = len(self.routes.number) - len(self.bytes)
        if grow > 0:
            self.bytes = np.concatenate([self.bytes, np.zeros(grow)])
            self.first_s = np.concatenate([self.first_s, np.full(grow, np.inf)])
        np.add.at(self.bytes, links, np.repeat(nbytes.astype(np.float64), lengths))
        np.minimum.at(self.first_s, links, np.repeat(ready_s, lengths))

    def done_s(self) -> float:
        """The latest a link can be done: its first worm's start, a start-up, all its bytes."""
        used = self.bytes > 0
        if not used.any():
            return 0.0
        return float((self.first_s[used] + self.port.startup_s
                      + self.bytes[used] * self.port.link_s_per_byte).max())


def best_plan(coll: Collective, machine: Machine) -> Plan:
    """The plan of least node_rounds_s (the first of the least; radix 3 in shifts where there
    is no choice). On a communication processor (shared_engine) the plan of least
    overlapped_rounds_s (rounds in step, overlapped), unless one with top bits last ranks
    faster by engine_rounds_s (node by node: a sparse pattern's, issue 27, branch radix; with
    the busiest link on a fat tree of one route a pair, the CS-2's: not the SP2's, whose
    adapter spreads a message over several, nor the Paragon's mesh, measured). On that fat
    tree a radix-4 plan's split_leaf form, on a mesh its far rounds two by two (grid_pairs),
    where worm_rounds_s ranks that faster (up to FOLLOWED_BLOCKS_MAX blocks)."""
    port = machine.port
    choices = plans(coll.nprocs, port.copy_s_per_byte > 0)
    if len(choices) <= 1:
        return choices[0] if choices else Plan(3, 0)
    if not port.shared_engine:
        return choices[int(np.argmin([node_rounds_s(coll, plan, port) for plan in choices]))]
    in_step = choices[int(np.argmin([overlapped_rounds_s(coll, plan, port) for plan in choices]))]
    last = [plan for plan in choices if plan.top_last]
    if not last:
        return in_step
    # the fat tree's links (one route a pair, no grid): not a mesh's, where the floor misranked
    # paragon:16x16 sparse 128 B (1.475 -> 1.615 ms) and 4x8 alltoallv 2 KB (4.19 -> 4.40 ms)
    fat_tree = machine.route is not None and machine.adapter is None and machine.grid is None
    routes = Routes(machine.route) if fat_tree else None
    times_s = [engine_rounds_s(coll, plan, port, routes) for plan in last]
    chosen = (last[int(np.argmin(times_s))] if min(times_s) < engine_rounds_s(coll, in_step, port, routes)
              else in_step)
    if np.count_nonzero(coll.matrix) > FOLLOWED_BLOCKS_MAX:
        return chosen
    if machine.grid is not None and machine.route is not None and machine.adapter is None:
        return _paired_if_faster(coll, chosen, machine)
    if routes is None or not splittable(coll.nprocs, chosen):
        return chosen
    split = chosen._replace(split_leaf=True)
    faster = worm_rounds_s(coll, split, port, routes) < worm_rounds_s(coll, chosen, port, routes)
    return split if faster else chosen


def _paired_if_faster(coll: Collective, chosen: Plan, machine: Machine) -> Plan:
    """On a mesh of fixed routes (the Paragon's) `chosen` with its far rounds two by two
    (grid_pairs) where worm_rounds_s over the mesh's routes ranks that faster."""
    pairs = grid_pairs(coll.nprocs, chosen, machine.grid)
    if not pairs:
        return chosen
    routes, paired = Routes(machine.route), chosen._replace(pairs=pairs)
    port = machine.port
    faster = worm_rounds_s(coll, paired, port, routes) < worm_rounds_s(coll, chosen, port, routes)
    return paired if faster else chosen


def radix_bruck_columns(coll: Collective, machine: Machine) -> PhaseColumns:
    port = machine.port
    return radix_rounds(coll, best_plan(coll, machine), port.shared_engine, port.deposits)


def radix_bruck_messages(coll: Collective, machine: Machine) -> Iterator[MessagePhase]:
    port = machine.port
    return radix_round_messages(coll, best_plan(coll, machine), port.shared_engine, port.deposits)


def radix_bruck_phases(coll: Collective, machine: Machine) -> list[Phase]:
    return list(radix_bruck_columns(coll, machine).phases())


def radix_bruck_s(nprocs: int, block_bytes: int, plan: Plan, port: PortModel) -> float:
    """The closed form on one port per node (not a shared engine), a complete exchange of
    `block_bytes` blocks: the own block's copy, then per round (place k^i, digit m) a start-up
    and the n blocks whose distance has digit m at place k^i, packed (copy, where
    ordered_steps packs; where the port deposits, only the n' of them no earlier round moved)
    and sent (beta): copy b + sum over rounds of (alpha + copy? n' b + beta n b)."""
    total_s = port.copy_s_per_byte * block_bytes
    moved_before: set[int] = set()
    for place, base, digit, packed in ordered_steps(nprocs, plan):
        moving = {j for j in range(1, nprocs) if j // place % base == digit}
        packs = len(moving - moved_before) if port.deposits else len(moving)
        moved_before |= moving
        total_s += port.startup_s + (port.copy_s_per_byte * packs * packed
                                     + port.s_per_byte * len(moving)) * block_bytes
    return total_s
