"""Run a Phalanx plan on SimGrid: a standalone script for Debian's /usr/bin/python3.

Debian's python3-simgrid (SimGrid 3.32) is a compiled module for the system interpreter;
the project's venv cannot import it, and this interpreter has neither numpy nor phalanx.
So phalanx.runtime.backends.simgrid writes a JSON description (platform XML, SimGrid
configuration, the plan's steps with message sizes and per-message costs) to this
script's stdin and reads the times it prints as one JSON object on stdout.

Execution mirrors runtime/interpreter.py: one actor per node walks the steps; in a phase
it posts a receive for every message due to it (one mailbox per (source, destination)
pair, so messages of a pair match in order), pays each send's start-up, sends, and
waits (a `local` phase ends there: the node goes on when its own sends are done and its
receives have arrived; an `eager` phase once its receives and the previous eager phase's
sends have, its own sends waited for in the next phase); a `barrier` phase then waits for all
nodes and the barrier time, or, scoped to groups, for the node's group and the barrier time of
the group's size.
Messages marked `switched` (iWarp's phased messages) pass the synchronizing switch's
per-link gates first (Switch below, runtime/network.py Gates). Every message
carries its (schedule, phase, index) and the receiver checks it: a message that arrives
in the wrong phase or out of order is reported as a problem.
"""

from __future__ import annotations

import bisect
import json
import os
import sys
import tempfile
import time

import simgrid
from simgrid import Actor, Barrier, Comm, Engine, Mailbox, Semaphore, this_actor

FLOPS_PER_S = 1e9  # hosts are declared with speed="1Gf": a local copy of t s is t * 1e9 flops



def runs_on(step: dict, node: int) -> bool:
    """A compute step runs on nodes first to first + nprocs - 1, other steps from node 0."""
    first = step["first"] if step["type"] == "compute" else 0
    return first <= node < first + step["nprocs"]

class Switch:
    """iWarp's synchronizing switch (001 Sec. 2.2, Lemma 1), as the built-in model has it
    (runtime/network.py Gates): a link forwards the header of a schedule's phase-k
    message only after the tails of all its phase 0..k-1 messages have passed. The gates sit
    on the links of SimGrid's own route, so the rule also holds on the TorusZone, where a
    link may carry two messages of a phase or none.

    SimGrid starts a message on its whole route at once, so the header's walk is replayed
    here: h = max(h, last earlier-phase tail on the link) + the link's latency, hop by hop, as
    the built-in recurrence; the message then starts at h - route latency, so that it ends
    when the built-in's does. A gate that opens late is only known when it opens, so a
    message can start up to the latency of the hops before that gate late (`lag_s`)."""

    def __init__(self):
        self.phases: dict[tuple[int, str], list[int]] = {}  # phases of a link's messages, sorted
        self.tails: dict[tuple[int, str], list[float]] = {}  # running max of its tail times
        self.waiting: dict[tuple[int, str, int], list[Semaphore]] = {}
        self.lag_s = 0.0  # the largest start delay behind the built-in recurrence
        self.gated = 0  # messages held by a gate

    def plan(self, sid: int, k: int, links: list) -> None:
        """Declare schedule sid's phase-k message on `links` (in phase order, before the run)."""
        for link in links:
            self.phases.setdefault((sid, link.name), []).append(k)

    def header(self, sid: int, k: int, links: list) -> None:
        """Walk the header of schedule sid's phase-k message over `links`; return at its start."""
        now = h = Engine.clock
        for link in links:
            key = (sid, link.name)
            before = bisect.bisect_left(self.phases[key], k)  # the link's earlier-phase messages
            tails = self.tails.setdefault(key, [])
            if len(tails) < before:
                gate = Semaphore(0)
                self.waiting.setdefault((sid, link.name, before), []).append(gate)
                gate.acquire()
            h = max(h, tails[before - 1] if before else 0.0) + link.latency
        start = h - sum(link.latency for link in links)
        if start > Engine.clock:
            this_actor.sleep_until(start)
        self.lag_s = max(self.lag_s, Engine.clock - start)
        self.gated += Engine.clock > now

    def tail(self, sid: int, links: list) -> None:
        for link in links:
            tails = self.tails.setdefault((sid, link.name), [])
            tails.append(max(Engine.clock, tails[-1] if tails else 0.0))
            for gate in self.waiting.pop((sid, link.name, len(tails)), []):
                gate.release()


