//! Phalanx's native event core: runtime/engine.py's event heap, resources and pools, and
//! runtime/interpreter.py's node walkers and message processes, run without a Python call per
//! event (runtime/native_run.py drives it; docs/engine.md).
//!
//! It mirrors the Python engine event for event, so that simulated times are identical: a heap
//! of (time, sequence, action), the sequence number counted exactly where the Python engine
//! schedules an event (process starts, timeouts, grants from a queue, process ends, inboxes,
//! all-of waits, barriers), a request granted to the running process at once without the heap
//! (`happen_now`), and the callbacks of one event run in the order they were added.
//!
//! A message is a *program* (a short list of acquire / hold / release ops) that its network
//! declared in Python (Network.transfer_program); the data check stays in Python, which replays
//! the log of message starts and ends in order (runtime/native_run.py).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::{Duration, Instant};

// What a heap entry does when it is processed (the Python event's callbacks).
const ACT_RESUME: u8 = 0; // a process goes on (start, timeout, grant from a queue)
const ACT_PROC_DONE: u8 = 1; // a process ended: its parent node's all-of counts it
const ACT_INBOX_DONE: u8 = 2; // a node's inbox of a phase is complete: its all-of counts it
const ACT_ALLOF_DONE: u8 = 3; // a node's phase wait is over: the node goes on
const ACT_BARRIER: u8 = 4; // a barrier ends: its nodes go on, in the order they arrived
const PENDING_ONE_DONE: u8 = 5; // (callback only) one child of a node's all-of is done

// Node walker states.
const AT_ITEM: u8 = 0;
const COMPUTE_WAIT: u8 = 1;
const ENTER_PHASE: u8 = 2;
const PHASE_WAIT: u8 = 3;
const BARRIER_WAIT: u8 = 4;
const NODE_DONE: u8 = 5;

// Span kinds (runtime/interpreter.py Span.kind).
const SPAN_COMPUTE: u8 = 0;
const SPAN_SEND: u8 = 1;
const SPAN_COPY: u8 = 2;
const SPAN_PHASE: u8 = 3;

// Log entries, (code, run, message) each, for the data replay.
const LOG_START: u32 = 0;
const LOG_END: u32 = 1;
const LOG_LEAVE: u32 = 2;

// Status of `run`.
const FINISHED: u8 = 0;
const NEED_RUN: u8 = 1;
const DEADLOCK: u8 = 2;
const STOPPED_EVENTS: u8 = 3;
const STOPPED_TIME: u8 = 4;
const SENT_TWICE: u8 = 5;

const WALL_CLOCK_EVERY: u64 = 4096; // runtime/engine.py WALL_CLOCK_EVERY
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
enum Op {
    Acquire(u32),
    Hold(f64),
    Release(u32),
}

/// A Resource (`unit`: runtime/engine.py Resource) or a Pool of `capacity` units.
struct Res {
    unit: bool,
    capacity: usize,
    grant_now: bool,
    holders: Vec<u32>,
    queue: VecDeque<u32>,
    busy_s: f64,
    since_s: f64,
}

/// One schedule as plain arrays (runtime/native_run.py builds them); `slot` = phase * nprocs + node.
struct Sched {
    nprocs: usize,
    nphases: usize,
    msg_src: Vec<u32>,
    msg_dst: Vec<u32>,
    msg_program: Vec<u32>,
    msg_label: Vec<u32>,
    msg_copy: Vec<bool>,
    msg_key_off: Vec<u32>,
    msg_keys: Vec<u32>,
    slot_msg_off: Vec<u32>,
    slot_msgs: Vec<u32>,
    slot_has_inbox: Vec<bool>,
    slot_inbox_off: Vec<u32>,
    slot_inbox_keys: Vec<u32>,
    key_due: Vec<i64>,
    slot_barrier: Vec<i64>,
    barrier_size: Vec<u32>,
    barrier_delay_s: Vec<f64>,
    nkeys: usize,
}

