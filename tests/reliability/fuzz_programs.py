"""Program generators and the harness of the fuzz tests (tests/reliability/test_fuzz_*.py, bench/fuzz.py).

Two generators, both driven by a `random.Random` (hypothesis hands the tests one it controls,
bench/fuzz.py a seeded one): `grammar_program` follows the grammar and mixes valid and wrong
declarations and statements; `mutate` damages the bytes of a program. `run_case` sends a
program through both parsers, the whole compiler and, when it compiles and is small, the
simulator: the only allowed outcomes are a result or a PhalanxError (a Diagnostic), and a
simulated run of a program that compiled must verify. Anything else is a bug.
"""

from __future__ import annotations

import random
import signal
from dataclasses import dataclass
from pathlib import Path

import phalanx
from phalanx.compiler.driver import compile_program
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.grammar.frontend import parse_source
from phalanx.grammar.parser import read_source
from phalanx.runtime.limits import estimate
from phalanx.runtime.simulate import simulate

phalanx.register_all()

NAMES = ("A", "B", "C", "D", "s", "P", "Q", "R")
TYPES = ("float64", "float32", "int32", "int64", "byte", "complex64", "complex128", "real", "float")
TARGETS = ("ideal:4", "ideal:8", "ideal:16", "ideal:3", "ideal:0", "ideal:4,alpha_us=20",
           "ideal:4,speed=1", "nosuch:4", "iwarp:8x8", "torus:2x4", "paragon:2x4", "sp2:8",
           "cs2:4", "hypercube:3", "iwarp:3x5", "ideal")
DISTS = ("BLOCK", "CYCLIC", "*", "BLOCK(4)", "CYCLIC(2)", "BLOCK(0)", "CYCLIC(3)", "BLOCKY", "BLOCK(1)")
UNITS = ("s", "ms", "us", "cycles", "hours")
FUNCS = ("transpose", "cshift", "eoshift", "spread", "sum", "max", "min", "prod", "fft")
MAX_SIM_EVENTS = 200_000  # keep one fuzz case well under a second of simulation
CASE_TIMEOUT_S = 20.0  # a case that takes longer is a hang


def _ints(rng: random.Random, count: int, low: int, high: int) -> str:
    return ", ".join(str(rng.randint(low, high)) for _ in range(count))


