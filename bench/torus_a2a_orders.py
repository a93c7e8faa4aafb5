"""Pipelined all-to-all orders on torus:8x8 found by a constraint solver (issue 27, branch ta2a5,
docs/efficiency.md): is there a schedule of eager phases, one message a node a phase, in which every
block of an all-to-all moves on its fewest hops, never in two consecutive phases, and no wire carries
two worms of one phase? And how fast is it in the simulator, its data checked?

The model (OR-Tools CP-SAT, a research tool here, not a project dependency: `pip install ortools`):
each node is of a class (CLASSES: a function of its coordinates mod 4, the period of the tori's
shift-4 routes, targets/iwarp/topology.py ring_step); every class sends each of the 14 moves (along
x or y by +-1, +-2, +-3 or 4, each ring distance -3..4 in one move) once, in a phase of its own out
of PHASES. A block at distance (dx, dy) moves along x then y or y then x, the second move at least
two phases after the first (an eager phase's sends are received a phase later, compiler/schedule.py
SyncMode.EAGER). Per phase and directed wire of a ring, at most one class's worms use it (a class's
nodes on one ring are 4 apart, so a move of up to 4 hops keeps them apart). `--wire-window=W,K`
also keeps a wire to at most K worms in any W consecutive phases: a worm of an eager phase streams
while its sender starts the next, so a wire used in two consecutive phases holds the second worm
back (docs/efficiency.md, session 20: with W,K = 2,1 no 16-phase order exists).

    python bench/torus_a2a_orders.py PHASES [CLASSES] [SECONDS] [--no-wires] [--stages-apart=Y,X]
        [--wire-window=W,K]

prints the solver's answer and, where it found orders, their rows in the form of the record that
stores one (compiler/library/pipelined2d.py ORDERS, `pipelined-2dmesh`) and the schedule's simulated
time on torus:8x8 (alltoall of 128 B, built and packed as the record builds it: its local phase, then
the eager phases) with its data checked. The builder alone (`timed_and_checked`) needs no solver.
"""

from __future__ import annotations

import dataclasses
import re
import sys

import numpy as np

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.library import pipelined2d
from phalanx.compiler.library.pipelined2d import MOVES, RING, SHIFTS, Orders
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.simulate import run_plan
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.timing import schedule_time_s

Move = pipelined2d.Move
CLASSES: dict[str, pipelined2d.Klass] = {
    "diagonal": lambda x, y: ((x + y) % 4,),
    "antidiagonal": lambda x, y: ((x + 3 * y) % 4,),
    "grid": lambda x, y: (x % 4, y % 4),
}
USAGE = ("usage: python bench/torus_a2a_orders.py PHASES [CLASSES] [SECONDS] [--no-wires] "
         f"[--stages-apart=Y,X] [--wire-window=W,K] (PHASES >= 14, CLASSES one of {', '.join(CLASSES)}; "
         "Y,X: every move along y in phases 0..Y, every move along x in phases X..PHASES-1; W,K: at "
         "most K worms on a wire in any W consecutive phases, 1 <= K <= W)")


@dataclasses.dataclass(frozen=True)
class Search:
    """What the command line asks the solver."""

    phases: int
    classes: str = "diagonal"
    seconds: float = 120.0
    with_wires: bool = True
    stages_apart: tuple[int, int] | None = None  # (last phase of a y move, first of an x move)
    wire_window: tuple[int, int] = (1, 1)  # (W, K): a wire carries at most K worms in W consecutive phases