#[derive(Clone, Copy)]
struct Item {
    compute: bool,
    first: u32,
    nprocs: u32,
    cost_s: f64,
    label: u32,
    run: u32,
}

struct Flight {
    sched: usize,
    inside: usize,
    inbox_pending: Vec<i64>, // per slot: -1 no inbox yet, else blocks still due
    arrived: Vec<u64>,       // bit per key
    barriers: HashMap<u32, u32>,
}

struct Barrier {
    arrived: Vec<u32>,
    missing: u32,
}

struct Node {
    item: usize,
    phase: usize,
    state: u8,
    start_s: f64,
    children: Vec<u32>,
    inbox: bool,
    remaining: u32,
    barrier: u32,
    finish_s: f64,
}

struct Proc {
    node: u32,
    run: u32,
    msg: u32, // NONE for a node walker
    pc: u32,
    started: bool,
    done: bool,
    waits_for: u32, // the resource it queues for, NONE otherwise
    start_s: f64,
}

enum Halt {
    NeedRun(u32),
    SentTwice,
}

#[pyclass(module = "phalanx_engine_core")]
struct Core {
    nprocs: usize,
    now: f64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, u8, u32)>>,
    pending: VecDeque<(u8, u32)>,
    in_event: bool,
    started: bool,
    resources: Vec<Res>,
    program_off: Vec<u32>, // program i: ops[program_off[i]..program_off[i + 1]]
    ops: Vec<Op>,
    scheds: Vec<Sched>,
    items: Vec<Item>,
    run_sched: Vec<i64>,
    flights: Vec<Option<Flight>>,
    nodes: Vec<Node>,
    procs: Vec<Proc>,
    live: usize,
    barriers: Vec<Barrier>,
    timing_start: Vec<f64>,
    timing_end: Vec<f64>,
    span_node: Vec<u32>,
    span_kind: Vec<u8>,
    span_start: Vec<f64>,
    span_end: Vec<f64>,
    span_label: Vec<u32>,
    span_peer: Vec<i64>,
    max_spans: usize,
    spans_left_out: u64,
    log: Vec<u32>,
    events: u64,
    max_events: Option<u64>,
    time_limit_s: Option<f64>,
    deadline: Option<Instant>,
}

impl Core {
    fn schedule(&mut self, delay_s: f64, act: u8, id: u32) {
        let at = self.now + delay_s;
        self.heap.push(Reverse((at.to_bits(), self.seq, act, id)));
        self.seq += 1;
    }

    fn span(&mut self, node: u32, kind: u8, start_s: f64, label: u32, peer: i64) {
        if self.span_node.len() >= self.max_spans {
            self.spans_left_out += 1;
            return;
        }
        self.span_node.push(node);
        self.span_kind.push(kind);
        self.span_start.push(start_s);
        self.span_end.push(self.now);
        self.span_label.push(label);
        self.span_peer.push(peer);
    }

    fn account(&mut self, r: usize) {
        let now = self.now;
        let res = &mut self.resources[r];
        res.busy_s += (now - res.since_s) * res.holders.len() as f64 / res.capacity as f64;
        res.since_s = now;
    }

    /// Request a unit of `r` for `pid`; true: granted now, the process goes on.
    fn request(&mut self, r: usize, pid: u32) -> bool {
        let now = self.now;
        let res = &mut self.resources[r];
        if res.unit {
            if res.holders.is_empty() && res.queue.is_empty() {
                res.holders.push(pid);
                res.since_s = now;
                return true;
            }
            res.queue.push_back(pid);
            return false;
        }
        if res.holders.len() < res.capacity && res.queue.is_empty() {
            self.account(r);
            self.resources[r].holders.push(pid);
            if self.resources[r].grant_now {
                return true;
            }
            self.schedule(0.0, ACT_RESUME, pid);
            return false;
        }
        self.resources[r].queue.push_back(pid);
        false
    }

