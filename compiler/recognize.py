"""Pattern recognition: which collective a statement is, derived from its byte matrix.

The statement says what it computes (copy, transpose, cshift, reduction) and how its
arrays are mapped; the byte matrix says who sends to whom. Recognition returns plain
data (kind, sizes, participants); the target's generators decide the schedule
(analysis apart from emission, as Devito does).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.semantics import REDUCTIONS, Op
from phalanx.grammar.ast import Mapping

KINDS = tuple(Kind)
# Kinds a statement may be `in groups`: a shift or a permutation splits into pairs and rings
# whatever the statement, and its algorithms already take any byte matrix.
GROUPABLE = (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.BROADCAST, Kind.SCATTER, Kind.GATHER,
             Kind.ALLGATHER, Kind.REDUCE, Kind.ALLREDUCE)


@dataclass(frozen=True)
class Collective:
    """A recognized collective: `byte_matrix[p][q]` bytes go from processor p to q."""

    index: int
    kind: Kind
    nprocs: int
    byte_matrix: tuple[tuple[int, ...], ...]
    src: str
    dst: str
    line: int
    root: int | None = None  # the single owner of broadcast, scatter, gather and reduce
    # `kind` in groups: the members (global ranks, ascending) of each independent group,
    # every one of which is that collective on its own; empty for a whole-statement collective.
    groups: tuple[tuple[int, ...], ...] = ()
    # A reduction along dimensions: each partial is a block of elements of this many bytes,
    # combined element-wise; None: each partial is one element (`s = sum(A)`).
    element_bytes: int | None = None
    # Per block, whether the sender's code gathers it (bit 1) and the receiver's scatters it
    # (bit 2) because it is not one run of its local array (compiler/layout.py); empty when no
    # block is (a reduction's partials, a byte matrix given as such, whole rows).
    strided: tuple[tuple[int, ...], ...] = ()
    # Whether every origin's blocks lie back to back in its local array in the order of their
    # finals' ranks, each one run (MPI_Alltoall's send buffer; compiler/layout.py): the blocks
    # an origin sends to consecutive finals are then one run, a message of them needs no pack.
    # False where not proven (a byte matrix given as such: its blocks are buffers of their own).
    sends_in_rank_order: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.kind, Kind):  # a kind is compared by identity: text would never match
            raise TypeError(f"Collective.kind must be a Kind, not {self.kind!r}")

    def __hash__(self) -> int:
        """The fields' hash, remembered: collectives key the compiler's memos, and the byte
        matrix of a 4096-node one is 16.8M ints (a frozen dataclass would hash them each time)."""
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self)))
            self.__dict__["_hash"] = cached
        return cached

    @cached_property
    def matrix(self) -> np.ndarray:
        """The byte matrix as a read-only int64 array (built once)."""
        out = np.array(self.byte_matrix, dtype=np.int64).reshape(self.nprocs, self.nprocs)
        out.setflags(write=False)
        return out

    @cached_property
    def complete_block_bytes(self) -> int | None:
        """The bytes of every block between two different nodes where all have one size, not 0
        (a complete exchange of one block size), else None. Counted, not copied: the blocks off
        the diagonal of a 4096-node matrix are 134 MB, which algorithms' plans asked for each."""
        m, n = self.matrix, self.nprocs
        block = int(m[0, 1]) if n > 1 else 0
        if block <= 0:
            return None
        same = np.count_nonzero(m == block) - np.count_nonzero(np.diagonal(m) == block)
        return block if same == n * (n - 1) else None

    @property
    def network_matrix(self) -> np.ndarray:
        """Bytes between distinct nodes (the diagonal stays local)."""
        m = self.matrix.copy()
        np.fill_diagonal(m, 0)
        return m

    @property
    def total_bytes(self) -> int:
        """Bytes that cross the network (between distinct nodes)."""
        return int(self.matrix.sum() - np.trace(self.matrix))  # no copy of the P x P matrix

    @property
    def block_bytes(self) -> int | None:
        """Bytes per source-destination pair where uniform, else None."""
        m = self.matrix
        sent = m > 0
        np.fill_diagonal(sent, False)
        first = int(sent.argmax())  # the first pair that sends, row by row
        if not sent.flat[first]:
            return None
        nbytes = int(m.flat[first])
        return nbytes if ((m == nbytes) | ~sent).all() else None

    @property
    def participants(self) -> tuple[int, ...]:
        m = self.matrix
        return tuple(int(p) for p in np.flatnonzero(m.sum(axis=0) + m.sum(axis=1)))


def connected_groups(m: np.ndarray) -> list[tuple[int, ...]]:
    """Connected components (two or more nodes) of the graph with an edge wherever bytes move
    between two distinct nodes, lowest member first. Label propagation with pointer jumping:
    each node takes the least label of its neighbours and of its label's label, until no
    label changes, so every component ends labelled by its least node."""
    n = m.shape[0]
    net = (m > 0) | (m.T > 0)
    np.fill_diagonal(net, False)
    src, dst = np.nonzero(net)
    labels = np.arange(n)
    while True:
        new = labels.copy()
        np.minimum.at(new, src, labels[dst])
        new = new[new]
        if np.array_equal(new, labels):
            break
        labels = new
    touched = np.zeros(n, dtype=bool)
    touched[src] = True
    out: dict[int, list[int]] = {}
    for p in np.flatnonzero(touched).tolist():
        out.setdefault(int(labels[p]), []).append(p)
    return [tuple(members) for _, members in sorted(out.items())]


