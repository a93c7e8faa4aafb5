"""Preconditions of the library's algorithms: each returns None or why the algorithm cannot run."""

from __future__ import annotations

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.members import GROUP, contributors, group_order, receivers, senders
from phalanx.compiler.library.registry import Machine
from phalanx.compiler.recognize import Collective


def complete_group(coll: Collective, machine: Machine) -> str | None:
    """Allgather and allreduce: every contributor's data goes to every other member."""
    if coll.kind not in GROUP:
        return None
    m, members = coll.byte_matrix, group_order(coll)
    need = set(receivers(coll)) | {q for q in members if m[q][q]}
    for p in contributors(coll):
        missing = [q for q in need if q != p and not m[p][q]]
        if missing:
            return (f"node {p}'s data does not go to every member (not to node {missing[0]}): "
                    "the pattern is not a complete all-gather")
    return None


def every_member_receives(coll: Collective, machine: Machine) -> str | None:
    """Forwarding algorithms pass parts on through members, which must receive to hold them."""
    if coll.kind not in GROUP:
        return None
    idle = sorted(set(senders(coll)) - set(receivers(coll)))
    if idle:
        return (f"node {idle[0]} contributes but receives nothing, so it cannot pass others' "
                "parts on")
    return None


def uniform_parts(coll: Collective, machine: Machine) -> str | None:
    """Forwarding a copy needs one size per origin (an allgather's part is the same for all)."""
    m, n = coll.byte_matrix, coll.nprocs
    for p in range(n):
        sizes = {m[p][q] for q in range(n) if m[p][q] and q != p}
        if len(sizes) > 1:
            return f"node {p} sends blocks of different sizes {sorted(sizes)[:3]}"
    return None


def one_sender_or_receiver(coll: Collective, machine: Machine) -> str | None:
    if coll.kind in (Kind.BROADCAST, Kind.SCATTER) and len(senders(coll)) > 1:
        return f"the {coll.kind} has {len(senders(coll))} senders, not one root"
    if coll.kind in (Kind.GATHER, Kind.REDUCE) and len(receivers(coll)) > 1:
        return f"the {coll.kind} has {len(receivers(coll))} receivers, not one root"
    return None


def splittable(coll: Collective, machine: Machine) -> str | None:
    """Segmenting algorithms split the block into one piece per member (at least one byte each)."""
    members = len(set(senders(coll)) | set(receivers(coll)))
    block = coll.block_bytes
    if block is None:
        return "the blocks are not all of one size"
    if block < members:
        return f"the {block}-byte block is smaller than its {members} pieces (one per member)"
    return None


def _cut_into(coll: Collective, least: int, noun: str, too_small: str) -> str | None:
    """None when every `noun` is of one size of at least `least` bytes, else the reason
    (`too_small` formatted with the block's bytes)."""
    block = coll.block_bytes
    if block is None:
        return f"the {noun}s are not all of one size"
    return too_small.format(block=block) if block < least else None


def halvable(coll: Collective, machine: Machine) -> str | None:
    """Split-binary trees send each half of the block down one subtree."""
    return _cut_into(coll, 2, "block", "the {block}-byte block cannot be cut in two halves")


def quarters(coll: Collective, machine: Machine) -> str | None:
    """Spiral chains send a quarter of the block down each of four paths (grid.py)."""
    return _cut_into(coll, 4, "block", "the {block}-byte block cannot be cut in four quarters")


def eight_pieces(coll: Collective, machine: Machine) -> str | None:
    """Bidirectional rings cut each part in 8 pieces (rings.py)."""
    return _cut_into(coll, 8, "part", "the {block}-byte part is smaller than its 8 pieces")


def whole_grid(coll: Collective, machine: Machine) -> str | None:
    """A torus or mesh, the collective on all its nodes (node ids are then grid places)."""
    if machine.grid is None:
        return "the machine is not a torus or mesh"
    if coll.nprocs != machine.nnodes:
        rows, cols = machine.grid
        return (f"it needs all {machine.nnodes} nodes of the {rows}x{cols} grid, but the "
                f"collective has {coll.nprocs} processors")
    return None


def on_grid(coll: Collective, machine: Machine) -> str | None:
    """Dimension-ordered algorithms run on a torus or mesh with every node taking part."""
    if (why := whole_grid(coll, machine)) is not None:
        return why
    members = set(senders(coll)) | set(receivers(coll))
    if len(members) != machine.nnodes:
        return f"it needs every node of the grid to take part, but {len(members)} do"
    return None


def power_of_two_members(coll: Collective, machine: Machine) -> str | None:
    """Recursive halving pairs members v and v XOR 2^k."""
    members = len(set(senders(coll)) | set(receivers(coll)))
    if members & (members - 1):
        return f"it needs a power of two of members, but {members} take part"
    return None


def power_of_two_nodes(coll: Collective, machine: Machine) -> str | None:
    """Where the collective spans 2^d processors the exchange family's `direct` takes the name
    `direct` (targets/bokhari); elsewhere `direct` is the generic exchange itself."""
    if coll.nprocs & (coll.nprocs - 1):
        return (f"on {coll.nprocs} processors (not a power of two) `direct` is this schedule "
                "itself")
    return None


def partial_blocks(coll: Collective, machine: Machine) -> str | None:
    """Splitting partials needs blocks of several elements (a reduction along dimensions), at
    least one element per member, all of one size."""
    if coll.element_bytes is None:
        return "each partial is one element, which cannot be split"
    members = len(set(senders(coll)) | set(receivers(coll)))
    block = coll.block_bytes
    if block is None:
        return "the partial blocks are not all of one size"
    if block // coll.element_bytes < members:
        return (f"a partial of {block // coll.element_bytes} elements is smaller than its "
                f"{members} pieces (one per member)")
    return None


def on_dimensions(coll: Collective, machine: Machine) -> str | None:
    """Dimension-wise algorithms run on a torus, mesh or hypercube, over all of its nodes."""
    if not machine.dimensions:
        return "the machine is not a torus, mesh or hypercube"
    if coll.nprocs != machine.nnodes:
        shape = "x".join(str(d) for d in machine.grid) if machine.grid else \
            f"{len(machine.dimensions)}-dimensional hypercube's"
        return (f"it needs all {machine.nnodes} nodes of the {shape} network, but the "
                f"collective has {coll.nprocs} processors")
    return None
