"""`subpage-bruck`: Bruck's index algorithm with its rounds filled to whole subpages (issue 27,
docs/efficiency.md session 21).

A KSR-1 read loop moves whole 128-byte subpages (seed 002 Sec. 2.2), a turn of the reading loop
each. Bruck's rounds (compiler/library/index.py: in round k every cell sends the blocks whose
distance has bit k set 2^k ahead) carry half the blocks each: for 32 cells and blocks of 4 to 12
bytes (an uneven all-to-all of 8 B on average) about 128 bytes a round, and most cells go over
the subpage in most rounds: two turns a round, 10 in all. Here the rounds' distances are
Bruck's powers of two and EXTRA ones, and each block takes any set of rounds whose distances add
up to its own distance (mod P), chosen so that no cell's round goes over a subpage: with one
extra round of distance 3, six rounds of one subpage each on that case.

The route search (`route_blocks`): blocks from the largest, each on the set of rounds that
loads the fullest of its cells' rounds least (fewer rounds on a tie); then moves of random
blocks to random other sets, kept where the bytes over the subpages do not grow (a seeded
walk, deterministic, which stops after 10 tries a block without a gain). Of the candidate
round sets (Bruck's alone, then with each prefix of EXTRA) it keeps the one with the fewest
turns: the sum over rounds of the busiest cell's subpages, fewer rounds on a tie. Then the
rounds run as index.py's do: each holder packs what it sends, and the blocks move on as in
Bruck's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from phalanx.compiler.columns import PhaseColumns
from phalanx.compiler.library.index import ForwardedBlocks, joined, local_copy_rows
from phalanx.compiler.recognize import Collective

EXTRA = (3, 5, 6)  # extra rounds' distances, tried in prefixes
MOVES_A_BLOCK = 20  # the walk's tries per block
STALL_A_BLOCK = 10  # and per block without a gain, before it stops
MAX_CELLS = 64  # the search is quadratic in the cells: offered up to here


@dataclass(frozen=True)
class Routing:
    """Round distances and, per block (ForwardedBlocks' order) and round, whether it takes it."""

    distances: tuple[int, ...]
    takes: np.ndarray  # bool, blocks x rounds
    turns: int  # sum over rounds of the busiest cell's subpages


def round_sets(distances: tuple[int, ...], nprocs: int) -> dict[int, list[tuple[int, ...]]]:
    """Every set of rounds (ascending), by the distance its rounds add up to mod nprocs, of
    those that visit a cell at most once and never their origin again (a block is delivered
    where it first reaches its cell, and one back at its origin would be its own again)."""
    sets: dict[int, list[tuple[int, ...]]] = {}
    for mask in range(1, 1 << len(distances)):
        chosen = tuple(k for k in range(len(distances)) if mask >> k & 1)
        reached = [sum(distances[k] for k in chosen[:j]) % nprocs for j in range(1, len(chosen) + 1)]
        if 0 not in reached and len(set(reached)) == len(reached):
            sets.setdefault(reached[-1], []).append(chosen)
    return sets


def route_blocks(m: np.ndarray, distances: tuple[int, ...], subpage: int, seed: int = 0) -> Routing | None:
    """The routes of the module docstring for round distances `distances` (None: some block's
    distance is no sum of them)."""
    n = len(m)
    blocks = ForwardedBlocks(m)
    origin, final, nbytes = blocks.origin, blocks.final, blocks.nbytes.astype(np.int64)
    sets = round_sets(distances, n)
    if any((int(f) - int(o)) % n not in sets for o, f in zip(origin, final)):
        return None
    load = np.zeros((n, len(distances)), np.int64)

    def cells(o: int, chosen: tuple[int, ...]) -> list[tuple[int, int]]:
        at, out = o, []
        for k in chosen:
            out.append((at, k))
            at = (at + distances[k]) % n
        return out

    def add(o: int, chosen: tuple[int, ...], size: int) -> None:
        for at, k in cells(o, chosen):
            load[at, k] += size

    route: list[tuple[int, ...]] = [()] * len(origin)
    for b in sorted(range(len(origin)), key=lambda b: -int(nbytes[b])):
        o, size = int(origin[b]), int(nbytes[b])
        options = sets[(int(final[b]) - o) % n]
        route[b] = min(options, key=lambda c: (max((load[at, k] + size for at, k in cells(o, c)), default=0),
                                               len(c)))
        add(o, route[b], size)
    def over(touched: set[tuple[int, int]]) -> int:
        return sum(max(int(load[at, k]) - subpage, 0) for at, k in touched)

    total_over = int(np.maximum(load - subpage, 0).sum())
    rng = random.Random(seed)
    stalled = 0
    for _ in range(MOVES_A_BLOCK * len(origin)):
        if total_over == 0 or stalled > STALL_A_BLOCK * len(origin):
            break
        b = rng.randrange(len(origin))
        o, size = int(origin[b]), int(nbytes[b])
        other = rng.choice(sets[(int(final[b]) - o) % n])
        touched = set(cells(o, route[b])) | set(cells(o, other))
        before = over(touched)
        add(o, route[b], -size)
        add(o, other, size)
        change = over(touched) - before
        if change <= 0:
            route[b], total_over = other, total_over + change
            stalled = 0 if change < 0 else stalled + 1
        else:
            add(o, other, -size)
            add(o, route[b], size)
            stalled += 1
    takes = np.zeros((len(origin), len(distances)), bool)
    for b, chosen in enumerate(route):
        takes[b, list(chosen)] = True
    turns = int(np.ceil(load / subpage).max(axis=0).sum())
    return Routing(distances, takes, turns)


def best_routing(m: np.ndarray, subpage: int) -> Routing:
    """Of Bruck's rounds alone and with each prefix of EXTRA (distances below P), the routing
    of fewest turns, then fewest rounds."""
    n = len(m)
    bruck = tuple(1 << k for k in range((n - 1).bit_length()))
    extras = [d for d in EXTRA if d < n and d not in bruck]
    found = [r for j in range(len(extras) + 1)
             if (r := route_blocks(m, bruck + tuple(extras[:j]), subpage)) is not None]
    return min(found, key=lambda r: (r.turns, len(r.distances)))


def subpage_bruck_columns(coll: Collective, subpage: int) -> PhaseColumns:
    """The local copies, then per round a pack phase and a send phase (index.py's rounds)."""
    m, n = coll.matrix, coll.nprocs
    routing = best_routing(m, subpage)
    blocks = ForwardedBlocks(m)
    tables = [local_copy_rows(m)]
    for k, distance in enumerate(routing.distances):
        tables += blocks.round_tables(np.flatnonzero(routing.takes[:, k]),
                                      lambda nodes, d=distance: (nodes + d) % n)
    return joined(tables)


def small_machine(coll: Collective) -> str | None:
    """Why the route search is not run (None: it is)."""
    if coll.nprocs > MAX_CELLS:
        return f"its routes are searched block by block, offered up to {MAX_CELLS} cells, not {coll.nprocs}"
    return None