def forward_half_ring(coord: int) -> bool:
    """Whether a worm of 4 hops from `coord` goes forward (topology.ring_step's parity rule)."""
    return (coord % (RING // 2)) % 2 == 0


def wires(coord: int, shift: int) -> list[tuple[int, int]]:
    """The directed wires (position, sign) of a ring that a move of `shift` from `coord` takes."""
    sign = 1 if (0 < shift < 4) or (shift == 4 and forward_half_ring(coord)) else -1
    return [((coord + sign * j) % RING, sign) for j in range(abs(shift))]


def wire_loads(klass: pipelined2d.Klass, sends: dict, window: range) -> list[list]:
    """Per directed wire of every ring, the send variables of the worms on it in `window`'s phases."""
    loads = []
    for dim in (0, 1):
        for other in range(RING):
            load: dict[tuple[int, int], list] = {}
            for pos in range(RING):
                c = klass(pos, other) if dim == 0 else klass(other, pos)
                for shift in SHIFTS:
                    for wire in wires(pos, shift):
                        load.setdefault(wire, []).extend(sends[c, (dim, shift), q] for q in window)
            loads.extend(load.values())
    return loads


def solve(phases: int, klass: pipelined2d.Klass, seconds: float, with_wires: bool,
          stages_apart: tuple[int, int] | None = None,
          wire_window: tuple[int, int] = (1, 1)):
    """The CP-SAT model of the module docstring: (status name, per class its moves by phase or
    None). `stages_apart` (Y, X): every move along y in phases 0..Y and every move along x in
    phases X.. (pipelined2d's record keeps the stages so: its rows go unpacked)."""
    try:
        from ortools.sat.python import cp_model  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("bench/torus_a2a_orders.py needs OR-Tools for its search: pip install ortools")
    classes = sorted({klass(x, y) for x in range(RING) for y in range(RING)})
    model = cp_model.CpModel()
    sends = {(c, mv, p): model.NewBoolVar("") for c in classes for mv in MOVES for p in range(phases)}
    when = {}
    for c in classes:
        for mv in MOVES:
            model.AddExactlyOne(sends[c, mv, p] for p in range(phases))
            when[c, mv] = model.NewIntVar(0, phases - 1, "")
            model.Add(when[c, mv] == sum(p * sends[c, mv, p] for p in range(phases)))
        for p in range(phases):
            model.AddAtMostOne(sends[c, mv, p] for mv in MOVES)
        model.AddAllDifferent([when[c, mv] for mv in MOVES])  # implied; it helps the search prove
        if stages_apart is not None:
            for dim, shift in MOVES:
                if dim == 1:
                    model.Add(when[c, (dim, shift)] <= stages_apart[0])
                else:
                    model.Add(when[c, (dim, shift)] >= stages_apart[1])
    seen = set()
    for ox in range(RING):
        for oy in range(RING):
            for dx in SHIFTS:
                for dy in SHIFTS:
                    key = (klass(ox, oy), klass(ox + dx, oy), klass(ox, oy + dy), dx, dy)
                    if key in seen:
                        continue
                    seen.add(key)
                    x_first = model.NewBoolVar("")
                    model.Add(when[key[0], (0, dx)] + 2 <= when[key[1], (1, dy)]).OnlyEnforceIf(x_first)
                    model.Add(when[key[0], (1, dy)] + 2 <= when[key[2], (0, dx)]).OnlyEnforceIf(x_first.Not())
    if with_wires:
        windows = {(1, 1), wire_window}  # (W, K): at most K worms a wire in W consecutive phases
        for span, most in windows:
            for p in range(phases - span + 1):
                for on_wire in wire_loads(klass, sends, range(p, p + span)):
                    model.Add(sum(on_wire) <= most)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = 2
    solver.parameters.random_seed = 1
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return solver.StatusName(status), None
    orders: dict = {c: [None] * phases for c in classes}
    for c in classes:
        for mv in MOVES:
            orders[c][solver.Value(when[c, mv])] = mv
    return solver.StatusName(status), orders


def timed_and_checked(orders: Orders, block: int = 128) -> tuple[float, dict[int, list[str]]]:
    """The orders' schedule (pipelined2d.eager_phases, packed as the record packs) on torus:8x8,
    an alltoall of `block` bytes: its simulated time and what its data got wrong (runtime/data.py:
    every destination element checked)."""
    phalanx.register_all()
    compiled = compile_program(alltoall_program(RING * RING, block), target=f"torus:{RING}x{RING}",
                               algorithm="alltoall=pipelined-2dmesh", file="<alltoall>")
    record = compiled.plan.schedules()[0]
    phases = pipelined2d.eager_phases(compiled.collectives[0], orders)
    mine = dataclasses.replace(record, phases=tuple(phases), algorithm="solver orders")
    plan = dataclasses.replace(compiled.plan, steps=(mine,))
    rng, sources = np.random.default_rng(0), {}
    data = Payloads(lambda _: build_data(compiled.communications[0], rng, sources), [0])
    run_plan(compiled.target, plan, data, 0)
    return schedule_time_s(compiled.target, mine), data.checked()


def arguments(argv: list[str]) -> Search:
    def refuse() -> None:
        sys.exit(f"{USAGE}; got {' '.join(argv)}")

    flags = [a for a in argv if a.startswith("--")]
    rest = [a for a in argv if not a.startswith("--")]
    stages, window = None, (1, 1)
    for flag in flags:
        name, _, value = flag.partition("=")
        if flag == "--no-wires":
            continue
        if name == "--wire-window":
            span, most = map(int, value.split(",")) if re.fullmatch(r"\d+,\d+", value) else (0, 0)
            if not 1 <= most <= span:
                refuse()
            window = (span, most)
            continue
        if name != "--stages-apart" or not re.fullmatch(r"\d+,\d+", value):
            refuse()
        y_last, x_first = map(int, value.split(","))
        stages = (y_last, x_first)
    if not 1 <= len(rest) <= 3 or not rest[0].isdigit() or int(rest[0]) < len(MOVES) \
            or (len(rest) > 1 and rest[1] not in CLASSES):
        refuse()
    try:
        seconds = float(rest[2]) if len(rest) > 2 else 120.0
    except ValueError:
        refuse()
    return Search(int(rest[0]), rest[1] if len(rest) > 1 else "diagonal", seconds,
                  "--no-wires" not in flags, stages, window)


def main(argv: list[str]) -> None:
    search = arguments(argv)
    phases, name = search.phases, search.classes
    status, orders = solve(phases, CLASSES[name], search.seconds, search.with_wires, search.stages_apart,
                           search.wire_window)
    wires = "apart" if search.with_wires else "free"
    stages = "" if search.stages_apart is None else \
        ", stages apart (y to phase {}, x from phase {})".format(*search.stages_apart)
    if search.wire_window != (1, 1):
        stages += ", at most {1} worms a wire in {0} phases".format(*search.wire_window)
    print(f"{phases} phases, classes {name}, wires {wires}{stages}: {status}")
    if orders is None:
        return
    for c, row in orders.items():  # pipelined2d.ORDERS's form
        print(f"{c}: \"{' '.join('-- ' if mv is None else f'{chr(120 + mv[0])}{mv[1]:+d}' for mv in row)}\",")
    time_s, problems = timed_and_checked(Orders(orders, CLASSES[name]))
    wrong = sum(len(p) for p in problems.values())
    print(f"torus:8x8 alltoall 128 B: {time_s * 1e6:.1f} us, data {'checked' if not wrong else 'WRONG'}")


if __name__ == "__main__":
    main(sys.argv[1:])
