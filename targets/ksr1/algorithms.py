"""The KSR-1's own collectives (seed 002 Sec. 5) as records of the algorithm catalog
(compiler/library/registry.py Algorithm; issue 27: one way to add an algorithm, the library's
or a machine's), offered before the library's (offer.Library.of `own`).

Each Sec. 5 algorithm is a record per read mode (Sec. 3.4): plain reads, `-prefetch` (several
reads in flight) and, for the broadcast, the shift and the one phase of reads, `-poststore`.
The generic `direct` is the catalog's. The records carry no closed form: the target's analytic
model (cost.py) times any schedule.

The library's algorithms and `subpage-bruck` come in the same read modes (`in_read_modes`):
`binomial-poststore`, `cut-halving-prefetch`. Such a schedule's transfer is a plain read; its
variant reads the same blocks in the same phases and loops, prefetched or pushed by their
holders (Sec. 3.4).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import Algorithm, Machine, Requirement
from phalanx.compiler.library.requirements import complete_group, every_member_receives
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.targets.ksr1.cost import read_loops
from phalanx.targets.ksr1.params import KsrParams
from phalanx.targets.ksr1.schedules import phases_of
from phalanx.targets.ksr1.subpages import small_machine, subpage_bruck_columns
from phalanx.targets.ksr1.tags import Read, ReadMode

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


def subpage_bruck(params: KsrParams) -> Algorithm:
    """`subpage-bruck` in plain reads (subpages.py); its other read modes come as the library's
    do (`in_read_modes`)."""
    subpage = int(params.subpage_bytes)
    return Algorithm(
        "subpage-bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
        "Bruck's index algorithm with extra rounds (distances 3, 5, 6) and each block's rounds "
        "chosen so that no cell's round goes over a subpage (subpages.py)",
        lambda coll, machine: list(subpage_bruck_columns(coll, subpage).phases()),
        (lambda coll, machine: small_machine(coll),))


# The modes a plainly reading record also comes in (its plain reads are the record itself).
LIBRARY_MODES = (ReadMode.PREFETCH, ReadMode.POSTSTORE)
# A plain record's phases for a collective: the target's remembered ones (Target.schedule_for),
# so that a record's variants and their requirement build them once.
BasePhases = Callable[[Collective, Algorithm], Sequence[Phase]]


def one_loop_a_pair(record: Algorithm, base_phases: BasePhases) -> Requirement:
    """A read mode numbers one private loop per holder and reader (tags.py `Read`): a schedule
    whose phase has two loops between one pair would have them merged into one."""
    def requirement(coll: Collective, machine: Machine) -> str | None:
        for k, phase in enumerate(base_phases(coll, record)):
            pairs = Counter((reader, holder) for reader, holder, _ in read_loops(phase))
            pair = next((p for p, n in pairs.items() if n > 1), None)
            if pair is not None:
                return (f"its phase {k} has two read loops of cell {pair[0]} from cell {pair[1]}, "
                        "which a read mode would merge into one")
        return None
    return requirement


def _read_in(transfer: Transfer, mode: ReadMode) -> Transfer:
    if transfer.src == transfer.dst:  # a local copy reads no ring
        return transfer
    return transfer._replace(message=Read(0, mode).message)


def in_mode(phases: Sequence[Phase], mode: ReadMode) -> list[Phase]:
    """The phases with every remote transfer a private read in `mode`, its loops kept."""
    return [dataclasses.replace(p, sends=tuple(_read_in(t, mode) for t in p.sends),
                                recvs=tuple(_read_in(t, mode) for t in p.recvs)) for p in phases]


def in_read_modes(records: tuple[Algorithm, ...], base_phases: BasePhases) -> tuple[Algorithm, ...]:
    """Each plainly reading record in each of LIBRARY_MODES: `name-prefetch`, `name-poststore`,
    the record's phases (`base_phases`) read in that mode."""
    return tuple(
        Algorithm(name_of(a.name, mode), a.kinds, f"{a.description}; each read by {mode} (seed 002 "
                  "Sec. 3.4)",
                  lambda coll, machine, a=a, mode=mode: in_mode(base_phases(coll, a), mode),
                  a.requires + (one_loop_a_pair(a, base_phases),))
        for mode in LIBRARY_MODES for a in records)