    fn release(&mut self, r: usize, pid: u32) {
        let now = self.now;
        if self.resources[r].unit {
            let res = &mut self.resources[r];
            res.busy_s += now - res.since_s;
            res.holders.clear();
            if let Some(waiter) = res.queue.pop_front() {
                res.holders.push(waiter);
                res.since_s = now;
                self.procs[waiter as usize].waits_for = NONE;
                self.schedule(0.0, ACT_RESUME, waiter);
            }
            return;
        }
        self.account(r);
        let res = &mut self.resources[r];
        match res.holders.iter().position(|&h| h == pid) {
            Some(i) => {
                res.holders.remove(i);
            }
            None => {
                if !res.holders.is_empty() {
                    res.holders.remove(0);
                }
            }
        }
        if let Some(waiter) = res.queue.pop_front() {
            res.holders.push(waiter);
            self.procs[waiter as usize].waits_for = NONE;
            self.schedule(0.0, ACT_RESUME, waiter);
        }
    }

    fn expand(&mut self, act: u8, id: u32) {
        match act {
            ACT_RESUME => self.pending.push_back((ACT_RESUME, id)),
            ACT_PROC_DONE => {
                let p = &self.procs[id as usize];
                if p.msg != NONE {
                    self.pending.push_back((PENDING_ONE_DONE, p.node));
                }
            }
            ACT_INBOX_DONE => self.pending.push_back((PENDING_ONE_DONE, id)),
            ACT_ALLOF_DONE => self.pending.push_back((ACT_RESUME, id)),
            _ => {
                for i in 0..self.barriers[id as usize].arrived.len() {
                    let node = self.barriers[id as usize].arrived[i];
                    self.pending.push_back((ACT_RESUME, node));
                }
            }
        }
    }

    fn exec(&mut self, act: u8, id: u32) -> Result<(), Halt> {
        if act == PENDING_ONE_DONE {
            let node = &mut self.nodes[id as usize];
            node.remaining -= 1;
            if node.remaining == 0 {
                self.schedule(0.0, ACT_ALLOF_DONE, id);
            }
            return Ok(());
        }
        if self.procs[id as usize].msg == NONE {
            self.resume_node(id as usize)
        } else {
            self.resume_send(id)
        }
    }

    fn resume_node(&mut self, n: usize) -> Result<(), Halt> {
        loop {
            match self.nodes[n].state {
                AT_ITEM => {
                    let i = self.nodes[n].item;
                    if i == self.items.len() {
                        self.nodes[n].finish_s = self.now;
                        self.nodes[n].state = NODE_DONE;
                        self.procs[n].done = true;
                        self.live -= 1;
                        self.schedule(0.0, ACT_PROC_DONE, n as u32);
                        return Ok(());
                    }
                    let it = self.items[i];
                    let node = n as u32;
                    if node < it.first || node >= it.first + it.nprocs {
                        self.nodes[n].item += 1;
                        continue;
                    }
                    if it.compute {
                        self.nodes[n].start_s = self.now;
                        self.schedule(it.cost_s, ACT_RESUME, node);
                        self.nodes[n].state = COMPUTE_WAIT;
                        return Ok(());
                    }
                    let run = it.run as usize;
                    if self.run_sched[run] < 0 {
                        return Err(Halt::NeedRun(it.run));
                    }
                    self.timing_start[run] = self.timing_start[run].min(self.now);
                    if self.flights[run].is_none() {
                        let s = self.run_sched[run] as usize;
                        let sched = &self.scheds[s];
                        self.flights[run] = Some(Flight {
                            sched: s,
                            inside: sched.nprocs,
                            inbox_pending: vec![-1; sched.nphases * sched.nprocs],
                            arrived: vec![0; sched.nkeys.div_ceil(64)],
                            barriers: HashMap::new(),
                        });
                    }
                    self.nodes[n].phase = 0;
                    self.nodes[n].state = ENTER_PHASE;
                }
                COMPUTE_WAIT => {
                    let it = self.items[self.nodes[n].item];
                    let start_s = self.nodes[n].start_s;
                    self.span(n as u32, SPAN_COMPUTE, start_s, it.label, -1);
                    self.nodes[n].item += 1;
                    self.nodes[n].state = AT_ITEM;
                }
                ENTER_PHASE => {
                    if !self.enter_phase(n) {
                        return Ok(());
                    }
                }
                PHASE_WAIT => {
                    let run = self.items[self.nodes[n].item].run as usize;
                    let flight = self.flights[run].as_ref().unwrap();
                    let sched = &self.scheds[flight.sched];
                    let slot = self.nodes[n].phase * sched.nprocs + n;
                    let group = sched.slot_barrier[slot];
                    if group >= 0 {
                        let (size, delay_s) =
                            (sched.barrier_size[group as usize], sched.barrier_delay_s[group as usize]);
                        let bid = match flight.barriers.get(&(group as u32)) {
                            Some(&b) => b,
                            None => {
                                let b = self.barriers.len() as u32;
                                self.barriers.push(Barrier { arrived: Vec::new(), missing: size });
                                self.flights[run].as_mut().unwrap().barriers.insert(group as u32, b);
                                b
                            }
                        };
                        let barrier = &mut self.barriers[bid as usize];
                        barrier.arrived.push(n as u32);
                        barrier.missing -= 1;
                        if barrier.missing == 0 {
                            self.schedule(delay_s, ACT_BARRIER, bid);
                        }
                        self.nodes[n].barrier = bid;
                        self.nodes[n].state = BARRIER_WAIT;
                        return Ok(());
                    }
                    self.end_phase(n);
                }
                BARRIER_WAIT => self.end_phase(n),
                _ => return Ok(()),
            }
        }
    }