def group_kind(m: np.ndarray, groups: list[tuple[int, ...]], op: Op, src_mapping: Mapping,
               dst_mapping: Mapping) -> Kind | None:
    """The one kind every group is on its own (the statement's mappings read per group: `single`
    one owner in each group, `replicated` a copy on each member), or None. Groups of uniform and
    of varying all-to-alls together are an alltoallv."""
    kinds = set()
    for members in groups:
        sub = m[np.ix_(members, members)]
        off = sub.copy()
        np.fill_diagonal(off, 0)
        receiving = int((off.sum(axis=0) > 0).sum())
        kinds.add(classify(sub, op, src_mapping, dst_mapping, receiving))
    if kinds == {Kind.ALLTOALL, Kind.ALLTOALLV}:
        return Kind.ALLTOALLV
    kind = kinds.pop() if len(kinds) == 1 else None
    return kind if kind in GROUPABLE else None


def classify(m: np.ndarray, op: Op = Op.COPY, src_mapping: Mapping = Mapping.DISTRIBUTED,
             dst_mapping: Mapping = Mapping.DISTRIBUTED, nreceivers: int = 1) -> Kind:
    """The collective kind of a statement from what it computes, its mappings and matrix."""
    net = m.copy()
    np.fill_diagonal(net, 0)
    if not net.any():
        return Kind.SPARSE  # everything stays local
    senders = np.flatnonzero(net.sum(axis=1))
    receivers = np.flatnonzero(net.sum(axis=0))
    if op in REDUCTIONS:
        if len(senders) == 1 and src_mapping is Mapping.SINGLE:
            return Kind.BROADCAST if nreceivers > 1 else Kind.PERMUTATION
        return Kind.ALLREDUCE if nreceivers > 1 else Kind.REDUCE
    if op is Op.CSHIFT:
        return Kind.CSHIFT
    if src_mapping is Mapping.SINGLE and len(senders) == 1:
        if dst_mapping is Mapping.REPLICATED:
            return Kind.BROADCAST
        if dst_mapping is Mapping.DISTRIBUTED and len(receivers) > 1:
            return Kind.SCATTER
    if dst_mapping is Mapping.SINGLE and len(receivers) == 1 and len(senders) > 1:
        return Kind.GATHER
    if src_mapping is Mapping.DISTRIBUTED and dst_mapping is Mapping.REPLICATED:
        return Kind.ALLGATHER
    n = m.shape[0]
    pairs = n * (n - 1)
    sends = net > 0  # the diagonal is not a pair
    if n > 1 and np.count_nonzero(sends) == pairs:  # every pair sends
        return Kind.ALLTOALL if np.count_nonzero(net == net[0, 1]) == pairs else Kind.ALLTOALLV
    if (sends.sum(axis=1) <= 1).all() and (sends.sum(axis=0) <= 1).all():
        return Kind.PERMUTATION
    return Kind.SPARSE


def recognize(index: int, byte_matrix: np.ndarray, src: str, dst: str, line: int,
              op: Op = Op.COPY, src_mapping: Mapping = Mapping.DISTRIBUTED,
              dst_mapping: Mapping = Mapping.DISTRIBUTED, nreceivers: int = 1,
              root: int | None = None, element_bytes: int | None = None,
              strided: tuple[tuple[int, ...], ...] = (),
              sends_in_rank_order: bool = False) -> Collective:
    """The statement's collective. Where its byte matrix splits into two or more independent
    groups (connected components of who sends to whom) that are each the same known collective,
    it is that collective in groups (a shift or a permutation stays what it is); so is a sparse
    exchange among some of the processors that is a known collective on them (one group).
    `element_bytes`: a reduction's partials are blocks of such elements (Collective);
    `sends_in_rank_order`: the statement's layout fact (Collective), kept by a collective in
    groups, whose ranks are the machine's."""
    n = byte_matrix.shape[0]
    rows = tuple(map(tuple, np.asarray(byte_matrix, dtype=np.int64).tolist()))
    kind = classify(byte_matrix, op, src_mapping, dst_mapping, nreceivers)
    if kind not in (Kind.CSHIFT, Kind.PERMUTATION, Kind.ALLTOALL, Kind.ALLTOALLV):
        groups = connected_groups(byte_matrix)
        # One group of fewer than all processors (the others hold nothing of the statement's)
        # is that group's collective: a transpose that leaves the last processor without rows
        # is an all-to-all among the others, not a sparse exchange.
        among_holders = kind == Kind.SPARSE and len(groups) == 1 and len(groups[0]) < n
        in_groups = group_kind(byte_matrix, groups, op, src_mapping, dst_mapping) \
            if len(groups) > 1 or among_holders else None
        if in_groups is not None:
            return with_matrix(Collective(index, in_groups, n, rows, src, dst, line, None,
                                          tuple(groups), _element_bytes(in_groups, element_bytes),
                                          strided, sends_in_rank_order), byte_matrix)
    keeps_root = kind in (Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.REDUCE)
    return with_matrix(Collective(index, kind, n, rows, src, dst, line,
                                  root if keeps_root else None, (),
                                  _element_bytes(kind, element_bytes), strided,
                                  sends_in_rank_order), byte_matrix)


def with_matrix(coll: Collective, byte_matrix: np.ndarray) -> Collective:
    """`coll`, its `matrix` taken from the array its byte_matrix was made of (not rebuilt from
    the tuples: 16.8M of them on 4096 nodes); a read-only int64 array as it is (its owner does
    not change it: CommSet's matrices, the IR's bytes), any other copied."""
    matrix = np.asarray(byte_matrix, dtype=np.int64).reshape(coll.nprocs, coll.nprocs)
    if matrix.flags.writeable:
        matrix = matrix.copy()
        matrix.setflags(write=False)
    coll.__dict__["matrix"] = matrix
    return coll


def _element_bytes(kind: Kind, element_bytes: int | None) -> int | None:
    """Only a reduce or allreduce combines partials element by element."""
    return element_bytes if kind in (Kind.REDUCE, Kind.ALLREDUCE) else None
