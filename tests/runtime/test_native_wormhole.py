"""The torus's library (`message-passing`) and phased messages on the native core
(runtime/engine_core wormhole.rs and gates.rs, runtime/network.py WormholeShape): the core's ops
are targets/iwarp/wormhole.py's `program` and `pack_program`, op for op, and a run gives the
Python engine's simulated times, events, spans and busy times exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_native_run import assert_same_run, both

from conftest import compile_text, every_pair, with_schedule
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.data import build_data
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.native_run import (
    _distinct,
    _distinct_in_chunks,
    _strided_bytes,
    add_shape,
    core_module,
    native_plan,
)
from phalanx.runtime.network import Acquire, Hold, MessageKind, PassTail, Release, WaitGate, WormholeShape
from phalanx.runtime.schedule_index import ScheduleIndex
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import TimingData
from phalanx.targets.iwarp.wormhole import LIBRARY_MESSAGE, SwitchTag

CODES = (Acquire, Hold, Release, WaitGate, PassTail)  # Core.program_ops' codes

TRANSPOSE = """processors P({n})
array A({m}, {m}) of complex64 distribute (BLOCK, *) onto P
array B({m}, {m}) of complex64 distribute (BLOCK, *) onto P
B = transpose(A)
"""


class WormholeCore:
    """A core holding a torus network's wormhole shape and its resources."""

    def __init__(self, spec: str):
        target = resolve(spec)
        self.network = target.build_network(Engine())
        self.core = core_module.Core(target.nnodes, 1, 0)
        self.resources = list(self.network.resources())
        ids = {id(r): self.core.add_resource(True, 1, True) if isinstance(r, Resource)
               else self.core.add_resource(False, r.capacity, r.grant_now) for r in self.resources}
        self.shape = self.network.program_shape(np.array([LIBRARY_MESSAGE]))
        assert isinstance(self.shape, WormholeShape)
        self.id = add_shape(self.core, self.shape, lambda r: ids[id(r)])

    def program(self, nbytes: int, message: int, gather: int = 0, scatter: int = 0) -> int:
        kind, collective, phase = self.shape.kinds(np.array([message]))
        library = kind[0] == MessageKind.LIBRARY
        pack_s = [self.shape.pack_s(gather) if library else 0.0]
        unpack_s = [self.shape.pack_s(scatter) if library else 0.0]
        return self.core.add_switched_programs(
            self.id, self.shape.route.data_s(np.array([nbytes])).astype(np.float64), np.zeros(1, np.uint8),
            np.zeros(1), kind.astype(np.uint8), np.array(pack_s), np.array(unpack_s),
            collective.astype(np.uint32), phase.astype(np.uint32))

    def ops(self, program: int, src: int, dst: int) -> tuple:
        """The core's ops of the program from src to dst as runtime/network.py's ops."""
        codes, args, holds = self.core.program_ops(program, src, dst)
        gates = iter(self.core.program_gates(program, src, dst))
        gates_of = self.network.gates
        out = []
        for code, arg, hold in zip(codes, args, holds):
            kind = CODES[code]
            if kind is Hold:
                out.append(Hold(hold))
            elif kind in (Acquire, Release):
                out.append(kind(self.resources[arg]))
            else:
                gate_code, collective, link, phase = next(gates)
                assert (gate_code, link) == (code, arg)
                out.append(WaitGate(gates_of, collective, link, phase) if kind is WaitGate
                           else PassTail(gates_of, collective, link))
        return tuple(out)