    fn end_phase(&mut self, n: usize) {
        let (start_s, phase) = (self.nodes[n].start_s, self.nodes[n].phase);
        self.span(n as u32, SPAN_PHASE, start_s, phase as u32, -1);
        self.nodes[n].phase += 1;
        self.nodes[n].state = ENTER_PHASE;
    }

    /// Start node n's phase (or leave the schedule after its last); false: the node now waits.
    fn enter_phase(&mut self, n: usize) -> bool {
        let run = self.items[self.nodes[n].item].run as usize;
        let s = self.flights[run].as_ref().unwrap().sched;
        let (nphases, nprocs) = (self.scheds[s].nphases, self.scheds[s].nprocs);
        let k = self.nodes[n].phase;
        if k == nphases {
            self.timing_end[run] = self.timing_end[run].max(self.now);
            let flight = self.flights[run].as_mut().unwrap();
            flight.inside -= 1;
            if flight.inside == 0 {
                self.flights[run] = None;
                self.log.extend_from_slice(&[LOG_LEAVE, run as u32, 0]);
            }
            self.nodes[n].item += 1;
            self.nodes[n].state = AT_ITEM;
            return true;
        }
        self.nodes[n].start_s = self.now;
        let slot = k * nprocs + n;
        let mut children = std::mem::take(&mut self.nodes[n].children);
        children.clear();
        let (lo, hi) = (self.scheds[s].slot_msg_off[slot] as usize, self.scheds[s].slot_msg_off[slot + 1] as usize);
        for j in lo..hi {
            let msg = self.scheds[s].slot_msgs[j];
            let pid = self.procs.len() as u32;
            self.procs.push(Proc {
                node: n as u32,
                run: run as u32,
                msg,
                pc: 0,
                started: false,
                done: false,
                waits_for: NONE,
                start_s: 0.0,
            });
            self.live += 1;
            self.schedule(0.0, ACT_RESUME, pid);
            children.push(pid);
        }
        let inbox = self.scheds[s].slot_has_inbox[slot];
        if inbox {
            let sched = &self.scheds[s];
            let flight = self.flights[run].as_mut().unwrap();
            let (lo, hi) = (sched.slot_inbox_off[slot] as usize, sched.slot_inbox_off[slot + 1] as usize);
            let due = sched.slot_inbox_keys[lo..hi]
                .iter()
                .filter(|&&key| flight.arrived[key as usize / 64] >> (key % 64) & 1 == 0)
                .count() as i64;
            flight.inbox_pending[slot] = due;
            if due == 0 {
                self.schedule(0.0, ACT_INBOX_DONE, n as u32);
            }
        }
        let remaining = children.len() as u32 + inbox as u32;
        let node = &mut self.nodes[n];
        node.children = children;
        node.inbox = inbox;
        node.remaining = remaining;
        node.state = PHASE_WAIT;
        if remaining == 0 {
            self.schedule(0.0, ACT_ALLOF_DONE, n as u32);
        }
        false
    }

