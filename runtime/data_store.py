"""Where a run's blocks are: at their senders, in flight, forwarded, assembled from pieces."""

from __future__ import annotations

import bisect

import numpy as np

from phalanx.compiler.schedule import WHOLE, Transfer


class ScheduleError(Exception):
    """The schedule moves data it cannot: a block its sender does not hold, a wrong size."""


def _bytes(block: np.ndarray) -> np.ndarray:
    """A block's bytes, flat (a view where the block is contiguous)."""
    return np.ascontiguousarray(block).reshape(-1).view(np.uint8)


def check_size(t: Transfer, block: np.ndarray) -> None:
    if block.nbytes != t.nbytes:
        raise ScheduleError(f"transfer {t.src}->{t.dst} of {t.block_name} says "
                            f"{t.nbytes} bytes but the block has {block.nbytes}")


class MovesOneByOne:
    """For data whose blocks always travel as payloads, one transfer at a time: reduction
    partials (combined where they meet) and synthetic byte blocks (their bytes are the check).
    The CollectiveData methods of the direct and bulk paths (runtime/data.py) for them."""

    def movable(self, t: Transfer) -> bool:
        return False

    def move_direct(self, t: Transfer) -> bool:
        return False

    def can_move_in_bulk(self, transfers: np.ndarray) -> bool:
        return False

    def move_in_bulk(self, transfers: np.ndarray) -> None:
        raise AssertionError(f"{type(self).__name__} moves its blocks one by one (can_move_in_bulk)")


class PieceSpans:
    """Which bytes came of the blocks arriving in pieces: per block (origin, final) the bytes
    [0, prefix) from its start, and in `later` the disjoint spans past the prefix that do not
    touch it, in order (pieces that came out of order). Pieces arriving in order keep no
    Python record: a 32x32 multiphase in three pieces has every block of the exchange
    arriving at once (a record and a span list per block held 1M of them)."""

    def __init__(self, nprocs: int):
        self.nprocs = nprocs
        self.prefix: np.ndarray | None = None  # made with the first piece that arrives
        self.later: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def add(self, origin: int, final: int, start: int, stop: int, block_nbytes: int,
            label: str) -> bool:
        """Count bytes [start, stop) of the block (a piece named `label`); True once every
        byte came, each once (the block then starts over: coming whole again counts twice).
        ScheduleError, nothing counted, where they overlap bytes that came or lie past the
        block."""
        key = (origin, final)
        if self.prefix is None:
            self.prefix = np.zeros((self.nprocs, self.nprocs), np.int64)
        prefix, spans = int(self.prefix[origin, final]), self.later.get(key, [])
        at = bisect.bisect_left(spans, (start, stop))  # the spans before end by start, the next
        overlaps = stop > start and (start < prefix or (at > 0 and spans[at - 1][1] > start) or
                                     (at < len(spans) and spans[at][0] < stop))
        if stop > block_nbytes or overlaps:
            raise ScheduleError(f"{label} overlaps bytes that already arrived or lies past the "
                                f"block's {block_nbytes} bytes")
        if stop > start:
            if start == prefix:  # the prefix grows, over the later spans it now reaches
                prefix = stop
                while spans and spans[0][0] == prefix:
                    prefix = spans.pop(0)[1]
            else:
                spans.insert(at, (start, stop))
            if spans:
                self.later[key] = spans
            else:
                self.later.pop(key, None)
        if prefix < block_nbytes:
            self.prefix[origin, final] = prefix
            return False
        self.prefix[origin, final] = 0
        return True

    def under_way(self) -> list[tuple[int, int]]:
        """The blocks (origin, final) some of whose bytes came, not all."""
        started = set(self.later)
        if self.prefix is not None:
            started |= {(o, f) for o, f in np.argwhere(self.prefix > 0).tolist()}
        return sorted(started)


