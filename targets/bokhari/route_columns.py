"""The Bokhari machines' routes and transfer programs for many messages at once, in numpy.

routing.py routes one pair at a time (`MeshRoute`, `ecube_route`, `FatTreeRoutes.one`) and
network.py builds a pair's transfer program from its route. The native core takes the programs
of a whole schedule at once (runtime/network.py `Network.transfer_programs`), so here the same
routes come as columns: per message its hops as integer link keys in path order, and a `hop`
function that turns a key back into the hop routing.py names, so that both find the same link
Resource.
`route_programs` lays the programs out around the routes. The keys are arithmetic on the
nodes' coordinates (mesh), bits (hypercube) or base-4 digits (fat tree), one array operation
per hop position or level, never per pair. tests/targets/bokhari/test_route_columns.py holds
them to the per-pair routes and programs, every pair of small machines of each kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.runtime.engine import Pool, Resource
from phalanx.runtime.network import Acquire, ProgramColumns, Release

Hop = tuple[Any, Any]  # a directed link between two routing points (routing.Hop)
# Mesh link key = node * 4 + direction; the (d row, d column) of each direction.
MESH_STEPS = ((0, 1), (0, -1), (1, 0), (-1, 0))
CUBE_BITS = 64  # hypercube link key = node * 64 + the bit its hop flips


@dataclass(frozen=True)
class RouteColumns:
    """The routes of many messages: message i's hops are keys[offsets[i]:offsets[i + 1]], in
    path order; `hop(key)` is the hop a key stands for."""

    offsets: np.ndarray  # int64, one more than messages
    keys: np.ndarray  # int64
    hop: Callable[[int], Hop]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def mesh_columns(cols: int, src: np.ndarray, dst: np.ndarray) -> RouteColumns:
    """Row-column routes on a mesh of `cols` columns (routing.MeshRoute): along the row to
    the destination's column, then along that column."""
    (r, c), (r2, c2) = np.divmod(src, cols), np.divmod(dst, cols)
    along_row, along_col = np.abs(c2 - c), np.abs(r2 - r)
    offsets = _offsets(along_row + along_col)
    owner = np.repeat(np.arange(len(src)), along_row + along_col)
    k = np.arange(offsets[-1]) - offsets[owner]  # the hop's number on its route
    in_row = k < along_row[owner]
    step_c, step_r = np.sign(c2 - c)[owner], np.sign(r2 - r)[owner]
    at_r = np.where(in_row, r[owner], r[owner] + (k - along_row[owner]) * step_r)
    at_c = np.where(in_row, c[owner] + k * step_c, c2[owner])
    direction = np.where(in_row, np.where(step_c > 0, 0, 1), np.where(step_r > 0, 2, 3))

    def hop(key: int) -> Hop:
        node, d = divmod(key, 4)
        (row, col), (dr, dc) = divmod(node, cols), MESH_STEPS[d]
        return ((row, col), (row + dr, col + dc))

    return RouteColumns(offsets, (at_r * cols + at_c) * 4 + direction, hop)


def ecube_columns(src: np.ndarray, dst: np.ndarray) -> RouteColumns:
    """E-cube routes (routing.ecube_route): the differing bits flipped from the lowest up."""
    diff = src ^ dst
    bits = np.arange(int(diff.max()).bit_length() if len(diff) else 0, dtype=np.int64)
    flips = (diff[:, None] >> bits & 1).astype(bool)
    at = src[:, None] ^ (diff[:, None] & ((1 << bits) - 1))  # the node before flipping bit b

    def hop(key: int) -> Hop:
        node, bit = divmod(key, CUBE_BITS)
        return (node, node ^ (1 << bit))

    return RouteColumns(_offsets(flips.sum(axis=1)), (at * CUBE_BITS + bits)[flips], hop)