    fn resume_send(&mut self, pid: u32) -> Result<(), Halt> {
        let p = pid as usize;
        let (run, msg) = (self.procs[p].run as usize, self.procs[p].msg as usize);
        let s = self.flights[run].as_ref().unwrap().sched;
        if !self.procs[p].started {
            self.procs[p].started = true;
            self.procs[p].start_s = self.now;
            self.log.extend_from_slice(&[LOG_START, run as u32, msg as u32]);
        }
        let program = self.scheds[s].msg_program[msg] as usize;
        let (first, end) = (self.program_off[program] as usize, self.program_off[program + 1] as usize);
        while first + (self.procs[p].pc as usize) < end {
            let op = self.ops[first + self.procs[p].pc as usize];
            self.procs[p].pc += 1;
            match op {
                Op::Acquire(r) => {
                    if !self.request(r as usize, pid) {
                        self.procs[p].waits_for = r;
                        return Ok(());
                    }
                }
                Op::Hold(delay_s) => {
                    self.schedule(delay_s, ACT_RESUME, pid);
                    return Ok(());
                }
                Op::Release(r) => self.release(r as usize, pid),
            }
        }
        self.log.extend_from_slice(&[LOG_END, run as u32, msg as u32]);
        let sched = &self.scheds[s];
        let nprocs = sched.nprocs;
        let (lo, hi) = (sched.msg_key_off[msg] as usize, sched.msg_key_off[msg + 1] as usize);
        let mut complete: Vec<u32> = Vec::new();
        {
            let flight = self.flights[run].as_mut().unwrap();
            for j in lo..hi {
                let key = sched.msg_keys[j] as usize;
                if flight.arrived[key / 64] >> (key % 64) & 1 == 1 {
                    return Err(Halt::SentTwice);
                }
                flight.arrived[key / 64] |= 1 << (key % 64);
                let due = sched.key_due[key];
                if due >= 0 && flight.inbox_pending[due as usize] > 0 {
                    flight.inbox_pending[due as usize] -= 1;
                    if flight.inbox_pending[due as usize] == 0 {
                        complete.push((due as usize % nprocs) as u32);
                    }
                }
            }
        }
        let kind = if sched.msg_copy[msg] { SPAN_COPY } else { SPAN_SEND };
        let (src, dst, label) = (sched.msg_src[msg], sched.msg_dst[msg], sched.msg_label[msg]);
        for node in complete {
            self.schedule(0.0, ACT_INBOX_DONE, node);
        }
        let start_s = self.procs[p].start_s;
        self.span(src, kind, start_s, label, dst as i64);
        self.procs[p].done = true;
        self.live -= 1;
        self.schedule(0.0, ACT_PROC_DONE, pid);
        Ok(())
    }

    /// (kind, a, b) naming a process for Python: (0, node, 0) a node walker, (1, run, message).
    fn who(&self, pid: u32) -> (i64, i64, i64) {
        let p = &self.procs[pid as usize];
        if p.msg == NONE {
            (0, p.node as i64, 0)
        } else {
            (1, p.run as i64, p.msg as i64)
        }
    }
}

type Waits = Vec<((i64, i64, i64), String, Vec<i64>, Vec<(i64, i64, i64)>)>;

