"""Each message's turn of its network's round robin per pair (runtime/network.py PairRoundRobin:
the SP2 adapter's counter per source-destination pair), worked out from the plan's order for the
native core (runtime/native_run.py).

The Python engine reads a pair's counter when a message's process starts and advances it past
the message's packets (targets/bokhari/network.py `take_turn`). A pair's messages all start at
their sender, whose walk starts them in the plan's order: runs one after the other, a
schedule's phases in order, the node's messages of a phase in the schedule's order (the order
of runtime/plan_columns.py's messages; an eager phase lets the walk go on before its sends
end, not start them out of order; no other process of the node sends: plans with pipelines
stay on the Python engine). So a message's turn is its pair's counter
at its run's start plus the steps of the pair's earlier messages in the run, and a run's
counters are the network's plus the steps of every earlier run's messages. The counters are the
network's own: a complete run writes them back, as the Python engine leaves them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phalanx.runtime.network import PairRoundRobin


@dataclass(frozen=True)
class _Steps:
    """A schedule's sent messages and how they advance their pairs' counters."""

    sent: np.ndarray  # the messages that cross the network
    pair: np.ndarray  # each sent message's pair (src * nprocs + dst)
    modulus: np.ndarray  # each sent message's pair's modulus
    before: np.ndarray  # the steps of the pair's earlier messages in the schedule
    pairs: np.ndarray  # the schedule's pairs
    total: np.ndarray  # each pair's steps in the schedule
    pair_modulus: np.ndarray  # each pair's modulus

    @classmethod
    def of(cls, robin: PairRoundRobin, nprocs: int, src: np.ndarray, dst: np.ndarray,
           nbytes: np.ndarray) -> _Steps:
        sent = np.flatnonzero(src != dst)
        pair = src[sent].astype(np.int64) * nprocs + dst[sent]
        modulus = robin.modulus(src[sent], dst[sent])
        step = robin.steps(nbytes[sent])
        order = np.argsort(pair, kind="stable")  # by pair, each pair's messages in the schedule's order
        ordered, steps = pair[order], step[order]
        firsts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
        earlier = np.cumsum(steps) - steps  # every earlier message's steps, other pairs' too
        group = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]]) if len(order) else order
        before = np.empty(len(sent), np.int64)
        before[order] = earlier - earlier[firsts][group]
        return cls(sent, pair, modulus, before, ordered[firsts], np.add.reduceat(steps, firsts)
                   if len(firsts) else steps, modulus[order][firsts])


class RunTurns:
    """The turns of each run's messages, the runs taken in order from the network's counters."""

    def __init__(self, robin: PairRoundRobin, nprocs: int):
        self.robin, self.nprocs = robin, nprocs
        self.counters = np.zeros(nprocs * nprocs, np.int32)  # each pair's, by src * nprocs + dst
        self.touched = np.zeros(nprocs * nprocs, bool)  # the pairs whose counters the runs moved
        for (src, dst), count in robin.counters.items():
            self.counters[src * nprocs + dst] = count
        self.steps: dict[int, _Steps] = {}  # by collective
        self.runs = 0  # the runs whose turns were taken

    def take(self, run: int, collective: int, src: np.ndarray, dst: np.ndarray,
             nbytes: np.ndarray) -> np.ndarray:
        """Run `run`'s turn of each message (its schedule's ends and wire bytes; 0 for a local
        copy); its pairs' counters then advance past its messages. Runs come in order."""
        if run != self.runs:
            raise AssertionError(f"round-robin turns taken for run {run} after {self.runs} runs")
        if collective not in self.steps:
            self.steps[collective] = _Steps.of(self.robin, self.nprocs, src, dst, nbytes)
        steps = self.steps[collective]
        turn = np.zeros(len(src), np.int64)
        turn[steps.sent] = (self.counters[steps.pair] + steps.before) % steps.modulus
        self.counters[steps.pairs] = (self.counters[steps.pairs] + steps.total) % steps.pair_modulus
        self.touched[steps.pairs[steps.pair_modulus > 1]] = True  # a pair of one route keeps none
        self.runs += 1
        return turn

    def write_back(self) -> None:
        """The counters after every run taken, into the network's (what the Python engine's
        run leaves there)."""
        for pair in np.flatnonzero(self.touched).tolist():
            self.robin.counters[divmod(pair, self.nprocs)] = int(self.counters[pair])
