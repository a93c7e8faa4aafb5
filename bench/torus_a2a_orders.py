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
nodes on one ring are 4 apart, so a move of up to 4 hops keeps them apart).

    python bench/torus_a2a_orders.py PHASES [CLASSES] [SECONDS] [--no-wires]

prints the solver's answer and, where it found orders, the schedule's simulated time on
torus:8x8 (alltoall of 128 B: the own blocks packed first, in a local phase, then the eager phases)
with its data checked. The builder alone (`schedule_phases`, `timed_and_checked`) needs no solver.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

import numpy as np

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.compiler.schedule import COMBINED, Phase, SyncMode, Transfer
from phalanx.runtime.data import Payloads, build_data
from phalanx.runtime.simulate import run_plan
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.timing import schedule_time_s

RING = 8  # torus:8x8
SHIFTS = (1, 2, 3, -1, -2, -3, 4)  # every ring distance -3..4 in one move, its fewest hops
MOVES = tuple((dim, shift) for dim in (0, 1) for shift in SHIFTS)  # dim 0: along x (the row)
Move = tuple[int, int]
Klass = tuple[int, ...]
CLASSES: dict[str, Callable[[int, int], Klass]] = {
    "diagonal": lambda x, y: ((x + y) % 4,),
    "antidiagonal": lambda x, y: ((x + 3 * y) % 4,),
    "grid": lambda x, y: (x % 4, y % 4),
}
USAGE = ("usage: python bench/torus_a2a_orders.py PHASES [CLASSES] [SECONDS] [--no-wires] "
         f"(PHASES >= 14, CLASSES one of {', '.join(CLASSES)})")


def ring_distance(d: int) -> int:
    """A ring distance the shorter way, -3..4 on a ring of 8."""
    d %= RING
    return d - RING if 2 * d > RING else d


