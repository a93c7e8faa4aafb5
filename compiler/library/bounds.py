"""Lower bounds no schedule can beat, for every kind, and which of them binds.

- start-up: a node starts one message at a time, so the nodes that hold some of one node's
  data at most double per start-up: a source whose data d nodes need (a broadcast's root:
  n - 1; every node of an all-to-all, allgather or allreduce: n - 1; a gather's or reduce's
  contributor: 1) needs ceil(log2(d + 1)) start-ups before the last of them has it all, and
  that node still receives its block after its first byte (startup_bound_s). Receiving costs
  no start-up in these port models, so a gather or reduce needs only one;
- port bandwidth: each node must send and receive at least the data that leaves or reaches
  it, counted once however it is forwarded (a broadcast's root sends its block once; an
  allreduce's or reduce's partials combine to one partial: an element, or a reduction along
  dimensions' block), at its port rate (both directions on one engine, or on the streams
  they share, where the machine has them);
- shared engines: where one engine carries a node's sends and receives (Paragon, SP2, CS-2;
  iWarp's memory streams, PortModel.shared_streams), the engines together carry every byte on
  the wire twice, so the busiest carries at least the average: 2 (P - 1) / P of a broadcast's
  block or a reduce's partial, where a single node's own need is one;
- cut: what must cross a cut of the topology (a torus's or mesh's bisection, a hypercube's
  halves) at its links' rate, where the target names cuts;
- entry link: what must enter a set of nodes that every fixed route from outside enters by one
  link (a CS-2 leaf switch), at that link's rate;
- link load: every byte for one destination crosses at least the links of a shortest path to
  it however it is routed or relayed, and all link directions together carry at most their
  number of bytes per link time, where the target names its links (`Links`);
- weighted links: the same with weights on the link directions (a square grid's links at its
  main diagonal or anti-diagonal count twice; a torus ring's + and - links weighed apart):
  every byte crosses at least its path's least weight, and the directions carry at most their
  total weight per link time;
- fan-in: a reduce's root either takes every contributor's own value of an element (d partials
  through its port) or waits for a relayed value, which no message brings before two start-ups
  (fan_in_bound_s);
- pipeline: a broadcast's root sends its block in q messages one after another, and the bytes
  of its k-th are at one other node only once that whole message has arrived, so each piece
  costs the root's port a start-up and the piece's bytes once more before the start-up rounds
  (pipeline_bound_s; one stream per node, the send port held through start-up and wire).
- start-ups or relays: in a one-destination kind a node that sends k messages reaches at most k
  destinations directly, and every other block of its crosses two messages or more; a port
  busy for each start-up and each byte it sends (and, on a shared engine, receives) then
  carries, on average over the nodes, at least the least over k of k start-ups plus those
  bytes (relay_bound_s);
- engine fill: on a shared engine a broadcast's engines together carry every start-up and
  every byte on the wire twice, but a node's engine does nothing for it before the node is
  first sent some of the block, which the start-up rounds put off: the average over the
  engines of that idle start plus the work (engine_fill_bound_s);
- relay ports: on fixed routes (one per pair) the bytes a busy link cannot carry in time must
  be relayed, and a relayed byte costs a relay's port once more (relaybound.py);
- three levels: a reduce's values that reach the root through one relay cost their senders a
  start-up per relay, and a contributor that sends its n bytes has few; the others take three
  levels, 3 start-ups before the root has them (reducedepth.py);
- contributor pipeline: a reduce's contributor sends its partial in pieces one after another,
  and a piece relayed reaches the root only a start-up and its bytes after the whole piece is
  at the relay, so what a contributor can relay by T is capped and the rest goes straight to
  the root's port (reducepipeline.py);
- relay deadlines: on nodes that stream several messages, a reduce's contributor brings to
  relays only what its start-ups, h apart, let arrive by alpha before the end, and sends the
  rest straight to the root, whose streams take d such rests (reducedepth.py);
- root drain: a reduce's counted bytes (each contributor's partial, in the first message of a
  chain to the root) hold a stream or engine at both ends; none streams before alpha, few in
  the first start-ups, and in the last alpha only those into the root, whose streams take few
  at once (reducedrain.py);
- relays' merges: on nodes that stream several messages, a relay merges what a contributor
  sends it (after the last byte) before it can forward it, and its forwards pay their wire and
  the root's merge again, so what a contributor can relay by T shrinks and more goes straight
  to the root (reducemerge.py);
- straight start-ups: the same, where a contributor's start-ups that go to the root bring
  relays nothing, and the root takes the bytes of messages started from a contributor's k-th
  start-up on only from k h + alpha (reducestraight.py);
- relay start-ups: on one engine per node, a reduce's contributors that relay, or that start a
  second message, run a start-up between the drain's windows; those that do not send their
  partial in one early message to the root or to such a relay (reducerelays.py);
- engine start-ups: on a shared engine an allgather's or allreduce's engines together run at
  least 2 (k - 1) start-ups per group of k members (a gossip's fewest messages) besides carrying
  every byte on the wire twice: the average over the engines of both (engine_startups_bound_s);
- memory fill: the same on the memory streams a node's sends and receives share (iWarp, the
  torus), whose processor runs the start-ups: the average over the memories of the idle start
  plus twice the receivers' bytes over their streams (memory_fill_bound_s);
- memory ramp: the same, where the streams a broadcast can use at a time are also at most twice
  the messages then streaming, few while the nodes have started few (memory_ramp_bound_s);
- late nodes: a broadcast's (or an allreduce's, for any one member's input) nodes first sent
  some of the block in the last start-up round must each take the whole block, in messages that
  each stream on one link, from nodes that can start few messages before the end: where a node
  streams several messages (iWarp, the torus) the last round's block cannot come in at the
  node's whole rate (late_nodes_bound_s);
- memory start: an allreduce's transfers (2 (k - 1) partials a group of k) each hold a memory
  stream at both ends, and in the first start-ups the nodes have started too few messages to
  use all their memories' streams (memory_start_bound_s);
- memory rounds: the start-up rounds leave at most 2^j nodes holding any of a source's data
  j holds after alpha, and on memory streams a node's sends and receives share (iWarp, the
  torus) everything the others still need of every source then passes the memories twice:
  the largest over j of that start plus the memories' average work (memory_rounds_bound_s);
- scatter relays: a scatter's root sends its blocks a start-up apart (and, on one stream, one
  after another), and a block it hands to another node for relaying reaches its owner only
  after the relays' start-up rounds: the least over how the root groups the blocks of the
  largest over its messages of the one's arrival plus its relays' rounds (scatterroot.py);
- rounds and relays: in a one-destination kind the chains of messages that carry a source's
  bytes are fixed by their start-up slots, so few slots force long chains: the least over the
  slots of the larger of the last slot's start and the ports' average busy time for the
  chains' bytes and start-ups (chainbound.py);
- sender ramp: an allgather's busiest sender sends at least the average of what the nodes
  need, but starts with its own block only and can forward only what has reached it, so few
  messages wait and many pay start-ups (senderramp.py);
- engines and relays: start-ups or relays with each shared engine held to the schedule's time
  on its own: its start-ups, its own blocks' and its receives' bytes, and the relays that the
  others' blocks beyond their messages need poured into the engines' room left
  (enginerelays.py).

`fixed_routes_bound_s`, the busiest link under the machine's fixed routing, is not among them:
it holds only for schedules of direct messages (docs/bounds.md, "Fixed routes").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.chainbound import complete_exchange_block, rounds_relays_bound_s
from phalanx.compiler.library.enginerelays import engine_relays_bound_s
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.library.reducedepth import contributors_per_root, deadline_bound_s, three_level_bound_s
from phalanx.compiler.library.reducedrain import drain_bound_s
from phalanx.compiler.library.reducemerge import relay_merges_bound_s
from phalanx.compiler.library.reducepipeline import contributor_pipeline_bound_s
from phalanx.compiler.library.reducerelays import relay_startups_bound_s
from phalanx.compiler.library.reducestraight import straight_startups_bound_s
from phalanx.compiler.library.registry import PortModel, Route
from phalanx.compiler.library.relaybound import relay_or_direct_bound_s, relay_ports_bound_s
from phalanx.compiler.library.scatterroot import scatter_relays_bound_s
from phalanx.compiler.library.senderramp import sender_ramp_bound_s
from phalanx.compiler.recognize import Collective, connected_groups

DISTINCT_KINDS = (Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.REDUCE, Kind.ALLGATHER, Kind.ALLREDUCE)
# Kinds whose bytes from a source each serve one destination (no copy or partial serves two).
ONE_DESTINATION_KINDS = (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SCATTER, Kind.GATHER, Kind.CSHIFT,
                         Kind.PERMUTATION, Kind.SPARSE)
# Kinds the memory rounds bound is taken for: every node a source to many, no partials combined.
MEMORY_ROUNDS_KINDS = (Kind.ALLGATHER, Kind.ALLTOALL, Kind.ALLTOALLV)


@dataclass(frozen=True)
class Cut:
    """Nodes on one side of a cut and the link directions that cross it each way. `into`: an
    entry cut of fixed routes, whose `links` every route from another node into `side` passes
    (a CS-2 leaf switch's one link from above): it bounds the bytes that must enter `side`."""

    side: frozenset[int]
    links: int
    into: bool = False


class LinkWeighting(Protocol):
    """Weights on a network's link directions, as the weighted link-load bound uses them."""

    def load(self, m: np.ndarray) -> float:
        """The bytes `m` (between the first len(m) nodes) put on the links, each byte from s to
        d weighed by the least weight of any path from s to d, over the weights' sum over all
        link directions: a busiest link direction carries at least that many bytes."""
        ...


@dataclass(frozen=True)
class Weighting:
    """A weighting given by the least weight of any path between every two nodes
    (`distances`, nodes x nodes) and the weights' sum over all link directions (`total`)."""

    distances: np.ndarray
    total: float

    def load(self, m: np.ndarray) -> float:
        n = len(m)
        return float((m * self.distances[:n, :n]).sum()) / self.total


@dataclass(frozen=True)
class Links:
    """A network's links for the link-load bound: `hops(src, dst)` the fewest links any path
    from each node src[i] to dst[i] crosses (arrays), and how many link directions there are,
    each carrying at most one byte per `PortModel.link_s_per_byte`; `weighted`: other weights
    for the weighted link-load bound (a square grid's diagonals, a torus's ring directions,
    offer.py `grid_weightings`)."""

    hops: Callable[[np.ndarray, np.ndarray], np.ndarray]
    directions: int
    weighted: tuple[LinkWeighting, ...] = ()


def needs(coll: Collective, port: PortModel) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each port must send and must receive at least (distinct data, once). Traffic
    between nodes of one port (a Proteus cluster) needs no port."""
    n = coll.nprocs
    every_block = coll.kind not in DISTINCT_KINDS or coll.kind in (Kind.SCATTER, Kind.GATHER)
    if every_block and not port.port_of:  # a port each: row and column sums, no P x P copy
        local = np.diagonal(coll.matrix)
        return coll.matrix.sum(axis=1) - local, coll.matrix.sum(axis=0) - local
    g = np.array([port.port(p) for p in range(n)])
    m = coll.network_matrix * (g[:, None] != g[None, :])
    send, recv = np.zeros(g.max() + 1, np.int64), np.zeros(g.max() + 1, np.int64)
    if every_block:
        np.add.at(send, g, m.sum(axis=1))
        np.add.at(recv, g, m.sum(axis=0))
        return send, recv
    if coll.kind is Kind.ALLREDUCE and not port.port_of:
        return allreduce_needs(m)
    part = coll.network_matrix.max(axis=1)  # an origin's block (the same bytes for all receivers)
    item = int(m.max(initial=0))
    for p in range(n):
        if not m[p].any():
            continue
        send[g[p]] = max(send[g[p]], item) if coll.kind in REDUCTIONS else send[g[p]] + part[p]
        for port_in in set(g[m[p] > 0].tolist()):
            if coll.kind in REDUCTIONS:
                recv[port_in] = item
            else:
                recv[port_in] += part[p]
    return send, recv


def allreduce_needs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An allreduce of k members moves each element of the partial at least 2(k - 1) times
    (Patarasuk and Yuan 2009: k - 1 transfers bring every other input to the first member
    that holds the result, and each of the other k - 1 members receives one after it; the
    transfers are distinct), so some member sends, and some receives, 2(k - 1)/k partials.
    Every member is charged that average; groups (components of `m`) run at once."""
    send = np.zeros(len(m))
    item = float(m.max(initial=0))
    for members in connected_groups(m):
        k = len(members)
        send[list(members)] = 2 * (k - 1) / k * item
    return send, send.copy()


def engines_load(coll: Collective, send: np.ndarray, recv: np.ndarray) -> float:
    """Bytes through the busiest engine where one engine per node carries both directions: every
    byte on the wire leaves one engine and enters another, and at least max(sum of what nodes
    must send, sum of what they must receive) bytes go on the wire, so the engines of the
    schedule's `nprocs` nodes (members, or any other node it relays through) carry twice that
    between them, and the busiest at least the average (docs/bounds.md, "Shared engines")."""
    return 2 * float(max(send.sum(), recv.sum())) / coll.nprocs


def must_cross(coll: Collective, side: frozenset[int], into: bool = False) -> float:
    """Bytes that must cross from `side` to the rest (the larger direction), or `into` it only."""
    n, m = coll.nprocs, coll.network_matrix
    inside = np.array([p in side for p in range(n)])
    worst = 0.0
    for a, b in ((~inside, inside),) if into else ((inside, ~inside), (~inside, inside)):
        flows = m[a][:, b]
        if coll.kind in REDUCTIONS:
            crossing = float(flows.max(initial=0))
        elif coll.kind in (Kind.BROADCAST, Kind.ALLGATHER):
            crossing = float(flows.max(axis=1, initial=0).sum())  # each origin's part once
        else:
            crossing = float(flows.sum())
        worst = max(worst, crossing)
    return worst


def link_load_bound_s(coll: Collective, port: PortModel, links: Links) -> float:
    """Every byte of a one-destination kind crosses at least hops[s, d] links from its source s
    to its destination d, whatever its route and wherever it is relayed (a relay's two routes
    together are a path from s to d), and the `directions` link directions carry at most one
    byte each per link_s_per_byte: + hold_s, before which no link carries a message's bytes
    (docs/bounds.md, "Cuts and links"). 0 for the other kinds: a copy or a partial may serve
    many destinations."""
    if coll.kind not in ONE_DESTINATION_KINDS or port.link_s_per_byte <= 0:
        return 0.0
    m = coll.network_matrix
    src, dst = np.nonzero(m)
    link_bytes = float((m[src, dst] * links.hops(src, dst)).sum())
    return port.hold_s + link_bytes / links.directions * port.link_s_per_byte if link_bytes else 0.0


def weighted_links_bound_s(coll: Collective, port: PortModel, links: Links) -> float:
    """link_load_bound_s with weights on the link directions: each byte from s to d crosses a
    path of weight at least distances[s, d], and a link direction of weight w carries at most
    w weight-bytes per link_s_per_byte, so all of them together carry at most `total` per
    link_s_per_byte: + hold_s as there. The largest over `links.weighted` (docs/bounds.md,
    "Weighted links"); 0 where there are none or for the kinds link load skips."""
    if coll.kind not in ONE_DESTINATION_KINDS or port.link_s_per_byte <= 0 or not links.weighted:
        return 0.0
    m = coll.network_matrix.astype(np.float64)
    best = max(w.load(m) for w in links.weighted)
    return port.hold_s + best * port.link_s_per_byte if best > 0 else 0.0


def fixed_routes_bound_s(port: PortModel, link_bytes: np.ndarray) -> float:
    """A bound for schedules of DIRECT messages only (each byte sent once, from its source to its
    destination, along the machine's fixed route): `link_bytes`, the bytes each link direction
    carries when every pair's bytes take its route, pass that link at most one byte per
    link_s_per_byte, none before hold_s. Not a bound of the kind: a schedule that relays
    through other nodes takes other links (docs/bounds.md, "Fixed routes")."""
    busiest = float(link_bytes.max(initial=0))
    return port.hold_s + busiest * port.link_s_per_byte if busiest and port.link_s_per_byte > 0 else 0.0


def startup_bound_s(coll: Collective, port: PortModel) -> float:
    """Start-up rounds, then the last block: the data of a source r that d nodes need reaches
    at most 2^(j+1) nodes (r too) by j start-ups, so one of them is first sent some of it no
    sooner than (ceil(log2(d + 1)) - 1) start-ups in, and then receives its whole block through
    its port: + startup_s + block * s_per_byte / streams (docs/bounds.md). The largest over
    sources; a reduction's partial is what every receiver needs of each contributor. In groups
    each source reaches its own group's nodes only, so the largest group counts.

    Where nodes share a port (Proteus) the rounds count ports and the block is left out: nodes
    of one port exchange data in memory."""
    if coll.total_bytes == 0:
        return 0.0
    if port.port_of:
        m = coll.network_matrix
        return max(_port_rounds(m, port, r) for r in range(coll.nprocs)) * port.startup_s
    m = coll.matrix  # read only, not copied (P x P at scale): the diagonal stays local
    reached = m > 0
    np.fill_diagonal(reached, False)
    counts = reached.sum(axis=1)
    smallest = np.min(m, axis=1, where=reached, initial=np.iinfo(np.int64).max)
    rows = counts > 0
    rounds = np.ceil(np.log2(counts[rows] + 1))
    times = (rounds - 1) * port.hold_s + port.startup_s + smallest[rows] * port.s_per_byte / port.streams
    return float(times.max())


def fan_in_bound_s(coll: Collective, port: PortModel) -> float:
    """A reduce's root q with d contributors of n-byte partials (docs/bounds.md, "Fan-in"): call
    an element direct where every contributor's own value of it reaches q in a message from that
    contributor. For a fraction f of direct elements q takes (1 + (d - 1) f) n bytes, none before
    startup_s; each other element has a value relayed through another node, whose message starts
    no sooner than startup_s and arrives startup_s later, so (1 - f) n bytes pass q's port after
    2 startup_s. The least over f of the larger of the two: all direct (d n beta' <= alpha) or
    where they cross, f = alpha / (d n beta'). The largest over roots; 0 where ports are shared
    (Proteus) or the kind is not a reduce."""
    if coll.kind is not Kind.REDUCE or port.port_of:
        return 0.0
    alpha = port.startup_s
    beta = port.s_per_byte / port.streams
    best = 0.0
    for d, n in contributors_per_root(coll):
        found = alpha + d * n * beta if d * n * beta <= alpha else 2 * alpha + n * beta - alpha / d
        best = max(best, found)
    return best


def pipeline_bound_s(coll: Collective, port: PortModel) -> float:
    """A broadcast of B bytes to d receivers (docs/bounds.md, "A broadcast's pipeline"): let
    the root's messages that carry bytes it has not sent before be M_1, ..., M_q, with b_k new
    bytes each. M_k starts no sooner than (k - 1) alpha + (b_1 + ... + b_(k-1)) beta (the root's
    one port holds each message's start-up and wire), and the bytes it and the later ones bring
    are at its receiver only once it has all arrived, alpha + b_k beta later, before which the
    root starts nothing else. From then the nodes sent some of them at most double per hold_s,
    so one receiver is first sent some no sooner than ceil(log2(d + 1)) - 2 holds on, and takes
    all of them, alpha after that. For every k:
        T >= 2 alpha + (L - 2) h + B beta + (k - 1) alpha + b_k beta,  L = ceil(log2(d + 1)),
    so T >= 2 alpha + (L - 2) h + B beta + min over q of (B beta / q + (q - 1) alpha / 2), the
    pieces' b_k beta <= c - (k - 1) alpha summing to B beta. 0 for other kinds, fewer than two
    receivers, uneven blocks, or a port that streams several messages, shares its engine (its
    start-up lets the next message's go first) or is shared between nodes."""
    if coll.kind is not Kind.BROADCAST or port.streams != 1 or port.shared_engine or port.port_of:
        return 0.0
    m = coll.network_matrix
    senders = np.flatnonzero(m.any(axis=1))
    if len(senders) != 1:
        return 0.0
    blocks = m[senders[0]][m[senders[0]] > 0]
    if len(blocks) < 2 or blocks.min() != blocks.max():
        return 0.0
    rounds = math.ceil(math.log2(len(blocks) + 1))
    alpha, bytes_s = port.startup_s, float(blocks[0]) * port.s_per_byte
    pieces = 0.0  # with no start-up, ever more pieces cost nothing more
    if alpha > 0:  # the least over q of a convex function: at the floor or ceiling of its real minimum
        best = math.sqrt(2 * bytes_s / alpha)
        pieces = min(bytes_s / q + (q - 1) * alpha / 2 for q in {max(1, math.floor(best)), math.ceil(best)})
    return 2 * alpha + (rounds - 2) * port.hold_s + bytes_s + pieces


def relay_bound_s(coll: Collective, port: PortModel) -> float:
    """Start-ups or relays (docs/bounds.md): in a one-destination kind a node v that starts k_v
    messages sends at most k_v of its blocks straight to their destinations; each byte of its
    other blocks crosses at least two messages, however relayed. A port is busy hold_s for each
    start-up it makes and s_per_byte for each byte it sends (on a shared engine: and receives),
    so the ports' busy times add up to at least, over the nodes v, k_v hold_s plus c s_per_byte
    (2 X_v - the k_v largest of v's blocks), X_v the bytes v holds for others and c 2 on a shared
    engine, else 1. No port is busy longer than the schedule, so it takes at least the average
    over the collective's nodes of each node's least such sum over k. Only where a port moves
    one message at a time and a start-up holds it (streams 1, no shared cluster ports).

    No sort: the (k + 1)-th message changes the sum by hold_s - c s_per_byte b, b the (k + 1)-th
    largest block, which never falls as k grows; so the least is at k = the number of blocks
    with c s_per_byte b > hold_s (sending any of them straight saves more than its start-up),
    or at k = 1 where there is none. Each node's count and sums are read off the matrix."""
    if coll.kind not in ONE_DESTINATION_KINDS or port.streams != 1 or port.port_of:
        return 0.0
    each = 2.0 if port.shared_engine else 1.0
    saving = each * port.s_per_byte
    least_block = port.hold_s / saving if saving > 0 else math.inf  # sent straight above it
    n = coll.nprocs
    block = complete_exchange_block(coll)
    if block:  # every node the same: the matrix is not read again
        out = np.full(n, float((n - 1) * block))
        k = np.full(n, n - 1 if block > least_block else 0)
        direct = k * float(block)
    else:
        m = coll.matrix  # read only: the diagonal (bytes kept local) is left out
        out = (m.sum(axis=1) - np.diagonal(m)).astype(np.float64)  # X_v
        straight = m > least_block
        np.fill_diagonal(straight, False)
        k = straight.sum(axis=1)
        direct = np.sum(m, axis=1, where=straight).astype(np.float64)  # the k largest blocks
    if not out.any():
        return 0.0
    none = np.flatnonzero((k == 0) & (out > 0))
    if len(none):  # one message at least: the largest block straight
        if block:
            direct[none] = float(block)
        else:
            rows = coll.matrix[none]  # a copy of those rows; their own bytes left out
            rows[np.arange(len(none)), none] = 0
            direct[none] = rows.max(axis=1)
        k[none] = 1
    busy = k * port.hold_s + saving * (2 * out - direct)
    least = np.where(out > 0, busy, 0.0)
    return float(least.sum()) / coll.nprocs


def _one_root_to_all_bytes(coll: Collective) -> float | None:
    """The bytes the receivers need where the collective is a broadcast from one root to every
    other of its nodes (the fill bounds' case); None otherwise."""
    if coll.kind is not Kind.BROADCAST:
        return None
    m = coll.network_matrix.astype(np.float64)
    np.fill_diagonal(m, 0.0)
    senders = np.flatnonzero(m.any(axis=1))
    if len(senders) != 1 or int((m[senders[0]] > 0).sum()) != coll.nprocs - 1:
        return None
    return float(m[senders[0]].sum())


def engine_fill_bound_s(coll: Collective, port: PortModel) -> float:
    """A broadcast from one root to every other of the collective's P nodes, where one engine
    per node runs each start-up and carries the wire time of its sends and receives, one at a
    time (docs/bounds.md, "Engines filling a broadcast"). Node v's engine does nothing for the
    broadcast before u_v + alpha, u_v the start of the first message bringing v some of the
    block (it has nothing to send, and that message's wire follows its start-up); the nodes
    sent some by time t at most double per hold_s, so the k-th to be sent some waits
    floor(log2 k) holds.
    The engines do at least P - 1 start-ups and carry the (P - 1) receivers' blocks twice (out
    of one engine, into another), so over the P engines
        P T >= sum over k = 1 .. P - 1 of (floor(log2 k) h + alpha) + (P - 1) h + 2 W beta,
    W the bytes the receivers need. 0 for other kinds, several senders, a collective whose
    nodes are not all receivers, or ports that are not one shared engine per node."""
    if not port.shared_engine or port.streams != 1 or port.port_of:
        return 0.0
    needed = _one_root_to_all_bytes(coll)
    if needed is None:
        return 0.0
    n = coll.nprocs
    waits = sum(math.floor(math.log2(k)) for k in range(1, n))
    idle_s = waits * port.hold_s + (n - 1) * port.startup_s
    work_s = (n - 1) * port.hold_s + 2 * needed * port.s_per_byte
    return (idle_s + work_s) / n


def gossip_messages(coll: Collective) -> int:
    """The fewest messages an allgather or allreduce needs: in each group of k members that all
    need each other's data (a gossip), 2 (k - 1) (one-way gossip; Hedetniemi, Hedetniemi and
    Liestman, Networks 18(4), 1988). Order the messages by arrival: before the first member u to
    hold every input, each other member has sent one (its input reached u); after it, each other
    member receives one (none held everything yet). 0 for other kinds."""
    if coll.kind not in (Kind.ALLGATHER, Kind.ALLREDUCE):
        return 0
    m = coll.network_matrix
    count = 0
    for members in connected_groups(m):
        group = sorted(members)
        block = m[np.ix_(group, group)] > 0
        np.fill_diagonal(block, True)
        if len(group) > 1 and block.all():
            count += 2 * (len(group) - 1)
    return count


def engine_startups_bound_s(coll: Collective, port: PortModel) -> float:
    """An allgather or allreduce where one engine per node runs each start-up (held `hold_s`)
    and carries the wire time of its sends and receives, one at a time (docs/bounds.md, "Engine
    start-ups of a gossip"): the engines of the collective's P nodes do at least
    `gossip_messages` start-ups and carry every byte on the wire twice, W >= max(sum of sends,
    sum of receives) bytes, so P T >= S h + 2 W beta. 0 for other kinds and ports that are not
    one shared engine per node."""
    if not port.shared_engine or port.streams != 1 or port.port_of:
        return 0.0
    messages = gossip_messages(coll)
    if not messages:
        return 0.0
    send, recv = needs(coll, port)
    wire_bytes = float(max(send.sum(), recv.sum()))
    return (messages * port.hold_s + 2 * wire_bytes * port.s_per_byte) / coll.nprocs


def _broadcast_memory(coll: Collective, port: PortModel) -> tuple[int, float] | None:
    """(the memory's streams, the bytes the receivers need) where the memory fill and ramp
    apply: one root to every node, on ports whose streams both directions share at one node;
    None elsewhere."""
    streams = port.shared_streams
    if port.shared_engine or not streams or port.port_of:
        return None
    needed = _one_root_to_all_bytes(coll)
    return None if needed is None else (streams, needed)


def memory_fill_bound_s(coll: Collective, port: PortModel) -> float:
    """A broadcast from one root to every other of the collective's P nodes, where each node's
    sends and receives share `shared_streams` link-rate streams of its memory and a processor
    starts its messages one at a time (iWarp, the torus; docs/bounds.md, "Memories filling a
    broadcast"). Every byte on the wire holds a stream at both its ends for s_per_byte, so the
    memories carry 2 W s_per_byte stream-seconds, W the bytes the receivers need. Node v's
    memory carries nothing for the broadcast before u_v + alpha, u_v the start of the first
    message bringing v some of the block (it holds nothing to send, and no message's bytes
    stream before alpha after its start; the root's u is 0), and the k-th receiver to be sent
    some waits floor(log2 k) holds (the start-up rounds). Over the P memories:
        s P T >= s sum over v of (u_v + alpha) + 2 W beta,
        T >= alpha + h sum over k = 1 .. P - 1 of floor(log2 k) / P + 2 W beta / (s P).
    0 for other kinds, several senders, a collective whose nodes are not all receivers, and
    ports without streams shared by both directions (or shared between nodes)."""
    memory = _broadcast_memory(coll, port)
    if memory is None:
        return 0.0
    streams, needed = memory
    n = coll.nprocs
    waits_s = sum(math.floor(math.log2(k)) for k in range(1, n)) * port.hold_s
    wire_s = 2 * needed * port.s_per_byte / streams
    return port.startup_s + (waits_s + wire_s) / n


def memory_ramp_bound_s(coll: Collective, port: PortModel) -> float:
    """The memory fill's broadcast with the messages counted too (iWarp, the torus;
    docs/bounds.md, "Memories filling a broadcast as its messages start"). A byte a receiver
    needs holds a stream at both ends of a message for s_per_byte, so at any time t the
    memories carry the broadcast on at most twice the messages then streaming. A message streams
    no sooner than alpha after its start and holds one of its sender's s streams; node v starts
    one message per h, the root from 0 and a receiver from u_v + alpha (it holds nothing before),
    so at most min(s, floor((t - alpha - f_v) / h) + 1) of v's messages stream at t, f_v its
    first start. And v's streams carry nothing before u_v + alpha (the memory fill). With the
    k-th receiver's u at its least, floor(log2 k) h (the start-up rounds; both counts only grow
    as any u shrinks), the streams the broadcast can use at t are at most
        c(t) = min(s A(t), 2 sum over v of min(s, O_v(t))),
    A(t) the nodes with u_v + alpha <= t, O_v(t) v's messages started by t - alpha, and the
    least T with the integral of c from 0 to T at least 2 W beta is a bound, W the bytes the
    receivers need. c is a step function, so the integral is summed over its steps.
    0 where memory_fill_bound_s is 0."""
    memory = _broadcast_memory(coll, port)
    if memory is None:
        return 0.0
    streams, needed = memory
    alpha, hold = port.startup_s, port.hold_s
    waits = [0.0] + [math.floor(math.log2(k)) * hold for k in range(1, coll.nprocs)]  # u, root first
    firsts = [0.0] + [u + alpha for u in waits[1:]]
    steps = [(u + alpha, streams, 0) for u in waits]  # (time, memory streams opened, messages)
    steps += [(first + alpha + j * hold, 0, 1) for first in firsts for j in range(streams)]
    steps.sort()
    left_s = 2 * needed * port.s_per_byte  # stream-seconds the memories must carry
    now_s, open_streams, messages = 0.0, 0, 0
    for at_s, opened, started in steps:
        usable = min(open_streams, 2 * messages)
        if usable and usable * (at_s - now_s) >= left_s:
            return now_s + left_s / usable
        left_s -= usable * (at_s - now_s)
        now_s, open_streams, messages = at_s, open_streams + opened, messages + started
    return now_s + left_s / min(open_streams, 2 * messages)


def _late_capacity_s(window_s: float, hold_s: float) -> float:
    """C(y) of late_nodes_bound_s: the byte-time that messages a node starts one per hold_s
    from the start of a window of `window_s` can bring by its end, sum over i of (y - i h)+."""
    if window_s <= 0:
        return 0.0
    starts = math.ceil(window_s / hold_s)
    return starts * window_s - hold_s * starts * (starts - 1) / 2


def _late_nodes_block(coll: Collective) -> int | None:
    """The bytes every node needs of a source where each of the collective's nodes needs the
    same block of it: a broadcast from one root to every other node (its block), or an
    allreduce whose nodes are one group with even partials (the partial: each of its elements
    depends on every member's input). None otherwise (uneven blocks, several groups)."""
    m = coll.network_matrix
    if coll.kind is Kind.BROADCAST and _one_root_to_all_bytes(coll) is not None:
        root = int(np.flatnonzero(m.any(axis=1))[0])
        blocks = np.delete(m[root], root)
    elif coll.kind is Kind.ALLREDUCE:
        blocks = m[~np.eye(coll.nprocs, dtype=bool)]
    else:
        return None
    if blocks.size == 0 or blocks.min() <= 0 or blocks.min() != blocks.max():
        return None
    return int(blocks[0])


def late_nodes_bound_s(coll: Collective, port: PortModel) -> float:
    """A broadcast of B bytes from one root to the other P - 1 nodes of the collective, where a
    node streams several messages at once but each message streams on one link, at most one
    byte per s_per_byte (iWarp, the torus; docs/bounds.md, "Late nodes of a broadcast"). With
    L = ceil(log2 P), at most 2^(L-1) nodes (the root among them) are first sent some of the
    block before (L - 1) h (the start-up rounds); the others, late, at least P - 2^(L-1), take
    their whole block by T in messages started at (L - 1) h or later. Let x = T - (L - 1) h -
    alpha. A message started at t brings at most (T - alpha - t) / beta bytes; a node starts one
    per h, an early node from (L - 1) h on, a late one from alpha later (it holds nothing
    before), so the messages of a node bring at most C(x) / beta or C(x - alpha) / beta bytes,
    C(y) = sum over i >= 0 of (y - i h)+. The late nodes' blocks then need
        (P - 2^(L-1)) (B beta - C(x - alpha)) <= 2^(L-1) C(x),
    the fewest late nodes being the worst case; T >= (L - 1) h + alpha + the least such x.
    An allreduce of one group with even B-byte partials takes the same bound for any one
    member's input as the source: every element of every other member's result depends on it,
    so those members need B bytes that carry it (docs/bounds.md). 0 for other kinds, several
    senders of a broadcast, several groups of an allreduce, uneven blocks, a collective whose
    nodes are not all receivers, ports of one stream (where the start-up bound's last block at
    one stream is never below it) or shared between nodes, and no hold."""
    if port.streams <= 1 or port.port_of or port.hold_s <= 0:
        return 0.0
    block = _late_nodes_block(coll)
    if block is None:
        return 0.0
    n, block_s = coll.nprocs, block * port.s_per_byte
    rounds = math.ceil(math.log2(n))
    early = 2 ** (rounds - 1)
    late = n - early
    alpha, hold = port.startup_s, port.hold_s

    def short(x: float) -> bool:  # too short a last round: the late nodes' blocks do not fit
        return late * (block_s - _late_capacity_s(x - alpha, hold)) > early * _late_capacity_s(x, hold)

    low, high = 0.0, block_s  # short(block_s) is False: C(B beta) >= B beta and early >= late
    if not short(low):
        return 0.0
    for _ in range(100):  # the least x not short lies in (low, high]; low stays short
        middle = (low + high) / 2
        low, high = (middle, high) if short(middle) else (low, middle)
    return (rounds - 1) * hold + alpha + low


def memory_start_bound_s(coll: Collective, port: PortModel) -> float:
    """An allreduce where each node's sends and receives share s = `shared_streams` link-rate
    streams of its memory and its processor starts its messages one per h (iWarp, the torus;
    docs/bounds.md, "An allreduce's memories at the start"). Every byte on the wire holds a
    stream at both its ends for s_per_byte, and the members must move what `needs` charges
    them (2 (k - 1) partials a group of k, Patarasuk and Yuan): sum over nodes of send + receive
    bytes. No message streams before alpha after its start, and by alpha + (j + 1) h the P nodes
    have started at most P (j + 1) messages, each holding one stream at each end: from alpha to
    alpha + (j + 1) h the memories use at most 2 P (j + 1) of their s P streams. Over the P
    memories:
        s P T >= s P alpha + P h sum over j >= 0 of (s - 2 (j + 1))+ + beta sum (send + recv),
    on four streams T >= alpha + h / 2 + beta sum (send + recv) / (4 P). 0 for other kinds and
    ports without streams shared by both directions (or shared between nodes)."""
    streams = port.shared_streams
    if port.shared_engine or not streams or port.port_of or coll.kind is not Kind.ALLREDUCE:
        return 0.0
    send, recv = needs(coll, port)
    n = coll.nprocs
    unused_s = n * port.hold_s * sum(max(0, streams - 2 * (j + 1)) for j in range(streams))
    wire_s = float(send.sum() + recv.sum()) * port.s_per_byte
    return port.startup_s + (unused_s + wire_s) / (streams * n)


def memory_rounds_bound_s(coll: Collective, port: PortModel) -> float:
    """Start-up rounds and the memories together, where each node's sends and receives share
    `shared_streams` link-rate streams of its memory and its processor starts its messages one
    at a time (iWarp, the torus; docs/bounds.md, "Rounds through the memories"). Take a time t
    just before alpha + j h. A node holds bytes of source r's data only once a message that
    carries them has streamed for a while, which it does no sooner than alpha after its start,
    so it was sent some by a message started before j h: at most 2^j nodes, r among them, hold
    any of r's data (the start-up rounds). Each of r's other receivers must then receive all it
    needs of r after t, at least the sum of the c_r + 1 - 2^j smallest of r's needs (c_r
    receivers), and every byte received holds a stream at both ends for s_per_byte. The P
    memories' s streams carry that after t, so where some is left
        T >= alpha + j h + 2 beta sum over r of (its c_r + 1 - 2^j smallest needs) / (s P).
    The largest over j = 1, 2, ... (j = 0 is the shared engines' bound, `engines_load` over the
    shared streams, and is left to it). It counts each
    source's bytes apart, so not for reductions (one partial serves every source); taken for
    the allgather and the all-to-alls, where every node is a source to many. 0 for other kinds
    and ports without streams shared by both directions (or shared between nodes)."""
    streams = port.shared_streams
    if port.shared_engine or not streams or port.port_of or coll.kind not in MEMORY_ROUNDS_KINDS:
        return 0.0
    m = coll.network_matrix
    n = coll.nprocs
    receivers = (m > 0).sum(axis=1)
    ascending = np.sort(m, axis=1)  # each source's zeros first, then its needs, least first
    sums = np.concatenate([np.zeros((n, 1)), np.cumsum(ascending, axis=1, dtype=np.float64)], axis=1)
    first = n - receivers  # the column of each source's least need
    best_s, rows = 0.0, np.arange(n)
    for j in range(1, int(receivers.max(initial=0)).bit_length() + 1):
        lacking = receivers + 1 - (1 << j)  # receivers that hold none of the source's data
        if not (lacking > 0).any():
            break
        take = np.clip(lacking, 0, None)
        left = float((sums[rows, first + take] - sums[rows, first]).sum())
        best_s = max(best_s, port.startup_s + j * port.hold_s
                     + 2 * left * port.s_per_byte / (streams * n))
    return best_s


def _port_rounds(m: np.ndarray, port: PortModel, source: int) -> int:
    """Start-up rounds for `source`'s data to reach the other ports that need it."""
    others = {port.port(q) for q in np.flatnonzero(m[source])} - {port.port(source)}
    return math.ceil(math.log2(len(others) + 1)) if others else 0


def port_loads_s(send: np.ndarray, recv: np.ndarray, port: PortModel) -> np.ndarray:
    """Each port's bytes time: each direction on its `streams`, and both together on the
    streams they share (a shared engine's; iWarp's memory, `shared_streams`)."""
    apart = np.maximum(send, recv) / port.streams
    shared = (send + recv) / port.engine_streams if port.engine_streams else apart
    return np.maximum(apart, shared) * port.s_per_byte


def port_load_s(send: np.ndarray, recv: np.ndarray, port: PortModel) -> float:
    """The busiest port's bytes time (port_loads_s)."""
    return float(port_loads_s(send, recv, port).max())


def bounds(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = (),
           links: Links | None = None, route: Route | None = None) -> dict[str, float]:
    """Every bound in seconds, by name (`route`: the machine's one fixed route per pair)."""
    if coll.total_bytes == 0:
        return {"none": 0.0}
    send, recv = needs(coll, port)
    load_s = port_load_s(send, recv, port)
    out = {"start-up": startup_bound_s(coll, port),
           "port bandwidth": port.startup_s + load_s if load_s else 0.0}
    if coll.kind is Kind.REDUCE and not port.port_of:
        out["fan-in"] = fan_in_bound_s(coll, port)
    for name, bound_s in (("pipeline", pipeline_bound_s), ("start-ups or relays", relay_bound_s),
                          ("engine fill", engine_fill_bound_s), ("memory fill", memory_fill_bound_s),
                          ("memory ramp", memory_ramp_bound_s),
                          ("late nodes", late_nodes_bound_s),
                          ("memory start", memory_start_bound_s),
                          ("memory rounds", memory_rounds_bound_s),
                          ("three levels", three_level_bound_s),
                          ("contributor pipeline", contributor_pipeline_bound_s),
                          ("relay deadlines", deadline_bound_s),
                          ("root drain", drain_bound_s),
                          ("relays' merges", relay_merges_bound_s),
                          ("straight start-ups", straight_startups_bound_s),
                          ("relay start-ups", relay_startups_bound_s),
                          ("engine start-ups", engine_startups_bound_s),
                          ("scatter relays", scatter_relays_bound_s)):
        value_s = bound_s(coll, port)
        if value_s > 0:  # 0: the bound does not apply to this kind or machine
            out[name] = value_s
    ramp_s = sender_ramp_bound_s(coll, port, float(recv.sum()))
    if ramp_s > 0:  # an allgather on one-stream ports
        out["sender ramp"] = ramp_s
    if "start-ups or relays" in out:  # a one-destination kind on single-stream ports
        out["rounds and relays"] = rounds_relays_bound_s(coll, port, out["start-ups or relays"])
        engines_s = engine_relays_bound_s(coll, port)
        if engines_s > 0:  # one shared engine per node, uneven blocks
            out["engines and relays"] = engines_s
    if port.engine_streams and not port.port_of:
        out["shared engines"] = port.startup_s + port.s_per_byte * engines_load(coll, send, recv) \
            / port.engine_streams
    for name, into in (("cut", False), ("entry link", True)):
        chosen = [c for c in cuts if c.into == into]
        if chosen and port.link_s_per_byte > 0:
            out[name] = port.hold_s + max(must_cross(coll, c.side, c.into) / c.links for c in chosen) \
                * port.link_s_per_byte
    link_load_s = link_load_bound_s(coll, port, links) if links is not None else 0.0
    if link_load_s > 0:
        out["link load"] = link_load_s
    weighted_s = weighted_links_bound_s(coll, port, links) if links is not None else 0.0
    if weighted_s > 0:
        out["weighted links"] = weighted_s
    relays_s = relay_ports_bound_s(coll, port, route)
    if relays_s > 0:
        out["relay ports"] = relays_s
    relay_late_s = relay_or_direct_bound_s(coll, port, route)
    if relay_late_s > 0:
        out["relay's two start-ups"] = relay_late_s
    return out


def lower_bound(coll: Collective, port: PortModel, cuts: tuple[Cut, ...] = (),
                links: Links | None = None, route: Route | None = None) -> tuple[float, str]:
    """(seconds, name of the binding bound)."""
    found = bounds(coll, port, cuts, links, route)
    name = max(found, key=lambda k: found[k])
    return found[name], name
