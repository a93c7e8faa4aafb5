"""Program rows of the regret benchmark (issue 29 item 2): auto's total against search's best.

For every example (on its own target) and a set of programs in groups on every target, the
program is compiled with `auto` (which may choose for the whole program, runtime/progchoice.py)
and its total simulated with the payloads left out (runtime/timing.py: the time a run with
checked data gives). Auto's total is compared with the best total of a baseline search that
does not start from auto's choice (`baseline`):

- exhaustive where the statements with a choice have at most EXHAUSTIVE_MAX_COMBINATIONS
  combinations of candidates (and they fit the budget): every program is simulated, so its
  best is the optimum over the candidates;
- otherwise starts that do not depend on auto: each statement's least own time alone (its
  candidates' predicted or simulated times, the per-statement choice), every algorithm forced
  on every statement of one kind (the others alone's), every algorithm forced on every
  statement that can lower it; then coordinate descent (runtime/progchoice.py search) from the
  per-statement start and from the best start.

All of it shares one budget of BASELINE_BUDGET_EVENTS estimated events (eight times auto's).
Regret = auto's total / the least of auto's and the baseline's (1.00: the baseline found
nothing better; `auto_beats_baseline` says where auto's own search found better than the
baseline). Bounded: a program whose one simulation is estimated past MAX_PROGRAM_EVENTS is
listed as not measured.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

from phalanx.compiler.driver import Compiled, compile_program
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.progchoice import BUDGET_TARGET_EVENTS, ProgramSearch, search

BASELINE_BUDGET_EVENTS = 8 * BUDGET_TARGET_EVENTS
EXHAUSTIVE_MAX_COMBINATIONS = 324  # two statements of up to eighteen candidates each (the reduce's)
MAX_PROGRAM_EVENTS = 60_000  # ~10 s of simulation per program on the slowest targets
GROUP_TARGETS = ("ideal:16", "torus:4x4", "iwarp:4x4", "paragon:4x4", "sp2:16", "cs2:16", "hypercube:4",
                 "proteus:groups=1", "ksr1:16")
GRID = "processors Q(4, 4)\n"


def group_programs() -> dict[str, str]:
    """Programs whose collectives run in the grid's rows or columns (4 groups of 4)."""
    summa = ["array A(64, 64) of float64 distribute (BLOCK, BLOCK) onto Q",
             "array B(64, 64) of float64 distribute (BLOCK, BLOCK) onto Q",
             "array AK(64, 4, 16) of float64 distribute (BLOCK, BLOCK, *) onto Q",
             "array BK(4, 16, 64) of float64 distribute (BLOCK, *, BLOCK) onto Q"]
    for k in range(2):
        summa += [f"AK = spread(A(:, {16 * k}:{16 * k + 15}), dim=2, ncopies=4)",
                  f"BK = spread(B({16 * k}:{16 * k + 15}, :), dim=1, ncopies=4)",
                  'compute "panel" on Q cost 20 us']
    pencils = ["array X(16, 16, 16) of complex64 distribute (*, BLOCK, BLOCK) onto Q",
               "array Y(16, 16, 16) of complex64 distribute (BLOCK, *, BLOCK) onto Q",
               "array Z(16, 16, 16) of complex64 distribute (BLOCK, BLOCK, *) onto Q",
               'compute "x FFTs" on Q cost 50 us', "Y = X", 'compute "y FFTs" on Q cost 50 us',
               "Z = Y", 'compute "z FFTs" on Q cost 50 us']
    sums = ["array A(64, 64) of float64 distribute (BLOCK, BLOCK) onto Q",
            "array C(4, 64) of float64 distribute (BLOCK, BLOCK) onto Q",
            "array R(64, 4) of float64 distribute (BLOCK, BLOCK) onto Q",
            "C(0, :) = sum(A, dim=1)", "R(:, 0) = sum(A, dim=2)"]
    return {"summa 4x4 (broadcasts in rows and columns)": "\n".join(summa),
            "3-D FFT pencils (all-to-alls in groups)": "\n".join(pencils),
            "column and row sums (reduces in groups)": "\n".join(sums)}


