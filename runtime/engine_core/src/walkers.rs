//! The node walkers and message processes of runtime/interpreter.py, event for event.

use crate::model::*;
use crate::shapes::{Program, ShapedOp};
use std::collections::HashMap;

impl Core {
    pub(crate) fn expand(&mut self, act: u8, id: u32) {
        match act {
            ACT_RESUME => self.pending.push_back((ACT_RESUME, id)),
            ACT_PROC_DONE => {
                let p = &mut self.procs[id as usize];
                p.flags |= PROCESSED;
                if p.has(WAITED) {
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

    pub(crate) fn exec(&mut self, act: u8, id: u32) -> Result<(), Halt> {
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

    pub(crate) fn resume_node(&mut self, n: usize) -> Result<(), Halt> {
        loop {
            match self.nodes[n].state {
                AT_ITEM => {
                    let i = self.nodes[n].item;
                    if i == self.items.len() {
                        self.nodes[n].finish_s = self.now;
                        self.nodes[n].state = NODE_DONE;
                        self.procs[n].flags |= DONE;
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
                            inbox_slot: vec![NONE; sched.nprocs],
                            inbox_pending: vec![0; sched.nprocs],
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
                    let group = sched.barrier_of(slot);
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
                STREAM_WAIT => {
                    let streaming = std::mem::take(&mut self.nodes[n].streaming);
                    self.nodes[n].streaming = self.free_procs(streaming);
                    self.leave_schedule(n);
                }
                _ => return Ok(()),
            }
        }
    }

    pub(crate) fn end_phase(&mut self, n: usize) {
        let (start_s, phase) = (self.nodes[n].start_s, self.nodes[n].phase);
        self.span(n as u32, SPAN_PHASE, start_s, phase as u32, -1);
        self.nodes[n].phase += 1;
        self.nodes[n].state = ENTER_PHASE;
    }

    /// Node n leaves its schedule's run (the last node out closes it).
    fn leave_schedule(&mut self, n: usize) {
        let run = self.items[self.nodes[n].item].run as usize;
        self.timing_end[run] = self.timing_end[run].max(self.now);
        let flight = self.flights[run].as_mut().unwrap();
        flight.inside -= 1;
        if flight.inside == 0 {
            self.flights[run] = None;
            self.log.extend_from_slice(&[LOG_LEAVE, run as u32, 0]);
        }
        self.nodes[n].item += 1;
        self.nodes[n].state = AT_ITEM;
    }

    /// These message processes are out of their node's waits: those whose end was processed
    /// (all of them, once the node's wait for them is over) are free for reuse; returns the
    /// list emptied.
    fn free_procs(&mut self, mut procs: Vec<u32>) -> Vec<u32> {
        for &pid in &procs {
            if self.procs[pid as usize].has(PROCESSED) {
                self.free_procs.push(pid);
            }
        }
        procs.clear();
        procs
    }

    /// Count these processes' ends in node n's wait (WAITED), but those already processed, as
    /// the Python engine's all_of does; returns how many it counts.
    fn wait_for(&mut self, procs: &[u32]) -> u32 {
        let mut counted = 0;
        for &pid in procs {
            let p = &mut self.procs[pid as usize];
            if !p.has(PROCESSED) {
                p.flags |= WAITED;
                counted += 1;
            }
        }
        counted
    }

    /// Start node n's phase (or leave the schedule after its last, once the sends of its last
    /// eager phase are delivered); false: the node now waits.
    pub(crate) fn enter_phase(&mut self, n: usize) -> bool {
        let run = self.items[self.nodes[n].item].run as usize;
        let s = self.flights[run].as_ref().unwrap().sched;
        let (nphases, nprocs) = (self.scheds[s].nphases, self.scheds[s].nprocs);
        let k = self.nodes[n].phase;
        // an eager phase's sends stream on while the node runs the next phase, whose wait
        // counts them instead of its own (compiler/plan_walk.py walk_phases)
        let mut children = std::mem::take(&mut self.nodes[n].children);
        let streaming = std::mem::take(&mut self.nodes[n].streaming);
        let mut streaming = self.free_procs(streaming);
        if k > 0 && self.scheds[s].phase_eager[k - 1] {
            std::mem::swap(&mut streaming, &mut children);
        }
        children = self.free_procs(children);
        if k == nphases {
            let waits = !streaming.is_empty();
            let remaining = self.wait_for(&streaming);
            let node = &mut self.nodes[n];
            (node.children, node.streaming) = (children, streaming);
            if !waits {
                self.leave_schedule(n);
                return true;
            }
            (node.inbox, node.remaining, node.state) = (false, remaining, STREAM_WAIT);
            if remaining == 0 {
                self.schedule(0.0, ACT_ALLOF_DONE, n as u32);
            }
            return false;
        }
        self.nodes[n].start_s = self.now;
        let slot = k * nprocs + n;
        let (lo, hi) = self.scheds[s].msgs_of(slot);
        for msg in lo..hi {
            let sched = &self.scheds[s];
            let (dst, program) = (sched.msg_dst[msg], sched.msg_program[msg]);
            let proc = Proc { node: n as u32, run: run as u32, msg: msg as u32, src: n as u32, dst, program,
                              waits_for: NONE, route: NONE, next_waiter: NONE, start_s: 0.0, pc: 0, flags: 0 };
            let pid = match self.free_procs.pop() {
                Some(pid) => {
                    self.procs[pid as usize] = proc;
                    pid
                }
                None => {
                    self.procs.push(proc);
                    self.procs.len() as u32 - 1
                }
            };
            self.live += 1;
            self.schedule(0.0, ACT_RESUME, pid);
            children.push(pid);
        }
        let (inbox_lo, inbox_hi) = self.scheds[s].inbox_of(slot);
        let inbox = inbox_hi > inbox_lo;
        if inbox {
            let sched = &self.scheds[s];
            let flight = self.flights[run].as_mut().unwrap();
            let due = sched.slot_inbox_keys[inbox_lo..inbox_hi]
                .iter()
                .filter(|&&key| flight.arrived[key as usize / 64] >> (key % 64) & 1 == 0)
                .count() as i64;
            (flight.inbox_slot[n], flight.inbox_pending[n]) = (slot as u32, due as u32);
            if due == 0 {
                self.schedule(0.0, ACT_INBOX_DONE, n as u32);
            }
        }
        let mut remaining = self.wait_for(&streaming) + inbox as u32;
        if !self.scheds[s].phase_eager[k] {
            remaining += self.wait_for(&children);
        }
        let node = &mut self.nodes[n];
        (node.children, node.streaming) = (children, streaming);
        node.inbox = inbox;
        node.remaining = remaining;
        node.state = PHASE_WAIT;
        if remaining == 0 {
            self.schedule(0.0, ACT_ALLOF_DONE, n as u32);
        }
        false
    }

    pub(crate) fn resume_send(&mut self, pid: u32) -> Result<(), Halt> {
        let p = pid as usize;
        let (run, msg) = (self.procs[p].run as usize, self.procs[p].msg as usize);
        if !self.procs[p].has(STARTED) {
            self.procs[p].flags |= STARTED;
            self.procs[p].start_s = self.now;
            self.log.extend_from_slice(&[LOG_START, run as u32, msg as u32]);
        }
        let program = self.programs[self.procs[p].program as usize];
        while let Some(op) = self.op_at(program, p) {
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
                Op::WaitGate { collective, link, phase } => {
                    if !self.wait_gate(collective, link, phase, pid) {
                        return Ok(());
                    }
                }
                Op::PassTail { collective, link } => self.pass_tail(collective, link),
            }
        }
        if self.procs[p].route != NONE {
            self.free_routes.push(self.procs[p].route);
            self.procs[p].route = NONE;
        }
        self.log.extend_from_slice(&[LOG_END, run as u32, msg as u32]);
        let s = self.flights[run].as_ref().unwrap().sched;
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
                if due < 0 {
                    continue; // due at no node's inbox
                }
                let node = due as usize % nprocs; // its slot's node, if in that inbox now
                if flight.inbox_slot[node] == due as u32 && flight.inbox_pending[node] > 0 {
                    flight.inbox_pending[node] -= 1;
                    if flight.inbox_pending[node] == 0 {
                        complete.push(node as u32);
                    }
                }
            }
        }
        let (src, dst, label) = (self.procs[p].src, self.procs[p].dst, sched.label_base + msg as u32);
        let kind = if src == dst { SPAN_COPY } else { SPAN_SEND };
        for node in complete {
            self.schedule(0.0, ACT_INBOX_DONE, node);
        }
        let start_s = self.procs[p].start_s;
        self.span(src, kind, start_s, label, dst as i64);
        self.procs[p].flags |= DONE;
        self.live -= 1;
        self.schedule(0.0, ACT_PROC_DONE, pid);
        Ok(())
    }

    /// A free slot of `routes` (its first u32's index) holding the route's resources of process
    /// p's shaped message (`shaped_op`).
    fn route_slot(&mut self, program: Program, p: usize) -> u32 {
        let words = self.route_words;
        let at = self.free_routes.pop().unwrap_or_else(|| {
            self.routes.resize(self.routes.len() + words, 0);
            (self.routes.len() - words) as u32
        });
        let (src, dst) = (self.procs[p].src, self.procs[p].dst);
        let (mut routes, mut hops) = (std::mem::take(&mut self.routes), std::mem::take(&mut self.hops));
        self.route_resources(program, src, dst, &mut hops, &mut routes[at as usize..at as usize + words]);
        (self.routes, self.hops) = (routes, hops);
        at
    }

    /// Process p's next op of `program`, None after its last.
    fn op_at(&mut self, program: Program, p: usize) -> Option<Op> {
        let proc = &self.procs[p];
        let (pc, src, dst, at) = (proc.pc as usize, proc.src, proc.dst, proc.route as usize);
        match program {
            Program::Ops { first, end } => {
                let at = first as usize + pc;
                (at < end as usize).then(|| self.ops[at])
            }
            Program::Shaped { .. } | Program::Switched(_) => {
                let route = (at != NONE as usize).then(|| &self.routes[at..at + self.route_words]);
                match self.shaped_op(program, pc, src, dst, route) {
                    ShapedOp::Op(op) => Some(op),
                    ShapedOp::End => None,
                    ShapedOp::NeedsRoute => {
                        let at = self.route_slot(program, p) as usize;
                        self.procs[p].route = at as u32;
                        match self.shaped_op(program, pc, src, dst, Some(&self.routes[at..at + self.route_words])) {
                            ShapedOp::Op(op) => Some(op),
                            _ => None,
                        }
                    }
                }
            }
        }
    }
}
