"""The contract between the runtime and the machines (runtime/network.py, compiler/target.py),
checked on every registered target: what the runtime calls exists and answers in kind."""

from __future__ import annotations

import pytest

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import TARGETS, Target, resolve
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.backends.platforms import Platform, platform_for
from phalanx.runtime.engine import Engine
from phalanx.runtime.network import Layout, Network
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program

# A small size of every registered target (its example, shrunk where the example is big).
SMALL = {"ideal": "ideal:8", "iwarp": "iwarp:4x4", "torus": "torus:2x4", "paragon": "paragon:2x4",
         "sp2": "sp2:8", "cs2": "cs2:8", "hypercube": "hypercube:3", "proteus": "proteus",
         "ksr1": "ksr1:8"}


def test_every_registered_target_has_a_small_size_here():
    assert set(SMALL) == set(TARGETS)


@pytest.fixture(params=sorted(SMALL))
def target(request) -> Target:
    return resolve(SMALL[request.param])


def test_the_network_implements_the_contract(target):
    network = target.build_network(Engine())
    assert isinstance(network, Network)
    resources = network.resources()
    assert resources and all(isinstance(r.name, str) and r.busy_s == 0.0 for r in resources)
    assert network.copy_time_s(4096) >= 0.0 and network.barrier_time_s(target.nnodes) >= 0.0
    assert isinstance(network.stats(), dict)
    names = {r.name for r in resources}
    layout = network.layout()
    if layout is not None:
        assert isinstance(layout, Layout) and set(layout.links) <= names
        assert set(layout.positions) == set(range(target.nnodes))
    route = network.route(0, target.nnodes - 1)  # a routed network may make its links now
    assert route is None or (route and set(route) <= {r.name for r in network.resources()})
    assert network.rerouted_pairs() == 0


def test_a_program_runs_and_verifies_on_every_target(target):
    compiled = compile_program(alltoall_program(target.nnodes, 256), target=target.spec, file="<contract>")
    result = simulate(compiled, seed=2)
    assert result.verified and result.total_time_s > 0
    assert result.collectives[0].lower_bound_s <= result.collectives[0].time_s
    assert sum(r.busy_s for r in result.network.resources()) > 0
    data = result.to_json()
    assert data["target"]["spec"] == target.spec and data["target"]["cost_model"] == "target"


def test_a_simgrid_platform_or_a_clear_refusal(target):
    try:
        platform = platform_for(target, [(0, 1), (1, 0)])
    except UsageError as refused:
        assert refused.diagnostic.message == f"target '{target.name}' has no SimGrid platform"
        assert "--backend sim" in refused.diagnostic.hint
        return
    assert isinstance(platform, Platform) and platform.nnodes == target.nnodes
    assert "<platform" in platform.xml


def test_link_failures_are_refused_where_the_network_has_no_links_to_fail():
    network = resolve("ideal:8").build_network(Engine())
    with pytest.raises(UsageError) as info:
        network.avoid_links(((0, "E"),), "ideal:8")
    assert info.value.diagnostic.message == ("link-fail is not supported on ideal:8: its network has "
                                             "no torus or mesh links to fail")
    assert "error-rate and corrupt-rate work on every target" in info.value.diagnostic.hint


def test_ksr1_counters_reach_the_json():
    compiled = compile_program(alltoall_program(8, 1024), target="ksr1:8", file="<ksr1>")
    counters = simulate(compiled).to_json()["network"]
    assert counters["reads"] > 0 and counters["requests"] > 0
