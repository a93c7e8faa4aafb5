"""A machine defined entirely in this file, run without touching runtime/: the proof that
adding a machine is a Target, a Network and a registry entry (docs/targets.md, "Adding a
machine").

`ring:P` is a unidirectional ring: node i has one link to node i+1 (mod P). A message takes
the sender's processor for the start-up, then holds every link of its route for the
wire time (a circuit, as a wormhole worm holds its path).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from phalanx.compiler.algorithms import GENERIC_ALGORITHMS
from phalanx.compiler.driver import compile_program
from phalanx.compiler.recognize import KINDS, Collective
from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.compiler.target import TARGETS, Target, TargetEntry, parse_count, register, with_overrides
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.engine import Engine, Resource
from phalanx.runtime.faults import parse_faults
from phalanx.runtime.network import Layout, Network
from phalanx.runtime.report import write_report
from phalanx.runtime.simulate import simulate


@dataclass(frozen=True)
class RingParams:
    startup_us: float = 5.0  # an assumption of this example, not a machine of the seeds
    us_per_byte: float = 0.02  # 50 MB/s links
    combine_us_per_op: float = 0.01  # 100 M operations/s


class RingNetwork(Network):
    def __init__(self, engine: Engine, params: RingParams, nnodes: int):
        self.engine, self.params, self.nnodes = engine, params, nnodes
        self.cpus = [Resource(engine, f"node {i} processor") for i in range(nnodes)]
        self.links = [Resource(engine, f"link {i}->{(i + 1) % nnodes}") for i in range(nnodes)]

    def path(self, src: int, dst: int) -> list[Resource]:
        return [self.links[(src + k) % self.nnodes] for k in range((dst - src) % self.nnodes)]

    def transfer(self, t: Transfer):
        cpu = self.cpus[t.src]
        yield cpu.request()
        yield self.engine.timeout(self.params.startup_us * 1e-6, "start-up")
        cpu.release()
        path = self.path(t.src, t.dst)
        for link in sorted(path, key=self.links.index):  # one global order: no cycle of waits
            yield link.request()
        yield self.engine.timeout(self.params.us_per_byte * 1e-6 * t.nbytes, "wire")
        for link in path:
            link.release()

    def copy_time_s(self, nbytes: int) -> float:
        return 0.0

    def barrier_time_s(self, nnodes: int) -> float:
        return 0.0

    def combine_time_s(self, operations: int) -> float:
        return operations * self.params.combine_us_per_op * 1e-6

    def resources(self) -> list[Resource]:
        return self.cpus + self.links

    def layout(self) -> Layout:
        import math

        angle = [2 * math.pi * i / self.nnodes for i in range(self.nnodes)]
        return Layout({i: (math.cos(a), math.sin(a)) for i, a in enumerate(angle)},
                      {link.name: (i, (i + 1) % self.nnodes) for i, link in enumerate(self.links)})

    def route(self, src: int, dst: int) -> list[str]:
        return [link.name for link in self.path(src, dst)]


class RingTarget(Target):
    name = "ring"

    def __init__(self, nnodes: int, params: RingParams):
        self.nnodes, self.params = nnodes, params

    def algorithms(self, kind: str) -> tuple[str, ...]:
        return ("direct",) if kind in KINDS else ()

    def generate(self, coll: Collective, algorithm: str) -> Schedule:
        return GENERIC_ALGORITHMS[algorithm](coll)

    def predict_time_s(self, coll: Collective, algorithm: str) -> float:
        """P-1 phases, each as long as its largest message (a prediction, not the simulator)."""
        m = coll.network_matrix
        return (coll.nprocs - 1) * (self.params.startup_us + self.params.us_per_byte * int(m.max())) * 1e-6

    def lower_bound_s(self, coll: Collective) -> float:
        """The busiest link: every byte from i to j crosses links i .. j-1."""
        m, n = coll.network_matrix, coll.nprocs
        load = [0] * n
        for s in range(n):
            for d in range(n):
                for k in range((d - s) % n):
                    load[(s + k) % n] += int(m[s, d])
        busiest = max(load)
        return (self.params.startup_us + self.params.us_per_byte * busiest) * 1e-6 if busiest else 0.0

    def route_hops(self, src: int, dst: int) -> int:
        return (dst - src) % self.nnodes

    def build_network(self, engine: Engine) -> RingNetwork:
        return RingNetwork(engine, self.params, self.nnodes)


def make_ring(positional: str | None, overrides: dict[str, str]) -> RingTarget:
    nnodes = parse_count("ring", positional, default=8)
    return RingTarget(nnodes, with_overrides(RingParams(), overrides, "ring"))


@pytest.fixture(scope="module", autouse=True)
def ring_registered():
    register(TargetEntry("ring", "a unidirectional ring (defined in a test)", make_ring, "ring:8"))
    yield
    del TARGETS["ring"]


SHIFT = """target ring:8
processors P(8)
array A(64) of float64 distribute BLOCK onto P
array B(64) of float64 distribute BLOCK onto P
B = cshift(A, -8)
"""


def test_a_program_runs_on_the_new_machine_and_verifies():
    compiled = compile_program(SHIFT, file="shift.phx")
    result = simulate(compiled)
    c = result.collectives[0]
    assert result.verified and c.kind == "cshift" and c.algorithm == "direct"
    # Each node sends its 64-byte block one hop forward: every link carries one wire time.
    message_s = (5.0 + 0.02 * 64) * 1e-6
    assert c.lower_bound_s == pytest.approx(message_s) and message_s <= c.time_s
    assert c.time_s <= compiled.candidates[0][0].time_s
    links = {r.name: r.busy_s for r in result.network.resources() if r.name.startswith("link")}
    assert len(links) == 8 and all(busy == pytest.approx(0.02 * 64 * 1e-6) for busy in links.values())


def test_its_report_draws_the_ring(tmp_path):
    compiled = compile_program(SHIFT.replace("cshift(A, -8)", "cshift(A, 24)"), file="shift.phx")
    index = write_report(simulate(compiled), tmp_path)
    assert (tmp_path / "routes.svg").exists()
    assert "link utilisation" in (tmp_path / "utilisation.svg").read_text()
    assert "ring:8" in index.read_text()


def test_faults_that_need_no_links_work_and_link_failures_are_refused():
    compiled = compile_program(SHIFT, file="shift.phx")
    result = simulate(compiled, seed=4, faults=parse_faults("error-rate=0.3;seed=1"))
    assert result.verified and result.faults["link_errors"] > 0
    with pytest.raises(UsageError, match="link-fail is not supported on ring:8"):
        simulate(compiled, faults=parse_faults("link-fail=0:E"))


def test_the_cli_lists_and_runs_it(cli, tmp_path):
    program = tmp_path / "shift.phx"
    program.write_text(SHIFT)
    listed = cli("targets")
    assert listed.code == 0 and "ring" in listed.out
    ran = cli("run", str(program), "--quiet")
    assert ran.code == 0 and "verified: True" in ran.out
