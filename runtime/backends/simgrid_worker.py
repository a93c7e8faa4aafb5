"""Run a Phalanx plan on SimGrid: a standalone script for Debian's /usr/bin/python3.

Debian's python3-simgrid (SimGrid 3.32) is a compiled module for the system interpreter;
the project's venv cannot import it, and this interpreter has neither numpy nor phalanx.
So phalanx.runtime.backends.simgrid writes a JSON description (platform XML, SimGrid
configuration, the schedules' messages with sizes and start-ups, each node's walk) to this
script's stdin and reads the times it prints as one JSON object on stdout.

The walk of the plan is compiler/plan_walk.py's, run by phalanx.runtime.backends.simgrid
(this interpreter cannot import it) and recorded per node: the steps it runs (`programs`:
compute, schedule, a pipeline stage's agent and the wait for one) and for each schedule its
walk of the phases (`walks`: post, wait, barrier, span). One actor per node replays its
walk: a phase posts a receive for every message due to the node (one mailbox per (source,
destination) pair, so messages of a pair match in order), pays each send's start-up and
sends; a wait names the sends, receives and local copies the walk waits for (by the phase's
sync mode); a barrier waits for its node set and the barrier time of the set's size.
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
        for s in self.spec["schedules"]:
            for k, phase in enumerate(s["phases"]):
                for src, dst, _, _, switched in phase["messages"]:
                    if switched:
                        self.switch.plan(s["id"], k, self.gate_links(src, dst))

    def node(self, node: int) -> None:
        """Replay the node's walk of the plan (see the module docstring)."""
        agents: dict[int, Actor] = {}
        for op in self.spec["programs"][node]:
            if op[0] == "compute":
                _, cost_s, label = op
                start = Engine.clock
                this_actor.sleep_for(cost_s)
                self.spans.append([node, "compute", start, Engine.clock, label])
            elif op[0] == "schedule":
                self.schedule(node, op[1])
            elif op[0] == "agent":
                _, agent, stage, schedules, after = op
                agents[agent] = Actor.create(f"agent-{node}-{stage}", self.hosts[node], self.agent,
                                             node, schedules, None if after is None else agents[after])
            else:  # await
                agents[op[1]].join()
        self.finish_s[node] = Engine.clock

    def agent(self, node: int, schedules: list[int], previous) -> None:
        """A pipeline stage's communication agent: its schedules, once `previous` is done."""
        if previous is not None:
            previous.join()
        for i in schedules:
            self.schedule(node, i)

    def schedule(self, node: int, i: int) -> None:
        """The node's walk of schedule i's phases: post, wait, barrier, span."""
        s = self.spec["schedules"][i]
        sid, start, phase_start = s["id"], Engine.clock, Engine.clock
        puts: dict[tuple[int, int], tuple] = {}  # (phase, message) -> (comm, gate links) in flight
        gets: dict[tuple[int, int], tuple] = {}  # (phase, message) -> (comm, its payload)
        copies: dict[tuple[int, int], object] = {}  # (phase, copy) -> its execution
        for op in s["walks"][node]:
            if op[0] == "post":
                phase_start = Engine.clock
                self.post(node, sid, op[1], s["phases"][op[1]]["messages"], op[2:], puts, gets,
                          copies)
            elif op[0] == "wait":
                self.wait(node, sid, op[1], puts, gets, copies)
            elif op[0] == "barrier":
                _, k, group, parties, barrier_s = op
                self.barrier(sid, k, group, parties).wait()
                this_actor.sleep_for(barrier_s)
            else:  # span
                self.spans.append([node, "phase", phase_start, Engine.clock, f"phase {op[1]}"])
        timing = self.timings.setdefault(sid, [float("inf"), 0.0])
        timing[0], timing[1] = min(timing[0], start), max(timing[1], Engine.clock)

    def post(self, node: int, sid: int, k: int, messages: list, posted: list, puts: dict,
             gets: dict, copies: dict) -> None:
        """Phase k's receives (message numbers), local copies (seconds) and sends (message
        numbers) at `node`: each send pays its start-up, then passes the switch's gates."""
        receive, copy_s, send = posted
        for j in receive:
            gets[(k, j)] = Mailbox.by_name(f"{messages[j][0]}->{node}").get_async()
        for c, time_s in enumerate(copy_s):
            copies[(k, c)] = this_actor.exec_async(time_s * FLOPS_PER_S)
        for j in send:
            _, dst, nbytes, overhead_s, switched = messages[j]
            if overhead_s > 0:
                this_actor.sleep_for(overhead_s)
            links = self.gate_links(node, dst) if switched else []
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
                puts[(k, j)] = (comm, links)

    def wait(self, node: int, sid: int, tokens: list, puts: dict, gets: dict,
             copies: dict) -> None:
        """Wait for the sends, then the receives (each checked: a message of the right schedule
        and phase), then the local copies that `tokens` name."""
        # a serial sender's sends are complete when posted: not in `puts`
        self.complete(sid, [puts.pop((k, j)) for kind, k, j in tokens
                            if kind == "put" and (k, j) in puts])
        for kind, k, j in tokens:
            if kind == "get":
                comm, data = gets.pop((k, j))
                comm.wait()
                got = tuple(data.get())
                if got[:2] != (sid, k):
                    self.problems.append(f"node {node} received message {got} in phase {k} of "
                                         f"schedule {sid}")
        for kind, k, j in tokens:
            if kind == "copy":
                copies.pop((k, j)).wait()

    def complete(self, sid: int, puts: list) -> None:
        """Wait for the sends `puts` (comm, gate links), in completion order, so that each tail
        passes its gates when it ends."""
        while puts:
            comm, links = puts.pop(Comm.wait_any([c for c, _ in puts]))
            self.switch.tail(sid, links)


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
