"""The contract between the runtime and a machine's network model.

A target builds its network on the engine's resources (targets import runtime, never the
reverse) and hands it to the runtime through `Target.build_network`. The runtime calls only
the methods declared here: the five required ones every machine implements, and the
optional ones, whose defaults say "this network has none" (no fast path, no counters, no
drawing, no routes) or, for what a user asked for explicitly (failing links), raise a clear
error. A new machine subclasses `Network`, implements the five, and overrides what it has;
the runtime needs no change (docs/targets.md, "Adding a machine").

A network may also declare a message's transfer as a *program* (`transfer_program`): a short
list of Acquire / Hold / Release ops on its resources. The Python engine plays it (`play`), and
the native event core (runtime/native_run.py, docs/engine.md) runs a whole plan without a Python
call per event when every message of the plan has one. A network whose programs all follow one
pattern may instead declare that pattern once (`program_shape`: `PortsShape`, `TorusRouteShape`,
`WormholeShape`, whose phased messages wait at the switch's `Gates`),
and the core makes each message's ops from its ends when it starts (runtime/engine_core
shapes.rs), so no per-message ops are built or copied.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.engine import Engine, Event, Pool, Resource
from phalanx.runtime.fastpath import FastPlan

# A failed directed link as `--faults link-fail=NODE:DIR` names it: (node, direction), the
# direction one of E W S N (+X -X +Y -Y); see runtime/faults.py.
FailedLink = tuple[int, str]
# Direction -> (d column, d row, direction index +X -X +Y -Y of a torus node's links).
DIRECTIONS = {"E": (1, 0, 0), "W": (-1, 0, 1), "S": (0, 1, 2), "N": (0, -1, 3),
              "+X": (1, 0, 0), "-X": (-1, 0, 1), "+Y": (0, 1, 2), "-Y": (0, -1, 3)}


@dataclass(frozen=True, slots=True)
class Acquire:
    """Take a unit of `resource` (FIFO: wait behind earlier requests)."""

    resource: Resource | Pool


@dataclass(frozen=True, slots=True)
class Hold:
    """Let `time_s` of simulated time pass, holding what was acquired."""

    time_s: float


@dataclass(frozen=True, slots=True)
class Release:
    """Give back the unit of `resource` that this message holds."""

    resource: Resource | Pool


class Gates:
    """The synchronizing switch's gates (seed 001 Sec. 3.2; targets/iwarp/wormhole.py): per
    (collective, link) how many tails of the collective's messages passed the link, and the
    headers waiting for their turn. The counts live as long as the network."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.passed: dict[tuple[int, int], int] = {}
        self.waiting: dict[tuple[int, int, int], Event] = {}

    def wait(self, coll: int, link: int, phase: int) -> Event | None:
        """The event a header of `phase` waits for at `link` (phase tails passed); None: go on."""
        if self.passed.get((coll, link), 0) >= phase:
            return None
        event = Event(self.engine, f"switch: link {link} waits for phase {phase - 1} tails")
        self.waiting[(coll, link, phase)] = event
        return event

    def tail(self, coll: int, link: int) -> None:
        """A tail passed `link`: count it, and let the header waiting for that count go on."""
        count = self.passed[(coll, link)] = self.passed.get((coll, link), 0) + 1
        event = self.waiting.pop((coll, link, count), None)
        if event is not None:
            event.succeed()


@dataclass(frozen=True, slots=True)
class WaitGate:
    """Wait at `link`'s gate until `phase` tails of `collective` passed it (Gates.wait)."""

    gates: Gates
    collective: int
    link: int
    phase: int


@dataclass(frozen=True, slots=True)
class PassTail:
    """The message's tail passed `link`: count it at the link's gate (Gates.tail)."""

    gates: Gates
    collective: int
    link: int


ProgramOp = Acquire | Hold | Release | WaitGate | PassTail
TransferProgram = tuple[ProgramOp, ...]


