"""How close the ideal target's `direct` prediction (IdealTarget.direct_time_s) comes to its
simulator on random byte matrices; writes bench/results_ideal_direct.json (docs/targets.md,
"Prediction of `direct`").

The prediction follows the simulator's port model message by message but serves requests
that reach one receive port at the same instant in (phase, sender) order, where the
simulator serves them in the order of its events. Statements (shifts, permutations, sparse
patterns) are checked exactly by tests/targets/test_ideal_direct.py; this measures what that
one difference costs on seeded random patterns: on ideal:16 (partners r XOR s) and ideal:13
(r + s mod P), blocks of one size and of random sizes, densities 5% to 100%.

Usage: python bench/ideal_direct.py [--patterns 60] [--out bench/results_ideal_direct.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import phalanx
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import Collective
from phalanx.compiler.target import resolve
from phalanx.runtime.timing import simulated_time_s

phalanx.register_all()

HERE = Path(__file__).resolve().parent
DENSITIES = (0.05, 0.2, 0.5, 1.0)


def measure(spec: str, equal_blocks: bool, patterns: int, rng: np.random.Generator) -> dict:
    machine = resolve(spec)
    n = machine.nnodes
    ratios = []
    while len(ratios) < patterns:
        density = rng.choice(DENSITIES)
        m = rng.integers(1, 5000, (n, n)) * (rng.random((n, n)) < density)
        if equal_blocks:
            m = (m > 0) * 1000
        if not (m - np.diag(np.diag(m))).any():
            continue  # nothing crosses the network
        coll = Collective(0, Kind.SPARSE, n, tuple(map(tuple, m.tolist())), "A", "B", 1)
        ratios.append(machine.predict_time_s(coll, "direct") / simulated_time_s(machine, coll, "direct"))
    r = np.array(ratios)
    return {"target": spec, "blocks": "equal" if equal_blocks else "random sizes",
            "patterns": patterns, "exact": int((abs(r - 1) < 1e-9).sum()),
            "min_ratio": float(r.min()), "max_ratio": float(r.max())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patterns", type=int, default=60, help="per target and block kind")
    ap.add_argument("--out", default=str(HERE / "results_ideal_direct.json"))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(11)
    rows = [measure(spec, equal, args.patterns, rng)
            for spec in ("ideal:16", "ideal:13") for equal in (True, False)]
    for row in rows:
        print(f"{row['target']:<9} {row['blocks']:<13} {row['exact']}/{row['patterns']} exact, "
              f"predicted / simulated {row['min_ratio']:.3f} .. {row['max_ratio']:.3f}")
    Path(args.out).write_text(json.dumps({"seed": 11, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
