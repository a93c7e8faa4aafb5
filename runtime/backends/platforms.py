"""SimGrid platforms equivalent to Phalanx's targets, as SimGrid XML (platform v4.1).

The runtime never imports targets: a target object is handed in and read through its
parameters and attributes (`params`, `torus`, `route`), and its network model (built on a
scratch engine) gives copy and barrier times. Three shapes:

- `ideal:P`: a SimGrid cluster without backbone, i.e. a crossbar; every host has one
  split-duplex private link at the port rate 1/beta; the start-up alpha is paid by the
  sender, which (like the built-in port model) sends one message at a time.
- `iwarp` / `torus`: the R x C torus of directed 40 MB/s links with 2-4 cycle hop latency.
  `routing="target"` (default) declares every directed link and the target's own e-cube
  routes (X then Y, the seed's tie rule at half a ring), plus one link per node for its
  memory (`memory_streams` link-rate streams shared by the messages it sources and sinks:
  what bounds store-and-forward, 001 Sec. 4.1); `routing="zone"` uses SimGrid's
  TorusZone and its dimension-order routing, which breaks half-ring ties differently (see
  docs/backends.md). The per-message overhead is paid by the sender's processor; data
  streams concurrently (the built-in model's injection channels). Phased messages are
  `switched`: the worker holds them at the synchronizing switch's per-link gates.
- `paragon` (mesh), `sp2`, `cs2`, `hypercube`: every directed hop of the target's route
  function is a link; each host has an out and an in link at Table 1's 1/tau (the
  communication processor's rate), mesh links at the link rate; sends are serial per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from phalanx.compiler.schedule import Transfer
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.engine import Engine

ROUTINGS = ("target", "zone")
# iWarp's phased messages carry this tag in Transfer.message (targets/iwarp/wormhole.py
# PHASE_TAG): the synchronizing switch's per-phase software is paid on those, and they pass
# the switch's per-link gates.
IWARP_PHASE_TAG = 1 << 40
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
    barrier_s: float
    note: str
    routes: dict[tuple[int, int], list[str]] | None = None  # links per pair; None: SimGrid's own
    links: dict[str, tuple[float, float]] = field(default_factory=dict)  # (bytes/s, latency s)
    # True for a message that iWarp's synchronizing switch gates (its phased messages): its
    # header takes a link only after the link's previous phases have passed (wormhole.SwitchGates)
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


def _bw(rate_Bps: float) -> str:
    return f"{min(rate_Bps, UNLIMITED_Bps) if rate_Bps > 0 else UNLIMITED_Bps:.17g}Bps"


def _document(body: list[str]) -> str:
    head = ["<?xml version='1.0'?>",
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
            '<platform version="4.1">']
    return "\n".join(head + body + ["</platform>", ""])


def _routed_zone(nnodes: int, links: dict[str, tuple[float, float]],
                 routes: dict[tuple[int, int], list[str]]) -> str:
    """A Full zone: hosts, links (name -> (bandwidth, latency)) and explicit one-way routes."""
    body = ['<zone id="phalanx" routing="Full">']
    body += [HOST.format(i=i) for i in range(nnodes)]
    body += [f'  <link id="{name}" bandwidth="{_bw(bw)}" latency="{lat:.17g}s"/>'
             for name, (bw, lat) in links.items()]
    for (src, dst), path in routes.items():
        ctn = "".join(f'<link_ctn id="{name}"/>' for name in path)
        body.append(f'  <route src="node-{src}" dst="node-{dst}" symmetrical="NO">{ctn}</route>')
    return _document(body + ["</zone>"])


def _with_loopbacks(links: dict, routes: dict, pairs: Iterable[tuple[int, int]]) -> None:
    """Routes to self (SMPI sends to its own rank) go through a free per-host loopback."""
    for src, dst in pairs:
        if src == dst:
            links[f"loop{src}"] = (UNLIMITED_Bps, 0.0)
            routes[(src, dst)] = [f"loop{src}"]


def _network(target: Any):
    return target.build_network(Engine())


def ideal_platform(target: Any) -> Platform:
    p = target.params
    rate_Bps = 1e6 / p.beta_us_per_byte if p.beta_us_per_byte > 0 else UNLIMITED_Bps
    xml = _document([f'<cluster id="ideal" prefix="node-" radical="0-{target.nnodes - 1}" '
                     f'suffix="" speed="1Gf" bw="{_bw(rate_Bps)}" lat="0s" '
                     'sharing_policy="SPLITDUPLEX" loopback_bw="1e15Bps" loopback_lat="0s"/>'])
    net = _network(target)
    routes = {(s, d): [f"up{s}", f"down{d}"] for s in range(target.nnodes)
              for d in range(target.nnodes)}
    links = {f"{way}{i}": (rate_Bps, 0.0) for i in range(target.nnodes) for way in ("up", "down")}
    return Platform("crossbar", lambda: xml, target.nnodes, True, lambda t: p.alpha_us * 1e-6,
                    net.copy_time_s, net.barrier_time_s(target.nnodes),
                    "crossbar cluster, one split-duplex link per host at 1/beta, "
                    "start-up alpha paid by the sender", routes, links)


def torus_platform(target: Any, pairs: Iterable[tuple[int, int]], routing: str) -> Platform:
    torus, p = target.torus, target.params
    net = _network(target)

    def overhead_s(t: Transfer) -> float:
        return p.overhead_s + (p.phase_software_s if t.message >= IWARP_PHASE_TAG else 0.0)

    if routing == "zone":
        xml = _document([f'<cluster id="torus" prefix="node-" radical="0-{torus.nnodes - 1}" '
                         f'suffix="" speed="1Gf" bw="{_bw(p.link_Bps)}" lat="{p.hop_s:.17g}s" '
                         f'topology="TORUS" topo_parameters="{torus.cols},{torus.rows}" '
                         'sharing_policy="SPLITDUPLEX" loopback_bw="1e15Bps" loopback_lat="0s"/>'])

        def build_xml() -> str:
            return xml

        kind, note = "torus-zone", "SimGrid TorusZone (its own dimension-order routing)"
        routes, links = None, {}
    else:
        links: dict[str, tuple[float, float]] = {}
        routes: dict[tuple[int, int], list[str]] = {}
        for src, dst in pairs:
            if src != dst:
                hops = [f"L{link}" for link, _ in torus.route(src, dst)]
                for name in hops:
                    links[name] = (p.link_Bps, p.hop_s)
                # A message streams from the source's memory into the sink's (001 Sec. 1, 4.1):
                # each node's memory moves `memory_streams` link-rate streams, in and out alike.
                routes[(src, dst)] = [f"mem{src}", *hops, f"mem{dst}"]
                links[f"mem{src}"] = links[f"mem{dst}"] = (p.memory_streams * p.link_Bps, 0.0)
        _with_loopbacks(links, routes, pairs)

        def build_xml() -> str:
            return _routed_zone(torus.nnodes, links, routes)

        kind, note = "torus-routes", "torus of directed links with the target's e-cube routes"
    return Platform(kind, build_xml, torus.nnodes, False, overhead_s, net.copy_time_s,
                    net.barrier_time_s(torus.nnodes),
                    note + ", overhead paid by the sender, phased messages gated per link as by "
                    "the synchronizing switch", routes, links, lambda t: t.message >= IWARP_PHASE_TAG)


def routed_platform(target: Any, pairs: Iterable[tuple[int, int]]) -> Platform:
    p, net = target.params, _network(target)
    node_Bps = 1e6 / p.us_per_byte if p.us_per_byte > 0 else UNLIMITED_Bps
    link_MBps = getattr(p, "link_MBps", None)
    link_Bps = link_MBps * 1e6 if link_MBps else node_Bps
    links: dict[str, tuple[float, float]] = {}
    names: dict[Any, str] = {}
    routes: dict[tuple[int, int], list[str]] = {}
    for src, dst in pairs:
        if src == dst:
            continue
        path = [f"out{src}"]
        for hop in target.route(src, dst):
            if hop not in names:
                names[hop] = f"H{len(names)}"
                links[names[hop]] = (link_Bps, 0.0)
            path.append(names[hop])
        routes[(src, dst)] = path + [f"in{dst}"]
        links[f"out{src}"] = links[f"in{dst}"] = (node_Bps, 0.0)
    _with_loopbacks(links, routes, pairs)
    return Platform("routed", lambda: _routed_zone(target.nnodes, links, routes), target.nnodes, True,
                    lambda t: p.startup_us * 1e-6, net.copy_time_s,
                    net.barrier_time_s(target.nnodes),
                    "every directed hop of the target's routes a link, end points at 1/tau, "
                    "start-up paid by the sender", routes, links)


def platform_for(target: Any, pairs: Iterable[tuple[int, int]], routing: str = "target") -> Platform:
    """The SimGrid platform of `target`; `pairs` are the (src, dst) routes to declare."""
    if routing not in ROUTINGS:
        raise usage_error(f"unknown SimGrid routing '{routing}'", "choose target or zone")
    pairs = sorted(set(pairs))
    if hasattr(target, "torus"):
        return torus_platform(target, pairs, routing)
    if routing == "zone":
        raise usage_error(f"SimGrid routing 'zone' exists only for torus targets, not "
                          f"'{target.name}'", "use routing 'target'")
    if hasattr(target, "route") and hasattr(target.params, "startup_us"):
        return routed_platform(target, pairs)
    if hasattr(target.params, "alpha_us"):
        return ideal_platform(target)
    raise usage_error(f"target '{target.name}' has no SimGrid platform",
                      "the simgrid backend and the simgrid cost model support ideal, iwarp, torus, "
                      "paragon, sp2, cs2 and hypercube; use --backend sim and --cost target")