# The kinds of program op as columns (no gates), in the order of ProgramColumns.kinds' codes.
ColumnOp = Acquire | Hold | Release
OP_KINDS: tuple[type[ColumnOp], ...] = (Acquire, Hold, Release)


@dataclass(frozen=True)
class ProgramColumns:
    """The transfer programs of many messages as flat columns (Network.transfer_programs):
    message i's ops are ops offsets[i] .. offsets[i + 1] - 1; op k is OP_KINDS[kinds[k]],
    on `resources[resource[k]]` (Acquire, Release) or holding `hold_s[k]` seconds (Hold)."""

    offsets: np.ndarray  # int64, one more than messages
    kinds: np.ndarray  # uint8: an index into OP_KINDS
    resource: np.ndarray  # int64: an index into `resources` (0 for a Hold)
    hold_s: np.ndarray  # float64: a Hold's seconds (0 for an Acquire or Release)
    resources: tuple[Resource | Pool, ...]

    @classmethod
    def of_shape(cls, kinds: tuple[type[ProgramOp], ...], args: tuple[np.ndarray, ...],
                 resources: tuple[Resource | Pool, ...]) -> ProgramColumns:
        """Programs that all have one shape: op j of message i is `kinds[j]` on
        `resources[args[j][i]]`, or holding `args[j][i]` seconds."""
        n, width = len(args[0]), len(kinds)
        resource, hold_s = np.zeros((n, width), np.int64), np.zeros((n, width), np.float64)
        for j, (kind, arg) in enumerate(zip(kinds, args)):
            (hold_s if kind is Hold else resource)[:, j] = arg
        codes = np.array([OP_KINDS.index(kind) for kind in kinds], np.uint8)
        return cls(np.arange(n + 1, dtype=np.int64) * width, np.tile(codes, n), resource.ravel(),
                   hold_s.ravel(), resources)

    @classmethod
    def run(cls, kind: type[ProgramOp], offsets: np.ndarray, values: np.ndarray) -> ProgramColumns:
        """Ops of one kind: message i's are `kind` on (or holding) values[offsets[i]:offsets[i + 1]],
        resource indices or seconds."""
        codes = np.full(len(values), OP_KINDS.index(kind), np.uint8)
        if kind is Hold:
            return cls(offsets, codes, np.zeros(len(values), np.int64), values.astype(np.float64), ())
        return cls(offsets, codes, values.astype(np.int64), np.zeros(len(values), np.float64), ())

    @classmethod
    def each(cls, kind: type[ProgramOp], values: np.ndarray) -> ProgramColumns:
        """One op per message: `kind` on (or holding) values[i]."""
        return cls.run(kind, np.arange(len(values) + 1, dtype=np.int64), values)

    @classmethod
    def joined(cls, parts: list[ProgramColumns], resources: tuple[Resource | Pool, ...]) -> ProgramColumns:
        """Message i's program is part 0's program i, then part 1's, ...; the parts index
        `resources`."""
        lengths = [np.diff(part.offsets) for part in parts]
        offsets = np.zeros(len(parts[0].offsets), np.int64)
        np.cumsum(sum(lengths), out=offsets[1:])
        kinds = np.empty(offsets[-1], np.uint8)
        resource, hold_s = np.empty(offsets[-1], np.int64), np.empty(offsets[-1], np.float64)
        start = offsets[:-1].copy()  # where each message's next part goes
        for part, length in zip(parts, lengths):
            owner = np.repeat(np.arange(len(length)), length)
            at = start[owner] + np.arange(len(part.kinds)) - part.offsets[owner]
            kinds[at], resource[at], hold_s[at] = part.kinds, part.resource, part.hold_s
            start += length
        return cls(offsets, kinds, resource, hold_s, resources)

    def program(self, i: int) -> TransferProgram:
        """Message i's program as transfer_program gives it."""
        ops: list[ProgramOp] = []
        for k in range(int(self.offsets[i]), int(self.offsets[i + 1])):
            kind = OP_KINDS[self.kinds[k]]
            ops.append(Hold(float(self.hold_s[k])) if kind is Hold
                       else kind(self.resources[self.resource[k]]))
        return tuple(ops)


