"""A reduction's payloads: one partial result per contributor, combined at the receiver."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from phalanx.compiler.commsets import ReduceSet
from phalanx.compiler.distribution import owned_indices
from phalanx.compiler.schedule import WHOLE, Transfer
from phalanx.compiler.semantics import Op, ReduceStmt
from phalanx.runtime.data_store import BlockStore, MovesOneByOne, ScheduleError
from phalanx.runtime.data_values import REDUCE_FUNCTIONS, random_global
from phalanx.runtime.plan_columns import ScheduleColumns


@dataclass
class ReductionData(MovesOneByOne):
    """Partial results of a reduction: one per contributor, combined at each receiver."""

    stmt: ReduceStmt
    partials: dict[int, np.ndarray]
    received: list[dict[int, int]]
    values: list[dict[int, np.ndarray]]
    reference: np.ndarray
    rset: ReduceSet
    store: BlockStore = field(repr=False)

    @classmethod
    def build(cls, stmt: ReduceStmt, rng: np.random.Generator) -> ReductionData:
        rset = ReduceSet(stmt)
        a = random_global(stmt.src, rng, near_one=stmt.op is Op.PROD)
        combine = REDUCE_FUNCTIONS[stmt.op]
        partials = {}
        for p in range(rset.nprocs):
            mine = a[np.ix_(*owned_indices(stmt.src, p))]
            if mine.size:
                partials[p] = np.asarray(combine(mine), dtype=a.dtype).reshape(1)
        m = rset.byte_matrix
        blocks = [(p, q) for p in range(rset.nprocs) for q in range(rset.nprocs) if m[p, q] > 0]
        n = rset.nprocs
        return cls(stmt, partials, [{} for _ in range(n)], [{} for _ in range(n)],
                   np.asarray(combine(a), dtype=a.dtype), rset,
                   BlockStore(n, blocks, lambda o, f: (o, "partial")))

    def take(self, t: Transfer) -> np.ndarray:
        if t.offset != WHOLE:
            raise ScheduleError(f"transfer {t.src}->{t.dst} sends a piece of a partial result "
                                f"({t.block_name}); a partial is one element and moves whole")
        return self.store.take(t, lambda origin, final: self.partials[origin].copy())

    def message_bytes(self, cols: ScheduleColumns) -> tuple[np.ndarray, np.ndarray]:
        """wire_bytes and combine_operations below of every message of the columns at once."""
        _, finals = cols.combined_bytes()
        return self.stmt.dst.itemsize * finals, finals

    def combine_operations(self, group: tuple[Transfer, ...]) -> int:
        """The receiver merges what a message carries into its own partial: one operation per
        element, and a message carries one combined element per destination (wire_bytes)."""
        return self.wire_bytes(group) // self.stmt.dst.itemsize

    def strided_bytes(self, group: tuple[Transfer, ...]) -> tuple[int, int]:
        """A partial is one element: nothing to gather or scatter."""
        return 0, 0

    def strided_bits(self) -> None:
        """As strided_bytes: no block is strided."""
        return None

    def wire_bytes(self, group: tuple[Transfer, ...]) -> int:
        """Partials travelling together to one destination are combined on the way (the
        sender applies the reduction first): one element per destination."""
        return self.stmt.dst.itemsize * len({t.final for t in group})

    def put(self, t: Transfer, payload: np.ndarray) -> None:
        if t.dst == t.final:
            self.received[t.final][t.origin] = self.received[t.final].get(t.origin, 0) + 1
            self.values[t.final][t.origin] = payload
            self.store.delivered(t, payload)
        else:
            self.store.keep(t, payload)

    def problems(self) -> list[str]:
        out = []
        m = self.rset.byte_matrix
        combine = REDUCE_FUNCTIONS[self.stmt.op]
        for q in self.rset.receivers():
            due = {p for p in range(self.rset.nprocs) if m[p, q] > 0}
            got = self.received[q]
            if set(got) != due or any(c != 1 for c in got.values()):
                out.append(f"node {q}: partial results from {sorted(got)} (counts "
                           f"{sorted(got.values())}), expected each of {sorted(due)} once")
                continue
            # Cast like the reference: integer partials wrap in the element type (sum of bytes).
            result = np.asarray(combine(np.concatenate([self.values[q][p] for p in sorted(got)])),
                                dtype=self.reference.dtype)
            exact = np.issubdtype(self.reference.dtype, np.integer)
            if not (result == self.reference if exact else np.allclose(result, self.reference,
                                                                        rtol=1e-5)):
                out.append(f"node {q}: combined {self.stmt.op} {result} differs from the "
                           f"reference {self.reference}")
        return out
