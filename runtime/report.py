"""Reports of a run: report.json (the --json object), report.md and schedule.svg."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from phalanx.grammar.diagnostics import Diagnostic, PhalanxError
from phalanx.runtime.dot import schedule_to_dot
from phalanx.runtime.simulate import RunResult


def render_svg(dot_text: str) -> str:
    """Render Graphviz text with Debian's `dot`; a clear error when it is missing."""
    dot = shutil.which("dot")
    if dot is None:
        raise PhalanxError(Diagnostic("Graphviz `dot` is not installed; cannot draw the schedule",
                                      hint="install it: apt-get install graphviz"))
    done = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise PhalanxError(Diagnostic(f"dot failed: {done.stderr.strip()}"))
    return done.stdout


def markdown(result: RunResult) -> str:
    data = result.to_json()
    target = data["target"]
    out = [f"# Phalanx run: {data['program']}", "",
           f"- target: `{target['spec']}` ({', '.join(f'{k}={v}' for k, v in target['params'].items())})",
           f"- backend: {data['backend']}, seed {data['seed']}",
           f"- total time: {data['total_time_s'] * 1e3:.6f} ms",
           f"- verified: {'yes' if data['verified'] else 'NO'}", "",
           "| line | kind | algorithm | phases | block bytes | time (ms) | lower bound (ms) "
           "| efficiency | bandwidth (MB/s) | verified |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["collectives"]:
        out.append(f"| {c['line']} | {c['kind']} | {c['algorithm']} | {c['phases']} | "
                   f"{c['block_bytes']} | {c['time_s'] * 1e3:.6f} | {c['lower_bound_s'] * 1e3:.6f} | "
                   f"{c['efficiency']:.3f} | {c['aggregate_bandwidth_Bps'] / 1e6:.1f} | "
                   f"{'yes' if c['verified'] else 'NO'} |")
    for c in data["collectives"]:
        out += ["", f"## Candidates for line {c['line']} ({c['kind']})", "",
                "| algorithm | predicted time (ms) |", "|---|---|"]
        out += [f"| {a['algorithm']} | {a['predicted_time_s'] * 1e3:.6f} |" for a in c["candidates"]]
        out += ["", f"`auto` takes the least predicted time; this run used `{c['algorithm']}`."]
        for problem in c.get("problems", []):
            out.append(f"- problem: {problem}")
    out += ["", "![schedule](schedule.svg)", ""]
    return "\n".join(out)


def write_report(result: RunResult, directory: str | Path) -> Path:
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PhalanxError(Diagnostic(f"cannot create report directory '{directory}': {exc}",
                                      hint="choose a writable path for --report")) from None
    (directory / "report.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    (directory / "report.md").write_text(markdown(result))
    dot_text = schedule_to_dot(result.compiled.schedules, result.compiled.program.file)
    (directory / "schedule.dot").write_text(dot_text)
    (directory / "schedule.svg").write_text(render_svg(dot_text))
    return directory
