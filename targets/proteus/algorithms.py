"""Proteus's own algorithms as records of the algorithm catalog (compiler/library/registry.py
Algorithm; issue 27), offered before the library's (offer.Library.of `own`): Sec. 5's group
exchange and the direct exchange, each with its closed form (cost.py, which follows the
simulator) and, for the group exchange, the proof of its plan; and the queued messages of a
sparse pattern, without one (`auto` simulates it, as the library's). Bokhari's exchange family on 2^d
PPs, whose names are its partitions (`multiphase:3,3`), stays a family of the target
(target.py `_family`): its members are not a fixed list of records.
"""

from __future__ import annotations

from phalanx.compiler.algorithms import direct_columns, direct_phases
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import Algorithm
from phalanx.compiler.recognize import KINDS
from phalanx.targets.proteus import cost
from phalanx.targets.proteus.allgather import cluster_allgather_phases, whole_allgather
from phalanx.targets.proteus.allreduce import cluster_allreduce_phases, whole_allreduce
from phalanx.targets.proteus.exchange import group_slots, proteus_group_schedule, queued_phase, slot_problems
from phalanx.targets.proteus.params import ProteusParams
from phalanx.targets.proteus.pipeline import cluster_chain_phases, whole_machine
from phalanx.targets.proteus.topology import Topology

EXCHANGES = (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE)
# Patterns where a cluster sends few messages: the machine's own arbitration can order them.
SPARSE_PATTERNS = (Kind.CSHIFT, Kind.PERMUTATION, Kind.SPARSE)


def own_algorithms(topo: Topology, params: ProteusParams) -> tuple[Algorithm, ...]:
    """The group exchange for the exchange kinds, the queued messages for sparse patterns, the
    cluster chain for a broadcast or reduce, the cluster allgather and allreduce, then direct for
    every kind, on `topo`."""
    return (
        Algorithm("proteus-group", EXCHANGES, "Sec. 5: messages combined per cluster, e-cube "
                  "permutation schedule over the groups, pairs of permutations merged",
                  lambda coll, machine: list(proteus_group_schedule(coll, topo).phases),
                  closed_form=lambda coll, machine: float(cost.proteus_group_time_s(coll, topo, params)),
                  closed_form_gap=lambda coll: None,
                  problems=lambda schedule: slot_problems(group_slots(topo), topo)),
        Algorithm("queued", SPARSE_PATTERNS, "every message posted at once in one phase: "
                  "each cluster controller forwards one a cycle in its PPs' round robin and the "
                  "GCI grants them without conflicts (Sec. 3.2-3.3), where colour phases wait "
                  "for each other's cycles",
                  lambda coll, machine: [queued_phase(coll, topo)]),
        Algorithm("cluster-chain", (Kind.BROADCAST, Kind.REDUCE), "the block in pieces along a "
                  "chain of one PP a cluster, each forwarding a piece two eager phases after it came: "
                  "a broadcast's copied to its cluster's PPs over the bus, a reduce's combined with "
                  "its cluster's; short cycles, one piece per cluster and direction (pipeline.py)",
                  lambda coll, machine: cluster_chain_phases(coll, topo, params),
                  requires=(lambda coll, machine: whole_machine(coll, topo),)),
        Algorithm("cluster-allgather", (Kind.ALLGATHER,), "each PP's block to its place-mate in "
                  "every other cluster, a cluster's blocks for one cluster in one packet, in the "
                  "group exchange's cycle order; each copied to the cluster's other PPs over the "
                  "bus two eager phases later (allgather.py)",
                  lambda coll, machine: cluster_allgather_phases(coll, topo),
                  requires=(lambda coll, machine: whole_allgather(coll, topo),)),
        Algorithm("cluster-allreduce", (Kind.ALLREDUCE,), "a reduce-scatter over each cluster's "
                  "bus, recursive doubling between the PPs of one place in the clusters (a cluster's "
                  "messages to one cluster one packet), an allgather over the bus; partials under an "
                  "element a PP through the cluster heads (allreduce.py)",
                  lambda coll, machine: cluster_allreduce_phases(coll, topo, params),
                  requires=(lambda coll, machine: whole_allreduce(coll, topo),)),
        Algorithm("direct", KINDS, "pairwise steps: in step s node r sends to r XOR s (2^d nodes) "
                  "or r + s mod P; the generic exchange, for a rooted kind the linear messages",
                  lambda coll, machine: list(direct_phases(coll)),
                  columns=lambda coll, machine: direct_columns(coll),
                  closed_form=lambda coll, machine: float(cost.direct_time_s(coll, topo, params)),
                  closed_form_gap=lambda coll: None),
    )
