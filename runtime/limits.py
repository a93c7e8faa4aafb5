"""Limits of a simulated run: estimate events and memory first, stop cleanly at a limit.

`check_program_fits(program, spec)` runs first, on the checked program, before the compiler
works out communication sets and schedules (compile_program's `checked` hook): a lower bound
of the memory (the arrays of the biggest statement, and one block bookkeeping per block of it
that must cross the network, from its byte matrix) that refuses a hopeless program in seconds
instead of after working out every statement. `check_fits(compiled)` then
estimates, before anything is allocated, the engine events and the memory a run needs, and
refuses (a UsageError with the estimate) what would not fit this machine; `--force` skips
both refusals. `run_options(...)` checks `phalanx run`'s options and
gives `simulate` the run's limits (`--max-events`, `--time-limit`: the engine stops with a
partial report, runtime/engine.py Stopped) and its faults (runtime/faults.py).

A run holds the payloads and bookkeeping of the collectives in flight only (runtime/data.py
Payloads: built when the first node enters, freed when the last leaves), so the memory is
that of the IN_FLIGHT biggest collectives plus the timeline's spans (at most MAX_SPANS),
not a sum over every run of a repeat.

The estimate's constants were fitted on the event path of ideal, iWarp, Paragon and SP2 runs
(tests/reliability/test_limits.py keeps it within a factor of 2 of the measured events and
above the measured peak memory): each message costs its process, port and letter events,
each hop a request and a hop delay, each transfer a letter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.driver import Compiled
from phalanx.compiler.plan_walk import messages
from phalanx.compiler.semantics import AssignStmt, CheckedProgram, Comm
from phalanx.compiler.target import Target
from phalanx.grammar.diagnostics import usage_error
from phalanx.runtime.faults import FaultSpec, parse_faults
from phalanx.runtime.interpreter import MAX_SPANS
from phalanx.runtime.native_run import PREOPEN_BYTES
from phalanx.runtime.simulate import RunLimits, RunResult

EVENTS_PER_MESSAGE = 6.0
EVENTS_PER_HOP = 1.0
EVENTS_PER_TRANSFER = 0.0  # a block arriving costs no event of its own (one inbox per node and phase)
BYTES_PER_TRANSFER = 2048  # its arrival key, span and block bookkeeping (tracemalloc, ~1.5 KB)
# An upper bound: global source, result, destination, payloads (local sources and references
# are views where the owned indices are runs), the statement's flat per-node source and
# destination buffers that check a run all at once and its facts (runtime/data.py): a 256 x 256
# float64 `B = A` on ideal:16 peaked at 9.8 times its array under tracemalloc (2026-11-26).
ARRAY_COPIES = 10
IN_FLIGHT = 2  # collectives open at once: one in flight, the next one its first node entered
BYTES_PER_SPAN = 160  # a timeline span (slots) and its two floats
WRITE_COUNT_BYTES = 2  # uint8 (uint16 from 255 nodes) write count per element (runtime/data.py)
EVENTS_PER_S = 50_000  # a conservative rate of this engine on one core (60k-170k measured)
MAX_WALL_S = 3600.0  # a run estimated to need more than an hour is refused without --force
MEMORY_SHARE = 0.75  # of physical memory: the machine is shared, numpy needs headroom
HOP_SAMPLE = 4096  # pairs whose routes are measured to estimate the mean hop count


@dataclass(frozen=True)
class Estimate:
    events: int
    memory_bytes: int
    messages: int

    @property
    def wall_s(self) -> float:
        return self.events / EVENTS_PER_S


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume this project's machine
        return 24 << 30


def estimate(compiled: Compiled) -> Estimate:
    """Events and memory of simulating `compiled` on the event path (the fast path needs fewer)."""
    n_messages = n_transfers = 0
    pairs: set[tuple[int, int]] = set()
    counted: dict[int, tuple[int, int]] = {}  # schedules sharing phases' send tuples: count once
    collective_bytes = []
    runs = np.bincount(compiled.plan.runs(), minlength=len(compiled.schedules))  # per collective
    for schedule in compiled.schedules:
        transfers = 0
        for phase in schedule.phases:
            if id(phase.sends) not in counted:
                groups = messages(list(phase.sends))
                counted[id(phase.sends)] = (len(groups), len(phase.sends))
                if len(pairs) < HOP_SAMPLE:
                    pairs.update((g[0].src, g[0].dst) for g in groups if g[0].src != g[0].dst)
            n_messages += int(runs[schedule.collective]) * counted[id(phase.sends)][0]
            transfers += counted[id(phase.sends)][1]
        n_transfers += int(runs[schedule.collective]) * transfers
        stmt = compiled.communications[schedule.collective]
        collective_bytes.append(_data_bytes([stmt]) + BYTES_PER_TRANSFER * transfers)
    hops = n_messages * _mean_hops(compiled.target, sorted(pairs)[:HOP_SAMPLE])
    events = EVENTS_PER_MESSAGE * n_messages + EVENTS_PER_HOP * hops + EVENTS_PER_TRANSFER * n_transfers
    spans = min(2 * n_messages, MAX_SPANS)  # a send and (about) a phase span per message
    # The native run opens small runs ahead of the core (runtime/native_run.py PREOPEN_BYTES of
    # transfers at most), each with its payloads: the runs beyond those in flight, up to that cap.
    all_runs = sum(b * int(r) for b, r in zip(collective_bytes, runs))
    in_flight = sum(sorted(collective_bytes)[-IN_FLIGHT:])
    ahead = min(max(all_runs - in_flight, 0), ARRAY_COPIES * PREOPEN_BYTES)
    memory = in_flight + ahead + BYTES_PER_SPAN * spans
    return Estimate(int(events), memory, n_messages)


def memory_floor(program: CheckedProgram, cap_bytes: int | None = None) -> int:
    """A lower bound of `estimate(...).memory_bytes` from the checked program alone: the
    biggest statement's arrays and, for an assignment, one transfer per block that crosses
    the network (every schedule moves each such block at least once, and a collective's
    bookkeeping lives until its last node leaves). Each distinct statement is worked out
    once: the runs of a repeat share it. Reductions count their arrays only (a tree combines
    partials, so their blocks bound nothing). A statement whose arrays alone pass `cap_bytes`
    counts its arrays only: working out its blocks would take memory in proportion to the
    extents (a 1-D array of 10^12 elements), and the floor is past the cap anyway."""
    biggest: dict[int, int] = {}
    for stmt in program.communications():
        if id(stmt) in biggest:
            continue
        crossing = 0
        arrays_bytes = _data_bytes([stmt])
        if cap_bytes is not None and arrays_bytes > cap_bytes:
            biggest[id(stmt)] = arrays_bytes
        elif isinstance(stmt, AssignStmt):
            matrix = CommSet(stmt).byte_matrix
            crossing = int(np.count_nonzero(matrix) - np.count_nonzero(np.diag(matrix)))
        biggest.setdefault(id(stmt), arrays_bytes + BYTES_PER_TRANSFER * crossing)
    return max(biggest.values(), default=0)


def _mean_hops(target: Target, pairs: list[tuple[int, int]]) -> float:
    """Mean route length of the sampled pairs."""
    if not pairs:
        return 0.0
    return float(np.mean([target.route_hops(s, d) for s, d in pairs]))


def _data_bytes(communications: list[Comm]) -> int:
    total = 0
    for stmt in communications:
        if isinstance(stmt, AssignStmt):
            total += stmt.src.size * (ARRAY_COPIES * stmt.src.itemsize + WRITE_COUNT_BYTES)
        else:  # a reduction: the source array, its partials and one element per receiver
            total += 2 * stmt.src.size * stmt.src.itemsize
    return total


REFUSAL_HINT = ("make the arrays or the machine smaller (or repeat fewer times), or run anyway "
                "with --force (and --max-events N / --time-limit S to stop with a partial report)")


def check_program_fits(program: CheckedProgram, spec: str, force: bool = False) -> int:
    """The memory floor; a UsageError when even the floor would not fit (unless `force`).
    Called before compiling the communication (compile_program's `checked` hook)."""
    budget = int(MEMORY_SHARE * physical_memory_bytes())
    floor = memory_floor(program, None if force else budget)
    if floor > budget and not force:
        raise usage_error(f"{program.file} on {spec} is too big to simulate here: it needs at least "
                          f"{_gib(floor)} of memory for the arrays and blocks of its biggest "
                          f"collective, more than the {_gib(budget)} this machine can give a run",
                          REFUSAL_HINT)
    return floor


def check_fits(compiled: Compiled, force: bool = False) -> Estimate:
    """The estimate; a UsageError with it when the run would not fit (unless `force`)."""
    est = estimate(compiled)
    budget = int(MEMORY_SHARE * physical_memory_bytes())
    problems = []
    if est.memory_bytes > budget:
        problems.append(f"about {_gib(est.memory_bytes)} of memory, more than the "
                        f"{_gib(budget)} this machine can give a run")
    if est.wall_s > MAX_WALL_S:
        problems.append(f"about {est.events:.3g} events, {est.wall_s / 3600:.1f} hours at "
                        f"{EVENTS_PER_S} events/s (the limit is {MAX_WALL_S / 3600:g} hour)")
    if problems and not force:
        raise usage_error(f"{compiled.program.file} on {compiled.target_spec} is too big to "
                          f"simulate here: it needs {' and '.join(problems)}", REFUSAL_HINT)
    return est


def _gib(nbytes: float) -> str:
    return f"{nbytes / (1 << 30):.1f} GiB"


def stopped_report(result: RunResult) -> dict[str, Any] | None:
    """What a stopped run's JSON says about where it stopped (None for a finished run)."""
    execution = result.execution
    if execution.stopped is None:
        return None
    unfinished = [c.line for c in result.collectives if not c.verified]
    return {"reason": execution.stopped, "events": execution.events,
            "simulated_time_s": execution.total_time_s, "unfinished_lines": unfinished}


def run_options(compiled: Compiled, faults: str | None, force: bool, max_events: int | None,
                time_limit_s: float | None) -> tuple[FaultSpec | None, RunLimits | None]:
    """What `phalanx run` does before simulating: check the options and the size; the faults
    and limits to hand to `simulate`."""
    if max_events is not None and max_events < 1:
        raise usage_error(f"--max-events {max_events} must be at least 1", "e.g. --max-events 1000000")
    if time_limit_s is not None and not time_limit_s > 0:
        raise usage_error(f"--time-limit {time_limit_s:g} must be a positive number of seconds",
                          "e.g. --time-limit 60")
    spec = parse_faults(faults) if faults is not None else None
    check_fits(compiled, force)
    limits = (RunLimits(max_events, time_limit_s)
              if max_events is not None or time_limit_s is not None else None)
    return spec, limits


def run_notes(result: RunResult) -> dict[str, Any]:
    """Keys a run adds to its JSON report: `stopped` and `faults`, when they apply."""
    out: dict[str, Any] = {}
    stopped = stopped_report(result)
    if stopped is not None:
        out["stopped"] = stopped
    if result.faults is not None:
        out["faults"] = result.faults
    return out
