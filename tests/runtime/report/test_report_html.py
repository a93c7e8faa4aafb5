"""The report files and page structure, the CLI's --report/--quiet, progress, and the
notebook API (phalanx.runtime.api)."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import re
from html.parser import HTMLParser

import pytest

from phalanx.runtime import api
from phalanx.runtime.progress import progress_bar, progress_console
from phalanx.runtime.report import why_chosen, write_report

FILES = {"index.html", "report.json", "report.md", "schedule.dot", "schedule.svg", "gantt.svg",
         "utilisation.svg", "candidates-0.svg"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.external = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a":
            self.links.append(a.get("href", ""))
        for key in ("src", "href"):
            if re.match(r"(https?:)?//", a.get(key) or ""):
                self.external.append(a[key])


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    examples = __import__("conftest").EXAMPLES
    run = api.compile(examples / "transpose.phx").run(seed=1)
    return run, run.report(tmp_path_factory.mktemp("demo"))


def test_report_files_and_sections(demo_run):
    run, index = demo_run
    assert {p.name for p in index.parent.iterdir()} == FILES
    page = Page()
    page.feed(index.read_text())
    assert {"summary", "program", "collectives", "schedule", "timeline", "utilisation",
            "collective-0", "schedule-picture", "timeline-picture", "utilisation-picture"} <= page.ids
    assert page.external == []  # self-contained: no CDN, no network
    assert "#collective-0" in page.links and "#timeline" in page.links
    text = index.read_text()
    assert '<a href="#collective-0" title="alltoall by direct">B = A</a>' in text
    assert "<script" not in text and text.count("<svg") == 4
    assert json.loads((index.parent / "report.json").read_text()) == run.to_json()


def test_candidate_table_and_why(demo_run):
    run, index = demo_run
    text = index.read_text()
    assert '<tr class="chosen"><td>direct (ran)</td><td class="num">0.457200</td><td>predicted</td>' in text
    assert why_chosen(run.collectives[0]) == ("`auto` takes the least predicted time: `direct` "
                                              "at 0.457200 ms; next best `radix-bruck` is predicted "
                                              "1.16× as long.")
    assert "| direct | 0.457200 | predicted | predicted |" in (index.parent / "report.md").read_text()
    assert "auto chose per statement: fewer than two statements have a choice" in text


def test_each_candidate_figure_says_predicted_or_simulated(demo_run, tmp_path):
    # issue 29: simulated figures were shown in a "predicted" column.
    run, _ = demo_run
    result = copy.copy(run.result)
    (c,) = result.collectives
    figures = [{"algorithm": "direct", "time_s": 0.4572e-3, "figure": "simulated", "source": "simulated"},
               {"algorithm": "pairwise", "time_s": 0.3e-3, "figure": "predicted", "source": "predicted"}]
    result.collectives = [dataclasses.replace(c, candidates=figures)]
    text = write_report(result, tmp_path / "labels").read_text()
    assert "<th>time auto ranked (ms)</th><th>predicted or simulated</th>" in text
    assert '<td>direct (ran)</td><td class="num">0.457200</td><td>simulated</td>' in text
    assert "<td>pairwise</td><td class=\"num\">0.300000</td><td>predicted</td>" in text
    assert why_chosen(result.collectives[0]).startswith("`direct` was requested (--algorithm); `auto` "
                                                        "would take `pairwise`, predicted 0.300000 ms.")


def test_api_results_have_the_json_fields(demo_run):
    run, _ = demo_run
    data = run.to_json()
    assert (run.total_time_s, run.verified, run.seed) == (data["total_time_s"], True, 1)
    c = run.collectives[0]
    assert (c.algorithm, c.phases, c.efficiency) == ("direct", 15, data["collectives"][0]["efficiency"])
    assert "verified" in run._repr_html_() and "<table>" in run._repr_html_()


def test_api_sweep_shows_its_plot():
    result = api.sweep("ideal:4", sizes="64,1K", algorithm="direct")
    assert [r["block_bytes"] for r in result.results] == [64, 1024]
    assert "<svg" in result._repr_html_() and "bandwidth vs message size" in result._repr_html_()


def test_cli_sweep_report_and_message(cli, tmp_path):
    result = cli("sweep", "--target", "ideal:4", "--collective", "alltoall", "--sizes", "64,1K",
                 "--report", str(tmp_path / "s"), "--quiet", "--workers", "1")
    assert result.code == 0 and result.err == ""
    assert f"report written to {tmp_path / 's' / 'index.html'}" in result.out
    assert {p.name for p in (tmp_path / "s").iterdir()} == {"index.html", "report.json",
                                                            "sweep-bandwidth.svg", "sweep-time.svg"}


def test_cli_run_prints_the_index_path(cli, examples, tmp_path):
    result = cli("run", str(examples / "transpose.phx"), "--report", str(tmp_path / "r"))
    assert result.code == 0 and result.out.endswith(f"report written to {tmp_path / 'r' / 'index.html'}\n")


def test_cli_sweep_bad_collective_keeps_its_error(cli):
    result = cli("sweep", "--target", "ideal:4", "--collective", "nonsense", "--sizes", "64")
    assert result.code == 2 and "cannot sweep collective 'nonsense'" in result.err


def test_unwritable_report_directory_is_a_clear_error(demo_run, tmp_path):
    run, _ = demo_run
    (tmp_path / "file").write_text("")
    with pytest.raises(Exception, match="cannot create report directory") as info:
        write_report(run.result, tmp_path / "file" / "r")
    assert "choose a writable path for --report" in info.value.diagnostic.render()


def test_progress_shows_only_on_a_terminal():
    assert progress_console(stream=io.StringIO()) is None
    assert progress_console(quiet=True, stream=io.StringIO(), force_terminal=True) is None
    stream = io.StringIO()
    console = progress_console(stream=stream, force_terminal=True)
    with progress_bar(2, "sweep", console) as steps:
        steps.advance("one")
        steps.advance("two")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())
    assert "sweep" in shown and "0/2" in shown and "two" in shown and "2/2" in shown


def test_no_candidates_means_no_chart_and_says_so(demo_run, tmp_path):
    run, _ = demo_run
    result = copy.copy(run.result)
    result.collectives = [dataclasses.replace(c, candidates=[]) for c in result.collectives]
    index = write_report(result, tmp_path / "none")
    text = index.read_text()
    assert not (tmp_path / "none" / "candidates-0.svg").exists()
    assert "The target listed no candidates." in text
    assert "No candidates chart: no candidate has a time." in text


def test_a_statement_lists_its_runs_within_a_budget(tmp_path):
    from conftest import compile_text
    from phalanx.runtime.report import MAX_RUN_ROWS
    from phalanx.runtime.simulate import simulate

    source = ("target ideal:4\nprocessors P(4)\narray A(8, 8) of float64 distribute (BLOCK, *) "
              "onto P\narray B(8, 8) of float64 distribute (*, BLOCK) onto P\n"
              f"repeat {MAX_RUN_ROWS + 5} {{\n  B = A\n}}\n")
    result = simulate(compile_text(source, file="r.phx"))
    index = write_report(result, tmp_path / "r", each_run=True)
    text = index.read_text()
    assert f"Its {MAX_RUN_ROWS + 5} runs" in text and text.count('<article id="collective-') == 1
    assert "5 more runs not listed" in text and "report.json has every run" in text
    assert "line 6 iteration 39<" in text and "line 6 iteration 40<" not in text
    assert len(json.loads((tmp_path / "r" / "report.json").read_text())["collectives"]) == 45
    assert "5 more runs of these statements are not listed here" in (tmp_path / "r" / "report.md").read_text()


def test_a_repeated_statement_is_summarised_unless_each_run_is_asked(tmp_path):
    from conftest import compile_text
    from phalanx.runtime.simulate import simulate

    source = ("target ideal:4\nprocessors P(4)\narray A(8, 8) of float64 distribute (BLOCK, *) "
              "onto P\narray B(8, 8) of float64 distribute (*, BLOCK) onto P\n"
              "repeat 6 {\n  B = A\n}\n")
    result = simulate(compile_text(source, file="r.phx", algorithm="direct"))
    text = write_report(result, tmp_path / "r").read_text()
    assert "Its 6 runs" in text and "line 6 iteration 0<" not in text  # no run listed
    assert "6 more runs not listed (summarised in the table of statements above; --each-run" in text
    assert "min own time (ms)" in text and "first start (ms)" in text and "last start (ms)" in text
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["collectives"] == [] and data["repeated"][0]["runs"] == 6
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert "| 6 | alltoall | direct | 6 | iterations 0-5 | " in markdown
    assert "(summarised below; --each-run lists them)" in markdown
