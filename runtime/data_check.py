"""The check of an assignment's payloads when its collective closes (runtime/data_assign.py).

Every due element written exactly once, each equal to the reference result. A large plain
statement whose blocks all moved in bulk is checked where its blocks land, without a copy
(correct_where_they_land); the others have their delivered blocks written first. Writes are counted
per block (AssignmentData.block_count): every due block once, plus the statement's exact cover
(the due blocks write each node's due elements exactly once: StatementFacts.exact_cover, worked
out once per statement, dim by dim where runtime/direct_moves.py knows the geometry), says every
due element was written once. The values are compared node by node, as whole arrays (wide
integer views where the bytes allow). Where anything is wrong the per-element counts are made
for that node alone, so the messages name the node, the elements and the blocks. A reduction,
whose partials combine where they meet, counts per element.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from phalanx.runtime.data_facts import FLAT_CHECK_ELEMENTS

try:  # the native core compares byte rows at memory speed (runtime/engine_core/src/data.rs)
    from phalanx_engine_core import same_bytes
except ImportError:  # (without it numpy compares them, as 64-bit words where it can)
    same_bytes = None

if TYPE_CHECKING:
    from phalanx.runtime.data_assign import AssignmentData

WIDE = np.dtype(np.uint64)  # integer arrays are compared 8 bytes at a time where they can be


def same_values(got: np.ndarray, ref: np.ndarray) -> bool:
    """np.array_equal, for integer (or bool) arrays of one type with a contiguous last axis
    compared byte for byte, row by row, by the native core (same_bytes: no temporary; 16x16 at
    16 KB compares 1 GB), else as 64-bit words where the rows are whole words."""
    if got.shape != ref.shape:
        return False
    if same_memory(got, ref):
        return True
    if got.dtype == ref.dtype and got.dtype.kind in "iub" and got.ndim and got.size \
            and got.strides[-1] == ref.strides[-1] == got.itemsize:
        found = None if same_bytes is None else same_bytes(got.view(np.uint8), ref.view(np.uint8))
        if found is not None:
            return found
        if got.shape[-1] * got.itemsize % WIDE.itemsize == 0:
            return bool((got.view(WIDE) == ref.view(WIDE)).all())
    return bool(np.array_equal(got, ref))


def same_memory(got: np.ndarray, ref: np.ndarray) -> bool:
    """Two integer (or bool) views of one shape and type that read the very same bytes: the
    same first byte and strides, so equal values (not so for floats: NaN differs from itself).
    `B = A`'s delivered values are the source read in place (DirectMoves.whole_values), and so
    is its reference result (data_values.reference_array): correct_where_they_land compared 1 GB
    with itself at torus:16x16 and 16 KB. (Where the compiler's index maps read anything else,
    the views differ and every byte is compared.)"""
    return got.shape == ref.shape and got.dtype == ref.dtype and got.dtype.kind in "iub" and \
        got.strides == ref.strides and \
        got.__array_interface__["data"][0] == ref.__array_interface__["data"][0]


def assignment_problems(data: AssignmentData) -> list[str]:
    """Empty when every expected element arrived exactly once with the right value (a
    reduction's: every partial once, combined to the reference); else what is wrong, by node."""
    if correct_where_they_land(data):
        return []
    data.drawn()
    data.write_delivered()
    if data.stmt.reduces:
        return reduction_problems(data)
    if all_correct(data):
        return []
    out = []
    m = data.commset.byte_matrix
    right = (data.block_count == (m > 0)).all(axis=0) & covers_exactly(data)  # each due block once
    for q, (got, ref, want) in enumerate(zip(data.dst_local, data.reference, data.expected)):
        if right[q] and same_values(got, ref):
            continue  # the common case, checked without building masks
        # (where every due block came once, the exact cover says each due element came once)
        w = want if right[q] else element_writes(data, q, data.block_count[:, q])
        missing = want & (w == 0)
        if missing.any():
            senders = [p for p in range(data.commset.nprocs)
                       if m[p, q] and (w[data.dst_index(p, q)] == 0).any()]
            out.append(f"node {q}: {int(missing.sum())} elements never arrived "
                       f"(blocks from {senders})")
        if (w > 1).any() or (~want & (w > 0)).any():
            out.append(f"node {q}: {int(((w > 1) | (~want & (w > 0))).sum())} elements "
                       "arrived more than once or where none were due")
        ok = want & (w == 1)
        if not np.array_equal(got[ok], ref[ok]):
            out.append(f"node {q}: delivered values differ from the reference result")
    return out


def correct_where_they_land(data: AssignmentData) -> bool:
    """The common case of a large plain statement whose every block was moved in bulk, once,
    and whose every element is due (AssignmentData.write_delivered not called yet): each node's
    blocks are compared where they land, the source elements they write
    (DirectMoves.values, a view of the source where the reads are runs) against the node's
    reference, every byte, without copying them into the destination's array first: the
    copy would only be compared and dropped (torus:16x16 at 16 KB: 1 GB of fresh pages
    written and read once more). With every due block delivered once and the statement's
    exact cover, every element is written once, with those values. False says nothing: the
    blocks are then written and the node-by-node check finds what is wrong. A small
    statement is checked by all_correct (one gather over every node).
    Where the values the blocks write are the reference result's very bytes (`same_memory`:
    `B = A` reads the source in place on both sides) no value is read, and the source's
    payload, deferred by AssignmentData.build, is never written (1 GB at torus:16x16 and
    16 KB); otherwise it is written (`drawn`) before the comparison."""
    facts, direct, source = data.facts, data.direct, data.source
    if facts is None or direct is None or source is None or data.delivered is None or \
            facts.initial is not None or not facts.all_due or facts.flat_reads(source) is not None:
        return False
    if not ((data.delivered == facts.due_blocks).all() and (data.block_count == facts.due_blocks).all()
            and covers_exactly(data)):
        return False
    whole = direct.whole_values(source)
    if whole is not None and data.result is not None and same_memory(whole, data.result):
        data.delivered = None  # (every block landed where the reference reads it: no value needed)
        return True
    data.drawn()
    if whole is None or data.result is None or not same_values(whole, data.result):
        for q in np.flatnonzero(facts.receivers).tolist():  # (node by node where the whole is not)
            if not same_values(direct.values(source, q, facts.node_shapes[q]), data.reference[q]):
                return False
    data.delivered = None  # (checked: nothing is left to write)
    return True


def all_correct(data: AssignmentData) -> bool:
    """The common case of a small statement whose every element is due, checked in three array
    operations over every node at once: each element written once, each equal to its
    reference. False says nothing: the node-by-node check then finds what is wrong."""
    facts = data.facts
    if facts is None or data.result is None or not facts.all_due \
            or data.result.size > FLAT_CHECK_ELEMENTS:  # (no whole-buffer temporaries for big ones)
        return False
    if not ((data.block_count == facts.due_blocks).all() and covers_exactly(data)):
        return False
    reference = facts.reference_flat(data.result)
    return reference is not None and bool((data.dst_flat == reference).all())


def covers_exactly(data: AssignmentData) -> bool:
    """StatementFacts.exact_cover, worked out the first time: dim by dim for a plain statement
    with no element written before the blocks come (DirectMoves.writes_exactly, for the whole
    array at once where it can: writes_exactly_everywhere), else node by node with each node's
    temporary counts only."""
    facts = data.facts
    assert facts is not None, "AssignmentData.build gives every assignment its facts"
    if facts.exact_cover is None:
        if data.direct is not None and facts.initial is None:
            direct = data.direct
            # (where the statement writes the due indices of every dim, it does at every node)
            everywhere = direct.writes_exactly_everywhere(facts.due_masks)
            facts.exact_cover = all(
                (everywhere or direct.writes_exactly(q, shape, due)) if facts.receivers[q] else
                not all(m.any() for m in due)
                for q, (shape, due) in enumerate(zip(facts.node_shapes, facts.due_dims)))
        else:
            due = facts.due_blocks.astype(np.uint8)
            facts.exact_cover = all(bool((element_writes(data, q, due[:, q]) == want).all())
                                    for q, want in enumerate(data.expected))
    return facts.exact_cover


def element_writes(data: AssignmentData, q: int, came: np.ndarray) -> np.ndarray:
    """Node q's per-element write counts (`came[origin]`: times each block reached it; a
    reduction's are kept as they happen): the initial counts, plus each block's count on
    its elements (a plain statement's as runtime/direct_moves.py writes them, others at
    the block's index). Made for the check where something is wrong, and once per
    statement for covers_exactly where the geometry is not known dim by dim."""
    if data.stmt.reduces:
        return data.writes[q]
    facts = data.facts
    assert facts is not None, "AssignmentData.build gives every assignment its facts"
    shape = data.dst_local[q].shape
    w = np.zeros(shape, np.uint8) if facts.initial is None else facts.initial[q].astype(np.uint8)
    if not came.any():
        return w
    if data.direct is not None:
        inside, origin = data.direct.elements(q, shape, every_block=bool(
            (came == facts.due_blocks[:, q]).all()))
        w += inside if origin is None else np.where(inside, came[origin], 0).astype(np.uint8)
        return w
    for p in np.flatnonzero(came).tolist():
        w[data.dst_index(p, q)] += came[p]
    return w


def reduction_problems(data: AssignmentData) -> list[str]:
    """A reduction's check: each node's partials from every contributor once, every due element
    combined, the combined values the reference's."""
    out = []
    m = data.commset.byte_matrix
    for q, (w, got, ref, want) in enumerate(zip(data.writes, data.dst_local, data.reference,
                                                data.expected)):
        got_from = {p: c for (p, final), c in data.arrived.items() if final == q}
        due = {p for p in range(data.commset.nprocs) if m[p, q] > 0}
        if set(got_from) != due or any(c != 1 for c in got_from.values()):
            out.append(f"node {q}: partial results from {sorted(got_from)} (counts "
                       f"{sorted(got_from.values())}), expected each of {sorted(due)} once")
        if (want & (w == 0)).any() or (~want & (w > 0)).any():
            out.append(f"node {q}: {int((want & (w == 0)).sum())} elements got no partial "
                       f"result, {int((~want & (w > 0)).sum())} got one where none was due")
        exact = np.issubdtype(ref.dtype, np.integer)
        if not (np.array_equal(got[want], ref[want]) if exact else
                np.allclose(got[want], ref[want], rtol=1e-5)):
            out.append(f"node {q}: combined {data.stmt.op} differs from the reference")
    return out
