"""The `simgrid` cost model (runtime/backends/flowcost.py): `auto` for SimGrid's flow network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import GROUPED_EXCHANGE, load_bench_script, whole_machine_barriers
from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.backends import flowcost, simgrid
from phalanx.runtime.backends.platforms import platform_for
from phalanx.runtime.report import why_chosen
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program, kind_program

needs_simgrid = pytest.mark.simgrid  # skipped where SimGrid is missing (tests/conftest.py)
ROOT = Path(__file__).resolve().parents[3]
IWARP_CANDIDATES = ("phased", "message-passing", "store-forward", "two-stage")


def simgrid_time_s(nprocs: int, block: int, target: str, algorithm: str) -> float:
    compiled = compile_program(alltoall_program(nprocs, block), target=target,
                               algorithm=f"alltoall={algorithm}")
    run = simgrid.run_simgrid(compiled)
    assert run.verified
    return run.simgrid.collectives[0].time_s


@pytest.fixture(scope="module")
def auto_at_16_kb() -> dict:
    """`auto` by the flow model on SimGrid, iwarp:8x8 all-to-all of 16 KB blocks (message
    passing; ~22 CPU-s, SimGrid's run and the built-in one beside it), as the backends bench
    measures it (bench/backends/run.py phalanx_point): the three tests below check different
    things of this one run. They are listed one after the other in tests/slow_first.txt, so
    that they run in a row on one xdist worker and the run is made once."""
    bench = load_bench_script("bench/backends/run.py", "bench_backends")
    return bench.phalanx_point(16384, "target", "auto")


@needs_simgrid
@pytest.mark.parametrize("block, tolerance", [(2048, 0.30), (16384, 0.05)])
def test_flow_model_ranks_iwarp_schedules_as_simgrid_does(block, tolerance, request):
    """On the 8x8 iWarp platform the flow model picks SimGrid's fastest schedule. Measured
    gaps: phased +3%, message passing -3% at 16 KB; at 2 KB message passing is 25% low (in
    natural order every node starts on the same offsets, so the links' loads are not all
    busy at once; the bound-based model cannot see that), phased +2%. At 16 KB, message
    passing's SimGrid time is auto_at_16_kb's (the same schedule: auto takes it)."""
    compiled = compile_program(alltoall_program(64, block), target="iwarp:8x8", cost="simgrid")
    predicted = {c.algorithm: c.time_s for c in compiled.candidates[0]}
    shared = {}
    if block == 16384:
        point = request.getfixturevalue("auto_at_16_kb")
        assert point["algorithm"] == "message-passing" and point["verified"]
        shared["message-passing"] = point["simgrid_time_s"]
    measured = {a: shared[a] if a in shared else simgrid_time_s(64, block, "iwarp:8x8", a)
                for a in IWARP_CANDIDATES}
    for a in ("phased", "message-passing"):
        assert predicted[a] == pytest.approx(measured[a], rel=tolerance), a
    chosen = compiled.schedules[0].algorithm
    assert chosen == "message-passing"  # posted at once, flows share links: no wormhole blocking
    assert measured[chosen] == min(measured.values())


def test_flow_model_is_exact_on_a_contention_free_crossbar():
    """ideal:16 direct: every phase one message per port, so (P-1)(alpha + beta m) exactly."""
    machine = resolve("ideal:16")
    compiled = compile_program(alltoall_program(16, 4096), target="ideal:16")
    coll = compiled.collectives[0]
    expected_s = 15 * (10e-6 + 0.01e-6 * 4096)
    assert machine.predict(coll, "direct", "simgrid") == pytest.approx(expected_s, rel=1e-9)


def test_auto_on_the_target_model_still_picks_phased_at_16_kb():
    """Without `--cost simgrid` the iWarp wormhole model rules, and message passing (Fig. 6,
    contention blocking whole routes) is not chosen: the phased construction is, without the
    switch's per-phase software (`phased-unswitched`, 27.5 ms against `phased`'s 29.9)."""
    compiled = compile_program(alltoall_program(64, 16384), target="iwarp:8x8")
    assert compiled.cost_model == "target"
    assert compiled.schedules[0].algorithm == "phased-unswitched"


def test_flow_model_charges_barriers_and_serial_senders():
    """paragon:4x8 {2,3}: two phases of serial sends with barriers; the flow model's time is
    at least the start-ups and bytes of the busiest node plus the two barriers."""
    machine = resolve("paragon:4x8")
    coll = compile_program(alltoall_program(32, 1024), target="paragon:4x8",
                           cost="closed-form").collectives[0]  # the collective, not auto's choice
    p = machine.params
    flow = flowcost.predict_time_s(machine, coll, "multiphase:2,3")
    sends = (3 + 7)  # 2^2 - 1 and 2^3 - 1 exchanges, each moving 2^(5-d_i) blocks
    floor_s = (sends * p.startup_us + p.us_per_byte * 1024 * (3 * 8 + 7 * 4)) * 1e-6
    assert flow >= floor_s


def test_flow_model_charges_each_group_its_own_barrier():
    """An all-to-all in 4 groups of 4 on hypercube:4 by the standard exchange: its 2 barrier
    phases are scoped to the groups, so each costs Table 1's 4-node barrier (126 * 2 - 113 =
    139 us), not the 16-node one (126 * 4 - 113 = 391 us)."""
    compiled = compile_program(GROUPED_EXCHANGE, algorithm="alltoall=standard")
    s = compiled.schedules[0]
    assert sum(bool(p.barrier_groups) for p in s.phases) == 2
    platform = platform_for(compiled.target, simgrid.used_pairs(compiled))
    scoped = flowcost.schedule_time_s(platform, s)
    whole = flowcost.schedule_time_s(platform, whole_machine_barriers(s))
    assert whole - scoped == pytest.approx(2 * (391 - 139) * 1e-6, rel=1e-9)


def test_unknown_cost_model_is_a_clear_error(cli, examples):
    with pytest.raises(UsageError, match="unknown cost model 'wormhole'") as info:
        compile_program(alltoall_program(16, 64), target="ideal:16", cost="wormhole")
    assert "choose one of: target, closed-form, simgrid" in str(info.value)
    out = cli("compile", str(examples / "transpose.phx"), "--cost", "flow")
    assert out.code == 2
    assert "unknown cost model 'flow'" in out.err and "choose one of: target, closed-form, simgrid" in out.err


@needs_simgrid
def test_run_on_simgrid_chooses_by_the_simgrid_model(cli, tmp_path):
    """`run --backend simgrid` minimises the flow model: on iwarp:4x4 at 16 KB it takes
    message passing (3.297 ms predicted), which the target's own model would not (direct,
    6.449 ms: message passing's worms block each other there), and runs it on SimGrid."""
    program = tmp_path / "aapc.phx"
    program.write_text(alltoall_program(16, 16384))
    assert compile_program(program, target="iwarp:4x4").schedules[0].algorithm != "message-passing"
    out = cli("run", str(program), "--target", "iwarp:4x4", "--backend", "simgrid", "--json")
    assert out.code == 0, out.err
    data = out.json()
    assert data["target"]["cost_model"] == "simgrid" and data["verified"]
    c = data["collectives"][0]
    assert c["algorithm"] == "message-passing"
    assert c["algorithm"] == min(c["candidates"], key=lambda x: x["time_s"])["algorithm"]


