"""The collectives of seed 002_1e1cb805508c9dd7.txt Sec. 5 as schedules of remote reads.

A Transfer src -> dst is dst reading a block that src holds (targets/ksr1/network.py).
Phases are `local`: a holder starts a phase's transfers once it has what they need, the
flag a reader would poll on the real machine. Names follow the paper's numbering:

  broadcast             Sec. 5.2: every cell reads the owner's array at the same time
  cshift                Sec. 5.4: every cell reads from its neighbour at distance k (one phase)
  gather-seq            Sec. 5.5 concatenate-one algorithm 1: the root reads one cell after another
  gather-tree           Sec. 5.5 algorithm 2: a binary tree, the data doubling at each level
  allgather-seq-bcast   Sec. 5.6 algorithm 1: gather-seq, then every cell reads the result
  allgather-tree-bcast  Sec. 5.6 algorithm 2: gather-tree, then the broadcast
  allgather-cshift      Sec. 5.6 algorithm 3: N - 1 cyclic shifts of one part each
  reduce, allreduce     Sec. 5.7: gather (seq or tree; partials combine on the way), op, broadcast

Each takes a read mode (tags.py): plain reads, `-prefetch` or, for a broadcast, `-poststore`.
"""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Phase, Transfer
from phalanx.targets.ksr1.tags import Read, ReadMode

Phases = tuple[Phase, ...]


def local_copies(coll: Collective) -> list[Transfer]:
    m = coll.byte_matrix
    return [Transfer(p, p, m[p][p], p, p) for p in range(coll.nprocs) if m[p][p] > 0]


def _with_copies(coll: Collective, phases: list[list[Transfer]]) -> Phases:
    """Local copies ride in the first phase; empty phases are dropped."""
    first = local_copies(coll)
    phases = [p for p in phases if p]
    if not phases:
        return (Phase.of(first),) if first else ()
    return tuple(Phase.of(first + p if k == 0 else p) for k, p in enumerate(phases))


def all_reads(coll: Collective, mode: ReadMode = ReadMode.READ) -> Phases:
    """One phase: every reader fetches every block due to it, holder by holder (cshift,
    permutation, alltoall as remote reads)."""
    m, n = coll.byte_matrix, coll.nprocs
    reads = [Transfer(p, q, m[p][q], p, q, Read(0, mode).message)
             for q in range(n) for k in range(1, n) if m[p := (q + k) % n][q] > 0]
    return _with_copies(coll, [reads])


def broadcast(coll: Collective, mode: ReadMode = ReadMode.READ) -> Phases:
    """Sec. 5.2: all cells read the owner's array at once; the data is shared."""
    root, m = coll.root or 0, coll.byte_matrix
    reads = [Transfer(root, q, m[root][q], root, q, Read(1 + root, mode).message)
             for q in range(coll.nprocs) if q != root and m[root][q] > 0]
    return _with_copies(coll, [reads])


def _rank(p: int, root: int, n: int) -> int:
    return (p - root) % n


def gather_seq_phases(coll: Collective, mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    """The root reads every other cell's block, one cell after another (in ring order)."""
    root, m, n = coll.root or 0, coll.byte_matrix, coll.nprocs
    senders = sorted((p for p in range(n) if p != root and m[p][root] > 0),
                     key=lambda p: _rank(p, root, n))
    return [[Transfer(p, root, m[p][root], p, root, Read(0, mode).message) for p in senders]]


def gather_tree_phases(coll: Collective, mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    """log2 N levels: at level s, rank i (a multiple of 2^(s+1)) reads everything rank
    i + 2^s has collected, in one read loop."""
    root, m, n = coll.root or 0, coll.byte_matrix, coll.nprocs
    at = {p: [p] for p in range(n) if p != root and m[p][root] > 0}  # blocks each cell holds
    at.setdefault(root, [])
    phases, step = [], 1
    while step < n:
        reads = []
        for i in range(0, n, 2 * step):
            reader, holder = (i + root) % n, (i + step + root) % n
            if i + step < n and at.get(holder):
                reads += [Transfer(holder, reader, m[o][root], o, root, Read(0, mode).message)
                          for o in at[holder]]
                at.setdefault(reader, []).extend(at.pop(holder))
        phases.append(reads)
        step *= 2
    return phases


def broadcast_result_phase(coll: Collective, mode: ReadMode = ReadMode.READ) -> list[Transfer]:
    """After a gather at the root: every cell reads the parts due to it from the root,
    part by part in the same order (each part shared by all readers)."""
    root, m, n = coll.root or 0, coll.byte_matrix, coll.nprocs
    order = sorted(range(n), key=lambda p: _rank(p, root, n))
    return [Transfer(root, q, m[o][q], o, q, Read(1 + o, mode).message)
            for q in order if q != root for o in order if o != q and m[o][q] > 0]


def allgather_cshift_phases(coll: Collective, mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    """N - 1 steps: at step s every cell p reads part (p + s) from cell p + 1, which read it
    at step s - 1 (or owns it when s = 1)."""
    m, n = coll.byte_matrix, coll.nprocs
    return [[Transfer((p + 1) % n, p, m[o][p], o, p, Read(0, mode).message)
             for p in range(n) if m[o := (p + s) % n][p] > 0] for s in range(1, n)]


def reduce_phases(coll: Collective, tree: bool, mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    """Sec. 5.7 steps 1-2: gather the partial results at the root (a read loop of one
    holder's partials fetches them combined: one partial, an element or a block)."""
    phases = gather_tree_phases(coll, mode) if tree else gather_seq_phases(coll, mode)
    return phases


def allreduce_phases(coll: Collective, tree: bool, mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    """Sec. 5.7: gather and combine at cell 0, then every cell reads the result (step 3)."""
    n, m = coll.nprocs, coll.byte_matrix
    gathered = Collective(coll.index, Kind.REDUCE, n, coll.byte_matrix, coll.src, coll.dst, coll.line, 0)
    phases = reduce_phases(gathered, tree, mode)
    result = [Transfer(0, q, m[o][q], o, q, Read(1, mode).message)
              for q in range(1, n) for o in range(n) if o != q and m[o][q] > 0]
    return phases + [result]


def allgather_phases(coll: Collective, algorithm: str,
                     mode: ReadMode = ReadMode.READ) -> list[list[Transfer]]:
    if algorithm == "allgather-cshift":
        return allgather_cshift_phases(coll, mode)
    gathered = Collective(coll.index, Kind.GATHER, coll.nprocs, coll.byte_matrix, coll.src, coll.dst,
                          coll.line, 0)
    tree = algorithm == "allgather-tree-bcast"
    gather = gather_tree_phases(gathered, mode) if tree else gather_seq_phases(gathered, mode)
    return gather + [broadcast_result_phase(gathered, mode)]


def phases_of(coll: Collective, base: str, mode: ReadMode) -> Phases:
    """The phases of `coll` by the base algorithm `base` (mode stripped)."""
    if base == "broadcast":
        return broadcast(coll, mode)
    if base in ("cshift", "reads"):  # one phase of remote reads
        return all_reads(coll, mode)
    if base.startswith("allgather-"):
        return _with_copies(coll, allgather_phases(coll, base, mode))
    tree = base.startswith("gather-tree")
    if coll.kind is Kind.ALLREDUCE:
        return _with_copies(coll, allreduce_phases(coll, tree, mode))
    if coll.kind is Kind.REDUCE:
        return _with_copies(coll, reduce_phases(coll, tree, mode))
    gather = gather_tree_phases(coll, mode) if tree else gather_seq_phases(coll, mode)
    return _with_copies(coll, gather)
