"""The transfer programs of many plain iWarp messages at once, for the native event core.

wormhole.py's `transfer_program` gives one message's program: the sender's processor for the
overhead, one of its injection channels, the virtual channel of each hop of the e-cube route
with the hop latency after each, then the memory streams of both ends and the route's wires
in one global order (memory by node, wires by link) for the data time, and everything let go
in the order `transfer` lets it go. Here the same programs come for a whole schedule as
columns (runtime/network.py ProgramColumns), the routes from topology.route_channels: one array
operation per hop position, never one per message. tests/targets/iwarp/test_wormhole_columns.py
holds them to transfer_program for every pair of small tori.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from phalanx.runtime.network import OP_KINDS, Acquire, Hold, ProgramColumns, Release
from phalanx.targets.iwarp.topology import route_channels

if TYPE_CHECKING:
    from phalanx.targets.iwarp.wormhole import WormholeNetwork


def wormhole_programs(network: WormholeNetwork, src: np.ndarray, dst: np.ndarray,
                      nbytes: np.ndarray) -> ProgramColumns:
    """transfer_program of the plain messages (src[i], dst[i], nbytes[i]), src != dst."""
    torus, p = network.torus, network.params
    # where each kind of resource starts in the programs' resource list (below)
    inject, channel, wire, memory = (torus.nnodes, 2 * torus.nnodes, 2 * torus.nnodes + 2 * torus.nlinks,
                                     2 * torus.nnodes + 3 * torus.nlinks)
    links, pools = route_channels(torus, src, dst)
    used = links >= 0  # the first hops of each row
    offsets = np.zeros(len(src) + 1, np.int64)
    np.cumsum(used.sum(axis=1), out=offsets[1:])
    channels = channel + (2 * links + pools)[used]  # in path order
    wires = wire + np.sort(np.where(used, links, torus.nlinks), axis=1)[used]  # by link id
    # per hop: take its virtual channel (even ops), then the hop latency (odd ops)
    kinds = np.full(2 * len(channels), OP_KINDS.index(Hold), np.uint8)
    kinds[0::2] = OP_KINDS.index(Acquire)
    resource, hold_s = np.zeros(2 * len(channels), np.int64), np.zeros(2 * len(channels), np.float64)
    resource[0::2], hold_s[1::2] = channels, p.hop_s
    headers = ProgramColumns(2 * offsets, kinds, resource, hold_s, ())
    each = ProgramColumns.each
    low, high = memory + np.minimum(src, dst), memory + np.maximum(src, dst)
    data_s = np.broadcast_to(p.data_s(nbytes.astype(np.float64)), src.shape)
    parts = [each(Acquire, src), each(Hold, np.full(len(src), p.overhead_s)), each(Release, src),
             each(Acquire, inject + src), headers,
             each(Acquire, low), each(Acquire, high), ProgramColumns.run(Acquire, offsets, wires),
             each(Hold, data_s),
             each(Release, low), each(Release, high), ProgramColumns.run(Release, offsets, wires),
             ProgramColumns.run(Release, offsets, channels), each(Release, inject + src)]
    return ProgramColumns.joined(parts, (*network.cpus, *network.inject, *network.vcs, *network.wires,
                                         *network.memory))
