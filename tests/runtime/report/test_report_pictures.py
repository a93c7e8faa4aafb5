"""Pictures: timeline bars from spans, utilisation from real engine resources, the layout
and route hooks, sweep plots; every picture has a title, axis labels with units, a legend.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import Phase, Schedule, Transfer
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.gantt import Bar, gantt_svg, link_label, merged_lane, timeline_bars
from phalanx.runtime.interpreter import Span, SpanKind
from phalanx.runtime.network import Layout, Network
from phalanx.runtime.plots import sweep_bandwidth_svg, sweep_time_svg
from phalanx.runtime.routes import (
    MAX_ROUTE_PANELS,
    Routes,
    drawable,
    link_load_svg,
    phase_load,
    route_panels,
    routes_svg,
)
from phalanx.runtime.utilisation import utilisation, utilisation_svg

SPANS = [Span(0, SpanKind.COMPUTE, 0.0, 1e-3, "row pass"), Span(1, SpanKind.COMPUTE, 0.0, 1e-3, "row pass"),
         Span(0, SpanKind.SEND, 1e-3, 1.5e-3, "0->1 to 1, 100 B"),
         Span(0, SpanKind.PHASE, 1e-3, 2e-3, "phase 0"), Span(1, SpanKind.PHASE, 1e-3, 2e-3, "phase 0")]


def test_timeline_derives_receives_and_waits():
    bars = set(timeline_bars(SPANS))
    assert Bar(1, "receive", 1e-3, 1.5e-3) in bars
    assert Bar(0, "wait", 1.5e-3, 2e-3) in bars and Bar(1, "wait", 1.5e-3, 2e-3) in bars
    assert not any(b.kind == "wait" and b.start_s < 1.5e-3 for b in bars)


def test_gantt_has_title_axes_and_legend():
    svg = gantt_svg(SPANS, 2, "timeline of t")
    for text in ("timeline of t", "time (ms)", "node", "compute", "send (upper half)",
                 "receive (lower half)", "wait (in a phase, idle)"):
        assert text in svg


def test_gantt_draws_sends_in_the_upper_half_of_a_row():
    """Node 0 computes, then sends to node 1: in the SVG (y grows downwards) the send's box
    is the upper half of the compute's row, the receive's the lower half of row 1."""
    svg = gantt_svg([Span(0, SpanKind.COMPUTE, 0.0, 1e-3, "work"),
                     Span(0, SpanKind.SEND, 1e-3, 2e-3, "0->1 to 1, 8 B", 1)], 2, "t")
    boxes = {colour: [float(y) for y in re.findall(r"L [\d.]+ ([\d.]+)", d)]
             for d, colour in re.findall(r'<path d="([^"]*)"[^>]*style="fill: (#[0-9a-f]+)"', svg)}
    compute, send, receive = boxes["#31a354"], boxes["#3182bd"], boxes["#fd8d3c"]
    middle = (min(compute) + max(compute)) / 2
    assert min(send) == pytest.approx(min(compute)) and max(send) == pytest.approx(middle)
    row = min(receive) - middle  # the receive starts at the middle of row 1
    assert max(receive) - min(receive) == pytest.approx(max(send) - min(send)) and row > 0


def test_gantt_merges_bars_closer_than_a_pixel():
    bars = [Bar(0, "send", 0.0, 1.0), Bar(0, "send", 0.2, 0.5), Bar(0, "send", 1.0001, 2.0),
            Bar(0, "send", 3.0, 4.0), Bar(1, "send", 0.5, 0.6)]
    node, start, end = merged_lane(bars, 0.001)
    assert list(zip(node.tolist(), start.tolist(), end.tolist())) == [
        (0, 0.0, 2.0), (0, 3.0, 4.0), (1, 0.5, 0.6)]


def hold(engine: Engine, resource: Resource, start_s: float, hold_s: float):
    yield engine.timeout(start_s)
    yield resource.request()
    yield engine.timeout(hold_s)
    resource.release()


class Listed(Network):
    """A network of the given resources, each message holding the first for 1 us (only
    what the pictures read matters here)."""

    def __init__(self, resources: list[Resource]):
        self.listed = resources

    def transfer(self, t: Transfer):
        yield self.listed[0].request()
        yield self.listed[0].engine.timeout(1e-6)
        self.listed[0].release()

    def copy_time_s(self, nbytes: int) -> float:
        return 0.0

    def barrier_time_s(self, nnodes: int) -> float:
        return 0.0

    def combine_time_s(self, operations: int) -> float:
        return 0.0

    def resources(self):
        return self.listed


class Ring(Listed):
    """A 4-node unidirectional ring on real engine resources, with a layout and routes."""

    def __init__(self, engine: Engine):
        self.links = [Resource(engine, f"link {i}->{(i + 1) % 4}") for i in range(4)]
        super().__init__(self.links)

    def layout(self) -> Layout:
        return Layout({0: (0, 0), 1: (1, 0), 2: (1, 1), 3: (0, 1)},
                      {f"link {i}->{(i + 1) % 4}": (i, (i + 1) % 4) for i in range(4)})

    def route(self, src: int, dst: int) -> list[str]:
        return [f"link {i % 4}->{(i + 1) % 4}" for i in range(src, src + (dst - src) % 4)]


def test_utilisation_grid_from_busy_time():
    engine = Engine()
    ports = [Resource(engine, f"node {i} {d} port") for i in range(3) for d in ("send", "receive")]
    engine.process(hold(engine, ports[0], 0.0, 2.0), "a")
    engine.process(hold(engine, ports[0], 0.0, 1.0), "b")  # queues behind a: busy 3 of 4 s
    engine.process(hold(engine, ports[3], 1.0, 3.0), "c")
    engine.run()
    assert utilisation(ports, 4.0)["node 0 send port"] == pytest.approx(0.75)

    svg = utilisation_svg(Listed(ports), 4.0)
    for text in ("utilisation of ports and links", "mean 25%, max 75%", "node send port",
                 "node receive port", "utilisation (fraction of run time)"):
        assert text in svg


def test_topology_heatmap_and_routes_use_the_hooks():
    engine = Engine()
    ring = Ring(engine)
    engine.process(hold(engine, ring.links[2], 0.0, 1.0), "a")
    engine.run()
    svg = utilisation_svg(ring, 2.0)
    assert "link utilisation" in svg and "x (topology coordinate)" in svg and "max 50%" in svg
    # Phase 0: 0->2 and 1->2 share link 1->2 (two messages on it); phase 1: 3->0 alone.
    phases = (Phase.of([Transfer(0, 2, 8, 0, 2), Transfer(1, 2, 8, 1, 2)]),
              Phase.of([Transfer(3, 0, 8, 3, 0)]))
    schedule = Schedule(0, Kind.GATHER, "direct", 4, phases, line=7)
    layout = drawable(ring, [schedule])
    assert layout is not None and drawable(Listed(ring.links), [schedule]) is None
    assert phase_load(Routes(ring), phases[0]) == ({"link 0->1": 1, "link 1->2": 2}, 2)
    routes = routes_svg(ring, layout, [schedule], "routes on ring")
    for text in ("routes on ring", "line 7 gather", "phase 0 of 2: 2 messages, at most 2 on a link",
                 "phase 1 of 2: 1 messages, at most 1 on a link",
                 "messages of the phase on the link (1: no contention); grey: idle",
                 "x (topology coordinate)"):
        assert text in routes, text
    load = link_load_svg(ring, layout, [schedule, dataclasses.replace(schedule, collective=1)],
                         "data per link")
    # link 1->2 carries 16 B per run, two runs
    assert "all 2 phases over its 2 runs" in load and "busiest link 0.032 KB" in load
    assert "data carried by the link (KB); grey: idle" in load


def test_route_panels_keep_to_their_budget_and_say_so():
    phase = Phase.of([Transfer(0, 1, 8, 0, 1)])
    schedule = Schedule(0, Kind.ALLTOALL, "direct", 4, (phase,) * 20, line=3)
    panels, note = route_panels([schedule])
    assert len(panels) == MAX_ROUTE_PANELS and [k for _, k, _ in panels][:2] == [0, 4]
    assert panels[-1][1] == 19  # first, last and an even sample between
    assert note == (f"{MAX_ROUTE_PANELS} phases drawn, {20 - MAX_ROUTE_PANELS} other phases with "
                    "messages are in the link-load picture")


def test_resources_without_node_numbers_fall_back_to_bars():
    engine = Engine()
    bus = Listed([Resource(engine, "bus"), Resource(engine, "arbiter")])
    assert "busy time / run time: mean 0%" in utilisation_svg(bus, 1.0)


SWEEP = {"target": {"spec": "ideal:4"}, "collective": "alltoall", "results": [
    {"algorithm": a, "block_bytes": b, "time_s": t, "lower_bound_s": 1e-4 * b / 64,
     "aggregate_bandwidth_Bps": 12 * b / t, "efficiency": 1e-4 * b / 64 / t}
    for a, k in (("direct", 1.0), ("other", 2.0)) for b, t in ((64, 2e-4 * k), (1024, 2e-3 * k))]}


@pytest.mark.parametrize("draw, ylabel", [(sweep_bandwidth_svg, "aggregate bandwidth (MB/s)"),
                                          (sweep_time_svg, "time (ms, log scale)")])
def test_sweep_plots_have_a_line_per_algorithm_and_the_bound(draw, ylabel):
    svg = draw(SWEEP)
    for text in ("alltoall on ideal:4", ylabel, "message size per pair (bytes, log scale)", "direct",
                 "other", "bound"):
        assert text in svg


def test_link_names_are_written_for_people():
    assert link_label("('switch',1,(0,0))") == "switch 1 (0,0)"
    assert link_label(("link", 3, "+x")) == "link 3 +x"
    assert link_label("link 3 +x") == "link 3 +x"