@pytest.mark.parametrize("spec", ["torus:4x4", "torus:3x5", "torus:1x4,inject_channels=2", "iwarp:8x8"])
def test_the_cores_wormhole_ops_are_the_networks_program_op_for_op(spec):
    """Library messages with and without packing, phased ones (their gates and tails), plain ones,
    between every pair (datelines, half-ring ties, non-square and one-row tori)."""
    core = WormholeCore(spec)
    network = core.network
    phased = SwitchTag(3, 5).message
    src, dst, nbytes = every_pair(core.network.torus.nnodes)
    for message, gather, scatter in ((LIBRARY_MESSAGE, 0, 0), (LIBRARY_MESSAGE, 64, 24), (phased, 0, 0),
                                     (0, 0, 0)):
        first = core.program(96, message, gather, scatter)
        for s, d in zip(src.tolist(), dst.tolist()):
            t = Transfer(s, d, 96, s, d, message=message)
            expected = (*network.pack_program(t, gather, s), *network.program(t),
                        *network.pack_program(t, scatter, d))
            assert core.ops(first, s, d) == expected
    assert any(isinstance(op, WaitGate) for op in core.ops(core.program(8, phased), 0, int(dst[-1])))


def test_the_core_refuses_a_wormhole_program_of_unknown_kind():
    core = WormholeCore("torus:2x2")
    with pytest.raises(ValueError, match="unknown kind 7"):
        core.core.add_switched_programs(core.id, np.zeros(1), np.zeros(1, np.uint8), np.zeros(1),
                                        np.array([7], np.uint8), np.zeros(1), np.zeros(1),
                                        np.zeros(1, np.uint32), np.zeros(1, np.uint32))


# (target, program, algorithm): the transpose's blocks are strided, so the library's messages
# pack and unpack; phased schedules need an n x n torus, n a multiple of 8, and have a fast path
# there, turned off
CASES = [("torus:4x4", kind_program("alltoall", 16, 64), "message-passing"),
         ("torus:4x4", TRANSPOSE.format(n=16, m=32), "message-passing"),
         ("iwarp:4x4", kind_program("alltoall", 16, 1000), "message-passing-random"),
         ("iwarp:8x8", kind_program("alltoall", 64, 8), "message-passing"),
         ("iwarp:8x8", kind_program("alltoall", 64, 8), "phased"),
         ("torus:8x8", TRANSPOSE.format(n=64, m=64), "phased"),
         ("iwarp:8x8", kind_program("alltoall", 64, 64), "two-stage")]


@pytest.mark.parametrize("target, source, algorithm", CASES)
def test_library_and_phased_runs_are_the_python_engines(target, source, algorithm):
    compiled = compile_text(source, target=target, algorithm=algorithm, cost="closed-form")
    python, native = both(compiled, fast=False)
    assert python.verified and native.verified
    assert_same_run(python, native)


@pytest.mark.parametrize("target, source, algorithm", [CASES[1], CASES[4], CASES[5]])
def test_programs_keyed_a_few_messages_at_a_time_run_alike(target, source, algorithm, monkeypatch):
    """What the wormhole programs depend on made 5 messages at a time (COLUMN_CHUNK) gives
    the run of the whole at once, and the Python engine's: library messages that pack and
    unpack, local copies, phased messages."""
    compiled = compile_text(source, target=target, algorithm=algorithm, cost="closed-form")
    whole = simulate(compiled, engine_choice="native", fast=False)
    monkeypatch.setattr("phalanx.runtime.native_run.COLUMN_CHUNK", 5)
    python, chunked = both(compiled, fast=False)
    assert chunked.verified
    assert_same_run(python, chunked)
    assert_same_run(whole, chunked)


@pytest.mark.parametrize("values", [4, 300, 1 << 20])
def test_distinct_in_chunks_is_distinct_of_the_chosen_rows(values, monkeypatch):
    """The distinct rows of the chosen rows, made 7 rows at a time, by a table of first rows
    (few values) or by _distinct (many): the same rows first and the same row of each."""
    monkeypatch.setattr("phalanx.runtime.native_run.COLUMN_CHUNK", 7)
    rng = np.random.default_rng(values)
    table = [rng.integers(0, values, 200), np.full(200, 3), rng.integers(5, 9, 200)]
    chosen = rng.random(200) < 0.8
    picked = np.flatnonzero(chosen)
    first, which = _distinct_in_chunks(lambda rows: [c[rows] for c in table], chosen)
    expected_first, expected_which = _distinct([c[picked] for c in table])
    assert first.tolist() == picked[expected_first].tolist()
    assert which[picked].tolist() == expected_which.tolist()
    none, _ = _distinct_in_chunks(lambda rows: [c[rows] for c in table], np.zeros(200, bool))
    assert not len(none)


