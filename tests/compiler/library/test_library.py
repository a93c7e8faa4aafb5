"""The algorithm library on every target: every kind and algorithm runs and verifies, nothing
beats the lower bound, the best comes near it at large sizes (issue 17), and `auto` only picks
algorithms whose preconditions hold (issue 22)."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import TARGETS, resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import kind_program
from phalanx.runtime.timing import simulated_time_s

KINDS = ("broadcast", "scatter", "gather", "allgather", "reduce", "allreduce", "cshift",
         "permutation")
# Small machines with odd and even node counts, one of each target family.
SMALL = ("ideal:6", "ideal:8", "paragon:2x3", "sp2:8", "cs2:6", "hypercube:3", "torus:3x4",
         "iwarp:8x8", "proteus:groups=1", "ksr1:7")


def run(spec: str, source: str, algorithm: str = "auto", cost: str | None = None):
    """Compiled and simulated; a forced algorithm's compile simulates no candidate (closed-form),
    `auto` ranks them as a user's run does unless the test names the cost model."""
    if cost is None:
        cost = "target" if algorithm == "auto" else "closed-form"
    return simulate(compile_program(source, target=spec, algorithm=algorithm, cost=cost))


@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("size", [3, 200])
def test_every_kind_and_algorithm_runs_verifies_and_respects_the_bound(spec, size):
    machine = resolve(spec)
    nodes = min(machine.nnodes, 16)  # iwarp:8x8 and proteus: a 16-processor arrangement
    for kind in KINDS:
        source = kind_program(kind, nodes, size)
        ran = 0
        coll = compile_program(source, target=spec, cost="closed-form").collectives[0]
        if kind == "permutation" and coll.kind == "sparse":
            continue  # a prime node count: the sweep's 1 x n transpose moves nothing
        assert coll.kind == kind
        for algorithm in machine.algorithms(kind):
            if machine.unmet(coll, algorithm) is not None:
                continue
            result = run(spec, source, f"{kind}={algorithm}").collectives[0]
            assert result.verified, (spec, kind, algorithm, result.problems)
            assert result.time_s >= result.lower_bound_s * (1 - 1e-9), (spec, kind, algorithm)
            ran += 1
        assert ran >= 1, (spec, kind)


@pytest.mark.parametrize("spec", sorted(e.example for e in TARGETS.values()))
def test_every_target_offers_enough_algorithms(spec):
    machine = resolve(spec)
    for kind in ("broadcast", "allreduce"):
        assert len(machine.algorithms(kind)) >= 3, (spec, kind)
    for kind in ("gather", "scatter", "allgather"):
        assert len(machine.algorithms(kind)) >= 2, (spec, kind)
    for kind in KINDS:
        for name in machine.algorithms(kind):
            assert machine.describe_algorithm(kind, name), (spec, kind, name)


# Best simulated time over the lower bound at 64 KB blocks (measured; the bound is not a
# schedule, so one-port trees and pipelines stay a few times above it on a broadcast). An
# allreduce's partial is 64 KB too: no algorithm of the library reduce-scatters it, so the
# best stays 2.4-2.7x above Patarasuk and Yuan's 2(P - 1)/P partials. On the torus the bound
# counts a node's sends and receives on its memory's four streams (docs/bounds.md, "Shared
# engines"; a broadcast's memories also wait for the start-up rounds, "Memories filling a
# broadcast"): 2.09x (broadcast), 1.01x (allgather) and 1.46x (allreduce) measured.
FACTORS = {("ideal:16", "broadcast"): 2.5, ("ideal:16", "allgather"): 1.2,
           ("ideal:16", "allreduce"): 2.5, ("sp2:32", "broadcast"): 5.0,
           ("sp2:32", "allgather"): 3.5, ("sp2:32", "allreduce"): 2.7,
           ("hypercube:4", "broadcast"): 4.5, ("hypercube:4", "allgather"): 1.2,
           ("hypercube:4", "allreduce"): 2.7, ("torus:4x4", "broadcast"): 2.5,
           ("torus:4x4", "allgather"): 1.1, ("torus:4x4", "allreduce"): 1.6}


