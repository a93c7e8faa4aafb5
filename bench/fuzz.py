"""`make fuzz`: 20,000 generated and mutated programs through both parsers, the compiler and the
simulator (tests/reliability/fuzz_programs.py). Writes bench/results-fuzz.json with the outcome
counts, parser disagreements, throughput and every distinct bug with a program that shows it.

    .venv/bin/python bench/fuzz.py [--cases 20000] [--seed 0] [--out bench/results-fuzz.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

from fuzz_programs import grammar_program, mutate, run_case  # noqa: E402


def fuzz(cases: int, seed: int) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="phalanx-fuzz-"))
    outcomes: Counter[str] = Counter()
    by_mode: dict[str, Counter[str]] = {"grammar": Counter(), "mutated": Counter()}
    bugs: dict[str, dict] = {}
    disagreements: list[str] = []
    slowest = (0.0, "")
    start = time.monotonic()
    for i in range(cases):
        rng = random.Random(seed * 1_000_003 + i)
        mode = "grammar" if i % 2 == 0 else "mutated"
        program = grammar_program(rng)
        source = program if mode == "grammar" else mutate(rng, program)
        t0 = time.monotonic()
        outcome = run_case(source, workdir)
        took = time.monotonic() - t0
        slowest = max(slowest, (took, repr(source)[:400]))
        outcomes[outcome.kind] += 1
        by_mode[mode][outcome.kind] += 1
        if not outcome.parsers_agree and len(disagreements) < 20:
            disagreements.append(repr(source)[:400])
        if outcome.kind == "bug":
            key = outcome.detail.split("\n")[0][:120]
            entry = bugs.setdefault(key, {"count": 0, "case": i, "program": repr(source)[:800]})
            entry["count"] += 1
    elapsed = time.monotonic() - start
    return {"cases": cases, "seed": seed, "seconds": round(elapsed, 1),
            "cases_per_s": round(cases / elapsed, 1), "outcomes": dict(outcomes),
            "by_mode": {k: dict(v) for k, v in by_mode.items()},
            "parser_disagreements": len(disagreements), "disagreement_examples": disagreements,
            "slowest_case_s": round(slowest[0], 3), "slowest_case": slowest[1],
            "bugs": bugs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).with_name("results-fuzz.json")))
    args = parser.parse_args()
    results = fuzz(args.cases, args.seed)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"{results['cases']} cases in {results['seconds']} s: {results['outcomes']}, "
          f"{results['parser_disagreements']} parser disagreements, {len(results['bugs'])} "
          f"distinct bugs; written to {args.out}")
    for key, bug in results["bugs"].items():
        print(f"  bug x{bug['count']}: {key}")
    return 1 if results["bugs"] else 0


if __name__ == "__main__":
    sys.exit(main())
