"""Compiler benchmarks (issue 3's speed goals); writes bench/results_compiler.json.

  commsets: 8192 x 8192 complex64 from (BLOCK, CYCLIC(3)) on 16x16 to (CYCLIC(5), BLOCK) on
            8x32 -- the 256 x 256 byte matrix (goal < 1 s), then the index runs of every
            (sender, receiver) section, and recognition of the collective;
  compile:  a 1,000-statement program, source to verified schedules on ideal:16 (goal < 2 s).
Times are the best of `--repeat` runs (default 3) in fresh objects, so caches of one run do
not help the next.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import phalanx
from phalanx.compiler.commsets import CommSet
from phalanx.compiler.driver import compile_program
from phalanx.compiler.ir.transforms.recognize_collectives import recognize_statement
from phalanx.compiler.semantics import check
from phalanx.grammar.frontend import parse_source

phalanx.register_all()

COMMSET_PROGRAM = """target ideal:256
processors P(16, 16)
processors Q(8, 32)
array A(8192, 8192) of complex64 distribute (BLOCK, CYCLIC(3)) onto P
array B(8192, 8192) of complex64 distribute (CYCLIC(5), BLOCK) onto Q
B = A
"""

# Declarations of the 1,000-statement program, then statement forms it cycles through.
BIG_HEADER = """target ideal:16
processors P(16)
processors Q(4, 4)
array A(256, 256) of float64 distribute (BLOCK, *) onto P
array B(256, 256) of float64 distribute (*, BLOCK) onto P
array C(256, 256) of float64 distribute (BLOCK, CYCLIC(4)) onto Q
array D(4096) of float32 distribute CYCLIC(3) onto P
array E(4096) of float32 distribute BLOCK onto P
array R(4096) of float32 replicated onto P
array S(4096) of float32 on P(0)
array s(1) of float64 replicated onto P
"""
BIG_FORMS = ("B = A", "C = B", "A = transpose(B)", "E = D", "D = cshift(D, 3)", "R = S",
             "S = E", "R = E", "D = S", "s = sum(A)", 'compute "work" on P cost 10 us',
             "C = cshift(C, -1, dim=2)")


def big_program(statements: int = 1000) -> str:
    body = [BIG_FORMS[i % len(BIG_FORMS)] for i in range(statements)]
    return BIG_HEADER + "\n".join(body) + "\n"


def best_of(repeat: int, fn) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def bench_commsets(repeat: int) -> dict:
    stmt = check(parse_source(COMMSET_PROGRAM, "<bench>")).communications()[0]

    def byte_matrix():
        return CommSet(stmt).byte_matrix

    def all_runs():
        cset = CommSet(stmt)
        total_runs = 0
        for dst in cset.receivers():
            for src in cset.senders(dst):
                total_runs += sum(len(r) for r in cset.section(src, dst).runs())
        return total_runs

    matrix_s, matrix = best_of(repeat, byte_matrix)
    runs_s, total_runs = best_of(repeat, all_runs)
    recognize_s, coll = best_of(repeat, lambda: recognize_statement(0, stmt))
    pairs = int((matrix > 0).sum())
    return {"case": "8192x8192 complex64 (BLOCK, CYCLIC(3)) on 16x16 -> (CYCLIC(5), BLOCK) on 8x32",
            "nprocs": int(matrix.shape[0]), "communicating_pairs": pairs,
            "total_bytes": int(matrix.sum()), "byte_matrix_s": round(matrix_s, 4),
            "goal_s": 1.0, "meets_goal": matrix_s < 1.0,
            "all_sections_index_runs_s": round(runs_s, 4), "index_runs": total_runs,
            "recognize_s": round(recognize_s, 4), "kind": coll.kind}


def bench_compile(repeat: int, statements: int = 1000) -> dict:
    source = big_program(statements)
    compile_s, compiled = best_of(repeat, lambda: compile_program(source, file="<bench>"))
    return {"case": f"{statements}-statement program on ideal:16", "statements": statements,
            "collectives": len(compiled.collectives),
            "kinds": sorted({c.kind for c in compiled.collectives}),
            "compile_s": round(compile_s, 4), "goal_s": 2.0, "meets_goal": compile_s < 2.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).with_name("results_compiler.json")))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results = {"machine": {"python": platform.python_version(), "cpu": platform.processor(),
                           "system": platform.platform()},
               "commsets": bench_commsets(args.repeat), "compile": bench_compile(args.repeat)}
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