@pytest.mark.parametrize("spec, kind", sorted(FACTORS))
def test_best_algorithm_comes_within_a_stated_factor_of_the_bound(spec, kind):
    """Each algorithm timed without its payload (runtime/timing.py: the time of its run with
    data, tests/runtime/test_timing.py; every algorithm's runs with data verify above, on small
    machines), against the bound a run reports (Target.binding_bound)."""
    machine = resolve(spec)
    source = kind_program(kind, machine.nnodes, 64 * 1024)
    coll = compile_program(source, target=spec, cost="closed-form").collectives[0]
    times = {a: simulated_time_s(machine, coll, a)
             for a in machine.algorithms(kind) if machine.unmet(coll, a) is None}
    best = min(times, key=times.get)
    lower_bound_s, _ = machine.binding_bound(coll)
    assert times[best] <= FACTORS[spec, kind] * lower_bound_s, (best, times[best])


def test_sp2_broadcast_of_512_kb_beats_linear_and_linear_reports_its_inefficiency():
    source = kind_program("broadcast", 32, 512 * 1024)
    linear = run("sp2:32", source, "broadcast=linear").collectives[0]
    best = run("sp2:32", source).collectives[0]
    assert best.verified and linear.verified
    assert best.time_s <= 0.15 * linear.time_s, (best.algorithm, best.time_s, linear.time_s)
    assert linear.efficiency < 0.3
    # 31 receivers take the 512 KB and someone sends each copy: the 32 shared engines carry 62
    # blocks between them, and each waits for the start-up rounds to reach it first
    # (docs/bounds.md, "Engines filling a broadcast")
    assert best.lower_bound_binds == "engine fill"


PROGRAM = """processors P({n})
array A({size}) of float64 distribute BLOCK onto P
array S({size}) of float64 on P(0)
array R({size}) of float64 replicated onto P
array s(1) of float64 on P(0)
array t(1) of float64 replicated onto P
A = cshift(A, 5)
R = S
S = A
A = S
R = A
s = sum(A)
t = max(A)
"""


@pytest.mark.parametrize("spec", ["iwarp:8x8", "torus:4x4"])
def test_every_collective_runs_and_verifies_on_the_wormhole_tori(spec):
    n = resolve(spec).nnodes
    result = run(spec, PROGRAM.format(n=n, size=n * 40), cost="closed-form")  # not auto's pick
    kinds = [c.kind for c in result.collectives]
    assert kinds == ["cshift", "broadcast", "gather", "scatter", "allgather", "reduce", "allreduce"]
    assert result.verified


ODD = """processors P({p})
processors P2({q})
array C({size}) of float64 distribute CYCLIC(3) onto P
array D({size}) of float64 distribute BLOCK onto P2
array R({size}) of float64 replicated onto P2
array S({size}) of float64 on P(0)
array s(1) of float64 replicated onto P2
D = C
R = C
R = S
s = sum(C)
C = cshift(C, 2)
"""


@pytest.mark.parametrize("spec", ["ideal:16", "torus:4x4", "iwarp:4x4", "sp2:16", "paragon:4x4",
                                  "hypercube:4", "cs2:64", "iwarp:8x8",
                                  "ksr1:16",
                                  "proteus:groups=1"])
@pytest.mark.parametrize("p, q", [(1, 1), (3, 3), (6, 4), (7, 15), (15, 7)])
def test_odd_shapes_run_with_auto_on_every_target(spec, p, q):
    # auto ranks by the closed forms: which one it takes is not checked here (issue 22: that
    # what it offers runs), and simulating every candidate 50 times over would be slow
    result = run(spec, ODD.format(p=p, q=q, size=420), cost="closed-form")
    assert result.verified, [c.problems for c in result.collectives]


