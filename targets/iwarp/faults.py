"""Failed links on the iWarp torus (`--faults link-fail=...`, runtime/faults.py): e-cube routes
that go round them, and the phased messages that cannot.

E-cube routing allows two choices per ring: the short way or the long way round. X is always
routed before Y and `Torus.route_with` sets the dateline pools, so every route still crosses
each ring's dateline at most once and the channel dependencies stay acyclic.
"""

from __future__ import annotations

import numpy as np

from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.network import DIRECTIONS, FailedLink, NoRoute
from phalanx.targets.iwarp.topology import Torus

Route = tuple[tuple[int, int], ...]  # (link, pool) hops


class AvoidingRoutes:
    """The torus's e-cube routes, each replaced by the shortest allowed one that avoids the
    failed links; `rerouted` collects the pairs that left their usual route."""

    def __init__(self, torus: Torus, failed: tuple[FailedLink, ...], spec: str):
        self.torus = torus
        self.failed = failed_link_ids(torus, failed, spec)
        self._cache: dict[tuple[int, int], Route] = {}
        self.rerouted: set[tuple[int, int]] = set()

    def route(self, src: int, dst: int) -> Route:
        key = (src, dst)
        if key not in self._cache:
            self._cache[key] = self._choose(src, dst)
        return self._cache[key]

    def _choose(self, src: int, dst: int) -> Route:
        t = self.torus
        sx, sy = t.steps(src, dst)
        xs = [sx] + ([sx - int(np.sign(sx)) * t.cols] if sx else [])
        ys = [sy] + ([sy - int(np.sign(sy)) * t.rows] if sy else [])
        options = sorted(((x, y) for x in xs for y in ys), key=lambda s: abs(s[0]) + abs(s[1]))
        options.remove((sx, sy))
        first = t.route_with(src, dst, sx, sy)
        for x, y in [(sx, sy)] + options:
            route = first if (x, y) == (sx, sy) else t.route_with(src, dst, x, y)
            if not any(link in self.failed for link, _ in route):
                if (x, y) != (sx, sy):
                    self.rerouted.add((src, dst))
                return route
        blocked = next(link for link, _ in first if link in self.failed)
        raise NoRoute.blocked(src, dst, t.link_name(blocked))

    def check_phased(self, src: int, dst: int) -> None:
        """A phased message keeps its e-cube route: the synchronizing switch counts one
        message per link and phase (001_569dde0e56ec3e6f.txt Sec. 2.2)."""
        if (src, dst) not in self.rerouted:
            return
        link = next(self.torus.link_name(k) for k, _ in self.torus.route(src, dst) if k in self.failed)
        raise NoRoute(f"the phased message from node {src} to node {dst} needs the failed {link}; "
                      "the synchronizing switch counts one message per link and phase "
                      "(001_569dde0e56ec3e6f.txt Sec. 2.2), so it cannot take another route",
                      "with failed links use an unphased algorithm, e.g. "
                      "--algorithm alltoall=message-passing")


def failed_link_ids(torus: Torus, failed: tuple[FailedLink, ...], spec: str) -> frozenset[int]:
    out = set()
    for node, direction in failed:
        if node >= torus.nnodes:
            raise usage_error(f"failed link {node}:{direction}: {spec} has nodes 0..{torus.nnodes - 1}")
        out.add(node * 4 + DIRECTIONS[direction][2])
    return frozenset(out)