@needs_simgrid
def test_auto_on_simgrid_is_within_1_10_of_the_bound_at_16_kb(auto_at_16_kb):
    """Issue 9's goal: on the 8x8 iWarp platform at 16 KB, `auto` by the flow model (message
    passing) runs on SimGrid within 1.10x of the lower bound (1.043x measured)."""
    assert auto_at_16_kb["cost_model"] == "simgrid" and auto_at_16_kb["verified"]
    assert auto_at_16_kb["algorithm"] == "message-passing"
    assert auto_at_16_kb["simgrid_time_s"] <= 1.10 * auto_at_16_kb["lower_bound_s"]


@needs_simgrid
@pytest.mark.skipif(shutil.which("smpicc") is None or shutil.which("smpirun") is None,
                    reason="smpicc/smpirun unavailable: apt-get install libsimgrid-dev")
def test_auto_on_simgrid_beats_smpi_basic_linear_at_16_kb(tmp_path, auto_at_16_kb):
    """Issue 9's goal at 16 KB on the 8x8 iWarp platform (bench/results_backends.json):
    Phalanx's `auto` on SimGrid (message passing, 27.360 ms, 1.043x the bound) is faster than
    SMPI's best MPI_Alltoall, basic_linear (27.937 ms), with the same 20 us per message."""
    bench = load_bench_script("bench/backends/run.py", "bench_backends")
    machine = resolve("iwarp:8x8")
    xml, hosts = tmp_path / "torus.xml", tmp_path / "hosts.txt"
    xml.write_text(platform_for(machine, [(s, d) for s in range(64) for d in range(64)]).xml)
    hosts.write_text("".join(f"node-{i}\n" for i in range(64)))
    smpi = bench.smpi_time(bench.build_smpi(tmp_path), xml, hosts, "basic_linear", 16384)
    ours = auto_at_16_kb
    assert smpi["verified"] and ours["verified"] and ours["algorithm"] == "message-passing"
    assert ours["simgrid_time_s"] < smpi["time_s"]
    assert ours["simgrid_over_lower_bound"] <= 1.10