def test_issue_22_store_forward_is_left_out_with_its_reason(cli, tmp_path):
    prog = tmp_path / "small.phx"
    prog.write_text("processors P(6)\nprocessors P2(4)\n"
                    "array C(240) of float64 distribute CYCLIC(3) onto P\n"
                    "array D(240) of float64 distribute BLOCK onto P2\nD = C\n")
    out = cli("run", str(prog), "--target", "iwarp:4x4", "--json")
    assert out.code == 0, out.err
    coll = out.json()["collectives"][0]
    # issue 27: Bruck's rounds in radix 3 (auto simulates them fastest for these short blocks;
    # was bruck, before it colouring)
    assert coll["verified"] and coll["algorithm"] == "radix-bruck"
    left = {x["algorithm"]: x["reason"] for x in coll["left_out"]}
    assert left["store-forward"] == "it needs all 16 nodes, but the collective has 6 processors"
    forced = cli("run", str(prog), "--target", "iwarp:4x4", "--algorithm", "store-forward")
    assert forced.code == 2
    assert ("algorithm 'store-forward' cannot lower the sparse of line 5 on iwarp:4x4: it needs "
            "all 16 nodes, but the collective has 6 processors") in forced.err


def test_forcing_an_algorithm_whose_precondition_fails_names_it():
    source = kind_program("broadcast", 6, 4)  # 4 bytes cannot be cut in 6 pieces
    with pytest.raises(PhalanxError) as err:
        compile_program(source, target="ideal:6", algorithm="broadcast=scatter-allgather")
    assert ("algorithm 'scatter-allgather' cannot lower the broadcast of line 4 on ideal:6: the "
            "4-byte block is smaller than its 6 pieces (one per member)") in str(err.value)
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allgather", 6, 8), target="paragon:2x4",
                        algorithm="allgather=dim-ordered")
    assert "it needs all 8 nodes of the 2x4 grid, but the collective has 6 processors" in \
        str(err.value)


def test_unknown_algorithm_names_itself_and_lists_the_valid_ones():
    with pytest.raises(PhalanxError) as err:
        compile_program(kind_program("allreduce", 4, 8), target="ideal:4",
                        algorithm="allreduce=bogus")
    text = str(err.value)
    assert "unknown algorithm 'bogus' for an allreduce on target 'ideal:4'" in text
    assert "choose one of: auto, direct, linear, binomial, ring, recursive-doubling, bruck" in text


def test_algorithms_lists_descriptions(cli):
    out = cli("algorithms", "--target", "torus:4x4", "--json").json()
    assert "dim-ordered" in out["algorithms"]["torus:4x4"]["broadcast"]
    assert out["descriptions"]["torus:4x4"]["broadcast"]["dim-ordered"].startswith("binomial")
    text = cli("algorithms", "--target", "ideal:4").out
    assert "scatter-allgather" in text and "van de Geijn" in text


@pytest.mark.parametrize("kind", KINDS)
def test_sweep_runs_every_kind(cli, kind):
    out = cli("sweep", "--target", "ideal:6", "--collective", kind, "--sizes", "64", "--json",
              "--quiet", "--workers", "1")
    assert out.code == 0, out.err
    data = out.json()
    assert data["collective"] == kind and data["results"]
    assert all(r["verified"] and r["lower_bound_binds"] for r in data["results"])


def test_the_report_page_lists_what_auto_left_out_and_why(cli, tmp_path):
    prog = tmp_path / "small.phx"
    prog.write_text("processors P(6)\nprocessors P2(4)\n"
                    "array C(240) of float64 distribute CYCLIC(3) onto P\n"
                    "array D(240) of float64 distribute BLOCK onto P2\nD = C\n")
    out = cli("run", str(prog), "--target", "iwarp:4x4", "--quiet", "--report", str(tmp_path / "r"))
    assert out.code == 0, out.err
    page = (tmp_path / "r" / "index.html").read_text()
    assert ("<td>store-forward</td><td>it needs all 16 nodes, but the collective has 6 "
            "processors</td>") in page
