"""The Python API for notebooks: `phalanx.compile(...)`, `.run()`, `phalanx.sweep(...)`.

Results carry the fields of the CLI's JSON (`run --json`, `sweep --json`) as
attributes and show the report's summary in Jupyter (`_repr_html_`). Like the CLI,
this module wires the layers together, so it fills the registries (phalanx.register_all).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phalanx import register_all
from phalanx.compiler.driver import Compiled, compile_program
from phalanx.runtime import html
from phalanx.runtime.dot import schedule_to_dot
from phalanx.runtime.html import escape, ms
from phalanx.runtime.plots import sweep_bandwidth_svg
from phalanx.runtime.report import write_report
from phalanx.runtime.simulate import CollectiveResult, RunResult, efficiency_text, simulate
from phalanx.runtime.sweep import parse_sizes
from phalanx.runtime.sweep_report import run_sweep, write_sweep_report


class Run:
    """A simulated run: the `run --json` fields as attributes, plus the RunResult."""

    def __init__(self, result: RunResult):
        self.result = result
        data = result.to_json()
        self.target: dict[str, Any] = data["target"]
        self.backend: str = data["backend"]
        self.program: str = data["program"]
        self.seed: int = data["seed"]
        self.total_time_s: float = data["total_time_s"]
        self.verified: bool = data["verified"]
        self.choice: dict[str, Any] = data["choice"]  # how auto chose (docs/targets.md)
        self.collectives: list[CollectiveResult] = result.collectives

    def to_json(self, each_run: bool = False) -> dict[str, Any]:
        """The `run --json` object; `each_run` lists every run of a repeated statement."""
        return self.result.to_json(each_run)

    def report(self, directory: str | Path, each_run: bool = False) -> Path:
        """Write the HTML report; returns the path of index.html."""
        return write_report(self.result, directory, each_run)

    def _repr_html_(self) -> str:
        rows = [[str(c.line), escape(c.kind), escape(c.algorithm), str(c.phases), ms(c.time_s),
                 ms(c.lower_bound_s), efficiency_text(c.efficiency), f"{c.aggregate_bandwidth_Bps / 1e6:.1f}",
                 html.verdict(c.verified)] for c in self.collectives]
        return (f"<div><b>{escape(self.program)}</b> on <code>{escape(self.target['spec'])}</code>: "
                f"total {ms(self.total_time_s)} ms, {html.verdict(self.verified)}"
                + html.table(["line", "kind", "algorithm", "phases", "time (ms)", "lower bound (ms)",
                              "efficiency", "bandwidth (MB/s)", "data"], rows) + "</div>")

    def __repr__(self) -> str:
        return (f"<Run {self.program} on {self.target['spec']}: {self.total_time_s * 1e3:.6f} ms, "
                f"verified={self.verified}>")


class Program:
    """A compiled program; `.run()` simulates it."""

    def __init__(self, compiled: Compiled):
        self.compiled = compiled

    @property
    def target(self) -> str:
        return self.compiled.target_spec

    @property
    def schedules(self) -> list[Any]:
        return self.compiled.schedules

    def dot(self) -> str:
        """The schedules as Graphviz text (summarised on big machines)."""
        return schedule_to_dot(self.compiled.plan.run_schedules(), self.compiled.program.file)

    def run(self, seed: int = 0) -> Run:
        return Run(simulate(self.compiled, seed))

    def _repr_html_(self) -> str:
        rows = [[str(s.line), escape(s.kind), escape(s.algorithm), str(len(s.phases))]
                for s in self.compiled.schedules]
        return (f"<div><b>{escape(self.compiled.program.file)}</b> compiled for "
                f"<code>{escape(self.target)}</code>"
                + html.table(["line", "kind", "algorithm", "phases"], rows) + "</div>")


class Sweep:
    """A sweep: the `sweep --json` fields as attributes; shows its bandwidth plot."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.target: dict[str, Any] = data["target"]
        self.collective: str = data["collective"]
        self.results: list[dict[str, Any]] = data["results"]

    def to_json(self) -> dict[str, Any]:
        return self.data

    def report(self, directory: str | Path) -> Path:
        return write_sweep_report(self.data, directory)

    def _repr_html_(self) -> str:
        return f"<div>{html.inline_svg(sweep_bandwidth_svg(self.data), 'sweep')}</div>"


def compile(source_or_path: str | Path, target: str | None = None,  # noqa: A001  (phalanx.compile)
            algorithm: str = "auto") -> Program:
    """Compile a program (a path, or source text with a newline) for `target`."""
    register_all()
    return Program(compile_program(source_or_path, target, algorithm))


def sweep(target: str, collective: str = "alltoall", sizes: str | list[int] = "64,512,2K,16K,64K",
          algorithm: str = "all", seed: int = 0) -> Sweep:
    """One collective over message sizes on `target`, as `phalanx sweep` runs it."""
    register_all()
    sizes = parse_sizes(sizes) if isinstance(sizes, str) else list(sizes)
    return Sweep(run_sweep(target, collective, sizes, algorithm, seed))