class BlockStore:
    """Which node holds which block: blocks start at their senders and move with transfers.

    Blocks of equal content (a broadcast's blocks for every receiver, an allgather's
    copies of one part) form a class: a node that holds or has received one of them may
    send any other of the class, which is how tree algorithms copy and forward. Each
    block still has to reach its own destination exactly once.

    A transfer may carry a piece of a block (Transfer.offset): its origin
    sends it from its source, a node with a copy of the block's content or of that piece
    forwards it, and the destination assembles the block from its pieces, each byte once.
    Without classes a block's packed copy at its origin goes once every byte of it has been
    cut into pieces (a block packed as a view of the source is packed again per piece, not
    kept), a piece forwarded leaves the node that forwards it (as a whole block
    does: it is the one copy that moves), and its destination keeps no piece (it has nothing
    to forward).
    """

    def __init__(self, nprocs: int, blocks: list[tuple[int, int]] | np.ndarray | None, content=None,
                 fresh: np.ndarray | None = None, source: np.ndarray | None = None):
        """`blocks`: (origin, final) of every block, as pairs or an (n, 2) array, or None where
        `fresh` is given: the (nprocs, nprocs) matrix they make (StatementFacts.due_blocks),
        copied (a list of the 16.8M blocks of ideal:4096 would be 268 MB made for nothing).
        `source`: the array the blocks are packed from, where a packed block may be a view of
        it (then it is packed again for each of its pieces, not kept: take_piece)."""
        self.nprocs = nprocs
        self.source = source
        self.pieces: list[dict[tuple, np.ndarray]] = [{} for _ in range(nprocs)]
        # which bytes came of the blocks arriving in pieces: a block is whole when they tile
        # it, each byte once; and (origin, final) -> the bytes so far of a block assembled here
        # rather than in place (arrive_piece)
        self.spans = PieceSpans(nprocs)
        self.assembling: dict[tuple[int, int], np.ndarray] = {}
        self.held: list[dict[tuple[int, int], np.ndarray]] = [{} for _ in range(nprocs)]  # received
        self.copies: list[dict[object, np.ndarray]] = [{} for _ in range(nprocs)]
        # Without classes, bytes cut into pieces so far from each block packed (copied) at its
        # origin
        self.cut: dict[object, int] = {}
        # Without classes a block's only copy is the one that moves: keeping delivered
        # payloads would just hold every byte of the exchange in memory twice.
        self.shared = content is not None
        self.content = content or (lambda origin, final: (origin, final))
        # fresh[origin, final]: the block is still in its source, never sent (packed on send)
        if fresh is not None:
            self.fresh = fresh.copy()
            return
        assert blocks is not None, "BlockStore needs its blocks, as pairs or as the `fresh` matrix"
        self.fresh = np.zeros((nprocs, nprocs), bool)
        pairs = np.asarray(blocks, np.int64).reshape(-1, 2)
        self.fresh[pairs[:, 0], pairs[:, 1]] = True

    def take(self, t: Transfer, pack) -> np.ndarray:
        if t.offset != WHOLE:
            return self.take_piece(t, pack)
        key = (t.origin, t.final)
        fresh = self.unsent(t)  # never sent yet
        payload: np.ndarray | None
        if key in self.held[t.src]:
            payload = self.held[t.src].pop(key)
        elif fresh and t.src == t.origin:
            self.fresh[key] = False
            payload = None
        elif fresh and self.content(*key) in self.copies[t.src]:
            self.fresh[key] = False  # sent from a copy: the source's block is spent
            payload = self.copies[t.src][self.content(*key)]
        else:
            raise ScheduleError(f"node {t.src} sends block {t.origin}->{t.final}, which it "
                                "does not hold (never had it, or already sent it on)")
        if payload is None:
            payload = pack(t.origin, t.final)
        check_size(t, payload)
        return payload

    def take_piece(self, t: Transfer, pack) -> np.ndarray:
        """The bytes of a piece, from the origin's source, a copy of the content or of the piece."""
        origin, offset, label = t.origin, t.offset, t.block_name
        if not 0 <= origin < self.nprocs or offset < 0:
            raise ScheduleError(f"transfer {t.src}->{t.dst} names {label}, outside blocks "
                                f"0..{self.nprocs - 1} and their bytes")
        content = self.content(origin, t.final)
        whole = self.copies[t.src].get(content)
        viewed = False  # packed as a view of the source: nothing to keep
        if whole is None and t.src == origin:  # packed once, then every piece is cut from it
            whole = pack(origin, t.final)
            viewed = not self.shared and self.source is not None and \
                np.may_share_memory(whole, self.source)
            if not viewed:
                self.copies[origin][content] = whole
        if whole is not None:
            flat = _bytes(whole)
            if offset + t.nbytes > flat.size:
                raise ScheduleError(f"transfer {t.src}->{t.dst} sends {label}, past the "
                                    f"block's {flat.size} bytes")
            if not self.shared and t.src == origin and not viewed:
                # its only copy: dropped once every byte was cut
                cut = self.cut[content] = self.cut.get(content, 0) + t.nbytes
                if cut >= flat.size:
                    del self.copies[origin][content], self.cut[content]
            return flat[offset:offset + t.nbytes]
        # without classes a forwarded piece is the one copy that moves on (as a whole block's)
        held, key = self.pieces[t.src], (content, offset, t.nbytes)
        piece = held.get(key) if self.shared else held.pop(key, None)
        if piece is None:
            raise ScheduleError(f"node {t.src} sends {label}, which it does not hold")
        return piece

    def arrive_piece(self, t: Transfer, payload: np.ndarray, block_nbytes: int,
                     into: np.ndarray | None = None) -> np.ndarray | None:
        """Keep a piece where it arrives (to forward it); at its destination add it to the
        block, which is returned (as bytes) once every byte has come, each exactly once.
        `into`: the block's bytes where it lands (the destination's array), written piece by
        piece; else the block is assembled in a buffer of its own."""
        origin, offset = t.origin, t.offset
        if t.dst != t.final or self.shared:  # (a block's own destination forwards it only as a copy)
            self.pieces[t.dst][(self.content(origin, t.final), offset, t.nbytes)] = payload
        if t.dst != t.final:
            return None
        key = (origin, t.final)
        whole = self.spans.add(origin, t.final, offset, offset + t.nbytes, block_nbytes,
                               t.block_name)
        buffer = into
        if buffer is None:
            buffer = self.assembling.get(key)
            if buffer is None:
                buffer = self.assembling[key] = np.zeros(block_nbytes, np.uint8)
        buffer[offset:offset + t.nbytes] = payload
        if not whole:
            return None
        self.assembling.pop(key, None)
        return buffer

    def unsent(self, t: Transfer) -> bool:
        """The block is still at its origin, never sent (not even to the origin itself)."""
        n = self.nprocs
        return 0 <= t.origin < n and 0 <= t.final < n and bool(self.fresh[t.origin, t.final])

    def spend(self, t: Transfer) -> None:
        """An unsent block leaves its origin straight for its destination (no payload kept)."""
        self.fresh[t.origin, t.final] = False

    def keep(self, t: Transfer, payload: np.ndarray) -> None:
        self.held[t.dst][(t.origin, t.final)] = payload
        if self.shared:
            self.copies[t.dst][self.content(t.origin, t.final)] = payload

    def delivered(self, t: Transfer, payload: np.ndarray) -> None:
        """A block reached its destination, which keeps a copy it may forward."""
        if self.shared:
            self.copies[t.dst][self.content(t.origin, t.final)] = payload
