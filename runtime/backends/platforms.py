"""SimGrid platforms equivalent to Phalanx's targets, as SimGrid XML (platform v4.1).

The runtime never imports targets: each target builds its own platform
(`Target.simgrid_platform`) from the shapes here, with its own parameters, and
`platform_for` asks it. Generic shapes:

- `crossbar_platform` (`ideal:P`): a SimGrid cluster without backbone, i.e. a crossbar;
  every host has one split-duplex private link at the port rate; the start-up is paid by
  the sender, which (like the built-in port model) sends one message at a time.
- `routed_platform` (`paragon` mesh, `sp2`, `cs2`, `hypercube`): every directed hop of the
  target's route function is a link; each host has an out and an in link at the node's rate
  (Table 1's 1/tau, the communication processor), hops at the link rate; sends are serial
  per node.
- `routed_zone` with explicit links and routes, for machines with their own shape
  (targets/iwarp/platform.py: the torus with its e-cube routes and node memories).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import Target
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.network import Network

ROUTINGS = ("target", "zone")
# Links that are not network hops (a node's memory, a loopback): the switch has no gate there.
UNGATED = ("mem", "loop")
UNLIMITED_Bps = 1e15  # a rate for "no limit": SimGrid links need a positive bandwidth
HOST = '  <host id="node-{i}" speed="1Gf"/>'


@dataclass
class Platform:
    """A SimGrid platform for one target, and how a message is charged on it."""

    kind: str  # crossbar, torus-routes, torus-zone, routed
    build_xml: Callable[[], str]  # built on first use: the flow cost model needs only routes
    nnodes: int
    serial_sender: bool  # True: a node's messages leave one after another
    overhead_s: Callable[[Transfer], float]  # sender start-up of one message
    copy_time_s: Callable[[int], float]
    barrier_time_s: Callable[[int], float]  # a barrier of that many nodes
    note: str
    routes: dict[tuple[int, int], list[str]] | None = None  # links per pair; None: SimGrid's own
    links: dict[str, tuple[float, float]] = field(default_factory=dict)  # (bytes/s, latency s)
    # True for a message that iWarp's synchronizing switch gates (its phased messages): its
    # header takes a link only after the link's previous phases have passed (runtime/network.py Gates)
    switched: Callable[[Transfer], bool] = lambda t: False

    def shared_links(self, pairs: Iterable[tuple[int, int]]) -> int:
        """The most messages of `pairs` (one phase) on one link or port (node memories, which
        carry several streams, excluded); 0 when SimGrid routes the platform itself."""
        if self.routes is None:
            return 0
        count: dict[str, int] = {}
        for pair in pairs:
            for link in self.routes.get(pair, []) if pair[0] != pair[1] else []:
                if not link.startswith("mem"):
                    count[link] = count.get(link, 0) + 1
        return max(count.values(), default=0)

    def host(self, node: int) -> str:
        return f"node-{node}"

    @cached_property
    def xml(self) -> str:
        return self.build_xml()


def bandwidth(rate_Bps: float) -> str:
    return f"{min(rate_Bps, UNLIMITED_Bps) if rate_Bps > 0 else UNLIMITED_Bps:.17g}Bps"


def document(body: list[str]) -> str:
    head = ["<?xml version='1.0'?>",
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
            '<platform version="4.1">']
    return "\n".join(head + body + ["</platform>", ""])


def routed_zone(nnodes: int, links: dict[str, tuple[float, float]],
                 routes: dict[tuple[int, int], list[str]]) -> str:
    """A Full zone: hosts, links (name -> (bandwidth, latency)) and explicit one-way routes."""
    body = ['<zone id="phalanx" routing="Full">']
    body += [HOST.format(i=i) for i in range(nnodes)]
    body += [f'  <link id="{name}" bandwidth="{bandwidth(bw)}" latency="{lat:.17g}s"/>'
             for name, (bw, lat) in links.items()]
    ctn_of = {name: f'<link_ctn id="{name}"/>' for name in links}  # each written once
    for (src, dst), path in routes.items():
        ctn = "".join([ctn_of[name] for name in path])
        body.append(f'  <route src="node-{src}" dst="node-{dst}" symmetrical="NO">{ctn}</route>')
    return document(body + ["</zone>"])


def with_loopbacks(links: dict, routes: dict, pairs: Iterable[tuple[int, int]]) -> None:
    """Routes to self (SMPI sends to its own rank) go through a free per-host loopback."""
    for src, dst in pairs:
        if src == dst:
            links[f"loop{src}"] = (UNLIMITED_Bps, 0.0)
            routes[(src, dst)] = [f"loop{src}"]


def crossbar_platform(nnodes: int, startup_s: float, port_Bps: float, network: Network) -> Platform:
    """A crossbar of one port per node at `port_Bps`; `network` (the target's, on a scratch
    engine) gives copy and barrier times."""
    rate_Bps = port_Bps if port_Bps > 0 else UNLIMITED_Bps
    xml = document([f'<cluster id="ideal" prefix="node-" radical="0-{nnodes - 1}" '
                    f'suffix="" speed="1Gf" bw="{bandwidth(rate_Bps)}" lat="0s" '
                    'sharing_policy="SPLITDUPLEX" loopback_bw="1e15Bps" loopback_lat="0s"/>'])
    routes = {(s, d): [f"up{s}", f"down{d}"] for s in range(nnodes) for d in range(nnodes)}
    links = {f"{way}{i}": (rate_Bps, 0.0) for i in range(nnodes) for way in ("up", "down")}
    return Platform("crossbar", lambda: xml, nnodes, True, lambda t: startup_s,
                    network.copy_time_s, network.barrier_time_s,
                    "crossbar cluster, one split-duplex link per host at 1/beta, "
                    "start-up alpha paid by the sender", routes, links)


def routed_platform(nnodes: int, route: Callable[[int, int], list[Any]], node_Bps: float,
                    link_Bps: float, startup_s: float, network: Network,
                    pairs: Iterable[tuple[int, int]]) -> Platform:
    """Every directed hop of `route` (hashable hop names) a link at `link_Bps`; each node's
    out and in link at `node_Bps`; the start-up paid by the sender."""
    node_Bps = node_Bps if node_Bps > 0 else UNLIMITED_Bps
    links: dict[str, tuple[float, float]] = {}
    names: dict[Any, str] = {}
    routes: dict[tuple[int, int], list[str]] = {}
    for src, dst in pairs:
        if src == dst:
            continue
        path = [f"out{src}"]
        for hop in route(src, dst):
            if hop not in names:
                names[hop] = f"H{len(names)}"
                links[names[hop]] = (link_Bps, 0.0)
            path.append(names[hop])
        routes[(src, dst)] = path + [f"in{dst}"]
        links[f"out{src}"] = links[f"in{dst}"] = (node_Bps, 0.0)
    with_loopbacks(links, routes, pairs)
    return Platform("routed", lambda: routed_zone(nnodes, links, routes), nnodes, True,
                    lambda t: startup_s, network.copy_time_s, network.barrier_time_s,
                    "every directed hop of the target's routes a link, end points at 1/tau, "
                    "start-up paid by the sender", routes, links)


def only_target_routing(name: str, routing: str) -> None:
    """Machines other than the tori have only their own routes."""
    if routing == "zone":
        raise usage_error(f"SimGrid routing 'zone' exists only for torus targets, not "
                          f"'{name}'", "use routing 'target'")


def platform_for(target: Target, pairs: Iterable[tuple[int, int]], routing: str = "target") -> Platform:
    """The SimGrid platform of `target`; `pairs` are the (src, dst) routes to declare."""
    if routing not in ROUTINGS:
        raise usage_error(f"unknown SimGrid routing '{routing}'", "choose target or zone")
    return target.simgrid_platform(sorted(set(pairs)), routing)