def _declarations(rng: random.Random) -> list[str]:
    lines = []
    if rng.random() < 0.9:
        lines.append(f"target {rng.choice(TARGETS)}")
    nprocs = rng.choice((1, 2, 3, 4, 4, 8, 8, 16))
    shape = rng.choice(((nprocs,), (nprocs,), (2, nprocs // 2 or 1), (0,), (2, 2, 2), (1, 1, 1, 1)))
    at = f" at {rng.choice((0, 1, 4, 8, 15))}" if rng.random() < 0.2 else ""
    lines.append(f"processors {rng.choice(('P', 'P', 'P', 'Q'))}({', '.join(map(str, shape))}){at}")
    for name in rng.sample(NAMES[:5], rng.randint(1, 5)):
        rank = rng.choice((1, 1, 2, 2, 2, 3))
        dims = _ints(rng, rank, 0 if rng.random() < 0.05 else 1, rng.choice((4, 8, 16, 32)))
        kind = rng.random()
        if kind < 0.7:
            dist = [rng.choice(DISTS) for _ in range(rank)]
            mapping = f"distribute ({', '.join(dist)}) onto {rng.choice('PPQ')}"
        elif kind < 0.85:
            mapping = f"replicated onto {rng.choice('PPQ')}"
        else:
            mapping = f"on P({_ints(rng, rng.randint(1, 2), 0, 3)})"
        lines.append(f"array {name}({dims}) of {rng.choice(TYPES)} {mapping}")
    return lines


def _subscripts(rng: random.Random) -> str:
    """Random subscripts, right or wrong: indices, triplets with any bounds and strides."""
    def one() -> str:
        if rng.random() < 0.3:
            return str(rng.randint(-2, 9))
        lo = str(rng.randint(-1, 9)) if rng.random() < 0.6 else ""
        hi = str(rng.randint(-1, 40)) if rng.random() < 0.6 else ""
        return f"{lo}:{hi}" + (f":{rng.choice((-2, -1, 0, 1, 2, 3))}" if rng.random() < 0.4 else "")
    return ", ".join(one() for _ in range(rng.choice((1, 2, 2, 3))))


def _statement(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    dst, src = rng.choice(NAMES), rng.choice(NAMES)
    if rng.random() < 0.25:
        src = f"{src}({_subscripts(rng)})"
    if rng.random() < 0.15:
        dst = f"{dst}({_subscripts(rng)})"
    if kind < 0.35:
        return f"{dst} = {src}"
    if kind < 0.55:
        func = rng.choice(FUNCS)
        args = [src]
        if func in ("cshift", "eoshift") or rng.random() < 0.1:
            args.append(str(rng.randint(-9, 9)))
        if rng.random() < 0.5:
            args.append(f"dim={rng.randint(0, 4)}")
        if func == "spread" and rng.random() < 0.8:
            args.append(f"ncopies={rng.randint(-1, 4)}")
        return f"{dst} = {func}({', '.join(args)})"
    if kind < 0.75:
        return (f'compute "work" on {rng.choice("PPQ")} cost {rng.choice((0, 1, 2.5, 1e3))} '
                f"{rng.choice(UNITS)}")
    if depth < 2 and kind < 0.88:
        body = "\n".join(_statement(rng, depth + 1) for _ in range(rng.randint(0, 3)))
        return f"pipeline stages={rng.randint(0, 5)} {{\n{body}\n}}"
    if depth < 2:
        body = "\n".join(_statement(rng, depth + 1) for _ in range(rng.randint(0, 3)))
        return f"repeat {rng.randint(0, 4)} {{\n{body}\n}}"
    return f"{dst} = {src}"


def coherent_program(rng: random.Random) -> list[str]:
    """Lines of a program that is meant to compile: declarations that fit each other."""
    nprocs = rng.choice((1, 2, 3, 4, 8, 16))
    target = rng.choice((f"ideal:{nprocs}", f"ideal:{nprocs},alpha_us=5", "ideal:16"))
    if nprocs == 8 and rng.random() < 0.5:
        target = rng.choice(("paragon:2x4", "sp2:8", "cs2:8", "hypercube:3", "torus:2x4"))
    elem = rng.choice(TYPES[:7])
    rows, cols = nprocs * rng.randint(1, 4), rng.choice((1, 3, 8, nprocs * 2))
    lines = [f"target {target}", f"processors P({nprocs})"]
    for name in "ABCD":
        dist = rng.choice(("(BLOCK, *)", "(*, BLOCK)", "(CYCLIC, *)", "(*, CYCLIC(2))",
                           "(BLOCK(64), *)"))
        if rng.random() < 0.2:
            lines.append(f"array {name}({rows}, {cols}) of {elem} replicated onto P")
        elif rng.random() < 0.1:
            lines.append(f"array {name}({rows}, {cols}) of {elem} on P({rng.randint(0, nprocs - 1)})")
        else:
            lines.append(f"array {name}({rows}, {cols}) of {elem} distribute {dist} onto P")
    lines.append(f"array T({cols}, {rows}) of {elem} distribute (BLOCK, *) onto P")
    lines.append(f"array s(1) of {elem} replicated onto P")
    lines.append(f"array W({rows}, {cols}, 2) of {elem} distribute (BLOCK, *, *) onto P")
    lines.append(f"array X({rows}) of {elem} distribute CYCLIC onto P")
    half = rows // 2
    stmts = ["B = A", "C = B", "D = cshift(A, 3)", f"D = cshift(C, {rng.randint(-5, 5)}, dim=2)",
             "T = transpose(A)", "s = sum(A)", "s = max(B)", 'compute "w" on P cost 1 us',
             f"D = eoshift(A, {rng.randint(-5, 5)}, dim={rng.randint(1, 2)})",
             "W = spread(A, dim=3, ncopies=2)", f"X = {rng.choice(('sum', 'max', 'prod'))}(A, dim=2)",
             f"X(::2) = B(::2, {cols - 1})",
             f"B({rows - 1}:{rows - half}:-1, :) = C(0:{half - 1}, :)" if half else "B(0, :) = C(0, :)"]
    body = rng.sample(stmts, rng.randint(1, 4))
    if rng.random() < 0.3:
        body = [f"pipeline stages={rng.randint(1, 3)} {{", 'compute "w" on P cost 2 us', "B = A", "}"] + body
    if rng.random() < 0.2:
        body = [f"repeat {rng.randint(1, 3)} {{"] + body + ["}"]
    return lines + body


def grammar_program(rng: random.Random) -> str:
    """A program that follows the grammar, right or wrong in its meaning."""
    if rng.random() < 0.5:
        lines = coherent_program(rng)
        if rng.random() < 0.4:  # one wrong line among right ones
            lines[rng.randrange(len(lines))] = _statement(rng)
        return "\n".join(lines) + "\n"
    lines = _declarations(rng) + [_statement(rng) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.1:
        rng.shuffle(lines)
    return "\n".join(lines) + "\n"


INTERESTING = (b"(", b")", b"{", b"}", b"=", b",", b"\n", b'"', b"#", b"*", b"-", b"9", b"0",
               b"99999999999999999999", b"\xff", b"\x00", "é".encode(), b"\t", b"\r", b":")


def mutate(rng: random.Random, text: str) -> bytes:
    """The bytes of `text` after a few random byte-level edits."""
    data = bytearray(text.encode())
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        op = rng.random()
        if op < 0.3 and data:
            data[min(at, len(data) - 1)] = rng.randint(0, 255)
        elif op < 0.6:
            data[at:at] = rng.choice(INTERESTING)
        elif op < 0.8:
            del data[at:at + rng.randint(1, 8)]
        else:
            end = min(len(data), at + rng.randint(1, 16))
            data[at:at] = data[at:end]
    return bytes(data)


@dataclass
class Outcome:
    kind: str  # ran, compiled, diagnostic, bug
    detail: str = ""
    parsers_agree: bool = True


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {CASE_TIMEOUT_S} s")


def run_case(source: str | bytes, workdir: Path | None = None, simulate_too: bool = True) -> Outcome:
    """The outcome of one program; `bug` for anything but a result or a PhalanxError."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_S)
    try:
        return _run(source, workdir, simulate_too)
    except Exception as exc:  # noqa: BLE001  (classifying every failure is the point)
        return Outcome("bug", f"{type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run(source: str | bytes, workdir: Path | None, simulate_too: bool) -> Outcome:
    if isinstance(source, bytes):
        if workdir is None:
            raise ValueError("byte programs need a workdir")
        path = workdir / "fuzz.phx"
        path.write_bytes(source)
        try:
            text = read_source(path)
        except PhalanxError as exc:
            return Outcome("diagnostic", exc.diagnostic.message)
    else:
        text = source
    accepted = []
    for parser in ("lark", "antlr"):
        try:
            parse_source(text, "fuzz.phx", parser)
            accepted.append(True)
        except PhalanxError:
            accepted.append(False)
    agree = accepted[0] == accepted[1]
    try:
        compiled = compile_program(text + "\n", file="fuzz.phx")
    except PhalanxError as exc:
        return Outcome("diagnostic", exc.diagnostic.message, agree)
    if not simulate_too or estimate(compiled).events > MAX_SIM_EVENTS:
        return Outcome("compiled", "", agree)
    try:
        result = simulate(compiled, seed=1)
    except PhalanxError as exc:
        return Outcome("diagnostic", exc.diagnostic.message, agree)
    if not result.verified:
        problems = [p for c in result.collectives for p in c.problems]
        return Outcome("bug", f"a compiled program did not verify: {problems[:2]}", agree)
    return Outcome("ran", "", agree)
