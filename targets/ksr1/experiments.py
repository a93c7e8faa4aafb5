"""The experiments of seed 002_1e1cb805508c9dd7.txt Secs. 4-6 as Phalanx programs, the
published numbers they reproduce, and how to time them.

Tests (tests/targets/ksr1/), the benchmark (bench/ksr1.py) and the calibration
(bench/calibrate_ksr1.py) run these. Sizes are in 128-byte subpages (16 float64 each). The
paper reports CPU time per processor; its Table 3 is symmetric in distance d <-> 64 - d and
has 64 cells at distance 1 cost what 32 cells cost, which the slowest cell's time would not
(two cells cross ring:1 at every distance): so it is the mean over the cells,
`mean_cell_time_s`.

Table 3's size is not printed. The seed's Sec. 5.4 fit, T = 0.007 N_procs + 0.029
N_subpages ms, gives 3.94 ms for 128 subpages a cell on 32 processors (Table 3: 3.88) and
4.16 ms on 64 (3.97): Table 3 is 128 subpages (16 KB) a cell, N_subpages read as the seed
names it.
"""

from __future__ import annotations

from phalanx.compiler.driver import compile_program
from phalanx.runtime.simulate import RunResult, simulate

ELEMENTS_PER_SUBPAGE = 16  # float64 in a 128-byte subpage (002 Sec. 2.2)

# 002 Table 2: us per subpage, distinct subpages read from cell 0, by processor count
TABLE2_US = {2: 6.07, 4: 6.26, 6: 6.45, 8: 6.50, 10: 6.85, 12: 6.92, 14: 7.04, 16: 7.31}
# 002 Table 3: ms, cshift by distance, on 32 and 64 processors
TABLE3_MS = {32: {1: 3.88, 8: 3.64, 16: 3.66, 24: 3.63, 31: 3.88},
             64: {1: 3.97, 8: 4.41, 16: 5.15, 32: 7.94, 48: 5.20, 56: 4.38, 63: 3.92}}
TABLE3_SUBPAGES = 128  # a cell's block in Table 3 (module doc)
# The paper's code for Table 3 (bench/calibrate_ksr1.py chose it): plain reads, one in flight
TABLE3_ALGORITHM = "cshift"


def _header(cells: int, procs: int) -> str:
    return f"target ksr1:{cells}\nprocessors P({procs})\n"


def broadcast_program(procs: int, subpages: int, cells: int | None = None) -> str:
    """Sec. 5.2: an array owned by cell 0, read by every cell."""
    n = subpages * ELEMENTS_PER_SUBPAGE
    return (_header(cells or procs, procs) + f"array S({n}) of float64 on P(0)\n"
            f"array R({n}) of float64 replicated onto P\nR = S\n")


def distinct_reads_program(procs: int, subpages_each: int) -> str:
    """Sec. 5.3 / Table 2: cells 1..procs-1 each read their own subpages of cell 0's array."""
    n = procs * subpages_each * ELEMENTS_PER_SUBPAGE
    return (_header(procs, procs) + f"array S({n}) of float64 on P(0)\n"
            f"array D({n}) of float64 distribute BLOCK onto P\nD = S\n")


def cshift_program(procs: int, subpages_each: int, distance: int) -> str:
    """Sec. 5.4 / Table 3: every cell reads the block of the cell `distance` ahead."""
    block = subpages_each * ELEMENTS_PER_SUBPAGE
    return (_header(procs, procs) + f"array C({procs * block}) of float64 distribute BLOCK onto P\n"
            f"array D({procs * block}) of float64 distribute BLOCK onto P\n"
            f"D = cshift(C, {distance * block}, dim=1)\n")


def concat_program(procs: int, subpages_each: int, everywhere: bool) -> str:
    """Secs. 5.5-5.6: concatenate-one (to cell 0) or concatenate-all."""
    n = procs * subpages_each * ELEMENTS_PER_SUBPAGE
    dst = "replicated onto P" if everywhere else "on P(0)"
    return (_header(procs, procs) + f"array V({n}) of float64 distribute BLOCK onto P\n"
            f"array R({n}) of float64 {dst}\nR = V\n")


def overlap_program(compute_ms: float, subpages: int, stages: int = 5) -> str:
    """Sec. 6 / Table 5: a cell computes while it fetches off-processor data, in a pipeline
    of `stages` (the paper's up to 5 threads); two cells, each reading the other's block."""
    n = 2 * subpages * ELEMENTS_PER_SUBPAGE
    return (_header(2, 2) + f"array A({n}) of float64 distribute BLOCK onto P\n"
            f"array B({n}) of float64 distribute BLOCK onto P\n"
            f"pipeline stages={stages} {{\n  compute \"work\" on P cost {compute_ms} ms\n"
            f"  B = cshift(A, {subpages * ELEMENTS_PER_SUBPAGE}, dim=1)\n}}\n")


def with_params(source: str, **overrides: float) -> str:
    """`source` on its target with parameters overridden (ksr1:N,name=value,...)."""
    first, rest = source.split("\n", 1)
    extra = "".join(f",{k}={v!r}" for k, v in overrides.items())
    return f"{first}{extra}\n{rest}"


def run(source: str, algorithm: str = "auto") -> RunResult:
    return simulate(compile_program(source, algorithm=algorithm, file="<ksr1 experiment>"))


def cell_times_s(result: RunResult) -> dict[int, float]:
    """Per reading cell, from the start of the run's communication to its last read done.

    A send span src -> dst is dst's read (targets/ksr1/network.py), so a cell's time is the
    end of the last span it reads in, not the end of its phase (which also waits until
    the others have read its data).
    """
    reads = [s for s in result.execution.spans if s.kind == "send" and s.peer is not None]
    start = min((s.start_s for s in result.execution.spans if s.kind == "phase"), default=0.0)
    times: dict[int, float] = {}
    for span in reads:
        times[span.peer] = max(times.get(span.peer, 0.0), span.end_s - start)
    return times


def mean_cell_time_s(result: RunResult) -> float:
    times = cell_times_s(result)
    return sum(times.values()) / len(times)