#[pymethods]
impl Core {
    #[new]
    #[pyo3(signature = (nprocs, run_count, max_spans, max_events=None, time_limit_s=None))]
    fn new(nprocs: usize, run_count: usize, max_spans: usize, max_events: Option<u64>,
           time_limit_s: Option<f64>) -> Self {
        let nodes = (0..nprocs)
            .map(|_| Node { item: 0, phase: 0, state: AT_ITEM, start_s: 0.0, children: Vec::new(),
                            inbox: false, remaining: 0, barrier: NONE, finish_s: 0.0 })
            .collect();
        Core {
            nprocs, now: 0.0, seq: 0, heap: BinaryHeap::new(), pending: VecDeque::new(),
            in_event: false, started: false, resources: Vec::new(), program_off: vec![0], ops: Vec::new(),
            scheds: Vec::new(), items: Vec::new(), run_sched: vec![-1; run_count],
            flights: (0..run_count).map(|_| None).collect(), nodes, procs: Vec::new(), live: 0,
            barriers: Vec::new(), timing_start: vec![f64::INFINITY; run_count],
            timing_end: vec![0.0; run_count], span_node: Vec::new(), span_kind: Vec::new(),
            span_start: Vec::new(), span_end: Vec::new(), span_label: Vec::new(),
            span_peer: Vec::new(), max_spans, spans_left_out: 0, log: Vec::new(), events: 0,
            max_events, time_limit_s, deadline: None,
        }
    }

    /// A Resource (`unit`) or a Pool of `capacity` units; returns its id.
    fn add_resource(&mut self, unit: bool, capacity: usize, grant_now: bool) -> PyResult<u32> {
        if capacity < 1 || (unit && capacity != 1) {
            return Err(PyValueError::new_err(format!("a resource needs 1 unit, a pool at least 1, not {capacity}")));
        }
        self.resources.push(Res { unit, capacity, grant_now, holders: Vec::new(), queue: VecDeque::new(),
                                  busy_s: 0.0, since_s: 0.0 });
        Ok(self.resources.len() as u32 - 1)
    }

