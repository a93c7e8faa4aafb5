"""Machine parameters of Bokhari's study (seed 003_f18cb429ce0a4177.txt), one dataclass each.

Table 1 of seed 003 gives, per machine, the message time lambda + tau m (for m < 8000
bytes), the barrier time on 2^d processors (a d - b us) and the memory-copy rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ParagonParams:
    startup_us: float = 75.0  # 003_f18cb429ce0a4177.txt Table 1: message time 75 + 0.011m us
    us_per_byte: float = 0.011  # 003_f18cb429ce0a4177.txt Table 1
    copy_us_per_byte: float = 0.0140  # 003_f18cb429ce0a4177.txt Table 1: memory copy
    barrier_us_per_dim: float = 126.0  # 003_f18cb429ce0a4177.txt Table 1: barrier 126d - 113 us
    barrier_offset_us: float = 113.0  # 003_f18cb429ce0a4177.txt Table 1
    link_MBps: float = 175.0  # 000_df708a39f4a23045.txt Sec. 6: 175 MB/s Paragon links
    # 003_f18cb429ce0a4177.txt Sec. 3.1: "The i860s run at 50MHz and are capable of 75 MFlops
    # each": the rate at which a node combines reduction partials (peak, one op per element).
    arith_MFLOPS: float = 75.0
    # 003_f18cb429ce0a4177.txt Sec. 5 / Fig. 12: the OS could post the 255 receives of
    # direct {8} only up to 1728-byte messages -> a pool of 255 * 1728 bytes per node.
    recv_buffer_bytes: float = 255 * 1728.0
    # 003_f18cb429ce0a4177.txt Sec. 3.1: one of the node's two i860s does all communication,
    # both directions: sends and receives share it (1).
    shared_engine: float = 1.0

    @property
    def packet_bytes(self) -> float:
        """One route per pair (row-column routing): the adapter never splits a message (0)."""
        return 0.0


class EndPointsOnly:
    """What limits a message on the multistage networks and the hypercube: its end points alone.
    Seed 003 gives no link rate below Table 1's end-to-end rate (0: none) and reports a
    receive-buffer limit for the Paragon only (Sec. 5; 0: none)."""

    @property
    def link_MBps(self) -> float:
        return 0.0

    @property
    def recv_buffer_bytes(self) -> float:
        return 0.0


@dataclass(frozen=True)
class MultistageParams(EndPointsOnly):
    """SP2 and CS-2: both a multistage network of bidirectional 4x4 crossbars (Fig. 8)."""

    startup_us: float
    us_per_byte: float
    copy_us_per_byte: float
    barrier_us_per_dim: float
    barrier_offset_us: float
    # Reduction partials combined at the node's peak rate (one op per element); each machine
    # below cites its own (003_f18cb429ce0a4177.txt Secs. 3.2, 3.3).
    arith_MFLOPS: float
    # How a route picks its up-port at each stage: an index into routing.UP_ROUTE_RULES
    # (0 destination digit above, 1 source digit, 2 destination digit, 3 their sum). Not a
    # seed figure (Sec. 3.2, Fig. 8 give only the network); each machine below says why.
    up_route: float = 0.0
    # 003_f18cb429ce0a4177.txt Abstract, Sec. 3: a dedicated communication processor per
    # node, for both directions (1); 0 = separate send and receive engines (a what-if).
    shared_engine: float = 1.0
    # Alternative up/down routes per (source, destination) pair the adapter spreads a
    # message's packets over, in turn (network.RoutedNetwork.packet_pieces); 1 = one fixed route.
    # A structural figure of the machine, not fitted: see SP2 below.
    routes_per_pair: float = 1.0
    # Bytes per switch packet (the unit the adapter puts on one route); only used when
    # routes_per_pair > 1. See SP2 below.
    packet_bytes: float = 255.0


SP2 = MultistageParams(
    startup_us=70.0,  # 003_f18cb429ce0a4177.txt Table 1: message time 70 + 0.043m us
    us_per_byte=0.043,  # 003_f18cb429ce0a4177.txt Table 1
    copy_us_per_byte=0.0043,  # 003_f18cb429ce0a4177.txt Table 1
    barrier_us_per_dim=72.0,  # 003_f18cb429ce0a4177.txt Table 1: barrier 72d - 52 us
    barrier_offset_us=52.0,  # 003_f18cb429ce0a4177.txt Table 1
    arith_MFLOPS=266.0,  # 003_f18cb429ce0a4177.txt Sec. 3.2: POWER2 node "capable of 266 MFlops"
    # Not in the seed (Sec. 3.2 says only "multistage switch", Fig. 8). Stunkel et al., "The
    # SP2 High-Performance Switch", IBM Systems Journal 34(2), 1995: source routing, the
    # adapter holding several routes to each destination and spreading packets over them;
    # IBM's RS/6000 SP redbook (switch-board chapter): "four routes between each node" of a
    # 16-node switch board, one through each of the four chips on the board's other side;
    # Abali and Aykanat, "Routing algorithms for IBM SP1", LNCS 853, 1994, Sec. 1: "Routes
    # must be selected so that the communication load is distributed evenly among the links
    # and switches to prevent congestion in the network."
    routes_per_pair=4.0,
    # 2 = destination digit (routing.FatTreeRoutes). The SP2 route table's exact rule (Abali
    # and Aykanat Sec. 2) is in no stored copy we could read; documented: the load spreads
    # evenly over links and switches (above), data reach a node switch board down many of
    # its cables (IBM RS/6000 SP redbook, intermediate switch boards: "there are always 8
    # cables that data can travel down to reach the node frame"). Whether the adapter puts
    # packets or whole messages on a pair's routes in turn is not in a stored copy; with
    # whole messages only each pair's first route carries an all-to-all, so each route
    # number's set must spread on its own. Rule 0 (the CS-2's) leaves 3/4 of the top
    # stage's down-links idle for each route number; rules 1, 2 and 3 spread every stage
    # evenly. Rules 2 and 1 are D-mod-k and S-mod-k, the two standard oblivious routings of
    # k-ary n-trees (Rodriguez, Minkenberg et al., IEEE CLUSTER 2009), and give the same
    # Table 1 levels (7.95 / 15.90 ms); rule 3, no published scheme, would give 10.22 / 22.29.
    # docs/targets.md "SP2 routing".
    up_route=2.0,
    # Stunkel et al. 1995 / the Vulcan chip (Stunkel et al., IPPS 1994): switch packets of
    # at most 255 bytes (as recalled; not checked against a stored copy, docs/targets.md).
    packet_bytes=255.0,
)

CS2 = MultistageParams(
    startup_us=105.0,  # 003_f18cb429ce0a4177.txt Table 1: message time 105 + 0.025m us
    us_per_byte=0.025,  # 003_f18cb429ce0a4177.txt Table 1
    copy_us_per_byte=0.0153,  # 003_f18cb429ce0a4177.txt Table 1
    barrier_us_per_dim=17.0,  # 003_f18cb429ce0a4177.txt Table 1: barrier 17d - 5.6 us
    barrier_offset_us=5.6,  # 003_f18cb429ce0a4177.txt Table 1
    arith_MFLOPS=100.0,  # 003_f18cb429ce0a4177.txt Sec. 3.3: SuperSPARC "capable of 100 MFlops"
    # 0 = destination digit above, one route per pair: the model as it reproduced Table 1
    # (not changed with the SP2's routing, issue 21; the Elite switches chose up-links in the
    # switch, which no route table describes). docs/targets.md "SP2 routing".
    up_route=0.0,
)


@dataclass(frozen=True)
class HypercubeParams(EndPointsOnly):
    """The circuit-switched hypercube the theory assumes (003 Sec. 2); defaults: the Paragon's
    Table 1 figures, so `hypercube:d` is the "predicted" machine of Figs. 10 and 11."""

    startup_us: float = 75.0  # 003_f18cb429ce0a4177.txt Table 1 (Paragon)
    us_per_byte: float = 0.011  # 003_f18cb429ce0a4177.txt Table 1 (Paragon)
    copy_us_per_byte: float = 0.0140  # 003_f18cb429ce0a4177.txt Table 1 (Paragon)
    barrier_us_per_dim: float = 126.0  # 003_f18cb429ce0a4177.txt Table 1 (Paragon)
    barrier_offset_us: float = 113.0  # 003_f18cb429ce0a4177.txt Table 1 (Paragon)
    arith_MFLOPS: float = 75.0  # 003_f18cb429ce0a4177.txt Sec. 3.1 (the Paragon's i860)
    # The theory's t = lambda + tau m per step (003_f18cb429ce0a4177.txt Sec. 2) has every
    # node send and receive at once: separate send and receive engines (0).
    shared_engine: float = 0.0

    @property
    def packet_bytes(self) -> float:
        """One route per pair (e-cube): the adapter never splits a message (0)."""
        return 0.0


# Every machine's parameters declare the same names (0 where the machine has no such limit).
BokhariParams = ParagonParams | MultistageParams | HypercubeParams


def barrier_us(params: BokhariParams, nnodes: int) -> float:
    """Table 1's a d - b on 2^d nodes (d rounded up for other counts), never negative."""
    d = math.ceil(math.log2(nnodes)) if nnodes > 1 else 0
    return max(params.barrier_us_per_dim * d - params.barrier_offset_us, 0.0)
