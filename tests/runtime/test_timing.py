"""Candidates timed without their payload (runtime/timing.py) and `--cost simulate`
(runtime/simcost.py): the same times as runs with real data, the fastest one chosen, the
budget past which a candidate is predicted, and the errors of a bad budget."""

from __future__ import annotations

import dataclasses

import pytest

from phalanx.compiler import hypercube
from phalanx.compiler.driver import compile_program
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.simcost import DEFAULT_BUDGET, estimated_events
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

# Every target kind's network, exchange and library kinds, a reduction, a segmenting algorithm.
CASES = [("ideal:8", "alltoall", 64, "direct"), ("ideal:8", "broadcast", 4096, "scatter-allgather"),
         ("ideal:8", "allreduce", 4, "recursive-doubling"),
         ("iwarp:8x8", "alltoall", 256, "store-forward"), ("iwarp:8x8", "alltoall", 256, "two-stage"),
         ("iwarp:8x8", "alltoall", 64, "message-passing-random"),
         ("iwarp:8x8", "alltoall", 64, "phased"), ("torus:4x4", "allgather", 512, "dim-ordered"),
         ("paragon:4x4", "alltoall", 128, "multiphase:2,2"), ("sp2:16", "alltoall", 128, "standard"),
         ("cs2:16", "gather", 256, "binomial"), ("hypercube:4", "alltoall", 128, "direct"),
         ("proteus", "alltoall", 64, "proteus-group"), ("ksr1", "allgather", 64, "allgather-cshift"),
         ("ksr1", "reduce", 4, "gather-tree")]


def compiled_case(target: str, kind: str, size: int, algorithm: str = "auto", cost: str = "target"):
    from phalanx.compiler.target import resolve

    source = kind_program(kind, resolve(target).nnodes, size)
    return compile_program(source, target=target, algorithm=algorithm, cost=cost)


@pytest.mark.parametrize("target, kind, size, algorithm", CASES)
def test_time_without_payload_is_the_time_with_it(target, kind, size, algorithm):
    compiled = compiled_case(target, kind, size, algorithm, cost="closed-form")  # forced: nothing to rank
    run = simulate(compiled)
    assert run.verified
    assert simulated_time_s(compiled.target, compiled.collectives[0], algorithm) == \
        run.collectives[0].time_s


def test_cost_simulate_takes_the_fastest_candidate_and_says_it_simulated():
    compiled = compiled_case("iwarp:8x8", "alltoall", 2304, cost="simulate")
    machine, coll = compiled.target, compiled.collectives[0]
    cands = compiled.candidates[0]
    assert {c.source for c in cands} == {"simulated"}
    times = {c.algorithm: simulated_time_s(machine, coll, c.algorithm) for c in cands}
    assert {c.algorithm: c.time_s for c in cands} == times
    assert compiled.schedules[0].algorithm == min(times, key=times.get) == "phased-unswitched"
    assert compiled.cost_model == "simulate"


def test_candidates_past_the_budget_are_predicted_and_say_why():
    compiled = compiled_case("ideal:16", "alltoall", 64, cost="simulate:20")
    cand = next(c for c in compiled.candidates[0] if c.algorithm == "direct")
    events = estimated_events(compiled.target, compiled.collectives[0], "direct")
    assert events == 16 * 15 * 2 > 20  # one link and one start-up per message
    assert cand.source == f"predicted (~{events} events, past the simulation budget of 20)"
    assert cand.time_s == compiled.target.predict_time_s(compiled.collectives[0], "direct")
    assert DEFAULT_BUDGET >= events


@pytest.mark.parametrize("spec, message", [
    ("simulate:abc", "bad simulation budget 'abc' in --cost simulate:abc"),
    ("simulate:0", "bad simulation budget '0' in --cost simulate:0"),
    ("simulate:", "bad simulation budget '' in --cost simulate:"),
    ("simgrid:5", "cost model 'simgrid' takes no argument (got 'simgrid:5')"),
    ("closed-form:5", "cost model 'closed-form' takes no argument (got 'closed-form:5')"),
    ("simulat", "unknown cost model 'simulat'"),
])
def test_bad_cost_model_specs_are_refused(spec, message):
    with pytest.raises(UsageError) as err:
        compiled_case("ideal:4", "alltoall", 8, cost=spec)
    assert err.value.diagnostic.message == message


