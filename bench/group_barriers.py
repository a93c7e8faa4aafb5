"""Barriers of a collective in groups: each group's own against the whole machine's.

examples/fft3d_pencil.phx's two transposes are `alltoall in 8 groups of 8`. On Bokhari's
machines (seed 003) each exchange of the hypercube family starts its phases with a barrier
(Table 1: a d - b us on 2^d nodes). A collective in groups synchronises each group on its own
(compiler/groups.py scopes the merged barrier phases, Phase.barrier_groups), at the barrier
of the group's size; before, every merged barrier waited for the whole machine at the whole
machine's barrier. This runs the program on paragon:8x8, sp2:64, cs2:64 and hypercube:6 with
every exchange of the family (standard, direct, multiphase:1,2; multiphase:2,1 is the same
schedule) and with `auto` (which takes sparse:direct, no barriers), on the built-in
simulator with verified data, both ways: as compiled (per-group barriers) and with the same
schedules' barriers spanning the machine (what the merge made before). Simulated ms.

Writes bench/results_group_barriers.json; docs/targets.md quotes it.
Run: .venv/bin/python bench/group_barriers.py
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import phalanx
from phalanx.compiler.driver import Compiled, compile_program
from phalanx.compiler.schedule import PipelineStep, Schedule
from phalanx.runtime.simulate import simulate

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "fft3d_pencil.phx"
TARGETS = ("paragon:8x8", "sp2:64", "cs2:64", "hypercube:6")
ALGORITHMS = ("standard", "direct", "multiphase:1,2", "auto")


def whole_machine(compiled: Compiled) -> Compiled:
    """The same plan with every barrier spanning the machine (barrier_groups dropped)."""
    def widen(step):
        assert not isinstance(step, PipelineStep)  # the pencil FFT has none
        if not isinstance(step, Schedule):
            return step
        return dataclasses.replace(step, phases=tuple(dataclasses.replace(p, barrier_groups=())
                                                      for p in step.phases))
    plan = dataclasses.replace(compiled.plan, steps=tuple(widen(s) for s in compiled.plan.steps))
    return dataclasses.replace(compiled, plan=plan)


def measure(compiled: Compiled) -> dict:
    result = simulate(compiled, 0)
    assert result.verified
    return {"total_ms": result.total_time_s * 1e3,
            "transposes_ms": [c.time_s * 1e3 for c in result.collectives]}


def main() -> None:
    phalanx.register_all()
    rows = []
    for spec in TARGETS:
        for algorithm in ALGORITHMS:
            compiled = compile_program(PROGRAM, target=spec, algorithm=f"alltoall={algorithm}")
            row = {"target": spec, "algorithm": algorithm,
                   "chosen": [s.algorithm for s in compiled.schedules],
                   "per_group": measure(compiled), "whole_machine": measure(whole_machine(compiled))}
            rows.append(row)
            print(f"{spec:12} {algorithm:15} per-group {row['per_group']['total_ms']:8.4f} ms "
                  f"{[round(t, 4) for t in row['per_group']['transposes_ms']]}  whole-machine "
                  f"{row['whole_machine']['total_ms']:8.4f} ms "
                  f"{[round(t, 4) for t in row['whole_machine']['transposes_ms']]}", flush=True)
    out = ROOT / "bench" / "results_group_barriers.json"
    out.write_text(json.dumps({"program": "examples/fft3d_pencil.phx", "seed": 0, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
