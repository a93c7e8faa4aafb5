"""The generic cost model (cost.py estimate_s) on a schedule's columns, without its transfers.

What `auto` and the candidate listing need of an all-to-all candidate is its predicted time,
not its million Transfer objects: the algorithms of the all-to-all family build their phases
as columns (compiler/columns.py), and this module gives estimate_s's time from them, the same
float for float:

- a phase's network messages are its rows grouped by (src, dst, message id) where the id is
  not 0 (cost.messages), in numpy;
- a phase in which no node sends or receives more than one network message, nor makes more
  than one local copy, its copy after its send's start-up (direct's steps, Bruck's rounds, any
  permutation), on a port per node with its own send and receive engines, is followed for all
  nodes at once: every operation of estimate_s on such a phase touches one message's two
  nodes, with the same float operations in the same order (the port's stream heaps give 0.0 to
  the first message of a phase), and a node's end is the max of what reached it;
- any other phase (or a reduction, whose partials combine) goes through estimate_s's own loop
  (cost.phase_ends) on the grouped messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from phalanx.compiler.columns import MessagePhase, PhaseColumns
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.cost import estimate_s, phase_ends
from phalanx.compiler.library.members import REDUCTIONS
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.schedule import Schedule, SyncMode


def message_sizes(phase_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src, dst, bytes) of each message of a phase's rows, the network messages in the order
    of their first transfer, then the local copies so: rows with one (src, dst, message id > 0)
    travel together, bytes summed (cost.messages, for kinds that do not combine partials)."""
    src, dst, nbytes = _grouped(phase_rows)
    copy = src == dst
    if not (copy[:-1] & ~copy[1:]).any():  # no copy before a message: in order already
        return src, dst, nbytes
    last = np.argsort(copy, kind="stable")  # a node's copies after its messages
    return src[last], dst[last], nbytes[last]


def _grouped(phase_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """message_sizes in the order of the messages' first transfers."""
    src, dst, nbytes, message = (phase_rows[:, c] for c in (0, 1, 2, 5))
    if not message.any():
        return src, dst, nbytes
    together = message > 0
    key = np.where(together[:, None], phase_rows[:, [0, 1, 5]],
                   np.stack([np.full(len(src), -1), np.full(len(src), -1),
                             -1 - np.arange(len(src))], axis=1))
    _, first, group = np.unique(key, axis=0, return_index=True, return_inverse=True)
    group = group.ravel()
    order = np.argsort(first, kind="stable")  # groups by their first row
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    sums = np.bincount(rank[group], weights=nbytes, minlength=len(order))
    heads = first[order]
    return src[heads], dst[heads], np.rint(sums).astype(np.int64)


def followed_at_once(src: np.ndarray, dst: np.ndarray, port: PortModel) -> bool:
    """Whether a phase's messages may be followed for all nodes at once (the module's rule)."""
    if port.shared_engine or port.port_of:
        return False
    local = src == dst
    net_src, net_dst, own = src[~local], dst[~local], src[local]
    return not any(len(nodes) and np.bincount(nodes).max() > 1 for nodes in (net_src, net_dst, own))


def _phase_at_once(src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, ready: np.ndarray,
                   port: PortModel) -> np.ndarray:
    """estimate_s's ends of a phase that followed_at_once admits (before its barriers)."""
    local = src == dst
    cpu, ends = ready.copy(), ready.copy()
    s, d = src[~local], dst[~local]
    cpu[s] = cpu[s] + port.startup_s
    begin = np.maximum(np.maximum(0.0, cpu[s]), ready[d])
    done = begin + port.s_per_byte * nbytes[~local]
    ends[s] = np.maximum(ends[s], done)
    ends[d] = np.maximum(ends[d], done)
    own = src[local]  # its copy after its start-up (cost.messages)
    cpu[own] = cpu[own] + port.copy_s_per_byte * nbytes[local]
    ends[own] = np.maximum(ends[own], cpu[own])
    return ends


def column_messages(columns: PhaseColumns) -> Iterator[MessagePhase]:
    """The messages of each phase of `columns` (kinds that do not combine partials)."""
    for k, sync in enumerate(columns.syncs):
        yield MessagePhase(*message_sizes(columns.phase_rows(k)), sync)


def messages_estimate_s(phases: Iterable[MessagePhase], nprocs: int, port: PortModel) -> float:
    """estimate_s of a schedule of these message phases (an unscoped barrier where a phase's
    sync is `barrier`), for kinds that do not combine partials."""
    ready = np.zeros(nprocs)
    everyone = (tuple(range(nprocs)),)
    for phase in phases:
        src, dst, nbytes = phase.src, phase.dst, phase.nbytes
        if followed_at_once(src, dst, port):
            ends = _phase_at_once(src, dst, nbytes, ready, port)
            if phase.sync is SyncMode.BARRIER:
                ends[:] = ends.max(initial=0.0) + port.barrier_s
        else:
            sizes = list(zip(src.tolist(), dst.tolist(), nbytes.tolist(), [0] * len(src)))
            ends = np.array(phase_ends(sizes, everyone if phase.sync is SyncMode.BARRIER else (),
                                       ready.tolist(), port, False, None))
        ready = ends
    return float(ready.max(initial=0.0))


def columns_estimate_s(columns: PhaseColumns, nprocs: int, kind: Kind, port: PortModel,
                       element_bytes: int | None = None) -> float:
    """estimate_s of the schedule these columns build."""
    if kind in REDUCTIONS:  # partials combine: the transfers' finals and offsets matter
        return estimate_s(Schedule(0, kind, "", nprocs, columns.phases()), port, element_bytes)
    return messages_estimate_s(column_messages(columns), nprocs, port)