class Run:
    """State shared by the actors (SimGrid runs them one at a time in this OS process)."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.hosts: list = []
        self.barriers: dict[tuple[int, int, int], Barrier] = {}
        self.timings: dict[int, list[float]] = {}
        self.finish_s: dict[int, float] = {}
        self.spans: list[list] = []
        self.problems: list[str] = []
        self.messages = 0
        self.switch = Switch()
        self.gates: dict[tuple[int, int], list] = {}

    def gate_links(self, src: int, dst: int) -> list:
        """The links of src->dst that have switch gates: the network hops of SimGrid's own route
        (not the memory and loopback links the description names `ungated`)."""
        if (src, dst) not in self.gates:
            links, _ = self.hosts[src].route_to(self.hosts[dst])
            skip = tuple(self.spec["ungated"])
            self.gates[(src, dst)] = [link for link in links if not link.name.startswith(skip)]
        return self.gates[(src, dst)]

    def barrier(self, sid: int, k: int, group: int, parties: int) -> Barrier:
        """Phase k's barrier of schedule sid for `group` (-1: every node) of `parties` nodes."""
        key = (sid, k, group)
        if key not in self.barriers:
            self.barriers[key] = Barrier(parties)
        return self.barriers[key]

    def plan_switch(self) -> None:
        """Tell the switch every gated message, so that a gate knows how many tails it awaits."""
        schedules = [s for step in self.spec["steps"]
                     for s in ([x for stage in step["stages"] for x in stage]
                               if step["type"] == "pipeline" else [step])
                     if s["type"] == "schedule"]
        for s in schedules:
            for k, phase in enumerate(s["phases"]):
                for src, dst, _, _, switched in phase["messages"]:
                    if switched:
                        self.switch.plan(s["id"], k, self.gate_links(src, dst))

    def node(self, node: int) -> None:
        for step in self.spec["steps"]:
            if runs_on(step, node):
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
        streaming: list = []  # (comm, gate links) of the last eager phase's sends, in flight
        for k, phase in enumerate(step["phases"]):
            streaming = self.phase(node, step["id"], k, phase, step["nprocs"], streaming)
        self.complete(step["id"], streaming)
        timing = self.timings.setdefault(step["id"], [float("inf"), 0.0])
        timing[0], timing[1] = min(timing[0], start), max(timing[1], Engine.clock)

    def complete(self, sid: int, puts: list) -> None:
        """Wait for the sends `puts` (comm, gate links), in completion order, so that each tail
        passes its gates when it ends."""
        while puts:
            comm, links = puts.pop(Comm.wait_any([c for c, _ in puts]))
            self.switch.tail(sid, links)

    def pipeline(self, node: int, step: dict) -> None:
        """Stage i's schedules run in an agent actor while the node computes stage i+1; stage
        i+2's compute waits for stage i's agent (double buffering, runtime/interpreter.py)."""
        agent, agents = None, []
        for i, stage in enumerate(step["stages"]):
            if i >= 2:
                agents[i - 2].join()
            for s in stage:
                if s["type"] == "compute" and runs_on(s, node):
                    self.step(node, s)
            comms = [s for s in stage if s["type"] == "schedule" and node < s["nprocs"]]
            agent = Actor.create(f"agent-{node}-{i}", self.hosts[node], self.agent, node, comms,
                                 agent)
            agents.append(agent)
        if agent is not None:
            agent.join()

    def agent(self, node: int, schedules: list[dict], previous) -> None:
        if previous is not None:
            previous.join()
        for s in schedules:
            self.step(node, s)

    def phase(self, node: int, sid: int, k: int, phase: dict, nprocs: int, streaming: list) -> list:
        """Phase k at `node`, after whose sends `streaming` (the previous eager phase's) are
        waited for; an eager phase returns its own sends, still in flight, and goes on once its
        receives are in (compiler/schedule.py SyncMode)."""
        start = Engine.clock
        gets = [(Mailbox.by_name(f"{src}->{node}").get_async(), (sid, k, j))
                for j, (src, dst, *_) in enumerate(phase["messages"]) if dst == node]
        copies = [this_actor.exec_async(time_s * FLOPS_PER_S)
                  for where, time_s in phase["copies"] if where == node and time_s > 0]
        puts = []
        for j, (src, dst, nbytes, overhead_s, switched) in enumerate(phase["messages"]):
            if src != node:
                continue
            if overhead_s > 0:
                this_actor.sleep_for(overhead_s)
            links = self.gate_links(src, dst) if switched else []
            if links:
                # a phased schedule sends at most one message per node and phase, so the node
                # itself can walk the header (other messages of the node do not wait behind it)
                self.switch.header(sid, k, links)
            comm = Mailbox.by_name(f"{node}->{dst}").put_async([sid, k, j], nbytes)
            self.messages += 1
            if self.spec["serial_sender"]:
                comm.wait()  # the sender's port is held until the message has left
                self.switch.tail(sid, links)
            else:
                puts.append((comm, links))
        eager = phase["sync"] == "eager"
        self.complete(sid, streaming if eager else streaming + puts)
        for (comm, data), expected in gets:
            comm.wait()
            got = tuple(data.get())
            if got[:2] != expected[:2]:
                self.problems.append(f"node {node} received message {got} in phase {k} of "
                                     f"schedule {sid}")
        for execution in copies:
            execution.wait()
        for group, parties, barrier_s in barrier_of(phase, node, nprocs):
            self.barrier(sid, k, group, parties).wait()
            this_actor.sleep_for(barrier_s)
        self.spans.append([node, "phase", start, Engine.clock, f"phase {k}"])
        return puts if eager else []


def barrier_of(phase: dict, node: int, nprocs: int) -> list[tuple[int, int, float]]:
    """(group, its node count, barrier seconds) of the barrier `node` takes after `phase`:
    none for a local phase or a node in no group of a scoped barrier; group -1: every node."""
    if phase["sync"] != "barrier":
        return []
    if not phase["groups"]:
        return [(-1, nprocs, phase["barrier_s"])]
    return [(j, len(nodes), barrier_s) for j, (nodes, barrier_s) in enumerate(phase["groups"])
            if node in nodes]


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
    state.plan_switch()
    for node, host in enumerate(state.hosts):
        Actor.create(f"node-{node}", host, state.node, node)
    engine.run()
    return {"total_time_s": max(state.finish_s.values(), default=0.0),
            "collectives": {str(k): v for k, v in state.timings.items()},
            "messages": state.messages, "problems": state.problems,
            "spans": state.spans if spec.get("spans") else [],
            "switch": {"gated_messages": state.switch.gated, "max_lag_s": state.switch.lag_s},
            "simgrid_version": ".".join(map(str, simgrid.simgrid_version)),
            "wall_s": time.perf_counter() - wall}


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
    sys.stdout.write("\n")
