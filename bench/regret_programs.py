"""Program rows of the regret benchmark (issue 29 item 2): auto's total against search's best.

For every example (on its own target) and a set of programs in groups on every target, the
program is compiled with `auto` (which may choose for the whole program, runtime/progchoice.py)
and its total simulated with the payloads left out (runtime/timing.py: the time a run with
checked data gives). The best total found by search is the least of: auto's; every algorithm
name forced on every statement it can lower (the others keep auto's); and coordinate descent
from auto's choice with SEARCH_BUDGET_EVENTS, four times auto's budget. Regret = auto's total /
that best (1.00: no search found better). Bounded: a program whose one simulation is
estimated past MAX_PROGRAM_EVENTS is listed as not measured.
"""

from __future__ import annotations

import math
import time
from typing import Any

from phalanx.compiler.driver import Compiled, compile_program
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.progchoice import BUDGET_TARGET_EVENTS, ProgramSearch, search

SEARCH_BUDGET_EVENTS = 4 * BUDGET_TARGET_EVENTS
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


def payload_free_total_s(compiled: Compiled, budget: int) -> tuple[ProgramSearch, float | None]:
    run = ProgramSearch(compiled.target, compiled.plan, compiled.collectives, budget)
    return run, run.total_s({s.line: s.algorithm for s in compiled.schedules})


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
    run, auto_s = payload_free_total_s(compiled, SEARCH_BUDGET_EVENTS)
    assert auto_s is not None
    start = {s.line: s.algorithm for s in compiled.schedules}
    candidates: dict[int, list[str]] = {}
    for c, each in zip(compiled.collectives, compiled.candidates):
        candidates.setdefault(c.line, [x.algorithm for x in each])
    found = {"auto": auto_s}
    for name_ in dict.fromkeys(a for names in candidates.values() for a in names):
        forced = start | {line: name_ for line, names in candidates.items() if name_ in names}
        total = run.total_s(forced)
        if total is not None:
            found[f"forced {name_}"] = total
    deeper = search(compiled.target, compiled.plan, compiled.collectives, start, candidates,
                    SEARCH_BUDGET_EVENTS)
    if deeper.chosen_total_s is not None:
        found["coordinate descent"] = deeper.chosen_total_s
    best = min(found, key=lambda k: found[k])
    return row | {"statements": len(candidates), "auto_choice": compiled.choice.method,
                  "auto_note": compiled.choice.note(), "auto_s": auto_s, "best": best,
                  "best_s": found[best], "regret": auto_s / found[best] if found[best] > 0 else 1.0,
                  "found_s": found, "wall_s": round(time.perf_counter() - t0, 2)}


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
            "searched_by_auto": sum(r["auto_choice"] == "program simulated" for r in ran)}


def program_markdown(rows: list[dict[str, Any]], summary: dict[str, Any], wall_s: float | None) -> list[str]:
    lines = ["", "## Programs (issue 29)", "",
             "Auto's simulated total against the best total found by search: every algorithm forced "
             "on every statement it can lower, and coordinate descent with four times auto's budget "
             "(bench/regret_programs.py). The search starts from auto's choice, so a regret of 1.000 "
             "says that no search within that budget found better, not that auto's is the optimum. "
             "`auto` is how auto chose (`per statement` where fewer than two statements have a "
             "choice); the per-statement totals are in results_regret.json (`auto_note`).", ""]
    if summary.get("cases"):
        lines += [f"- {summary['cases']} programs, max regret {summary['max']:.3f}, geometric mean "
                  f"{summary['geomean']:.4f}; auto searched the program in {summary['searched_by_auto']}, "
                  f"{summary['not_measured']} not measured; run time {wall_s} s on a machine shared "
                  "with other jobs", ""]
    lines += ["| program | target | auto | auto total (ms) | best (how) | best total (ms) | regret |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "regret" not in r:
            lines.append(f"| {r['program']} | {r['target']} | not measured: {r['not_measured']} | | | | |")
            continue
        lines.append(f"| {r['program']} | {r['target']} | {r['auto_choice']} | {r['auto_s'] * 1e3:.4g} | "
                     f"{r['best']} | {r['best_s'] * 1e3:.4g} | {r['regret']:.3f} |")
    return lines