def forward_half_ring(coord: int) -> bool:
    """Whether a worm of 4 hops from `coord` goes forward (topology.ring_step's parity rule)."""
    return (coord % (RING // 2)) % 2 == 0


def wires(coord: int, shift: int) -> list[tuple[int, int]]:
    """The directed wires (position, sign) of a ring that a move of `shift` from `coord` takes."""
    sign = 1 if (0 < shift < 4) or (shift == 4 and forward_half_ring(coord)) else -1
    return [((coord + sign * j) % RING, sign) for j in range(abs(shift))]


def solve(phases: int, klass: Callable[[int, int], Klass], seconds: float, with_wires: bool):
    """The CP-SAT model of the module docstring: (status name, per class its moves by phase or
    None) ."""
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
        for p in range(phases):
            for dim in (0, 1):
                for other in range(RING):
                    load: dict[tuple[int, int], list] = {}
                    for pos in range(RING):
                        c = klass(pos, other) if dim == 0 else klass(other, pos)
                        for shift in SHIFTS:
                            for wire in wires(pos, shift):
                                load.setdefault(wire, []).append(sends[c, (dim, shift), p])
                    for on_wire in load.values():
                        model.Add(sum(on_wire) <= 1)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = 2
    solver.parameters.random_seed = 1
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return solver.StatusName(status), None
    orders: dict[Klass, list[Move | None]] = {c: [None] * phases for c in classes}
    for c in classes:
        for mv in MOVES:
            orders[c][solver.Value(when[c, mv])] = mv
    return solver.StatusName(status), orders


def legs(orders: dict[Klass, list[Move | None]], klass: Callable[[int, int], Klass],
         origin: int, final: int) -> list[tuple[int, Move, int]]:
    """A block's moves as (holder, move, phase): x then y where the second move comes two
    phases after the first, else y then x; a ValueError where neither order does."""
    ox, oy, fx, fy = origin % RING, origin // RING, final % RING, final // RING
    dx, dy = ring_distance(fx - ox), ring_distance(fy - oy)
    wanted = [(0, dx)] if dy == 0 else [(1, dy)] if dx == 0 else None
    for route in ([wanted] if wanted else [[(0, dx), (1, dy)], [(1, dy), (0, dx)]]):
        x, y, last, out = ox, oy, -2, []
        for dim, shift in route:
            phase = orders[klass(x, y)].index((dim, shift))
            out.append((y * RING + x, (dim, shift), phase))
            x, y = ((x + shift) % RING, y) if dim == 0 else (x, (y + shift) % RING)
            if phase < last + 2:
                break
            last = phase
        else:
            return out
    raise ValueError(f"block {origin}->{final} moves in two consecutive phases either way")


def schedule_phases(orders: dict[Klass, list[Move | None]], klass: Callable[[int, int], Klass],
                    block: int) -> list[Phase]:
    """A local phase (each node keeps its own block and packs those it sends, as
    checkerboard.py's record packs them), then one eager phase per phase of the orders, each
    transfer received in the phase after the one that sends it (the last phase's in it)."""
    nodes = RING * RING
    phases = len(next(iter(orders.values())))
    sends: list[list[Transfer]] = [[] for _ in range(phases)]
    first = [Transfer(n, n, block, n, n) for n in range(nodes)]
    for origin in range(nodes):
        for final in range(nodes):
            if final == origin:
                continue
            for holder, (dim, shift), phase in legs(orders, klass, origin, final):
                x, y = holder % RING, holder // RING
                x, y = ((x + shift) % RING, y) if dim == 0 else (x, (y + shift) % RING)
                if holder == origin:
                    first.append(Transfer(origin, origin, block, origin, final, COMBINED))
                sends[phase].append(Transfer(holder, y * RING + x, block, origin, final, COMBINED))
    first.sort(key=lambda t: (t.src, t.final))
    out = [Phase(tuple(first), tuple(first), SyncMode.LOCAL)]
    for p, sent in enumerate(sends):
        sent.sort(key=lambda t: (t.src, t.origin, t.final))
        due = (sends[p - 1] if p else []) + (sent if p == phases - 1 else [])
        out.append(Phase(tuple(sent), tuple(due), SyncMode.EAGER))
    return out


def timed_and_checked(phases: list[Phase], block: int = 128) -> tuple[float, dict[int, list[str]]]:
    """The schedule's simulated time on torus:8x8 (an alltoall of `block` bytes) and what its
    data got wrong (runtime/data.py: every destination element checked)."""
    phalanx.register_all()
    compiled = compile_program(alltoall_program(RING * RING, block), target=f"torus:{RING}x{RING}",
                               algorithm="alltoall=signed-checkerboard-bruck", file="<alltoall>")
    record = compiled.plan.schedules()[0]
    mine = dataclasses.replace(record, phases=tuple(phases), algorithm="solver orders")
    plan = dataclasses.replace(compiled.plan, steps=(mine,))
    rng, sources = np.random.default_rng(0), {}
    data = Payloads(lambda _: build_data(compiled.communications[0], rng, sources), [0])
    run_plan(compiled.target, plan, data, 0)
    return schedule_time_s(compiled.target, mine), data.checked()


def arguments(argv: list[str]) -> tuple[int, str, float, bool]:
    with_wires = "--no-wires" not in argv
    rest = [a for a in argv if a != "--no-wires"]
    if not 1 <= len(rest) <= 3 or not rest[0].isdigit() or int(rest[0]) < len(MOVES) \
            or (len(rest) > 1 and rest[1] not in CLASSES):
        sys.exit(f"{USAGE}; got {' '.join(argv)}")
    try:
        seconds = float(rest[2]) if len(rest) > 2 else 120.0
    except ValueError:
        sys.exit(f"{USAGE}; got {' '.join(argv)}")
    return int(rest[0]), rest[1] if len(rest) > 1 else "diagonal", seconds, with_wires


def main(argv: list[str]) -> None:
    phases, name, seconds, with_wires = arguments(argv)
    status, orders = solve(phases, CLASSES[name], seconds, with_wires)
    print(f"{phases} phases, classes {name}, wires {'apart' if with_wires else 'free'}: {status}")
    if orders is None:
        return
    for c, row in orders.items():
        print(c, " ".join("--" if mv is None else f"{'xy'[mv[0]]}{mv[1]:+d}" for mv in row))
    time_s, problems = timed_and_checked(schedule_phases(orders, CLASSES[name], 128))
    wrong = sum(len(p) for p in problems.values())
    print(f"torus:8x8 alltoall 128 B: {time_s * 1e6:.1f} us, data {'checked' if not wrong else 'WRONG'}")


if __name__ == "__main__":
    main(sys.argv[1:])
