//! The node walkers and message processes of runtime/interpreter.py, event for event.

use crate::model::*;
use crate::events::Entry;
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
                if p.has(UNLISTED) {
                    self.free_procs.push(id);
                }
            }
            ACT_SEND_NEXT => self.pending.push_back((ACT_SEND_NEXT, id)),
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
        if act == ACT_SEND_NEXT {
            return self.send_next(id as usize);
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
                    self.span(n as u32, SPAN_COMPUTE, start_s, it.label);
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
        self.span(n as u32, SPAN_PHASE, start_s, phase as u32);
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
        let eager = self.scheds[s].phase_eager[k];
        if eager {
            for msg in lo..hi {
                let proc = self.send_proc(s, run, n, msg as u32, 0);
                let pid = self.new_proc(proc);
                self.live += 1;
                self.schedule(0.0, ACT_RESUME, pid);
                children.push(pid);
            }
        } else {
            // the sends start one by one from the node's cursor (send_next), as the resumes of
            // records made here would, from one entry of the no-delay queue per 64K sends
            self.live += hi - lo;
            let node = &mut self.nodes[n];
            (node.sends_start, node.next_send, node.sends_end) = (lo as u32, lo as u32, hi as u32);
            let mut left = hi - lo;
            while left > 0 {
                let count = left.min(u16::MAX as usize);
                self.events_due.push_now(Entry { at_bits: self.now.to_bits(), seq: self.seq, id: n as u32,
                                                 act: ACT_SEND_NEXT, count: count as u16 });
                self.seq += count as u64;
                left -= count;
            }
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
        if !eager {
            remaining += (hi - lo) as u32; // none started yet (send_next marks them WAITED)
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

    /// The record of message `msg` of schedule `s`, run `run`, sent by node n, with `flags`.
    fn send_proc(&self, s: usize, run: usize, n: usize, msg: u32, flags: u8) -> Proc {
        let sched = &self.scheds[s];
        let (dst, program) = (sched.msg_dst[msg as usize], sched.msg_program[msg as usize]);
        Proc { node: n as u32, run: run as u32, msg, src: n as u32, dst, program, waits_for: NONE, route: NONE,
               next_waiter: NONE, start_s: 0.0, pc: 0, flags }
    }

    /// A process record for `proc`, a free one reused where there is one; returns its id.
    fn new_proc(&mut self, proc: Proc) -> u32 {
        match self.free_procs.pop() {
            Some(pid) => {
                self.procs[pid as usize] = proc;
                pid
            }
            None => {
                assert!(self.procs.len() < WAITING_GROUP as usize, "more process records than the core's ids");
                self.procs.push(proc);
                self.procs.len() as u32 - 1
            }
        }
    }

    /// Node n's next send of its phase starts: its record, resumed (`resume_send`; a send that
    /// queues gives it up again, `join_waiting`).
    fn send_next(&mut self, n: usize) -> Result<(), Halt> {
        let msg = self.nodes[n].next_send;
        self.nodes[n].next_send += 1;
        let run = self.items[self.nodes[n].item].run as usize;
        let s = self.flights[run].as_ref().unwrap().sched;
        let pid = self.new_proc(self.send_proc(s, run, n, msg, WAITED | UNLISTED));
        self.resume_send(pid)
    }

    /// Process p (a send of a phase its node waits for, UNLISTED) queues for `r` (the acquire
    /// its last op): where it holds nothing, it joins its node's sends before it that wait there
    /// last in the queue at the same op, or else starts a group of waiting sends there
    /// (Waiting), and its record is freed: true. A phase's thousands of sends queue at their
    /// node's processor, then at its send slot: their records were 48 bytes each.
    fn join_waiting(&mut self, p: usize, r: u32) -> bool {
        let proc = self.procs[p];
        if proc.route != NONE || !self.holds_nothing(proc) {
            return false;
        }
        let tail = self.resources[r as usize].queue_tail;
        let last = (tail != NONE && tail & WAITING_GROUP != 0).then_some((tail & !WAITING_GROUP) as usize);
        match last.filter(|&g| {
            let w = &self.waiting[g];
            w.node == proc.node && w.pc == proc.pc && w.hi == proc.msg
        }) {
            Some(g) => self.waiting[g].hi += 1,
            None => {
                let group = Waiting { node: proc.node, lo: proc.msg, hi: proc.msg + 1, res: r, next: NONE, pc: proc.pc };
                let at = match self.free_waiting.pop() {
                    Some(at) => {
                        self.waiting[at as usize] = group;
                        at
                    }
                    None => {
                        assert!(self.waiting.len() < WAITING_GROUP as usize, "more waiting groups than the core's ids");
                        self.waiting.push(group);
                        self.waiting.len() as u32 - 1
                    }
                };
                self.enqueue(r as usize, WAITING_GROUP | at);
            }
        }
        self.procs[p].flags |= DONE; // a free record (live_waits skips it)
        self.free_procs.push(p as u32);
        true
    }

    /// Process p's ops before its last (the acquire it queues for) leave it holding nothing: as
    /// many acquires as releases (a waiting send gives up its record, so no resource may name it
    /// as a holder); false where an op needs the route.
    fn holds_nothing(&self, p: Proc) -> bool {
        let program = self.programs[p.program as usize];
        let mut held = 0i32;
        for pc in 0..p.pc as usize - 1 {
            let op = match program {
                Program::Ops { first, .. } => self.ops[first as usize + pc],
                shaped => match self.shaped_op(shaped, pc, p.src, p.dst, None) {
                    ShapedOp::Op(op) => op,
                    _ => return false,
                },
            };
            match op {
                Op::Acquire(_) => held += 1,
                Op::Release(_) => held -= 1,
                _ => {}
            }
        }
        held == 0
    }

    /// The first send of group `at` of waiting sends (at the head of the queue of `r`) is
    /// granted `r`: it gets its record back, as it was when it queued (started at its phase's
    /// start, at the group's op); the group leaves the queue after its last send. Returns the
    /// record's id.
    pub(crate) fn take_waiting(&mut self, r: usize, at: usize) -> u32 {
        let w = self.waiting[at];
        self.waiting[at].lo += 1;
        if w.lo + 1 == w.hi {
            let res = &mut self.resources[r];
            res.queue_head = w.next;
            if w.next == NONE {
                res.queue_tail = NONE;
            }
            self.free_waiting.push(at as u32);
        }
        let n = w.node as usize;
        let run = self.items[self.nodes[n].item].run as usize;
        let s = self.flights[run].as_ref().unwrap().sched;
        let mut proc = self.send_proc(s, run, n, w.lo, STARTED | WAITED | UNLISTED);
        (proc.start_s, proc.pc, proc.waits_for) = (self.nodes[n].start_s, w.pc, r as u32);
        self.new_proc(proc)
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
                    let unlisted = self.procs[p].has(UNLISTED);
                    if unlisted && !self.grants_now(r as usize) && self.join_waiting(p, r) {
                        return Ok(());
                    }
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
        // (its peer, the receiver, is read from the schedule by its label: runtime/native_spans.py)
        self.span(src, kind, start_s, label);
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