def test_cli_bad_budget_is_a_usage_error(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--cost", "simulate:-3")
    assert result.code == 2
    assert "bad simulation budget '-3' in --cost simulate:-3" in result.err
    assert "Traceback" not in result.err


def test_cli_run_json_lists_simulated_candidates(cli, examples):
    result = cli("run", str(examples / "transpose.phx"), "--cost", "simulate", "--json")
    assert result.code == 0
    (c,) = result.json()["collectives"]
    assert {a["source"] for a in c["candidates"]} == {"simulated"}
    assert next(a for a in c["candidates"] if a["algorithm"] == c["algorithm"])["time_s"] == c["time_s"]


def test_cost_target_simulates_where_its_closed_form_cannot_follow():
    """Bokhari's contention-free time is the hypercube's own (predicted); on the Paragon's mesh
    the family is simulated, every feasible partition a candidate, and so are the library's
    algorithms (the port model has no links); on `ideal` the port model is the network."""
    cube = compiled_case("hypercube:4", "alltoall", 64)
    cube_sources = {c.algorithm: c.source for c in cube.candidates[0]}
    assert cube_sources["bruck"].startswith("simulated: ")  # the port model has no links
    # ranked like against like (issue 29): the family is simulated beside Bruck's
    assert all(s.startswith("simulated") for s in cube_sources.values())
    mesh = compiled_case("paragon:4x4", "alltoall", 64)
    sources = {c.algorithm: c.source for c in mesh.candidates[0]}
    assert sources["multiphase:1,3"].startswith("simulated: the closed form does not follow the "
                                                "simulator (Bokhari's exchange time is the "
                                                "contention-free hypercube's")
    machine, coll = mesh.target, mesh.collectives[0]
    times = {a: simulated_time_s(machine, coll, a) for a in sources}
    assert mesh.schedules[0].algorithm == min(times, key=times.get)
    broadcast = compiled_case("cs2:16", "broadcast", 4096)
    assert all(c.source.startswith("simulated: the closed form does not follow the simulator "
                                   "(the library's port model leaves out the links")
               for c in broadcast.candidates[0])
    assert {c.source for c in compiled_case("ideal:16", "broadcast", 4096).candidates[0]} == \
        {"predicted"}


def test_cost_closed_form_simulates_no_candidate(monkeypatch):
    """`--cost closed-form` times every candidate by the machine's formulas, where `--cost
    target` simulates them too (Bokhari's family on the Paragon's mesh, the library on the
    CS-2): nothing is simulated, each candidate says `predicted`, and `auto` takes the least
    closed form; Bokhari's candidates are then the equipartitions of Sec. 2.3, as where the
    formula follows the simulator (the hypercube)."""
    def no_simulation(*args):
        raise AssertionError("a candidate was simulated")

    monkeypatch.setattr("phalanx.runtime.simcost.simulated_time_s", no_simulation)
    for target, kind, size in [("paragon:4x4", "alltoall", 64), ("cs2:16", "broadcast", 4096)]:
        compiled = compiled_case(target, kind, size, cost="closed-form")
        machine, coll = compiled.target, compiled.collectives[0]
        cands = compiled.candidates[0]
        assert {c.source for c in cands} == {"predicted"}
        formulas = {c.algorithm: machine.closed_form_s(coll, c.algorithm) for c in cands}
        assert {c.algorithm: c.time_s for c in cands} == formulas
        assert compiled.cost_model == "closed-form"
        chosen = compiled.schedules[0].algorithm
        if kind == "alltoall":
            equal = [hypercube.algorithm_name(p) for p in hypercube.partitions(4)
                     if hypercube.is_equipartition(p)]
            assert min(equal, key=formulas.get) == "multiphase:2,2"
        assert chosen == min(formulas, key=formulas.get)  # the library's dim-bruck for the all-to-all
    with pytest.raises(AssertionError, match="a candidate was simulated"):
        compiled_case("paragon:4x4", "alltoall", 64)  # --cost target simulates here


ROW_SUM = """processors Q(8, 8)
array A(256, 256) of float64 distribute (BLOCK, BLOCK) onto Q
array R(256, 8) of float64 distribute (BLOCK, BLOCK) onto Q
R(:, 0) = sum(A, dim=2)
"""


@pytest.mark.parametrize("target, algorithm", [("ideal:64", "binomial"), ("iwarp:8x8", "chain"),
                                               ("paragon:8x8", "linear"), ("ksr1:64", "gather-tree")])
def test_a_reduce_in_groups_of_partial_blocks_times_the_same_without_payload(target, algorithm):
    """A dim reduction's partials are 32-element blocks, combined on the wire and merged one
    element at a time: TimingData counts them as the real data does."""
    compiled = compile_program(ROW_SUM, target=target, algorithm=f"reduce={algorithm}",
                               file="r.phx", cost="closed-form")
    run = simulate(compiled)
    assert run.verified
    assert compiled.collectives[0].element_bytes == 8
    assert simulated_time_s(compiled.target, compiled.collectives[0], algorithm) == \
        run.collectives[0].time_s


def real_data_time_s(compiled, algorithm: str, index: int = 0) -> float:
    """Collective `index` by `algorithm` alone on a fresh network, with its statement's real
    payloads (checked): what runtime/simulate.py `own_times` replays."""
    import numpy as np

    from phalanx.compiler.schedule import Plan
    from phalanx.runtime.data import Payloads, build_data
    from phalanx.runtime.simulate import run_plan

    machine, coll = compiled.target, compiled.collectives[index]
    stmt = compiled.communications[index]
    schedule = machine.schedule_for(coll, algorithm)
    data = Payloads(lambda _: build_data(stmt, np.random.default_rng(0), {}), [0])  # its only run
    execution, _ = run_plan(machine, Plan(schedule.nprocs, (schedule,)), data)
    assert data.checked()[0] == []
    return execution.collectives[0].time_s


def test_timing_runs_pack_strided_blocks_as_real_runs_do(examples):
    """fft2d_iwarp.phx's transpose on iwarp:8x8: each 8 x 8 block is 8 pieces of rows at both
    ends, so the library's messages are packed and unpacked by the nodes' processors
    (pack_cycles_per_word). The compiler marks those blocks (Collective.strided) and the
    timing run charges what the run with data does, for every candidate."""
    from phalanx.compiler.layout import GATHERED, SCATTERED

    compiled = compile_program(examples / "fft2d_iwarp.phx", cost="closed-form")  # simulated below
    machine, coll = compiled.target, compiled.collectives[0]
    assert all(bits == GATHERED | SCATTERED for row in coll.strided for bits in row)
    real = {}
    refused = {algorithm for algorithm, reason in machine.candidates(coll) if reason is not None}
    # grid-direct: its Latin squares are for the lines of a mesh, not rings; engine-rounds and
    # exchange-steps: for one engine a node, where iWarp streams four messages
    assert refused == {"grid-direct", "engine-rounds", "exchange-steps"}
    for algorithm, reason in machine.candidates(coll):
        if reason is not None:
            continue
        real[algorithm] = real_data_time_s(compiled, algorithm)
        assert simulated_time_s(machine, coll, algorithm) == pytest.approx(real[algorithm],
                                                                           rel=1e-9), algorithm
    # Packing is what message passing pays here: 24.6 ms with it, 10.2 ms on the wire alone.
    unpacked = dataclasses.replace(coll, strided=())
    assert real["message-passing"] > 2 * simulated_time_s(machine, unpacked, "message-passing")
    assert machine.choose(coll, "auto", "simulate") == min(real, key=real.get)


ROW_ALLREDUCE = """processors Q(8, 8)
array A(256, 256) of float64 distribute (BLOCK, BLOCK) onto Q
array Y(256, 8) of float64 distribute (BLOCK, BLOCK) onto Q
Y = spread(sum(A, dim=2), dim=2, ncopies=8)
"""


@pytest.mark.parametrize("target, algorithm", [("ideal:64", "ring"), ("iwarp:8x8", "bruck"),
                                               ("paragon:8x8", "recursive-doubling"),
                                               ("torus:8x8", "binomial")])
def test_an_allreduce_in_groups_of_partial_blocks_times_the_same_without_payload(target, algorithm):
    """A spread row sum's partials are 32-element blocks forwarded as copies and combined on
    the wire: TimingData counts them as the real data does."""
    compiled = compile_program(ROW_ALLREDUCE, target=target, algorithm=f"allreduce={algorithm}",
                               file="y.phx", cost="closed-form")
    run = simulate(compiled)
    assert run.verified
    assert compiled.collectives[0].kind == "allreduce"
    assert simulated_time_s(compiled.target, compiled.collectives[0], algorithm) == \
        run.collectives[0].time_s
