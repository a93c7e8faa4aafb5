"""The KSR-1's own collectives (seed 002 Sec. 5) as records of the algorithm catalog
(compiler/library/registry.py Algorithm; issue 27: one way to add an algorithm, the library's
or a machine's), offered before the library's (offer.Library.of `own`).

Each Sec. 5 algorithm is a record per read mode (Sec. 3.4): plain reads, `-prefetch` (several
reads in flight) and, for the broadcast, the shift and the one phase of reads, `-poststore`.
The generic `direct` is the catalog's. The records carry no closed form: the target's analytic
model (cost.py) times any schedule.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import Algorithm, Requirement
from phalanx.compiler.library.requirements import complete_group, every_member_receives
from phalanx.targets.ksr1.schedules import phases_of
from phalanx.targets.ksr1.tags import ReadMode

BASE_ALGORITHMS = {
    Kind.BROADCAST: ("broadcast",),
    Kind.CSHIFT: ("cshift",),
    Kind.PERMUTATION: ("reads",),
    Kind.GATHER: ("gather-seq", "gather-tree"),
    Kind.REDUCE: ("gather-seq", "gather-tree"),
    Kind.ALLREDUCE: ("gather-seq-bcast", "gather-tree-bcast"),
    Kind.ALLGATHER: ("allgather-seq-bcast", "allgather-tree-bcast", "allgather-cshift"),
    Kind.ALLTOALL: ("reads",),
    Kind.ALLTOALLV: ("reads",),
    Kind.SCATTER: ("reads",),
    Kind.SPARSE: ("reads",),
}
# Sec. 5's collectives forward parts through every cell: each must take part and receive. One
# phase of reads (`reads`, and the cshift's) lowers any pattern.
FORWARDING: tuple[Requirement, ...] = (complete_group, every_member_receives)


# Bases whose reads all start at once from their holders: the holder can push instead.
POSTSTORED = ("broadcast", "cshift", "reads")


def modes(base: str) -> tuple[ReadMode, ...]:
    """The read modes a base algorithm comes in: every one plain and prefetching (Sec. 3.4); the
    one-phase ones also by poststore (the owner pushes the subpages round the ring, the reader
    takes them from its cache: every cell's copy of a broadcast, one reader's block of a shift
    or an exchange)."""
    return (ReadMode.READ, ReadMode.PREFETCH) + ((ReadMode.POSTSTORE,) if base in POSTSTORED else ())


def name_of(base: str, mode: ReadMode) -> str:
    """`gather-seq` in prefetch mode -> `gather-seq-prefetch`."""
    return base if mode is ReadMode.READ else f"{base}-{mode}"


def own_algorithms() -> tuple[Algorithm, ...]:
    """Every base algorithm in every mode: the plain ones first, then the prefetching ones, then
    the poststored ones (the order `phalanx algorithms` lists a kind's in)."""
    kinds: dict[str, list[Kind]] = {}
    for kind, bases in BASE_ALGORITHMS.items():
        for base in bases:
            kinds.setdefault(base, []).append(kind)
    records = []
    for mode in (ReadMode.READ, ReadMode.PREFETCH, ReadMode.POSTSTORE):
        for base, of in kinds.items():
            if mode not in modes(base):
                continue
            description = f"seed 002 Sec. 5's {base}" + \
                (f", {mode} (Sec. 3.4)" if mode is not ReadMode.READ else "")
            records.append(Algorithm(
                name_of(base, mode), tuple(of), description,
                lambda coll, machine, base=base, mode=mode: list(phases_of(coll, base, mode)),
                () if base in ("reads", "cshift") else FORWARDING))
    return tuple(records)