def test_report_says_which_cost_model_chose():
    compiled = compile_program(alltoall_program(16, 256), target="paragon:4x4", cost="simgrid")
    c = simulate(compiled).collectives[0]
    assert why_chosen(c, "simgrid").startswith("`auto` takes the least predicted time by the "
                                               "`simgrid` cost model: ")
    assert why_chosen(c).startswith("`auto` takes the least predicted time: ")


def allreduce_16(algorithm: str = "auto") -> tuple:
    """hypercube:4's allreduce of 16 KB partials (float64), by `algorithm`, chosen by the flow model."""
    source = kind_program("allreduce", 16, 16384)
    chosen = "auto" if algorithm == "auto" else f"allreduce={algorithm}"
    return compile_program(source, target="hypercube:4", algorithm=chosen, cost="simgrid")


def test_flow_model_combines_a_reductions_partials():
    """Recursive doubling on hypercube:4: 4 rounds of one combined 16 KB partial each, so the
    prediction is 4 (alpha + beta m) (003 Table 1's Paragon figures: 75 us, 0.011 us/B) and
    not the 1 + 2 + 4 + 8 partials the messages stand for; the own partial's copy (14 ns/B)
    runs beside the first round's message and adds nothing."""
    predicted = {c.algorithm: c.time_s for c in allreduce_16().candidates[0]}
    assert predicted["recursive-doubling"] == pytest.approx(4 * (75e-6 + 0.011e-6 * 16384), rel=1e-9)


@needs_simgrid
def test_flow_model_predicts_allreduces_as_simgrid_runs_them():
    """The flow model's predictions (labelled so: compile's candidates) against SimGrid's runs
    of the same schedules, within 1% (measured: equal to 1e-4); it ranks them as SimGrid
    does, so `auto` takes Rabenseifner's family, not recursive doubling (which it predicted
    about 3x slower than SimGrid ran it before a message's partials were combined)."""
    predicted = {c.algorithm: c.time_s for c in allreduce_16().candidates[0]}
    measured = {}
    for algorithm in ("recursive-doubling", "reduce-scatter-allgather", "ring"):
        run = simgrid.run_simgrid(allreduce_16(algorithm))
        assert run.verified
        measured[algorithm] = run.simgrid.collectives[0].time_s
        assert predicted[algorithm] == pytest.approx(measured[algorithm], rel=0.01), algorithm
    assert sorted(measured, key=measured.get) == sorted(measured, key=predicted.get)
    assert allreduce_16().schedules[0].algorithm in ("cut-halving", "reduce-scatter-allgather")


