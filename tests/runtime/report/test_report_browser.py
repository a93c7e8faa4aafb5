"""The HTML reports in a real browser (Debian's chromium, headless): no console errors,
every section and every picture rendered with a non-zero size; screenshots are kept in
out/test-artifacts/ for people to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, compile_text
from phalanx.compiler.target import TARGETS
from phalanx.runtime.report import write_report
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep_report import run_sweep, write_sweep_report
from report_chromium import probe, screenshot

pytestmark = pytest.mark.chromium  # skipped where chromium is missing (tests/conftest.py)
ARTIFACTS = ROOT / "out" / "test-artifacts"
RUN_SECTIONS = ["summary", "program", "collectives", "schedule", "timeline", "utilisation", "files"]
RUN_PICTURES = ["schedule-picture", "timeline-picture", "utilisation-picture", "candidates-picture-0"]


def check_page(index: Path, sections: list[str], pictures: list[str], shot: str) -> dict:
    page, console = probe(index)
    assert page["errors"] == [] and console == []
    heights = {s["id"]: s["height"] for s in page["sections"]}
    assert list(heights) == sections and all(h > 0 for h in heights.values())
    drawn = {p["id"]: p for p in page["pictures"]}
    assert sorted(drawn) == sorted(pictures)
    assert all(p["width"] > 100 and p["height"] > 50 for p in drawn.values()), drawn
    assert screenshot(index, ARTIFACTS / shot).stat().st_size > 10_000
    return drawn


def test_demo_report_renders(examples, tmp_path):
    result = simulate(compile_text((examples / "transpose.phx").read_text(), file="transpose.phx"))
    index = write_report(result, tmp_path / "demo")
    drawn = check_page(index, RUN_SECTIONS, RUN_PICTURES, "report_demo.png")
    assert drawn["schedule-picture"]["title"] == "transpose.phx"  # Graphviz's <title>


@pytest.mark.parametrize("spec, algorithms", [("ideal:16", ["all"]),
                                               ("iwarp:8x8", ["phased", "message-passing"])])
def test_sweep_report_renders(spec, algorithms, tmp_path):
    if spec.split(":")[0] not in TARGETS:
        pytest.skip(f"target '{spec}' is not registered yet")
    data = run_sweep(spec, "alltoall", [64, 1024], algorithms[0])
    for alg in algorithms[1:]:  # two lines in the plots, at a test's cost
        data["results"] += run_sweep(spec, "alltoall", [64, 1024], alg)["results"]
    index = write_sweep_report(data, tmp_path / "sweep")
    check_page(index, ["summary", "plots", "winners", "results", "files"],
               ["bandwidth-picture", "time-picture"], f"sweep_{spec.replace(':', '_')}.png")