@dataclass(frozen=True)
class PairRoundRobin:
    """Programs that depend on a counter per (src, dst) pair besides the message's ends and
    bytes: the SP2 adapter's round robin over a pair's routes (targets/bokhari/network.py).
    A message reads its pair's counter when its process starts and advances it by
    `steps(nbytes)`, modulo `modulus(src, dst)`; its program is `programs(src, dst, nbytes,
    turn)` with the count it read as its turn. A pair's messages all start at its sender,
    which walks the plan in order (a node's messages of a phase in the schedule's order,
    phases and runs one after the other), so the native run works out every message's turn
    from the plan's order (runtime/round_robin.py) and the programs stay plain ops. The
    counters live as long as the network: the runs of a plan carry them on."""

    counters: dict[tuple[int, int], int]  # the network's counters (transfer reads and advances them)
    modulus: Callable[[np.ndarray, np.ndarray], np.ndarray]  # per pair (src, dst): the counter's modulus
    steps: Callable[[np.ndarray], np.ndarray]  # per message's bytes: how far it advances its counter
    # the programs of messages (src, dst, bytes, turn) as columns
    programs: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ProgramColumns]


@dataclass(frozen=True)
class PortsShape:
    """Programs (Acquire(send_ports[src]), Hold(startup_s), Acquire(recv_ports[dst]), Hold(data),
    Release(recv_ports[dst]), Release(send_ports[src])): targets/ideal.py."""

    send_ports: tuple[Resource, ...]
    recv_ports: tuple[Resource, ...]
    startup_s: float
    data_s: Callable[[np.ndarray], np.ndarray]  # each message's data time by its bytes (transfer_program's)


@dataclass(frozen=True)
class TorusRouteShape:
    """targets/iwarp/wormhole.py's plain messages on a rows x cols torus (node (x, y) = y * cols
    + x, link = node * 4 + direction +X -X +Y -Y): Acquire(cpus[src]), Hold(overhead_s),
    Release(cpus[src]), Acquire(inject[src]), per hop of the e-cube route (topology.py
    Torus.route) Acquire(vcs[2 * link + pool]) and Hold(hop_s), then the memory streams of the
    lower and the higher end and the route's wires by link id, Hold(data), and every one of
    them released in that order, then the virtual channels in path order and the injection
    channel."""

    rows: int
    cols: int
    cpus: tuple[Resource, ...]
    inject: tuple[Pool, ...]
    vcs: tuple[Resource, ...]
    wires: tuple[Resource, ...]
    memory: tuple[Pool, ...]
    overhead_s: float
    hop_s: float
    data_s: Callable[[np.ndarray], np.ndarray]  # each message's data time by its bytes (transfer_program's)


class MessageKind(IntEnum):
    """What a message of a WormholeShape is (the core's codes, wormhole.rs Kind)."""

    PLAIN = 0
    LIBRARY = 1
    PHASED = 2


@dataclass(frozen=True)
class WormholeShape:
    """targets/iwarp/wormhole.py's messages of every kind on its torus (its `program`): the
    plain ones as TorusRouteShape's; a library message (LIBRARY) with `pack_s` of its strided
    bytes on the sender's processor before (when that takes time), a slot of
    `library_sends[src]` from the overhead to the end, after the hops a slot of
    `library_receives[dst]` and `receive_overhead_s` on the receiver's processor, the slots
    released after the streams (the send slot before the virtual channels, the receive slot
    after), and `pack_s` of its strided bytes on the receiver's processor after; a phased one
    (PHASED) with `phased_overhead_s` as its overhead, a WaitGate before each hop's channel and
    a PassTail per hop in path order after every release."""

    route: TorusRouteShape
    library_sends: tuple[Pool, ...]
    library_receives: tuple[Pool, ...]
    receive_overhead_s: float
    phased_overhead_s: float
    pack_s: Callable[[int], float]  # the application's code for this many strided bytes
    # each message id's (MessageKind, collective, phase); collective and phase 0 unless phased
    kinds: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


