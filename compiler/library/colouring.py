"""Shifts, permutations and sparse patterns, each message sent as early as the network allows.

Every message (one block from p to q) is an edge of a bipartite multigraph between the
sending and the receiving ports. A node drives `streams` messages each way at once, so the
messages need at least ceil(D / streams) phases, D the largest number of messages any port
sends or receives; König's theorem (1916) says D colours suffice for the edges of a
bipartite multigraph, and the alternating-path proof finds them: colour the edges one at a
time; when no colour is free at both ends, colour a is free at the sender, b at the receiver,
and swapping a and b along the path of a/b edges from the receiver frees a there (the path
cannot reach the sender: it would close an odd cycle). Colours are then taken `streams` at a
time as phases. A one-message-per-node shift or permutation is thus one phase: one message
time, where the XOR pairing of `direct` needs up to log2 P chained phases.

Where one engine carries a node's sends and receives alike (PortModel.shared_engine: the
Paragon, SP2, CS-2) the sending and receiving sides stay apart all the same: a node's send
and receive of one phase then share its engine (on the Paragon a shift takes lambda + 2 tau m,
the least its engines allow). Where the simulator's engines chain instead (the SP2's
multi-route messages, 3.7 message times for a 64 KB shift on sp2:16) `direct`'s pairs win,
and `auto`, which simulates both there, takes it.

Link-aware: where the machine names its routes (registry.Machine.route: a torus's or
mesh's e-cube links, a fat tree's first route), an edge takes, among the colours free at
both ends, one whose messages hold none of its route's links, if there is one; edges with
the longest routes are coloured first, when most colours are still free. Messages whose
routes share a link and cannot be placed apart keep the D phases (the links serialise
them; more phases would only add start-ups). Where routes are not named, ports only.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from phalanx.compiler.library.members import local_copies
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer

Edge = tuple[int, int]  # (sender's port, receiver's port) of one message


class Colouring:
    """A proper edge colouring in progress: colour bitsets per port and per link."""

    def __init__(self, edges: list[Edge], routes: list[Sequence[Hashable]], colours: int):
        self.edges, self.routes, self.colours = edges, routes, colours
        self.colour = [-1] * len(edges)
        # (side, port) -> colour -> the edge of that colour there; side 0 sends, 1 receives.
        self.at: dict[tuple[int, int], dict[int, int]] = {}
        self.used: dict[tuple[int, int], int] = {}  # bitset of the colours at a port
        self.on_link: dict[tuple[Hashable, int], int] = {}  # (link, colour) -> edges holding it
        self.link_used: dict[Hashable, int] = {}  # bitset of the colours holding a link

    def ends(self, e: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """The edge's sending and receiving ends: the two sides of the bipartite graph."""
        return (0, self.edges[e][0]), (1, self.edges[e][1])

    def set(self, e: int, colour: int) -> None:
        for end in self.ends(e):
            self.at.setdefault(end, {})[colour] = e
            self.used[end] = self.used.get(end, 0) | 1 << colour
        for link in self.routes[e]:
            key = (link, colour)
            self.on_link[key] = self.on_link.get(key, 0) + 1
            self.link_used[link] = self.link_used.get(link, 0) | 1 << colour
        self.colour[e] = colour

    def unset(self, e: int) -> None:
        colour = self.colour[e]
        for end in self.ends(e):
            del self.at[end][colour]
            self.used[end] &= ~(1 << colour)
        for link in self.routes[e]:
            key = (link, colour)
            self.on_link[key] -= 1
            if not self.on_link[key]:
                self.link_used[link] &= ~(1 << colour)
        self.colour[e] = -1

    def free(self, end: tuple[int, int]) -> int:
        """Bitset of the colours no edge at `end` has."""
        return ~self.used.get(end, 0) & ((1 << self.colours) - 1)

    def swap_path(self, start: tuple[int, int], a: int, b: int) -> None:
        """Swap colours a and b on the path of a/b edges that leaves `start` by its a edge."""
        path, end, want = [], start, a
        while want in self.at.get(end, {}):
            e = self.at[end][want]
            path.append(e)
            ends = self.ends(e)
            end = ends[1] if ends[0] == end else ends[0]
            want = b if want == a else a
        old = [self.colour[e] for e in path]
        for e in path:
            self.unset(e)
        for e, colour in zip(path, old):
            self.set(e, b if colour == a else a)

    def add(self, e: int) -> None:
        """Colour edge e (its ends have fewer edges than colours): a colour free at both ends,
        clear of its links if one is; by a swap where none is free at both."""
        sender, receiver = self.ends(e)
        both = self.free(sender) & self.free(receiver)
        if both:
            clear = both & ~self._link_colours(e)
            self.set(e, _lowest(clear or both))
            return
        a, b = _lowest(self.free(sender)), _lowest(self.free(receiver))
        self.swap_path(receiver, a, b)  # a was busy at the receiver; now free at both
        self.set(e, a)

    def _link_colours(self, e: int) -> int:
        out = 0
        for link in self.routes[e]:
            out |= self.link_used.get(link, 0)
        return out


def _lowest(bits: int) -> int:
    return (bits & -bits).bit_length() - 1


def colour_messages(edges: list[Edge], routes: list[Sequence[Hashable]]) -> list[int]:
    """A colour per edge, D colours in all (D the largest port degree), link-aware."""
    degree: dict[tuple[int, int], int] = {}
    for src, dst in edges:
        for end in ((0, src), (1, dst)):
            degree[end] = degree.get(end, 0) + 1
    colouring = Colouring(edges, routes, max(degree.values(), default=0))
    for e in sorted(range(len(edges)), key=lambda e: (-len(routes[e]), edges[e])):
        colouring.add(e)
    return colouring.colour


def colouring_phases(coll: Collective, machine: Machine) -> list[Phase]:
    """ceil(D / streams) phases of the messages by their colour; local copies and the messages
    between nodes of one port (which do not pass it) in the first."""
    m, n, port = coll.byte_matrix, coll.nprocs, machine.port
    messages = [Transfer(p, q, m[p][q], p, q) for p in range(n) for q in range(n)
                if p != q and m[p][q]]
    # nodes of one port (Proteus's cluster) exchange data in its memory, not through the port
    in_memory = [t for t in messages if port.port(t.src) == port.port(t.dst)]
    sends = [t for t in messages if port.port(t.src) != port.port(t.dst)]
    route = machine.route
    routes = [tuple(route(t.src, t.dst)) if route else () for t in sends]
    colours = colour_messages([(port.port(t.src), port.port(t.dst)) for t in sends], routes)
    phases: list[list[Transfer]] = [[] for _ in range(-(-(max(colours, default=0) + 1)
                                                       // port.streams))]
    for t, colour in zip(sends, colours):
        phases[colour // port.streams].append(t)
    phases[0] = local_copies(coll) + phases[0] + in_memory
    return [Phase.of(p) for p in phases]
