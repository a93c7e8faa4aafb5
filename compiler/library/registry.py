"""The records of the algorithm library: a machine's port model, and one Algorithm per name.

An algorithm states what it needs (`requires`: functions returning None or the reason it
cannot run for this collective on this machine) next to how it builds its phases
(`phases`). `auto` considers only the algorithms whose preconditions hold; a forced one
whose preconditions fail is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from phalanx.compiler.columns import MessagePhase, PhaseColumns
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Schedule


@dataclass(frozen=True)
class PortModel:
    """A node's network port as the generic cost model and lower bounds see it.

    A message holds its sender for `hold_s` of its `startup_s` (one start-up at a time per
    node), reaches its receiver no earlier than `startup_s` after it started, then moves
    at `s_per_byte` through the sender's and the receiver's port. `shared_engine`: one engine
    per node carries sends and receives alike (Paragon, SP2, CS-2); `streams`: messages a node
    streams at once each way (iWarp: its four links, as far as its memory allows).
    """

    startup_s: float
    s_per_byte: float
    combine_s_per_op: float  # a node combining one element of a reduction partial
    shared_engine: bool = False
    streams: int = 1
    copy_s_per_byte: float = 0.0
    barrier_s: float = 0.0
    # For the cut bound of a torus or mesh: seconds per byte on one link direction.
    link_s_per_byte: float = 0.0
    # Nodes that share one network port (Proteus: the 4 PPs of a cluster share its link and
    # talk through shared memory at copy rate); empty: a port per node.
    port_of: tuple[int, ...] = ()
    # The part of startup_s after the sender is free to start its next message (iWarp: the
    # first hop, after the processor's overhead); 0: the start-up holds the sender throughout.
    latency_s: float = 0.0
    # Link-rate streams a node's sends and receives share between them, where fewer than
    # `streams` each way together (iWarp: memory for four streams, each message holding one at
    # both ends, 001_569dde0e56ec3e6f.txt Sec. 1 and 4.1); 0: none beyond `streams` each way.
    # Only the bounds read it (bounds.py, "shared engines").
    shared_streams: int = 0
    # Whether the message layer deposits incoming data where it is used, so a relay forwards
    # a block it received without copying it (iWarp's deposit library: "direct deposit of
    # incoming data to its final destination", 001_569dde0e56ec3e6f.txt Sec. 3.1). False: a
    # message is received into one posted buffer and a relay packs what it forwards again (the
    # nx, MPI and mpsc libraries of the Paragon, SP2 and CS-2: "all multiphase algorithms
    # require some amount of data permutation within a single processor",
    # 003_f18cb429ce0a4177.txt Sec. 4, memory copy time). Either way a node packs the blocks of
    # its own array that it sends (docs/targets.md, "Where a relay copies").
    deposits: bool = False

    @property
    def engine_streams(self) -> int:
        """Streams that carry a node's sends and receives together: all of them on a shared
        engine, `shared_streams` where those are shared, 0 where the directions are apart."""
        return self.streams if self.shared_engine else self.shared_streams

    @property
    def hold_s(self) -> float:
        """How long a start-up holds its sender: a node starts messages at least this far apart."""
        return self.startup_s - self.latency_s

    def port(self, node: int) -> int:
        return self.port_of[node] if self.port_of else node


# The links a message from src to dst holds under a machine's fixed routing, in path order.
Route = Callable[[int, int], Sequence[Hashable]]


@dataclass(frozen=True)
class Adapter:
    """A network adapter that spreads each message's packets over several routes of its pair:
    packet k of a pair's stream (its messages' packets, one after another) goes on route k mod
    the pair's routes, round robin from where the pair's previous message stopped, and the
    simulator moves the packets of one route as one piece, the routes in that order (the SP2:
    targets/bokhari/network.py `RoutedNetwork.packet_pieces`). `routes(src, dst)` is every route of the
    pair, route 0 first, each the links it holds in path order."""

    routes: Callable[[int, int], Sequence[Sequence[Hashable]]]
    packet_bytes: int


@dataclass(frozen=True)
class Machine:
    """What a generator and a precondition may know of the machine: its node count, its
    port model, the grid its nodes form (rows, cols) on a torus or mesh, row-major, whether
    it is a hypercube (nodes differing in one bit are neighbours), its routes where the
    target names the links of its fixed routing (None: only the nodes' ports are modelled), and
    its adapter where that spreads each message over several routes (the SP2)."""

    nnodes: int
    port: PortModel
    grid: tuple[int, int] | None = None
    cube: bool = False
    route: Route | None = None
    adapter: Adapter | None = None  # where the adapter spreads a message over several routes

    @property
    def dimensions(self) -> tuple[int, ...]:
        """The network's dimensions, node ids mixed-radix over them (the last varies fastest):
        (rows, cols) on a torus or mesh, (2, ..., 2) on a hypercube, () on other machines."""
        if self.grid is not None:
            return self.grid
        if self.cube:
            return (2,) * (self.nnodes.bit_length() - 1)
        return ()


Requirement = Callable[[Collective, Machine], "str | None"]
Generator = Callable[[Collective, Machine], list[Phase]]
ColumnGenerator = Callable[[Collective, Machine], PhaseColumns]
MessageGenerator = Callable[[Collective, Machine], Iterable[MessagePhase]]


@dataclass(frozen=True)
class Algorithm:
    name: str
    kinds: tuple[Kind, ...]
    description: str
    phases: Generator
    requires: tuple[Requirement, ...] = ()
    # The same phases as columns (compiler/columns.py), for the all-to-all family: then the
    # schedule is built from them, and the cost model and the event estimate read them alone.
    columns: ColumnGenerator | None = None
    # Its phases' messages from counts (no phase without one), where the cost model need not
    # see the transfers (Bruck's packed messages): what `auto` ranks it by.
    messages: MessageGenerator | None = None
    # A target's own algorithm (iWarp's exchanges, offer.Library.of `own`): the machine's
    # closed form of its time (None: the library's port model estimates it), why that form
    # cannot follow the machine's simulator on a collective (None: it can; Target.closed_form_gap),
    # and the proofs its schedules must pass (Target.schedule_problems).
    closed_form: Callable[[Collective, Machine], float] | None = None
    closed_form_gap: Callable[[Collective], str | None] | None = None
    problems: Callable[[Schedule], list[str]] | None = None
    # Its empty phases belong to the schedule (the phased AAPC's n^3/8, which the switch steps
    # through whatever they carry); other algorithms' are left out (a phase that only receives,
    # as an eager chain's between two sends, is not empty: it is where the node waits).
    keeps_empty_phases: bool = False

    def unmet(self, coll: Collective, machine: Machine) -> str | None:
        """The first precondition that fails, or None when the algorithm can run."""
        for requirement in self.requires:
            reason = requirement(coll, machine)
            if reason is not None:
                return reason
        return None

    def phase_columns(self, coll: Collective, machine: Machine) -> PhaseColumns | None:
        """The schedule's phases as columns (the empty ones left out unless it keeps them),
        where the algorithm builds them so."""
        if self.columns is None:
            return None
        columns = self.columns(coll, machine)
        return columns if self.keeps_empty_phases else columns.nonempty()

    def schedule(self, coll: Collective, machine: Machine) -> Schedule:
        columns = self.phase_columns(coll, machine)
        phases = columns.phases() if columns is not None else \
            tuple(p for p in self.phases(coll, machine) if p.sends or p.recvs or self.keeps_empty_phases)
        return Schedule(coll.index, coll.kind, self.name, coll.nprocs, phases, coll.src,
                        coll.dst, coll.line)
