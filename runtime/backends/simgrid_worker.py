"""Run a Phalanx plan on SimGrid: a standalone script for Debian's /usr/bin/python3.

Debian's python3-simgrid (SimGrid 3.32) is a compiled module for the system interpreter;
the project's venv cannot import it, and this interpreter has neither numpy nor phalanx.
So phalanx.runtime.backends.simgrid writes a JSON description (platform XML, SimGrid
configuration, the plan's steps with message sizes and per-message costs) to this
script's stdin and reads the times it prints as one JSON object on stdout.

Execution mirrors runtime/interpreter.py: one actor per node walks the steps; in a phase
it posts a receive for every message due to it (one mailbox per (source, destination)
pair, so messages of a pair match in order), pays each send's start-up, sends, and
waits; a `barrier` phase then waits for all nodes and the barrier time. Every message
carries its (schedule, phase, index) and the receiver checks it: a message that arrives
in the wrong phase or out of order is reported as a problem.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import simgrid
from simgrid import Actor, Barrier, Comm, Engine, Mailbox, this_actor

FLOPS_PER_S = 1e9  # hosts are declared with speed="1Gf": a local copy of t s is t * 1e9 flops


class Run:
    """State shared by the actors (SimGrid runs them one at a time in this OS process)."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.hosts: list = []
        self.barriers: dict[tuple[int, int], Barrier] = {}
        self.timings: dict[int, list[float]] = {}
        self.finish_s: dict[int, float] = {}
        self.spans: list[list] = []
        self.problems: list[str] = []
        self.messages = 0

    def barrier(self, sid: int, k: int, nprocs: int) -> Barrier:
        key = (sid, k)
        if key not in self.barriers:
            self.barriers[key] = Barrier(nprocs)
        return self.barriers[key]

    def node(self, node: int) -> None:
        for step in self.spec["steps"]:
            if node < step["nprocs"]:
                if step["type"] == "pipeline":
                    self.pipeline(node, step)
                else:
                    self.step(node, step)
        self.finish_s[node] = Engine.clock

    def step(self, node: int, step: dict) -> None:
        start = Engine.clock
        if step["type"] == "compute":
            this_actor.sleep_for(step["cost_s"])
            self.spans.append([node, "compute", start, Engine.clock, step["label"]])
            return
        for k, phase in enumerate(step["phases"]):
            self.phase(node, step["id"], k, phase, step["nprocs"])
        timing = self.timings.setdefault(step["id"], [float("inf"), 0.0])
        timing[0], timing[1] = min(timing[0], start), max(timing[1], Engine.clock)

    def pipeline(self, node: int, step: dict) -> None:
        """Stage i's schedules run in an agent actor while the node computes stage i+1."""
        agent = None
        for i, stage in enumerate(step["stages"]):
            for s in stage:
                if s["type"] == "compute" and node < s["nprocs"]:
                    self.step(node, s)
            comms = [s for s in stage if s["type"] == "schedule" and node < s["nprocs"]]
            agent = Actor.create(f"agent-{node}-{i}", self.hosts[node], self.agent, node, comms,
                                 agent)
        if agent is not None:
            agent.join()

    def agent(self, node: int, schedules: list[dict], previous) -> None:
        if previous is not None:
            previous.join()
        for s in schedules:
            self.step(node, s)

    def phase(self, node: int, sid: int, k: int, phase: dict, nprocs: int) -> None:
        start = Engine.clock
        gets = [(Mailbox.by_name(f"{src}->{node}").get_async(), (sid, k, j))
                for j, (src, dst, _, _) in enumerate(phase["messages"]) if dst == node]
        copies = [this_actor.exec_async(time_s * FLOPS_PER_S)
                  for where, time_s in phase["copies"] if where == node and time_s > 0]
        puts = []
        for j, (src, dst, nbytes, overhead_s) in enumerate(phase["messages"]):
            if src != node:
                continue
            if overhead_s > 0:
                this_actor.sleep_for(overhead_s)
            comm = Mailbox.by_name(f"{node}->{dst}").put_async([sid, k, j], nbytes)
            self.messages += 1
            if self.spec["serial_sender"]:
                comm.wait()  # the sender's port is held until the message has left
            else:
                puts.append(comm)
        Comm.wait_all(puts)
        for (comm, data), expected in gets:
            comm.wait()
            got = tuple(data.get())
            if got[:2] != expected[:2]:
                self.problems.append(f"node {node} received message {got} in phase {k} of "
                                     f"schedule {sid}")
        for execution in copies:
            execution.wait()
        if phase["sync"] == "barrier":
            self.barrier(sid, k, nprocs).wait()
            this_actor.sleep_for(phase["barrier_s"])
        self.spans.append([node, "phase", start, Engine.clock, f"phase {k}"])


def run(spec: dict) -> dict:
    wall = time.perf_counter()
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(spec["platform_xml"])
    try:
        engine = Engine(["phalanx", *sys.argv[1:]] + [f"--cfg={c}" for c in spec["config"]])
        engine.load_platform(f.name)
    finally:
        os.unlink(f.name)
    state = Run(spec)
    by_name = {h.name: h for h in engine.all_hosts}
    state.hosts = [by_name[name] for name in spec["hosts"]]
    for node, host in enumerate(state.hosts):
        Actor.create(f"node-{node}", host, state.node, node)
    engine.run()
    return {"total_time_s": max(state.finish_s.values(), default=0.0),
            "collectives": {str(k): v for k, v in state.timings.items()},
            "messages": state.messages, "problems": state.problems,
            "spans": state.spans if spec.get("spans") else [],
            "simgrid_version": ".".join(map(str, simgrid.simgrid_version)),
            "wall_s": time.perf_counter() - wall}


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
    sys.stdout.write("\n")
