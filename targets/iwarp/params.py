"""Machine parameters of iWarp (001_569dde0e56ec3e6f.txt), one frozen dataclass, each field cited.

All times are in cycles of the node clock; the properties turn them into seconds and bytes/s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IWarpParams:
    clock_MHz: float = 20.0  # 001_569dde0e56ec3e6f.txt Sec. 4 (S = 20 MHz)
    # Rate at which a cell combines reduction partials. An assumption: one operation per
    # cycle of the 20 MHz clock above (the seed gives the clock, not an arithmetic rate).
    arith_MFLOPS: float = 20.0
    cycles_per_word: float = 2.0  # 001_569dde0e56ec3e6f.txt Sec. 4 (T_t = 2 cycles per word)
    word_bytes: float = 4.0  # 001_569dde0e56ec3e6f.txt Sec. 2 (a 4-byte word; 40 MB/s, Sec. 3.1)
    hop_cycles: float = 3.0  # 001_569dde0e56ec3e6f.txt Sec. 3.1 ("2 to 4 cycles per hop")
    overhead_cycles: float = 400.0  # 001_569dde0e56ec3e6f.txt Sec. 3.1 (~400 cycles, 20 us/message)
    # 001_569dde0e56ec3e6f.txt Sec. 1 and 4.1: store-and-forward needs memory for 8 link streams
    # (source and sink 4 at once) and iWarp has half of that, so memory = 4 link-rate streams.
    memory_streams: float = 4.0
    # 001_569dde0e56ec3e6f.txt Sec. 3.1: "large data blocks are injected as single messages";
    # one outgoing DMA stream per link direction.
    inject_channels: float = 4.0
    # The deposit message passing library (Sec. 3.1), used by Fig. 6's message passing AAPC.
    # Its receiver extracts every message itself ("a receiver that is ready to extract it from
    # the network"): on iWarp that is the receiving processor's work on the header and the DMA
    # set-up (Fig. 4 lines 8, 10), the same ~400 cycles per transferred message as the sender's
    # (Sec. 3.1), paid at both ends as the overhead of the models Sec. 3 cites (LogP [8]).
    receive_overhead_cycles: float = 400.0
    # Messages the library moves at once out of and into a node. Sec. 3.1: a message is sent to
    # "a receiver that is ready to extract it" and its data is "limited only by the link
    # bandwidth"; Sec. 2.1 (constraint 5): sending and receiving one message at a time is what
    # a node's memory bandwidth is designed for. One each way; Table 1's nearest-neighbour row
    # (22 MB/s per node over contention-free one-hop routes, below one link) is the check.
    library_streams: float = 1.0
    # Per-phase software of the prototype switch (Fig. 4 lines 2-5: pattern, forward the queues,
    # DMA set-up). Derived from Sec. 4.4: 184,400 cycles for two 8x8 AAPCs of 128-word messages
    # = 1440.6 cycles per phase, less 400 overhead, 256 data, ~24 hop cycles: about 760.
    phase_software_cycles: float = 760.0
    # CALIBRATED (docs/targets.md, "Calibrated: packing"): processor cycles the code the Fx
    # compiler generates around the deposit library's calls spends per 4-byte word of a strided
    # block, to pack it into a message at the sender and to unpack it at the receiver (a
    # transpose's blocks; contiguous blocks go as they lie). The seed gives no value: Sec. 4.4's
    # message passing FFT spends 801,000 cycles in its two transposes, Sec. 4.1 / Table 1 measure
    # the library without this code (footnote 5). Fit data: those 801,000 cycles, by
    # bench/calibrate_iwarp_packing.py. Validation: Sec. 4.4's phased estimate (which pays none,
    # see WormholeNetwork.pack) and Table 1, unchanged.
    pack_cycles_per_word: float = 10.18
    # 001_569dde0e56ec3e6f.txt Sec. 2.2.2: the global barrier takes O(n) steps; the cost of a step
    # is not given: 50 cycles per step over 2(R + C) steps (a reduce and a broadcast) is assumed.
    barrier_step_cycles: float = 50.0

    @property
    def cycle_s(self) -> float:
        return 1e-6 / self.clock_MHz

    @property
    def link_Bps(self) -> float:
        """Bytes per second on one link direction (40 MB/s at the seed's values)."""
        return self.word_bytes / (self.cycles_per_word * self.cycle_s)

    @property
    def overhead_s(self) -> float:
        return self.overhead_cycles * self.cycle_s

    @property
    def hop_s(self) -> float:
        return self.hop_cycles * self.cycle_s

    @property
    def receive_overhead_s(self) -> float:
        return self.receive_overhead_cycles * self.cycle_s

    def pack_s(self, nbytes: int) -> float:
        """Processor time to pack (or unpack) nbytes of strided blocks."""
        return nbytes / self.word_bytes * self.pack_cycles_per_word * self.cycle_s

    @property
    def phase_software_s(self) -> float:
        return self.phase_software_cycles * self.cycle_s

    def data_s(self, nbytes: float) -> float:
        """Streaming time of nbytes over one link once the route is complete."""
        return nbytes / self.link_Bps if self.link_Bps > 0 else float("inf")

    def copy_s(self, nbytes: float) -> float:
        """A local copy reads and writes memory: 2 * nbytes at the memory bandwidth."""
        return 2 * nbytes / (self.memory_streams * self.link_Bps)

    def barrier_s(self, rows: int, cols: int) -> float:
        return 2 * (rows + cols) * self.barrier_step_cycles * self.cycle_s


def peak_aggregate_Bps(params: IWarpParams, n: int) -> float:
    """Eq. 1: 32 n S / T_t bytes/s (4-byte words): the AAPC limit of an n x n bidirectional torus."""
    return 8 * n * params.word_bytes * params.clock_MHz * 1e6 / params.cycles_per_word
