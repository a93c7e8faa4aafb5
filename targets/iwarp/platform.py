"""The SimGrid platform of an iWarp (or what-if) torus, for runtime/backends/simgrid.py.

The R x C torus of directed 40 MB/s links with 2-4 cycle hop latency. `routing="target"`
(default) declares every directed link and the target's own e-cube routes (X then Y, the
seed's tie rule at half a ring), plus one link per node for its memory (`memory_streams`
link-rate streams shared by the messages it sources and sinks: what bounds
store-and-forward, 001_569dde0e56ec3e6f.txt Secs. 1, 4.1); `routing="zone"` uses SimGrid's
TorusZone and its dimension-order routing, which breaks half-ring ties differently (see
docs/backends.md). The per-message overhead is paid by the sender's processor; data streams
concurrently (the built-in model's injection channels). Phased messages are `switched`: the
worker holds them at the synchronizing switch's per-link gates (Sec. 2.2).
"""

from __future__ import annotations

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.backends.platforms import Platform, bandwidth, document, routed_zone, with_loopbacks
from phalanx.runtime.network import Network
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.topology import Torus
from phalanx.targets.iwarp.wormhole import SwitchTag


def torus_platform(torus: Torus, p: IWarpParams, network: Network, pairs: list[tuple[int, int]],
                   routing: str) -> Platform:
    def overhead_s(t: Transfer) -> float:
        return p.overhead_s + (p.phase_software_s if SwitchTag.of(t.message) is not None else 0.0)

    if routing == "zone":
        xml = document([f'<cluster id="torus" prefix="node-" radical="0-{torus.nnodes - 1}" '
                        f'suffix="" speed="1Gf" bw="{bandwidth(p.link_Bps)}" lat="{p.hop_s:.17g}s" '
                        f'topology="TORUS" topo_parameters="{torus.cols},{torus.rows}" '
                        'sharing_policy="SPLITDUPLEX" loopback_bw="1e15Bps" loopback_lat="0s"/>'])

        def build_xml() -> str:
            return xml

        kind, note = "torus-zone", "SimGrid TorusZone (its own dimension-order routing)"
        routes, links = None, {}
    else:
        links: dict[str, tuple[float, float]] = {}
        routes: dict[tuple[int, int], list[str]] = {}
        # A message streams from the source's memory into the sink's (001 Sec. 1, 4.1): each
        # node's memory moves `memory_streams` link-rate streams, in and out alike.
        link, memory = (p.link_Bps, p.hop_s), (p.memory_streams * p.link_Bps, 0.0)
        for src, dst in pairs:
            if src != dst:
                hops = [f"L{hop}" for hop, _ in torus.route(src, dst)]
                for name in hops:
                    links[name] = link
                routes[(src, dst)] = [f"mem{src}", *hops, f"mem{dst}"]
                links[f"mem{src}"] = links[f"mem{dst}"] = memory
        with_loopbacks(links, routes, pairs)

        def build_xml() -> str:
            return routed_zone(torus.nnodes, links, routes)

        kind, note = "torus-routes", "torus of directed links with the target's e-cube routes"
    return Platform(kind, build_xml, torus.nnodes, False, overhead_s, network.copy_time_s,
                    network.barrier_time_s,
                    note + ", overhead paid by the sender, phased messages gated per link as by "
                    "the synchronizing switch", routes, links, lambda t: SwitchTag.of(t.message) is not None)