@needs_simgrid
def test_flow_model_predicts_the_gray_two_tree_broadcast_as_simgrid_runs_it():
    """hypercube:4, 256 KB by gray-two-tree: no two messages of a slot share a link, so the flow
    model's prediction (labelled so: compile's candidates) is SimGrid's time within 1%."""
    source = kind_program("broadcast", 16, 256 * 1024)
    compiled = compile_program(source, target="hypercube:4", algorithm="broadcast=gray-two-tree",
                               cost="simgrid")
    predicted = flowcost.predict_time_s(compiled.target, compiled.collectives[0], "gray-two-tree")
    run = simgrid.run_simgrid(compiled)
    assert run.verified
    assert predicted == pytest.approx(run.simgrid.collectives[0].time_s, rel=0.01)


def test_an_allreduces_own_copy_hides_beside_its_messages():
    """hypercube:4, 1 MB partials by reduce-scatter-allgather: each member copies its own
    partial into its result (14 ns/B, slower than the wire's 11, 003 Table 1), half of a
    range's pieces beside the halving message that gives them away, half beside the doubling
    message that brings them back, so the flow model's time (SimGrid's, test above) is
    Rabenseifner's 2 lg P alpha + 2 (P - 1) / P beta n with nothing added for copies (before:
    every copy beside the doubling messages, each longer than its message above 25 KB)."""
    compiled = compile_program(kind_program("allreduce", 16, 1 << 20), target="hypercube:4",
                               algorithm="allreduce=reduce-scatter-allgather", cost="closed-form")
    predicted = flowcost.predict_time_s(compiled.target, compiled.collectives[0], "reduce-scatter-allgather")
    closed_form_s = 8 * 75e-6 + 2 * 15 / 16 * 0.011e-6 * (1 << 20)
    assert predicted == pytest.approx(closed_form_s, rel=0.01)


def test_an_allgathers_own_copy_hides_beside_its_largest_exchange():
    """hypercube:4, 64 KB parts by recursive doubling: each member's copy of its own part
    (0.92 ms at 14 ns/B) goes beside the last exchange (8 parts, 5.8 ms), not the first (one
    part, 0.80 ms), so the flow model's time (SimGrid's: 11.113 ms measured, 11.235 before) is
    the textbook lg P alpha + (P - 1) beta m."""
    compiled = compile_program(kind_program("allgather", 16, 65536), target="hypercube:4",
                               algorithm="allgather=recursive-doubling", cost="closed-form")
    predicted = flowcost.predict_time_s(compiled.target, compiled.collectives[0], "recursive-doubling")
    assert predicted == pytest.approx(4 * 75e-6 + 15 * 0.011e-6 * 65536, rel=1e-6)


@needs_simgrid
@pytest.mark.parametrize("kind, size, chosen, other", [
    ("alltoall", 16384, "grid-direct", "direct"),
    ("allgather", 2048, "interleaved-doubling", "recursive-doubling"),
    ("broadcast", 2048, "farthest-binomial", "binomial")])
def test_flow_model_predicts_the_mesh_schedules_as_simgrid_runs_them(kind, size, chosen, other):
    """paragon:4x8: the flow model's predictions (labelled so in the candidates) equal SimGrid's
    runs to 0.1% (measured: grid-direct 8.909 ms predicted, 8.908 run, direct 14.693 both;
    interleaved-doubling 1.103; farthest-binomial 0.488, binomial 0.514), and `auto` for SimGrid
    takes the mesh-aware schedule."""
    compiled = compile_program(kind_program(kind, 32, size), target="paragon:4x8", cost="simgrid")
    assert compiled.schedules[0].algorithm == chosen
    predicted = {c.algorithm: c for c in compiled.candidates[0]}
    for algorithm in (chosen, other):
        assert predicted[algorithm].source == "predicted"
        run = simgrid.run_simgrid(compile_program(kind_program(kind, 32, size), target="paragon:4x8",
                                                  algorithm=f"{kind}={algorithm}"))
        assert run.verified
        assert predicted[algorithm].time_s == pytest.approx(run.simgrid.collectives[0].time_s, rel=0.01)
    assert predicted[chosen].time_s < predicted[other].time_s
