"""Deadlock: wormhole routing without the dateline, reported with its cycle of waiting channels.

On a 5-node ring every node sends two hops clockwise at once. Each header takes its first
virtual channel and waits for the next one, which its neighbour holds: a cycle. The dateline
(pool 1 from the wrap-around link on, 001_569dde0e56ec3e6f.txt Sec. 3.1) breaks it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.engine import Deadlock, Engine
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.topology import Torus
from phalanx.targets.iwarp.wormhole import WormholeNetwork

RING = 5


@dataclass(frozen=True)
class NoDatelineTorus(Torus):
    """The same torus with every hop in pool 0: the dateline turned off on purpose."""

    def route(self, src: int, dst: int) -> tuple[tuple[int, int], ...]:
        return tuple((link, 0) for link, _ in super().route(src, dst))


def ring_run(torus: Torus) -> Engine:
    engine = Engine()
    network = WormholeNetwork(engine, IWarpParams(), torus)
    for src in range(RING):
        dst = (src + 2) % RING
        engine.process(network.transfer(Transfer(src, dst, 64, src, dst)), f"message {src}->{dst}")
    engine.run()
    return engine


def test_with_the_dateline_the_ring_drains():
    engine = ring_run(Torus(1, RING))
    assert not engine.live and engine.now > 0


def test_without_the_dateline_the_cycle_is_reported_quickly():
    start = time.monotonic()
    with pytest.raises(Deadlock) as info:
        ring_run(NoDatelineTorus(1, RING))
    assert time.monotonic() - start < 1.0
    cycle = info.value.cycle
    assert len(cycle) == RING + 1 and cycle[0].split(" waits")[0] == cycle[-1]
    held = sorted(step.split("holds ")[1] for step in cycle[:-1])
    assert held == [f"link ({x},0)+X pool 0" for x in range(RING)]
    assert str(info.value).startswith("deadlock: message ")
