"""The topology hooks of the wormhole torus (docs/reports.md): layout() and route(), and the run
report's pictures drawn with them."""

from __future__ import annotations

from phalanx.compiler.driver import compile_program
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.runtime.report import write_report
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program


def test_layout_and_route_name_the_wires_of_the_torus():
    network = resolve("iwarp:8x8").build_network(Engine())
    layout = network.layout()
    assert layout.positions[9] == (1.0, 1.0) and len(layout.links) == 4 * 64
    assert layout.links["link (7,0)+X wire"] == (7, 0)  # the wrap-around wire of row 0
    assert {r.name for r in network.resources()} >= set(layout.links)
    route = network.route(9, 3)  # (1,1) -> (3,0): +2 in X, then -1 in Y
    assert route == ["link (1,1)+X wire", "link (2,1)+X wire", "link (3,1)-Y wire"]
    assert all(name in layout.links for name in route)


def test_a_run_report_of_iwarp_8x8_draws_the_routes_and_the_topology_heatmap(tmp_path):
    compiled = compile_program(alltoall_program(64, 64), target="iwarp:8x8",
                               algorithm="phased", file="<report>")
    index = write_report(simulate(compiled), tmp_path)
    page = index.read_text()
    routes = (tmp_path / "routes.svg").read_text()
    assert 'id="routes-picture"' in page and "messages along their routes" in page
    # a phase: 8n messages, each link held by at most one (phased is contention-free)
    assert ": 64 messages, at most 1 on a link" in routes and "link-load.svg" in page
    assert "link utilisation" in (tmp_path / "utilisation.svg").read_text()  # on the topology


def test_the_fast_path_books_the_same_load_as_the_event_path():
    import numpy as np

    from phalanx.runtime.synthetic import execute, lower, varied_matrix
    from phalanx.targets.iwarp.schedules import phased_schedule

    machine = resolve("iwarp:8x8")
    coll, schedule = lower(machine, varied_matrix(64, 256, 0.5, 0.0, seed=1), "phased")
    fast = execute(machine, coll, schedule, fast=True).network
    slow = execute(machine, coll, phased_schedule(coll, machine.torus), fast=False).network
    for kind in ("wires", "cpus", "memory"):
        busy = [np.array([r.busy_s for r in getattr(net, kind)]) for net in (fast, slow)]
        assert busy[0].max() > 0 and np.allclose(busy[0], busy[1], rtol=1e-9, atol=0)
    inject = [sum(r.busy_s for r in net.inject) for net in (fast, slow)]
    assert inject[1] * 0.98 < inject[0] <= inject[1]  # the event path adds waits at switch gates