def alone_choice(compiled: Compiled) -> dict[int, str]:
    """Each statement's candidate of least time alone (the cost model's own time of each, as
    auto ranks a statement by itself), by line: the per-statement choice, without auto."""
    out: dict[int, str] = {}
    for c, each in zip(compiled.collectives, compiled.candidates):
        if c.line not in out and each:
            out[c.line] = min(each, key=lambda x: x.time_s).algorithm
    return out | {s.line: s.algorithm for s in compiled.schedules if s.line not in out}


def baseline(compiled: Compiled, candidates: dict[int, list[str]]) -> dict[str, Any]:
    """The best program total a search finds without starting from auto's choice (module
    docstring): {"search": how, "best": which start or descent, "best_s", "evaluations",
    "events"}; "best_s" None when no program fitted the budget."""
    run = ProgramSearch(compiled.target, compiled.plan, compiled.collectives, BASELINE_BUDGET_EVENTS)
    alone = alone_choice(compiled)
    lines = [line for line, names in candidates.items() if len(names) > 1]
    found: dict[str, tuple[float, dict[int, str]]] = {}

    def evaluate(label: str, choice: dict[int, str]) -> bool:
        total = run.total_s(choice)
        if total is not None and (not found or total < min(t for t, _ in found.values())):
            found[label] = (total, choice)
        return total is not None

    how = "exhaustive"
    if math.prod(len(candidates[line]) for line in lines) <= EXHAUSTIVE_MAX_COMBINATIONS:
        for names in itertools.product(*(candidates[line] for line in lines)):
            if not evaluate("exhaustive", alone | dict(zip(lines, names))):
                how = "exhaustive, stopped at the budget"
                break
    else:
        how = "starts and coordinate descent"
        kind_of = {c.line: c.kind for c in reversed(compiled.collectives)}
        starts = {"per statement": alone}
        by_kind: dict[str, list[int]] = {}
        for line in lines:
            by_kind.setdefault(kind_of[line], []).append(line)
        for kind, members in by_kind.items():
            for name in [a for a in candidates[members[0]] if all(a in candidates[m] for m in members)]:
                starts[f"{kind}={name}"] = alone | {m: name for m in members}
        for name in dict.fromkeys(a for line in lines for a in candidates[line]):
            starts[f"forced {name}"] = alone | {line: name for line in lines if name in candidates[line]}
        for label, choice in starts.items():
            evaluate(label, choice)
        best_start = min(found, key=lambda k: found[k][0]) if found else None
        descents = {"per statement": alone} | ({best_start: found[best_start][1]} if best_start else {})
        for label, choice in descents.items():
            deeper = search(compiled.target, compiled.plan, compiled.collectives, choice, candidates,
                            BASELINE_BUDGET_EVENTS, run=run)
            if deeper.chosen_total_s is not None:
                evaluate(f"descent from {label}", deeper.algorithms)
    best = min(found, key=lambda k: found[k][0]) if found else None
    return {"search": how, "best": best, "best_s": found[best][0] if best else None,
            "evaluations": run.evaluations, "events": run.events_spent}


def measure_program(name: str, source: str, target: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"program": name, "target": target}
    t0 = time.perf_counter()
    try:
        compiled = compile_program(source, target=target, file=f"<{name}>")
    except PhalanxError as exc:
        return row | {"not_measured": exc.diagnostic.message.splitlines()[0]}
    row["target"] = compiled.target_spec
    probe = ProgramSearch(compiled.target, compiled.plan, compiled.collectives, 0)
    events = probe.events(compiled.plan)
    if events > MAX_PROGRAM_EVENTS:
        return row | {"not_measured": f"~{events} estimated events per simulation, past {MAX_PROGRAM_EVENTS}"}
    auto_s = ProgramSearch(compiled.target, compiled.plan, compiled.collectives, events).total_s(
        {s.line: s.algorithm for s in compiled.schedules})
    assert auto_s is not None
    candidates: dict[int, list[str]] = {}
    for c, each in zip(compiled.collectives, compiled.candidates):
        candidates.setdefault(c.line, [x.algorithm for x in each])
    found = baseline(compiled, candidates)
    best_s = auto_s if found["best_s"] is None else min(auto_s, found["best_s"])
    beaten = found["best_s"] is not None and auto_s < found["best_s"] * (1 - 1e-9)
    return row | {"statements": len(candidates), "auto_choice": compiled.choice.method,
                  "auto_note": compiled.choice.note(), "auto_s": auto_s,
                  "baseline": found, "best": "auto" if best_s == auto_s else found["best"],
                  "best_s": best_s, "regret": auto_s / best_s if best_s > 0 else 1.0,
                  "auto_beats_baseline": beaten,
                  "wall_s": round(time.perf_counter() - t0, 2)}