    /// Message programs, program i being ops offsets[i]..offsets[i + 1]: `codes` 0 acquire,
    /// 1 hold, 2 release; `args` the resource id (acquire, release), `holds_s` the seconds
    /// (hold). Returns the id of the first.
    fn add_programs(&mut self, offsets: Vec<u32>, codes: Vec<u8>, args: Vec<u32>, holds_s: Vec<f64>)
                    -> PyResult<u32> {
        let first = self.program_off.len() as u32 - 1;
        let base = self.ops.len() as u32;
        if offsets.first() != Some(&0) || *offsets.last().unwrap() as usize != codes.len()
            || args.len() != codes.len() || holds_s.len() != codes.len() {
            return Err(PyValueError::new_err("program arrays of inconsistent lengths"));
        }
        for (i, &code) in codes.iter().enumerate() {
            let op = match code {
                0 | 2 if args[i] as usize >= self.resources.len() => {
                    return Err(PyValueError::new_err(format!("program op {i}: no resource {}", args[i])))
                }
                0 => Op::Acquire(args[i]),
                1 => Op::Hold(holds_s[i]),
                2 => Op::Release(args[i]),
                _ => return Err(PyValueError::new_err(format!("program op {i}: unknown code {code}"))),
            };
            self.ops.push(op);
        }
        self.program_off.extend(offsets[1..].iter().map(|&o| base + o));
        Ok(first)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_schedule(&mut self, nprocs: usize, nphases: usize, msg_src: Vec<u32>, msg_dst: Vec<u32>,
                    msg_program: Vec<u32>, msg_label: Vec<u32>, msg_copy: Vec<bool>,
                    msg_key_off: Vec<u32>, msg_keys: Vec<u32>, slot_msg_off: Vec<u32>,
                    slot_msgs: Vec<u32>, slot_has_inbox: Vec<bool>, slot_inbox_off: Vec<u32>,
                    slot_inbox_keys: Vec<u32>, key_due: Vec<i64>, slot_barrier: Vec<i64>,
                    barrier_size: Vec<u32>, barrier_delay_s: Vec<f64>) -> PyResult<u32> {
        let slots = nphases * nprocs;
        if slot_msg_off.len() != slots + 1 || slot_inbox_off.len() != slots + 1
            || slot_has_inbox.len() != slots || slot_barrier.len() != slots
            || msg_key_off.len() != msg_src.len() + 1 || nprocs > self.nprocs
        {
            return Err(PyValueError::new_err("schedule arrays of inconsistent lengths"));
        }
        if msg_program.iter().any(|&p| p as usize + 1 >= self.program_off.len()) {
            return Err(PyValueError::new_err("a message names an unknown program"));
        }
        let nkeys = key_due.len();
        self.scheds.push(Sched { nprocs, nphases, msg_src, msg_dst, msg_program, msg_label, msg_copy,
                                 msg_key_off, msg_keys, slot_msg_off, slot_msgs, slot_has_inbox,
                                 slot_inbox_off, slot_inbox_keys, key_due, slot_barrier, barrier_size,
                                 barrier_delay_s, nkeys });
        Ok(self.scheds.len() as u32 - 1)
    }

    /// The plan's steps in order: a compute step (`compute`) on nodes first..first+nprocs, or run
    /// `run` of a schedule on nodes 0..nprocs.
    fn set_items(&mut self, compute: Vec<bool>, first: Vec<u32>, nprocs: Vec<u32>, cost_s: Vec<f64>,
                 label: Vec<u32>, run: Vec<u32>) {
        self.items = (0..compute.len())
            .map(|i| Item { compute: compute[i], first: first[i], nprocs: nprocs[i], cost_s: cost_s[i],
                            label: label[i], run: run[i] })
            .collect();
    }

    /// Run `run` uses schedule `sched` (its data is open in Python).
    fn open_run(&mut self, run: usize, sched: i64) {
        self.run_sched[run] = sched;
    }

    /// Process events until the model finishes or halts. Returns (status, argument): FINISHED,
    /// NEED_RUN (run: open it and call again), DEADLOCK, STOPPED_EVENTS, STOPPED_TIME, SENT_TWICE.
    fn run(&mut self) -> (u8, u32) {
        if !self.started {
            self.started = true;
            self.deadline = self.time_limit_s.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
            for n in 0..self.nprocs {
                self.procs.push(Proc { node: n as u32, run: NONE, msg: NONE, pc: 0, started: true,
                                       done: false, waits_for: NONE, start_s: 0.0 });
                self.live += 1;
                self.schedule(0.0, ACT_RESUME, n as u32);
            }
        }
        loop {
            while let Some(&(act, id)) = self.pending.front() {
                match self.exec(act, id) {
                    Ok(()) => {
                        self.pending.pop_front();
                    }
                    Err(Halt::NeedRun(run)) => return (NEED_RUN, run),
                    Err(Halt::SentTwice) => {
                        self.pending.pop_front();
                        return (SENT_TWICE, 0);
                    }
                }
            }
            if self.in_event {
                self.in_event = false;
                self.events += 1;
                if self.max_events.is_some_and(|m| self.events >= m) {
                    return (STOPPED_EVENTS, 0);
                }
                if let Some(deadline) = self.deadline {
                    if self.events % WALL_CLOCK_EVERY == 0 && Instant::now() > deadline {
                        return (STOPPED_TIME, 0);
                    }
                }
            }
            match self.heap.pop() {
                None => break,
                Some(Reverse((at, _, act, id))) => {
                    self.now = f64::from_bits(at);
                    self.expand(act, id);
                    self.in_event = true;
                }
            }
        }
        if self.live > 0 {
            (DEADLOCK, 0)
        } else {
            (FINISHED, 0)
        }
    }

    /// The log since the last call, (code, run, message) triples: 0 start, 1 end, 2 run left.
    fn take_log(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.log)
    }