def test_a_repeat_finds_its_gates_open_on_both_engines():
    """The gates' counts live as long as the network: a repeat's second run of a phased
    collective passes them at once, on the core as in Python."""
    repeated = kind_program("alltoall", 64, 8).replace("B = A", "repeat 2 {\n  B = A\n}")
    compiled = compile_text(repeated, target="iwarp:8x8", algorithm="phased", cost="closed-form")
    python, native = both(compiled, fast=False)
    assert python.verified and native.verified and len(native.collectives) == 2
    assert_same_run(python, native)


@pytest.mark.parametrize("forwarded", [False, True])
def test_strided_bytes_of_a_whole_schedule_are_each_messages(forwarded):
    """_strided_bytes from the blocks' bits is the data's strided_bytes, message by message
    (forwarded blocks are gathered where they start and scattered where they end)."""
    algorithm = "store-forward" if forwarded else "message-passing"
    compiled = compile_text(TRANSPOSE.format(n=16, m=32), target="torus:4x4", algorithm=algorithm,
                            cost="closed-form")
    data = build_data(compiled.communications[0], np.random.default_rng(0), {})
    cols = ScheduleIndex(compiled.plan.schedules()[0]).columns()
    gather, scatter = _strided_bytes(cols, data.strided_bits(), np.arange(cols.nmessages))
    expected = [data.strided_bytes(cols.group(m)) for m in range(cols.nmessages)]
    assert list(zip(gather.tolist(), scatter.tolist())) == expected
    assert gather.any() and scatter.any()
    assert TimingData(False, 16, compiled.collectives[0].strided).strided_bits().tolist() == \
        data.strided_bits().tolist()


def test_a_header_stuck_at_a_gate_gives_the_same_deadlock_report():
    """Phase 0's messages tagged phase 5: their headers wait at gates no tail opens; both
    engines list them as waiting for nothing (Gates.wait's event has no producer)."""
    compiled = compile_text(kind_program("alltoall", 64, 8), target="iwarp:8x8", algorithm="phased",
                            cost="closed-form")
    (schedule,) = compiled.schedules
    first = schedule.phases[0]
    late = tuple(t._replace(message=SwitchTag(0, 5).message) for t in first.sends)
    phases = (Phase(late, late), *schedule.phases[1:])
    wrong = with_schedule(compiled, dataclasses.replace(schedule, phases=phases))
    reports = []
    for choice in ("python", "native"):
        with pytest.raises(PhalanxError) as info:
            simulate(wrong, engine_choice=choice, fast=False)
        reports.append(info.value.diagnostic.message)
    assert reports[1] == reports[0]
    assert reports[0].startswith("the schedule deadlocks: nothing left to run; blocked: node 0 waits for "
                                 "node 0 send 0->36 to 36")
    assert "node 0 send 0->36 to 36 waits for nothing" in reports[0]


def test_library_and_phased_plans_go_native_unless_routes_avoid_failed_links():
    source = kind_program("alltoall", 64, 8)
    for algorithm in ("message-passing", "phased"):
        compiled = compile_text(source, target="torus:8x8", algorithm=algorithm, cost="closed-form")
        network = compiled.target.build_network(Engine())
        assert native_plan(compiled.plan, network, fast=False) is not None
        network.avoid_links(((5, "E"),), "5:E")
        assert native_plan(compiled.plan, network, fast=False) is None
