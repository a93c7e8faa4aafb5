"""A reduce on one-engine nodes: the relays' start-ups in the middle of the run (docs/bounds.md,
"Relays' start-ups between the drain's windows").

The drain bound ("root drain", reducedrain.py) charges every engine its share of the counted
bytes between its two windows, `[alpha, T - alpha]`, but no start-up there. On one engine per
node (the Paragon, SP2 and CS-2: a start-up holds the engine for `alpha`, the wire both end
engines) a node's second start-up comes no sooner than `alpha` after its first, and a node that
relays must start a message after it received. Call a node's start-up *middle* if it starts in
`[alpha, T - 2 alpha]` (it then ends by `T - alpha`), *late* after that (its message delivers
only into the root q, in q's last `alpha`: at most `alpha / beta` late bytes in all), and let Z
be the contributors with no middle start-up: at most one start-up before `alpha` (its own
values only: nothing arrives before `alpha`) and late ones. n is the shortest partial.

- Where `n beta > alpha`, a node z of Z sends at least `n - L_z` of its bytes in its early
  message (`L_z` its late bytes), to q or to a node outside Z: a node u of Z holds them only
  after `alpha` and forwards them in late messages only, so `n <= L_z + L_u <= alpha / beta`,
  against `n beta > alpha`.
- Each node u outside Z (and not q) takes what Z's nodes send it, sends its own n bytes and
  runs a middle start-up on its engine after `alpha`, by T; q takes what it is sent after
  `alpha`:  `|Z| n - alpha / beta <= (T - alpha) / beta + (P - 1 - |Z|) ((T - 2 alpha) / beta - n)`.
- In `[alpha, T - alpha]` the P engines carry the counted bytes twice, but for at most
  `alpha / beta` in the last window, and each of the `P - 1 - |Z|` others' middle start-ups:
  `P (T - 2 alpha) >= 2 beta sum(partials) - 2 alpha + (P - 1 - |Z|) alpha`.

The bound is the least T for which some whole |Z| meets both (bisection: both grow easier with T;
the first's largest |Z|, `(T / beta + (P - 1)(m - n)) / m` with `m = (T - 2 alpha) / beta`, grows
with T where `(P - 1) n beta > 2 alpha`, so from three nodes).
"""

from __future__ import annotations

import math

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import PortModel
from phalanx.compiler.recognize import Collective

BISECTIONS = 60


def relay_startups_bound_s(coll: Collective, port: PortModel) -> float:
    """The least T at which a whole number of start-up-free contributors meets both lines of the
    module docstring. 0 unless a reduce of every other node's partial into one root, on one
    engine per node whose start-up holds it throughout, with partials longer than a start-up."""
    if coll.kind is not Kind.REDUCE or not port.shared_engine or port.streams != 1 or port.port_of \
            or port.latency_s > 0 or port.startup_s <= 0:
        return 0.0
    m = coll.network_matrix
    roots = np.flatnonzero(m.any(axis=0))
    if len(roots) != 1:
        return 0.0
    into_root = np.delete(m[:, roots[0]], roots[0]).astype(float)
    nodes = coll.nprocs
    if nodes < 3 or len(into_root) != nodes - 1 or into_root.min() <= 0:
        return 0.0  # (P - 1) n beta > 2 alpha keeps the most start-up-free nodes growing with T
    alpha, beta = port.startup_s, port.s_per_byte
    partial = float(into_root.min())
    if partial * beta <= alpha:
        return 0.0
    counted_s = 2 * beta * float(into_root.sum())

    def feasible(t_s: float) -> bool:
        middle = (t_s - 2 * alpha) / beta  # bytes an engine can stream in the middle window
        if middle <= 0:
            return False
        fewest = (nodes - 1) - (nodes * (t_s - 2 * alpha) - counted_s + 2 * alpha) / alpha
        most = (t_s / beta + (nodes - 1) * (middle - partial)) / middle
        return max(0, math.ceil(fewest - 1e-12)) <= min(nodes - 1, math.floor(most + 1e-12))

    low, high = 2 * alpha, 4 * alpha
    while not feasible(high):
        low, high = high, 2 * high
    for _ in range(BISECTIONS):
        middle_s = (low + high) / 2
        low, high = (middle_s, high) if not feasible(middle_s) else (low, middle_s)
    return high