    #[getter]
    fn now(&self) -> f64 {
        self.now
    }

    #[getter]
    fn events(&self) -> u64 {
        self.events
    }

    #[getter]
    fn spans_left_out(&self) -> u64 {
        self.spans_left_out
    }

    fn busy(&self) -> Vec<f64> {
        self.resources.iter().map(|r| r.busy_s).collect()
    }

    fn finish(&self) -> Vec<f64> {
        self.nodes.iter().map(|n| n.finish_s).collect()
    }

    fn timings(&self) -> (Vec<f64>, Vec<f64>) {
        (self.timing_start.clone(), self.timing_end.clone())
    }

    #[allow(clippy::type_complexity)]
    fn spans(&self) -> (Vec<u32>, Vec<u8>, Vec<f64>, Vec<f64>, Vec<u32>, Vec<i64>) {
        (self.span_node.clone(), self.span_kind.clone(), self.span_start.clone(), self.span_end.clone(),
         self.span_label.clone(), self.span_peer.clone())
    }

    /// What each live process waits for, for a deadlock report: (who, "allof" | "barrier" |
    /// "resource", info, blockers). allof: info [run, phase, inbox still pending], blockers the
    /// unfinished message processes; barrier: info [run, phase, group], blockers the nodes in it;
    /// resource: info [resource], blockers its holders.
    fn live_waits(&self) -> Waits {
        let mut out = Vec::new();
        for (pid, p) in self.procs.iter().enumerate() {
            if p.done {
                continue;
            }
            let who = self.who(pid as u32);
            if p.msg != NONE {
                if p.waits_for != NONE {
                    let holders = self.resources[p.waits_for as usize].holders.iter().map(|&h| self.who(h)).collect();
                    out.push((who, "resource".to_string(), vec![p.waits_for as i64], holders));
                }
                continue;
            }
            let node = &self.nodes[p.node as usize];
            let run = self.items.get(node.item).map_or(0, |it| it.run) as i64;
            if node.state == PHASE_WAIT {
                let flight = self.flights[run as usize].as_ref().unwrap();
                let nprocs = self.scheds[flight.sched].nprocs;
                let slot = node.phase * nprocs + p.node as usize;
                let pending = node.inbox && flight.inbox_pending[slot] != 0;
                let children = node.children.iter().filter(|&&c| !self.procs[c as usize].done)
                    .map(|&c| self.who(c)).collect();
                out.push((who, "allof".to_string(), vec![run, node.phase as i64, pending as i64], children));
            } else if node.state == BARRIER_WAIT {
                let flight = self.flights[run as usize].as_ref().unwrap();
                let nprocs = self.scheds[flight.sched].nprocs;
                let group = self.scheds[flight.sched].slot_barrier[node.phase * nprocs + p.node as usize];
                let arrived = self.barriers[node.barrier as usize].arrived.iter().map(|&n| (0, n as i64, 0)).collect();
                out.push((who, "barrier".to_string(), vec![run, node.phase as i64, group], arrived));
            }
        }
        out
    }
}

#[pymodule]
fn phalanx_engine_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add("FINISHED", FINISHED)?;
    m.add("NEED_RUN", NEED_RUN)?;
    m.add("DEADLOCK", DEADLOCK)?;
    m.add("STOPPED_EVENTS", STOPPED_EVENTS)?;
    m.add("STOPPED_TIME", STOPPED_TIME)?;
    m.add("SENT_TWICE", SENT_TWICE)?;
    m.add("LOG_START", LOG_START)?;
    m.add("LOG_END", LOG_END)?;
    m.add("LOG_LEAVE", LOG_LEAVE)?;
    m.add("SPAN_COMPUTE", SPAN_COMPUTE)?;
    m.add("SPAN_SEND", SPAN_SEND)?;
    m.add("SPAN_COPY", SPAN_COPY)?;
    m.add("SPAN_PHASE", SPAN_PHASE)?;
    Ok(())
}