def fat_tree_top(levels: int, arity: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The highest level where each message's source and destination digits differ (0 where
    none does): its route climbs that far (routing.FatTreeRoutes.all's `top`)."""
    weights = arity ** np.arange(levels, dtype=np.int64)
    differ = src // weights[:, None] % arity != dst // weights[:, None] % arity  # (levels, n)
    return np.where(differ.any(axis=0), levels - 1 - np.argmax(differ[::-1], axis=0), 0)


def fat_tree_columns(levels: int, arity: int, up_port: Callable[[np.ndarray, np.ndarray, int], Any],
                     src: np.ndarray, dst: np.ndarray, alternative: np.ndarray | None = None) -> RouteColumns:
    """Route `alternative[i]` (0 where None) of routing.FatTreeRoutes for every message: node to
    leaf switch, up to the lowest level where source and destination digits agree above, down,
    switch to node; alternative r adds r to the up-port at every level (FatTreeRoutes.one).
    `up_port(s, t, level)` is FatTreeRoutes.up_port on digit arrays (s[i]: every source's
    digit i). A routing point is a number: node p is p, switch (level, label) comes after
    the arity ** levels node numbers, the label's digits read in base `arity`."""
    weights = arity ** np.arange(levels, dtype=np.int64)
    s, t = src // weights[:, None] % arity, dst // weights[:, None] % arity  # (levels, n)
    top = fat_tree_top(levels, arity, src, dst)
    shift = 0 if alternative is None else alternative
    nodes, per_level = arity ** levels, arity ** (levels - 1)
    points = nodes + levels * per_level
    rows = np.arange(len(src))
    keys = np.zeros((len(src), 2 * levels), np.int64)
    label = src // arity  # the leaf switch's label: the source's digits 1..levels-1
    at = nodes + label
    keys[:, 0] = src * points + at
    for level in range(levels - 1):  # up from `level` to `level + 1` where level < top
        going = level < top
        weight = weights[level]
        label_up = label + ((up_port(s, t, level) + shift) % arity - label // weight % arity) * weight
        up = nodes + (level + 1) * per_level + label_up
        keys[going, 1 + level] = (at * points + up)[going]
        at, label = np.where(going, up, at), np.where(going, label_up, label)
    for level in range(levels - 1, 0, -1):  # down from `level` to `level - 1` where level <= top
        going = level <= top
        weight = weights[level - 1]
        label_down = label + (t[level] - label // weight % arity) * weight
        down = nodes + (level - 1) * per_level + label_down
        keys[rows[going], (1 + 2 * top - level)[going]] = (at * points + down)[going]
        at, label = np.where(going, down, at), np.where(going, label_down, label)
    keys[rows, 2 * top + 1] = at * points + dst
    used = np.arange(2 * levels) < (2 * top + 2)[:, None]

    def point(number: int) -> Any:
        if number < nodes:
            return ("node", number)
        level, digits = divmod(number - nodes, per_level)
        return ("switch", level, tuple(digits // arity ** i % arity for i in range(levels - 1)))

    def hop(key: int) -> Hop:
        a, b = divmod(key, points)
        return (point(a), point(b))

    return RouteColumns(_offsets(2 * top + 2), keys[used], hop)


def route_programs(routes: RouteColumns, link_index: np.ndarray, head: list[ProgramColumns],
                   middle: list[ProgramColumns], tail: list[ProgramColumns],
                   resources: tuple[Resource | Pool, ...]) -> ProgramColumns:
    """Each message's program: `head`, an Acquire of each link of its route in path order,
    `middle`, a Release of each link in reverse order, `tail`. `link_index[h]` is the index
    in `resources` of hop h of `routes.keys`."""
    offsets = routes.offsets
    owner = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    reverse = offsets[owner] + offsets[owner + 1] - 1 - np.arange(len(owner))  # hops back to front
    return ProgramColumns.joined([*head, ProgramColumns.run(Acquire, offsets, link_index), *middle,
                                  ProgramColumns.run(Release, offsets, link_index[reverse]), *tail],
                                 resources)
