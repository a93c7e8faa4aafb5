"""The seed's Proteus experiments as Phalanx programs, and what to measure in their runs.

Used by tests/targets/proteus and bench/proteus.py. Numbers quoted from
000_df708a39f4a23045.txt: Table 3 (complete exchange), Sec. 4.2 / Figs. 9-10 (exchange
example), Sec. 4.3 / Fig. 11 (2-D FFT butterflies).
"""

from __future__ import annotations

from dataclasses import dataclass

from phalanx.compiler.driver import compile_program
from phalanx.runtime.simulate import RunResult, simulate

# Table 3 of the seed (ms), c = 8: {(processors, l): {message size m: time}}.
TABLE3_MS = {
    (32, 1): {2048: 4.2, 4096: 7.7, 8192: 14.7, 16384: 28.7},
    (64, 1): {2048: 38.4, 4096: 70.4, 8192: 134.4, 16384: 262.4},
    (128, 1): {2048: 76.8, 4096: 140.8, 8192: 268.8, 16384: 524.8},
    (256, 1): {2048: 153.6, 4096: 281.6, 8192: 537.6, 16384: 1049.6},
    (32, 2): {2048: 4.2, 4096: 7.7, 8192: 14.7, 16384: 28.7},
    (64, 2): {2048: 19.2, 4096: 35.2, 8192: 67.2, 16384: 131.2},
    (128, 2): {2048: 38.4, 4096: 70.4, 8192: 134.2, 16384: 262.4},
    (256, 2): {2048: 76.8, 4096: 140.8, 8192: 268.8, 16384: 524.8},
}
# Sec. 5: the cycle for a cluster message of 4m bytes: 4.0+0.1 (64K) ... 0.5+0.1 ms (8K).
SEC5_CYCLE_MS = {8192: 0.6, 16384: 1.1, 32768: 2.1, 65536: 4.1}
PACKET_ROWS = 64  # a 64 KB packet of complex128 is 64 rows x 64 columns per PP


def alltoall_program(nprocs: int, block_bytes: int, target: str) -> str:
    """A transpose-like all-to-all: every PP sends `block_bytes` to every PP (float64)."""
    elems = block_bytes // 8
    rows = 1 << ((elems.bit_length() - 1) // 2)
    cols = elems // rows
    return (f"target {target}\nprocessors P({nprocs})\n"
            f"array A({nprocs * rows}, {nprocs * cols}) of float64 distribute (BLOCK, *) onto P\n"
            f"array B({nprocs * rows}, {nprocs * cols}) of float64 distribute (*, BLOCK) onto P\n"
            "B = A\n")


def table3_program(procs: int, links: int, m: int, pps: int = 4, cycle: str = "sec5") -> str:
    """Table 3's exchange: cluster messages of 4m bytes (Sec. 5: "a cluster will generate a
    message of 4m bytes"), i.e. PP blocks of 4m / pps^2 bytes; `pps=1` keeps the same
    packets with one PP per cluster (a smaller simulation of the same network)."""
    groups = procs // 32
    cycle_ms = SEC5_CYCLE_MS[4 * m] if cycle == "sec5" else 0
    target = f"proteus:groups={groups},links={links},pps={pps},cycle_ms={cycle_ms}"
    return alltoall_program(groups * 8 * pps, 4 * m // (pps * pps), target)


def exchange_program(pps: int, work_ms: float, packets: int, split: int = 0,
                     cycle_ms: float = 0.0) -> str:
    """Sec. 4.2: PP i of cluster 0 and PP i of cluster 1 swap 64 KB packets.

    split = 0: the serial schedule (work on a packet, send it, wait for the next);
    split = s: a pipeline that sends each packet in s pieces (B/s) as soon as worked on.
    """
    nprocs = 2 * pps
    header = (f"target proteus:groups=1,pps={pps},cycle_ms={cycle_ms}\nprocessors P({nprocs})\n")
    rows = PACKET_ROWS * (packets if split else 1)
    arrays = "".join(f"array {a}({rows}, {nprocs * 64}) of complex128 distribute (*, BLOCK) "
                     "onto P\n" for a in "AB")
    move = f"  B = cshift(A, {pps * 64}, dim=2)\n"
    if not split:
        return header + arrays + (f"repeat {packets} {{\n  compute \"work\" on P cost {work_ms} ms\n"
                                  + move + "}\n")
    return header + arrays + (f"pipeline stages={packets * split} {{\n  compute \"work\" on P cost "
                              f"{work_ms * packets} ms\n" + move + "}\n")


def butterfly_program(grains: int, optimized: bool, combine_ms: float = 16.0) -> str:
    """Sec. 4.3 part 4 on 32 PPs: PP p combines with PP p+16 (another cluster), one stage
    per resident grain pair. Optimized (Fig. 11(b, c)): one 64 KB grain out, one combine of
    ~16 ms; traditional (Fig. 11(a)): both grains out, two 8 ms combines."""
    rows = 64 * grains * (1 if optimized else 2)
    return ("target proteus:groups=1,cycle_ms=4.1\nprocessors P(32)\n"
            + "".join(f"array {a}({rows}, 4096) of complex64 distribute (*, BLOCK) onto P\n"
                      for a in "AB")
            + f"pipeline stages={grains} {{\n  compute \"combine\" on P cost "
              f"{combine_ms * grains} ms\n  B = cshift(A, 2048, dim=2)\n}}\n")


@dataclass
class Measured:
    run: RunResult
    total_s: float
    pp_utilisation: float  # compute time over (PPs x run time)
    link_cycle_utilisation: float  # cycles in which cluster 0's link carried a packet
    link_time_utilisation: float  # busy time of cluster 0's outgoing link over run time


def measure(source: str, algorithm: str = "auto", seed: int = 0) -> Measured:
    compiled = compile_program(source, algorithm=algorithm)
    run = simulate(compiled, seed)
    net, total = run.network, run.total_time_s
    compute = sum(s.end_s - s.start_s for s in run.execution.spans if s.kind == "compute")
    stats = net.stats()
    cycles = max(stats["cycles"], 1)
    return Measured(run, total, compute / (compiled.plan.nprocs * total),
                    stats["cluster_busy_cycles"][0] / cycles,
                    net.out_links[0].busy_s / total)


def exchange_time_s(run: RunResult) -> float:
    """Table 3's time: from the first cycle that moves data to the last release. The request
    cycle before it overlaps the preceding computation in Sec. 5 and is not in the table."""
    first = run.network.stats()["first_busy_cycle_s"] or 0.0
    return run.total_time_s - first
