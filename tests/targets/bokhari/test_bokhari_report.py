"""Reports for Bokhari's machines: the Paragon mesh's topology hooks (docs/reports.md) and the
sweep report of Figs. 10-12 (one line per partition, refused points listed, not dropped)."""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.engine import Engine
from phalanx.runtime.routes import Routes, drawable, phase_load, routes_svg
from phalanx.runtime.sweep import sweep
from phalanx.runtime.sweep_report import write_sweep_report


def test_the_paragon_mesh_offers_layout_and_route():
    network = resolve("paragon:4x8").build_network(Engine())
    layout = network.layout()
    assert layout.positions[9] == (1.0, 1.0) and len(layout.links) == 2 * (4 * 7 + 3 * 8)
    assert network.route(1, 10) == ["link (0,1)->(0,2)", "link (0,2)->(1,2)"]  # row, then column
    assert layout.links["link (0,2)->(1,2)"] == (2, 10)
    assert {r.name for r in network.resources()} >= set(layout.links)
    phase = Phase.of([Transfer(0, 2, 8, 0, 2), Transfer(1, 3, 8, 1, 3)])  # Fig. 7's shared edge
    load, sent = phase_load(Routes(network), phase)
    assert sent == 2 and load["link (0,1)->(0,2)"] == 2 and max(load.values()) == 2
    schedule = Schedule(0, Kind.ALLTOALL, "direct", 32, (phase,), line=4)
    svg = routes_svg(network, drawable(network, [schedule]), [schedule], "edge contention")
    assert "phase 0 of 1: 2 messages, at most 2 on a link" in svg


def test_hypercube_and_multistage_networks_name_their_routes_without_a_layout():
    network = resolve("sp2:16").build_network(Engine())
    assert network.layout() is None
    assert network.route(0, 4)[0] == "link ('node',0)->('switch',0,(0,))"


def test_a_sweep_report_lists_refused_points_and_draws_one_line_per_partition(tmp_path):
    # A 30-byte receive pool: direct {5} posts 31 receives at once, so not even one-byte
    # pieces fit and it is refused at every size; {2,3} (at most 28 a phase) runs in pieces.
    spec = "paragon:4x8,recv_buffer_bytes=30"
    data = sweep(spec, "alltoall", [8, 16], ["standard", "multiphase:2,3", "direct"])
    assert [(f["algorithm"], f["block_bytes"]) for f in data["failures"]] == [("direct", 8),
                                                                              ("direct", 16)]
    assert "receive-buffer limit of 30 bytes even with one-byte pieces" in data["failures"][0]["error"]
    page = write_sweep_report(data, tmp_path).read_text()
    assert 'id="failures"' in page and "Refused points" in page and "2 points were refused" in page
    time_plot = (tmp_path / "sweep-time.svg").read_text()
    for line in ("standard", "multiphase:2,3", "refused (2 points"):  # direct: refused everywhere
        assert line in time_plot
