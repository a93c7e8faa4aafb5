"""Proteus topology: PPs in clusters, clusters in groups on a GCI crossbar, groups in a
hypercube with `links` parallel links per dimension (000_df708a39f4a23045.txt Sec. 2, 5).

Also the checks that refuse configurations the hardware cannot build, with what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.grammar.diagnostics import usage_error
from phalanx.targets.proteus.params import SEED, ProteusParams

GroupHop = tuple[int, int]  # directed group link: (from group, to group)


@dataclass(frozen=True)
class Topology:
    groups: int
    links: int
    clusters: int  # per group
    pps: int  # per cluster

    @property
    def nclusters(self) -> int:
        return self.groups * self.clusters

    @property
    def nnodes(self) -> int:
        return self.nclusters * self.pps

    @property
    def dims(self) -> int:
        return self.groups.bit_length() - 1

    def cluster_of(self, pp: int) -> int:
        return pp // self.pps

    def group_of(self, cluster: int) -> int:
        return cluster // self.clusters

    def group_route(self, src_group: int, dst_group: int) -> list[GroupHop]:
        """E-cube route between groups: lowest differing dimension first (Sec. 5, [21])."""
        hops, at, diff = [], src_group, src_group ^ dst_group
        for bit in range(self.dims):
            if diff >> bit & 1:
                hops.append((at, at ^ (1 << bit)))
                at ^= 1 << bit
        return hops

    def group_hops(self) -> list[GroupHop]:
        return [(g, g ^ (1 << b)) for g in range(self.groups) for b in range(self.dims)]


def spans_machine(coll: Collective, topo: Topology, kinds: tuple[Kind, ...], what: str) -> str | None:
    """Why `coll` is not `what` (one of `kinds`) over every PP of the machine, or None: the
    cluster-level records (cluster-chain, cluster-allgather, cluster-allreduce) number PPs by
    the machine's clusters, which a group's own collective (numbered within it) does not."""
    if coll.kind not in kinds or coll.groups:
        return f"the {coll.kind} is not {what} of the whole machine"
    if coll.nprocs != topo.nnodes:
        return f"the {coll.kind} spans {coll.nprocs} of the machine's {topo.nnodes} PPs"
    return None


def _whole(name: str, value: float, low: int, high: int, why: str) -> int:
    if value != int(value) or not low <= value <= high:
        raise usage_error(f"proteus parameter {name}={value:g} is not a whole number in "
                          f"{low}..{high} ({why})", f"write e.g. {name}={low}")
    return int(value)


def build_topology(p: ProteusParams) -> Topology:
    """The topology of `p`, or a usage error naming the hardware limit that is broken."""
    clusters = _whole("clusters", p.clusters, 2, 8, f"{SEED} Sec. 2.3: 8 clusters per group")
    pps = _whole("pps", p.pps, 1, 4, f"{SEED} Sec. 2.2: up to 4 PPs per cluster")
    groups = _whole("groups", p.groups, 1, 128, f"{SEED} Sec. 5: k groups")
    links = _whole("links", p.links, 1, 7, f"{SEED} Sec. 2.3: seven free crossbar links")
    if groups & (groups - 1):
        raise usage_error(f"proteus:groups={groups} is not a power of two: groups are joined "
                          f"hypercube-like ({SEED} Sec. 5)", "use groups=1, 2, 4, 8, ...")
    if 2 * links > clusters:
        raise usage_error(f"proteus:links={links} exceeds c/2 = {clusters // 2}: each cycle a "
                          f"group needs 2l distinct clusters to feed its links ({SEED} Sec. 5: "
                          "l <= c/2, l must not exceed 4)", f"use links <= {clusters // 2}")
    topo = Topology(groups, links, clusters, pps)
    ports = int(p.group_ports)
    if topo.dims * links > ports:
        raise usage_error(
            f"proteus:groups={groups},links={links} needs {topo.dims * links} group links per "
            f"group ({topo.dims} dimensions x {links}), but a group's crossbar has only {ports} "
            f"free ports ({SEED} Sec. 2.3)",
            f"use links <= {ports // max(topo.dims, 1)} or fewer groups")
    return topo