def program_cases(examples: list[tuple[str, str]]) -> list[tuple[str, str, str | None]]:
    """(name, source, target: None for the program's own) of every example, then every group
    program on every group target."""
    cases: list[tuple[str, str, str | None]] = [(n, s, None) for n, s in examples]
    for target in GROUP_TARGETS:
        cases += [(name, GRID + body + "\n", target) for name, body in group_programs().items()]
    return cases


def program_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ran = [r for r in rows if "regret" in r]
    if not ran:
        return {"cases": 0}
    regrets = [r["regret"] for r in ran]
    return {"cases": len(ran), "not_measured": len(rows) - len(ran), "max": max(regrets),
            "geomean": math.exp(sum(math.log(x) for x in regrets) / len(regrets)),
            "searched_by_auto": sum(r["auto_choice"] == "program simulated" for r in ran),
            "baseline_exhaustive": sum(r["baseline"]["search"] == "exhaustive" for r in ran),
            "auto_beats_baseline": sum(r["auto_beats_baseline"] for r in ran)}


def program_markdown(rows: list[dict[str, Any]], summary: dict[str, Any], wall_s: float | None) -> list[str]:
    lines = ["", "## Programs (issue 29)", "",
             "Auto's simulated total against the best total of a baseline search that does not start "
             "from auto's choice (bench/regret_programs.py): exhaustive where the statements with a "
             f"choice have at most {EXHAUSTIVE_MAX_COMBINATIONS} combinations of candidates; otherwise "
             "the per-statement choice (each statement's least own time alone), every algorithm forced "
             "on every statement of one kind, every algorithm forced on every statement that can lower "
             "it, then coordinate descent from the per-statement choice and from the best of those "
             f"starts, all within {BASELINE_BUDGET_EVENTS} estimated events (eight times auto's budget). "
             "Regret = auto's total / the least of auto's and the baseline's. Where the baseline is "
             "exhaustive a regret of 1.000 says auto found the optimum over the candidates; elsewhere "
             "that the baseline found nothing better. `auto` is how auto chose (`per statement` where "
             "fewer than two statements have a choice); `baseline` is how the baseline searched and "
             "which of its programs was best.", ""]
    if summary.get("cases"):
        lines += [f"- {summary['cases']} programs, max regret {summary['max']:.3f}, geometric mean "
                  f"{summary['geomean']:.4f}; auto searched the program in {summary['searched_by_auto']}; "
                  f"the baseline was exhaustive in {summary['baseline_exhaustive']}; auto's total was below "
                  f"the baseline's in {summary['auto_beats_baseline']}; {summary['not_measured']} not "
                  f"measured; run time {wall_s} s (wall clock) on a machine shared with other jobs", ""]
    lines += ["| program | target | auto | auto total (ms) | baseline (best of it) | baseline total (ms) | "
              "regret |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "regret" not in r:
            lines.append(f"| {r['program']} | {r['target']} | not measured: {r['not_measured']} | | | | |")
            continue
        b = r["baseline"]
        total = "-" if b["best_s"] is None else f"{b['best_s'] * 1e3:.4g}"
        lines.append(f"| {r['program']} | {r['target']} | {r['auto_choice']} | {r['auto_s'] * 1e3:.4g} | "
                     f"{b['search']} ({b['best']}) | {total} | {r['regret']:.3f} |")
    return lines
