"""The `phalanx` command line: compile, run, sweep, explore, targets, algorithms.

Exit codes: 0 success, 1 program errors (with file:line:col), 2 usage errors (running
out of memory included: the run is too big for this machine), 3 a run that did not verify,
70 an internal error (reported without a traceback), 141 (128 + SIGPIPE, as a shell reports
for a writer killed by a closed pipe) when the reader of stdout went away, e.g. `| head`:
phalanx then stops quietly, without a message.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from phalanx import register_all
from phalanx.cli_explore import cmd_explore, explore_args, parallel_args, parallel_options, stats_line
from phalanx.compiler.driver import Compiled, chosen_algorithms, compile_program
from phalanx.compiler.groups import describe as describe_groups
from phalanx.compiler.ir.printing import print_generic
from phalanx.compiler.recognize import KINDS as COLLECTIVE_KINDS
from phalanx.compiler.target import TARGETS, resolve
from phalanx.grammar.diagnostics import PhalanxError, usage_error
from phalanx.grammar.frontend import PARSERS
from phalanx.runtime.dot import schedule_to_dot

EMITS = ("ast", "dist", "coll", "sched", "mlir", "dot", "json", "mpi-mlir", "exe")
KINDS = COLLECTIVE_KINDS
AUTO_DESCRIPTION = "the algorithm with the least predicted time among those that can run"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: exit 2 with a hint
        self.print_usage(sys.stderr)
        raise usage_error(message, f"see `{self.prog} --help`")


def _ast_json(node: Any) -> Any:
    if dataclasses.is_dataclass(node):
        out = {"node": type(node).__name__}
        for f in dataclasses.fields(node):
            if f.name != "source":
                out[f.name] = _ast_json(getattr(node, f.name))
        return out
    if isinstance(node, (tuple, list)):
        return [_ast_json(x) for x in node]
    return node


def compile_json(compiled: Compiled) -> dict[str, Any]:
    algs = chosen_algorithms(compiled)
    return {
        "program": compiled.program.file,
        "target": compiled.target.describe() | {"spec": compiled.target_spec},
        "collectives": [{
            "line": c.line, "kind": c.kind, "nprocs": c.nprocs, "block_bytes": c.block_bytes,
            "total_bytes": c.total_bytes, "algorithm": alg,
            "phases": len(compiled.schedules[i].phases),
            "lower_bound_s": compiled.target.lower_bound_s(c),
            "lower_bound_binds": compiled.target.binding_bound(c)[1],
            "groups": describe_groups(c) if c.groups else None,
            "candidates": [x.to_json() for x in compiled.candidates[i]],
            "left_out": [dataclasses.asdict(x) for x in compiled.left_out[i]],
        } for i, (c, alg) in enumerate(zip(compiled.collectives, algs))],
        "choice": compiled.choice.to_json(),
        **({"pipelines": [p.to_json() for p in compiled.pipelines]} if compiled.pipelines else {}),
    }


def _emit(compiled: Compiled, what: str, mpi: str = "OpenMPI") -> str:
    if what == "mpi-mlir":
        from phalanx.compiler.ir.conversion.lower_sched_to_mpi import lower_sched_to_mpi

        return lower_sched_to_mpi(compiled.stages["sched"], mpi)
    if what == "ast":
        return json.dumps(_ast_json(compiled.ast), indent=1) + "\n"
    if what in ("dist", "coll", "sched"):
        return str(compiled.stages[what]) + "\n"
    if what == "mlir":
        return print_generic(compiled.stages["sched"])
    if what == "dot":
        return schedule_to_dot(compiled.plan.run_schedules(), compiled.program.file)
    return json.dumps(compile_json(compiled), indent=2) + "\n"


def _write(text: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text)
    except OSError as exc:
        raise usage_error(f"cannot write '{out}': {exc}", "choose a writable path for -o") from None


def _algorithm_option(values: list[str] | None) -> str:
    return ",".join(values) if values else "auto"


def _seed(value: int) -> int:
    """`--seed`: numpy seeds its generator with a whole number from 0 up."""
    if value < 0:
        raise usage_error(f"--seed {value} is negative; a seed is a whole number from 0 up",
                          "e.g. --seed 1 (the default is 0)")
    return value


def _cost_model(args: argparse.Namespace) -> str:
    """`--cost`, else the model of the network the run goes to."""
    return args.cost or ("simgrid" if getattr(args, "backend", None) == "simgrid" else "target")


def cmd_compile(args: argparse.Namespace) -> int:
    compiled = compile_program(args.program, args.target, _algorithm_option(args.algorithm),
                               parser=args.parser, cost=_cost_model(args))
    if args.emit == "exe":
        from phalanx.compiler.native import build_program

        if not args.output:
            raise usage_error("--emit exe needs an output file", "add -o PROGRAM, e.g. -o transpose")
        build_program(compiled, args.output, args.mpi)
        return 0
    _write(_emit(compiled, args.emit, args.mpi), args.output)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from phalanx.compiler.choice import BY_PROGRAM
    from phalanx.compiler.pipelines import terminal_notes
    from phalanx.runtime.limits import check_program_fits, run_notes, run_options
    from phalanx.runtime.progress import progress_console, status
    from phalanx.runtime.report import prepare, summary_lines, write_report
    from phalanx.runtime.simulate import simulate

    _seed(args.seed)
    if args.nprocs is not None and args.nprocs < 1:
        raise usage_error(f"-n {args.nprocs} must be at least 1 (it counts MPI processes)",
                          "e.g. -n 4, or leave -n out to run one process per processor")
    if args.backend != "sim" or args.nprocs is not None:
        from phalanx.runtime.backends.command import run_backend

        if args.backend == "sim":
            raise usage_error("-n is for --backend mpi", "drop -n, or add --backend mpi")
        return run_backend(compile_program(args.program, args.target,
                                           _algorithm_option(args.algorithm), parser=args.parser,
                                           cost=_cost_model(args)), args)
    if args.report:
        prepare(args.report)  # a path that cannot be written is refused before the run
    console = progress_console(args.quiet)
    with status(f"compiling {args.program}", console):
        compiled = compile_program(args.program, args.target, _algorithm_option(args.algorithm),
                                   parser=args.parser, cost=_cost_model(args),
                                   checked=lambda program, spec: check_program_fits(program, spec,
                                                                                    args.force))
    faults, limits = run_options(compiled, args.faults, args.force, args.max_events, args.time_limit)
    with status(f"simulating on {compiled.target_spec}", console):
        result = simulate(compiled, args.seed, limits=limits, faults=faults)
    notes = run_notes(result)
    index = None
    if args.report:
        with status(f"writing the report to {args.report}", console):
            index = write_report(result, args.report, args.each_run)
    if args.json:
        print(json.dumps(result.to_json(args.each_run) | notes, indent=2))
    else:
        print(f"{compiled.program.file} on {compiled.target_spec}: total "
              f"{result.total_time_s * 1e3:.6f} ms, verified: {result.verified}")
        for line in summary_lines(result.collectives, args.verbose):
            print(line)
        for line in terminal_notes(compiled.pipelines):
            print(line)
        if compiled.choice.method == BY_PROGRAM:
            print(f"note: {compiled.choice.note()}")
        if "stopped" in notes:
            print(f"  {notes['stopped']['reason']}: a partial run, unfinished collectives at lines "
                  f"{notes['stopped']['unfinished_lines']}")
        if "faults" in notes:
            print("  faults: " + ", ".join(f"{k} {v}" for k, v in notes["faults"].items()))
        if index is not None:
            print(f"report written to {index}")
    return 0 if result.verified else 3


def cmd_sweep(args: argparse.Namespace) -> int:
    from phalanx.runtime.parallel import RunStats
    from phalanx.runtime.progress import progress_console
    from phalanx.runtime.report import prepare
    from phalanx.runtime.sweep import Variation, parse_fractions, parse_sizes
    from phalanx.runtime.sweep_report import run_sweep, write_sweep_report

    _seed(args.seed)
    if args.report:
        prepare(args.report)  # a path that cannot be written is refused before the sweep
    if args.samples < 1:
        raise usage_error(f"--samples {args.samples} must be at least 1",
                          "Fig. 9 of the iWarp paper averages 16 matrices: --samples 16")
    variation = Variation(tuple(parse_fractions(args.variance, "variance")),
                          tuple(parse_fractions(args.zero_probability, "zero-message probability")),
                          args.samples)
    algorithm = args.algorithm[0] if args.algorithm and len(args.algorithm) == 1 else \
        (args.algorithm or "all")
    stats = RunStats()
    data = run_sweep(args.target, args.collective, parse_sizes(args.sizes), algorithm, args.seed,
                     progress_console(args.quiet), variation, parallel_options(args), stats)
    if not args.quiet:
        print(stats_line(stats), file=sys.stderr)
    index = write_sweep_report(data, args.report) if args.report else None
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"{args.collective} on {args.target}")
        print(f"{'algorithm':<28}{'block bytes':>12}{'time (ms)':>14}{'efficiency':>12}"
              f"{'MB/s':>12}")
        for r in data["results"]:
            name = r["algorithm"] + (f" V={r['variance']:g} P={r['zero_probability']:g}"
                                     if "variance" in r else "")
            print(f"{name:<28}{r['block_bytes']:>12}{r['time_s'] * 1e3:>14.6f}"
                  f"{r['efficiency']:>12.3f}{r['aggregate_bandwidth_Bps'] / 1e6:>12.1f}")
        for f in data.get("failures", []):
            print(f"{f.get('status', 'refused')}: {f['algorithm']} at {f['block_bytes']} B: {f['error']}")
        if index is not None:
            print(f"report written to {index}")
    return 0 if all(r["verified"] for r in data["results"]) else 3


def cmd_targets(args: argparse.Namespace) -> int:
    entries = [{"name": e.name, "summary": e.summary, "example": e.example}
               for e in sorted(TARGETS.values(), key=lambda e: e.name)]
    if args.json:
        print(json.dumps({"targets": entries}, indent=2))
    else:
        for e in entries:
            print(f"{e['name']:<10} {e['summary']}  (e.g. {e['example']})")
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    specs = [args.target] if args.target else [e.example for e in TARGETS.values()]
    table, about = {}, {}
    for spec in specs:
        machine = resolve(spec)
        table[spec] = {kind: ["auto", *machine.algorithms(kind)] for kind in KINDS}
        about[spec] = {kind: {"auto": AUTO_DESCRIPTION} | {
            a: machine.describe_algorithm(kind, a) for a in machine.algorithms(kind)} for kind in KINDS}
    if args.json:
        print(json.dumps({"algorithms": table, "descriptions": about}, indent=2))
    else:
        for spec, kinds in about.items():
            print(spec)
            for kind, algs in kinds.items():
                print(f"  {kind}")
                for name, text in algs.items():
                    print(f"    {name:<24} {text}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="phalanx", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def program_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("program", help="a .phx program")
        p.add_argument("--target", help="target SPEC, e.g. ideal:16 (default: the program's)")
        p.add_argument("--algorithm", action="append", metavar="KIND=ALG",
                       help="algorithm for a collective kind, or one name for all (default auto)")
        p.add_argument("--parser", choices=PARSERS, default="lark", help="front end (default lark)")
        p.add_argument("--cost", metavar="MODEL", default=None,
                       help="cost model `auto` minimises: target (the machine's own), simgrid "
                       "(SimGrid's flow network) or simulate[:EVENTS] (each candidate simulated on "
                       "the built-in simulator, those estimated past EVENTS (default 200000) "
                       "predicted) or closed-form (the machine's formulas alone, nothing "
                       "simulated); default: simgrid for --backend simgrid, else target")

    p = sub.add_parser("compile", help="compile a program and print one stage")
    program_args(p)
    p.add_argument("--emit", choices=EMITS, default="sched")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("--mpi", choices=("OpenMPI", "MPICH"), default="OpenMPI",
                   help="MPI implementation of --emit mpi-mlir|exe (default OpenMPI)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("run", help="compile and simulate a program")
    program_args(p)
    p.add_argument("--backend", default="sim", help="sim (built-in, default), simgrid, mpi, or mpi-native")
    p.add_argument("-n", dest="nprocs", type=int, default=None,
                   help="MPI processes for --backend mpi|mpi-native (default: the program's processors)")
    p.add_argument("--mpi", choices=("OpenMPI", "MPICH"), default="OpenMPI",
                   help="MPI implementation of --backend mpi-native (default OpenMPI)")
    p.add_argument("--json", action="store_true", help="print the JSON result")
    p.add_argument("--report", metavar="DIR",
                   help="write index.html (self-contained), report.json, report.md and the pictures")
    p.add_argument("--seed", type=int, default=0, help="seed of the payload data")
    p.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    p.add_argument("--verbose", action="store_true",
                   help="one line per collective run (pipeline stage, repeat iteration, start and "
                   "end) instead of one per statement")
    p.add_argument("--each-run", action="store_true",
                   help="list every run of a repeated statement in --json and --report (default: "
                   "one summary per statement: count, min/mean/max own time, first and last start)")
    p.add_argument("--faults", metavar="SPEC", help="inject faults, e.g. 'link-fail=3:E;"
                   "error-rate=0.01;corrupt-rate=0.001;seed=1' (runtime/faults.py)")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimate says the run will not fit this machine")
    p.add_argument("--max-events", type=int, metavar="N",
                   help="stop after N engine events with a partial report")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="stop after S wall-clock seconds of simulation with a partial report")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="one collective over message sizes and algorithms")
    p.add_argument("--target", required=True)
    p.add_argument("--collective", required=True)
    p.add_argument("--sizes", required=True, help="e.g. 64,512,2K,16K,64K")
    p.add_argument("--algorithm", action="append", metavar="ALG",
                   help="one algorithm, auto, or all (the default); repeat for several")
    p.add_argument("--variance", default="0", metavar="V,...",
                   help="message sizes drawn from [B-VB, B+VB] per pair (Fig. 9a of the iWarp paper)")
    p.add_argument("--zero-probability", default="0", metavar="P,...",
                   help="each message empty with probability P (Fig. 9b of the iWarp paper)")
    p.add_argument("--samples", type=int, default=1,
                   help="random matrices averaged per point when sizes vary (seeded by --seed)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--report", metavar="DIR", help="write index.html, report.json and the plots")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    parallel_args(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("explore", help="a grid of target parameters, machines, kinds, sizes and "
                       "algorithms (or a program): a CSV table and an HTML report")
    explore_args(p)
    parallel_args(p)
    p.set_defaults(func=cmd_explore)

    p = sub.add_parser("targets", help="list the targets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_targets)

    p = sub.add_parser("algorithms", help="list the algorithms per collective kind")
    p.add_argument("--target")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_algorithms)
    return parser


CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


def _drop_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no file descriptor (a test's capture)
        pass


def main(argv: list[str] | None = None) -> int:
    try:
        register_all()
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except PhalanxError as exc:
        print(exc.diagnostic.render(), file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # the reader of stdout is gone (`| head`): stop quietly
        _drop_stdout()
        return CLOSED_PIPE
    except MemoryError:
        print(usage_error(
            "out of memory: this run needs more memory than the machine could give it",
            "make the arrays or the machine smaller; without --force, `phalanx run` estimates the "
            "memory first and refuses a run that would not fit").diagnostic.render(), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("phalanx: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # an internal error: say so plainly, without a traceback
        print(f"phalanx: internal error: {type(exc).__name__}: {exc}\n"
              "hint: this is a bug in Phalanx; please report it with the program", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