ProgramShape = PortsShape | TorusRouteShape | WormholeShape


def play(engine: Engine, program: TransferProgram) -> Generator[Event, Any, None]:
    """Process body that runs `program` on the Python engine: the events the native core's
    program interpreter (runtime/engine_core) reproduces one for one."""
    for op in program:
        if isinstance(op, Acquire):
            yield op.resource.request()
        elif isinstance(op, Hold):
            yield engine.timeout(op.time_s, "hold")
        elif isinstance(op, Release):
            op.resource.release()
        elif isinstance(op, WaitGate):
            gate = op.gates.wait(op.collective, op.link, op.phase)
            if gate is not None:
                yield gate
        else:
            op.gates.tail(op.collective, op.link)


@dataclass(frozen=True)
class Layout:
    """Where a network's nodes and links sit, for the report's pictures."""

    positions: dict[int, tuple[float, float]]  # node -> (x, y)
    links: dict[str, tuple[int, int]]  # link resource name -> (from node, to node)


class NoRoute(Exception):
    """A message that the network's routing cannot carry around its failed links; `hint`
    says what to do instead."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint

    @classmethod
    def blocked(cls, src: int, dst: int, link: str) -> NoRoute:
        """No route the routing allows from src to dst avoids the failed `link`."""
        return cls(f"no route from node {src} to node {dst} avoids the failed {link}; the routing "
                   "allows no way around it", "remove that link from link-fail, or choose a "
                   f"schedule that does not send from node {src} to node {dst}")


class Network(ABC):
    """A machine's network model on the engine."""

    # True for a network that must see (and may spoil) the bytes it carries: the runtime
    # then sends every message through `deliver` with its payloads (runtime/faults.py).
    sees_payloads = False

    # -- required ------------------------------------------------------------------------

    @abstractmethod
    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        """Process body that moves `t` from t.src to t.dst (t.src != t.dst), holding resources."""

    @abstractmethod
    def copy_time_s(self, nbytes: int) -> float:
        """Time of a local copy of `nbytes` on one node."""

    @abstractmethod
    def barrier_time_s(self, nnodes: int) -> float:
        """Time from the last arrival at a barrier until everyone leaves it."""

    @abstractmethod
    def combine_time_s(self, operations: int) -> float:
        """Time a node takes to combine `operations` elements of reduction partials into its
        own (one arithmetic operation each, at the machine's rate)."""

    @abstractmethod
    def resources(self) -> list[Any]:
        """Every resource (engine Resource or Pool, or anything with `name` and `busy_s`),
        for utilisation reports."""

    # -- optional, with defaults ---------------------------------------------------------

    def deliver(self, t: Transfer, payloads: list[Any], where: str) -> Generator[Event, Any, list[Any]]:
        """Move `t` and return its payloads as the receiver got them (when `sees_payloads`)."""
        yield from self.transfer(t)
        return payloads

    def copy_program(self, node: int, nbytes: int) -> TransferProgram:
        """A local copy of `nbytes` on `node` as the resources it holds: by default its copy
        time alone (a network that models no memory the copy would share). Both engines run
        it (Interpreter._send plays it, runtime/native_run.py gives it to the core)."""
        return (Hold(self.copy_time_s(nbytes)),)

    def pack(self, t: Transfer, nbytes: int) -> Generator[Event, Any, None]:
        """Process body of the sender's code gathering `nbytes` of `t` from strided memory into
        the message (application buffering). A network that does not model that code: no time."""
        yield from ()

    def unpack(self, t: Transfer, nbytes: int) -> Generator[Event, Any, None]:
        """Process body of the receiver's code scattering `nbytes` of the arrived `t` into
        strided memory; none by default, as for `pack`."""
        yield from ()

    def packs(self, message: int) -> bool:
        """Whether `pack` / `unpack` take time for the messages of this id (the application's
        code on the nodes' processors): the native core runs those only where the network's
        program shape carries their times (WormholeShape); else a plan with such a message
        stays on the Python engine (runtime/native_run.py). None do by default."""
        return False

    def transfer_program(self, t: Transfer) -> TransferProgram | None:
        """`transfer(t)` as a program of ops on this network's resources, for the native event
        core; None: not expressible that way (the run then stays on the Python engine). Whether
        there is a program may depend on the message's ends and id, not on its byte count (the
        runtime asks before the run, with the schedule's own transfers). A network with
        programs must time `transfer` by playing them (`play`), so that both engines agree."""
        return None

    def programs_as_columns(self, message: np.ndarray) -> bool:
        """Whether `transfer_programs` gives columns (never None) for messages with these ids,
        whatever their ends and bytes: the runtime then knows every such message has a program
        without building them, and builds them once, for the core. False by default."""
        return False

    def transfer_programs(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                          message: np.ndarray) -> ProgramColumns | None:
        """`transfer_program` of the messages (src[i], dst[i], nbytes[i], message id message[i])
        at once (src != dst): op for op the same resources and times as transfer_program
        gives. Where it gives columns, a message's program depends only on its ends and bytes
        (the runtime asks once per distinct message, with one of their ids). None: the runtime
        asks message by message (and some message may have no program); never None where
        `programs_as_columns(message)` says so."""
        return None

    def round_robin(self) -> PairRoundRobin | None:
        """The counters per pair that this network's programs depend on (PairRoundRobin); None
        (the default): a program depends on the message alone."""
        return None

    def program_shape(self, message: np.ndarray) -> ProgramShape | None:
        """The one shape of the programs of messages with these ids, whatever their ends and
        bytes: op for op what transfer_program gives. The native core
        then makes each message's ops itself when it starts. None (the default): no shape, the
        runtime asks `transfer_programs` or `transfer_program`."""
        return None

    def fast_plan(self, schedule: Schedule) -> FastPlan | None:
        """A vectorized plan of `schedule` where the network proves it contention-free
        (runtime/fastpath.py); None: run it event by event. Asking books no busy time (the
        plan's `book` does, once per run that takes it)."""
        return None

    def stats(self) -> dict[str, Any]:
        """The network's own counters after a run (`run --json`'s `network`); none by default."""
        return {}

    def reseed(self, seed: int) -> None:
        """Random behaviour of the network (link errors) follows the run's seed; a
        deterministic network has nothing to reseed."""
        return None

    def layout(self) -> Layout | None:
        """Node positions and links for the report's pictures; None: no picture."""
        return None

    def route(self, src: int, dst: int) -> list[str] | None:
        """Names of the link resources a message from src to dst holds, in order; None when
        the network has no links to name."""
        return None

    def link_spans(self) -> list[tuple[str, float, float]]:
        """(link, start, end) of every time a link carried data, for the link timeline;
        empty when the network does not record them."""
        return []

    def avoid_links(self, failed: tuple[FailedLink, ...], spec: str) -> None:
        """Route around these failed links from now on. A network without links to fail
        refuses, saying where link-fail works."""
        raise usage_error(f"link-fail is not supported on {spec}: its network has no torus or "
                          "mesh links to fail",
                          "use link-fail on iwarp, torus or paragon targets; error-rate and "
                          "corrupt-rate work on every target")

    def check_route(self, t: Transfer) -> None:
        """Raise NoRoute when `t` cannot be carried around the failed links; every message
        can when none failed."""
        return None

    def rerouted_pairs(self) -> int:
        """How many (src, dst) pairs left their usual route because of failed links."""
        return 0

