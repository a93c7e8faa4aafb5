"""Machine parameters of Proteus (seed 000_df708a39f4a23045.txt), one frozen dataclass.

The spec `proteus:groups=K,links=L,...` overrides any field. Rates are in bytes per second
with the seed's own convention: 64 KB = 65536 bytes and "3.125 ms per 64 KB" at the link.
"""

from __future__ import annotations

from dataclasses import dataclass

SEED = "000_df708a39f4a23045.txt"
KB = 1024


@dataclass(frozen=True)
class ProteusParams:
    groups: float = 1.0  # 000_df708a39f4a23045.txt Sec. 5: k groups, joined hypercube-like
    links: float = 1.0  # 000_df708a39f4a23045.txt Sec. 5 / Fig. 12: l links per dimension
    clusters: float = 8.0  # 000_df708a39f4a23045.txt Sec. 2.3: 8 clusters per group (+1 spare)
    pps: float = 4.0  # 000_df708a39f4a23045.txt Sec. 2.2: 4 Pixel Processors per cluster
    group_ports: float = 7.0  # 000_df708a39f4a23045.txt Sec. 2.3: seven free crossbar links
    # 000_df708a39f4a23045.txt Sec. 3.2: 64 KB "should take 3.125 ms" on the 20 MB/s link.
    link_Bps: float = 64 * KB / 3.125e-3
    # Derived, 000_df708a39f4a23045.txt Sec. 3.2 + Sec. 5: in a busy cycle the DP serves four
    # 64 KB streams (DMA send, DMA receive, PP staging, PP release) in 4.0 ms.
    dp_Bps: float = 4 * 64 * KB / 4.0e-3
    # Not a seed figure: PP-to-PP flush over the shared bus, taken equal to the DP rate above
    # (000_df708a39f4a23045.txt Sec. 3.1 gives the mechanism, flush-and-sync, not its speed).
    flush_Bps: float = 4 * 64 * KB / 4.0e-3
    sync_us: float = 60.0  # 000_df708a39f4a23045.txt Sec. 3.2: TX/RX sync overhead per cycle
    # 000_df708a39f4a23045.txt Sec. 5: "+ 0.1 milliseconds to set up the connection" per
    # cycle, of which 60 us is the sync above.
    setup_us: float = 40.0
    packet_bytes: float = 64.0 * KB  # 000_df708a39f4a23045.txt Sec. 3.2: 64 KB data packets
    # 000_df708a39f4a23045.txt Sec. 3.2: the cycle is "defined before run time" (4.1 ms for
    # 64 KB); 0 = sized per cycle to its largest granted packet as in Sec. 5 (4.0+0.1, ...).
    cycle_ms: float = 0.0
    # 000_df708a39f4a23045.txt Sec. 3.2 (fault tolerance): corrupted packets are detected and
    # retransmitted; the seed gives no rate, so it is a what-if knob (probability per packet).
    error_rate: float = 0.0
    error_seed: float = 0.0  # not a machine parameter: mixes with the run's seed
    clock_MHz: float = 40.0  # 000_df708a39f4a23045.txt Sec. 2.1: i860 PP at 40 MHz
    # Rate at which a PP combines reduction partials. An assumption: one operation per cycle
    # of the 40 MHz i860 (the seed gives the clock, not an arithmetic rate).
    arith_MFLOPS: float = 40.0

    @property
    def overhead_s(self) -> float:
        """Control part of every cycle: sync plus connection set-up (Sec. 3.2, Sec. 5)."""
        return (self.sync_us + self.setup_us) * 1e-6

    @property
    def fixed_cycle_s(self) -> float | None:
        return self.cycle_ms * 1e-3 if self.cycle_ms > 0 else None
