//! Resources (one unit) and pools (several): FIFO queues, busy time, holders, as
//! runtime/engine.py's Resource and Pool, granted at once to the running process.
//!
//! A resource's state is one small record (`Res`, 32 bytes aligned to 32: a 40-byte record
//! straddled two cache lines one time in two), so that a grant or a release reads one cache
//! line, what the resource is (unit or pool, capacity, `grant_now`) apart in `Core::kinds`
//! (8 bytes, never written once made): a unit's holder is a field of it, a pool's holders (in the order they got a
//! unit, for deadlock reports) sit apart in `Core::pool_holders`, and the FIFO queue of waiting
//! processes is a list threaded through `Core::next_waiter` (per process), its head and tail in
//! the record. (A torus message acquires some 70 resources on a 64x64 torus: the core's loop
//! waited on these records' cache misses more than it computed.)

use crate::model::*;

/// A Resource's or a Pool's state (runtime/engine.py Resource, Pool), 32 bytes aligned to 32, so
/// that no record straddles two cache lines; what it is (`Kind`) sits apart.
#[repr(align(32))]
pub(crate) struct Res {
    pub(crate) busy_s: f64,
    pub(crate) since_s: f64,
    pub(crate) held: u32, // units held
    // a unit's holder (NONE: free); a pool's index into Core::pool_holders
    pub(crate) holder_or_pool: u32,
    pub(crate) queue_head: u32, // the first process waiting (NONE: none), linked by Proc::next_waiter
    pub(crate) queue_tail: u32,
}

/// What a resource is: a Resource (`unit`) or a Pool of `capacity` units (Core::kinds).
#[derive(Clone, Copy)]
pub(crate) struct Kind {
    pub(crate) capacity: u32,
    pub(crate) unit: bool,
    pub(crate) grant_now: bool,
}

impl Core {
    /// A new resource (`unit`) or pool; returns its id.
    pub(crate) fn new_resource(&mut self, unit: bool, capacity: u32, grant_now: bool) -> u32 {
        let holder_or_pool = if unit {
            NONE
        } else {
            self.pool_holders.push(Vec::new());
            self.pool_holders.len() as u32 - 1
        };
        self.resources.push(Res { busy_s: 0.0, since_s: 0.0, held: 0, holder_or_pool, queue_head: NONE,
                                  queue_tail: NONE });
        self.kinds.push(Kind { capacity, unit, grant_now });
        self.resources.len() as u32 - 1
    }

    /// The processes holding a unit of `r`, in the order they got it.
    pub(crate) fn holders(&self, r: usize) -> Vec<u32> {
        let res = &self.resources[r];
        match (self.kinds[r].unit, res.holder_or_pool) {
            (true, NONE) => Vec::new(),
            (true, holder) => vec![holder],
            (false, pool) => self.pool_holders[pool as usize].clone(),
        }
    }

    fn account(&mut self, r: usize) {
        let now = self.now;
        let capacity = self.kinds[r].capacity;
        let res = &mut self.resources[r];
        res.busy_s += (now - res.since_s) * res.held as f64 / capacity as f64;
        res.since_s = now;
    }

    /// The entry after `entry` in its queue: a process's `next_waiter`, or, for a group of a
    /// node's waiting sends (WAITING_GROUP | its index), the group's `next`.
    fn next_of(&mut self, entry: u32) -> &mut u32 {
        if entry & WAITING_GROUP != 0 {
            &mut self.waiting[(entry & !WAITING_GROUP) as usize].next
        } else {
            &mut self.procs[entry as usize].next_waiter
        }
    }

    /// `entry` (a process, or a node's group of waiting sends) last in the queue of `r`.
    pub(crate) fn enqueue(&mut self, r: usize, entry: u32) {
        *self.next_of(entry) = NONE;
        match self.resources[r].queue_tail {
            NONE => self.resources[r].queue_head = entry,
            tail => *self.next_of(tail) = entry,
        }
        self.resources[r].queue_tail = entry;
    }

    /// Would a request for `r` be granted now (it is free and no one queues for it)?
    pub(crate) fn grants_now(&self, r: usize) -> bool {
        self.resources[r].held < self.kinds[r].capacity && self.resources[r].queue_head == NONE
    }

    /// The first process waiting for `r`, taken off its queue (of a node's group of waiting
    /// sends the first, given its record: walkers.rs take_waiting).
    fn dequeue(&mut self, r: usize) -> Option<u32> {
        let head = self.resources[r].queue_head;
        if head == NONE {
            return None;
        }
        if head & WAITING_GROUP != 0 {
            return Some(self.take_waiting(r, (head & !WAITING_GROUP) as usize));
        }
        let next = self.procs[head as usize].next_waiter;
        let res = &mut self.resources[r];
        res.queue_head = next;
        if res.queue_head == NONE {
            res.queue_tail = NONE;
        }
        Some(head)
    }

    /// Request a unit of `r` for `pid`; true: granted now, the process goes on.
    pub(crate) fn request(&mut self, r: usize, pid: u32) -> bool {
        let now = self.now;
        let kind = self.kinds[r];
        let res = &mut self.resources[r];
        if res.held < kind.capacity && res.queue_head == NONE {
            if kind.unit {
                res.held = 1;
                res.holder_or_pool = pid;
                res.since_s = now;
                return true;
            }
            self.account(r);
            let res = &mut self.resources[r];
            res.held += 1;
            let grant_now = kind.grant_now;
            self.pool_holders[res.holder_or_pool as usize].push(pid);
            if grant_now {
                return true;
            }
            self.schedule(0.0, ACT_RESUME, pid);
            return false;
        }
        self.enqueue(r, pid);
        false
    }

    pub(crate) fn release(&mut self, r: usize, pid: u32) {
        let now = self.now;
        if self.kinds[r].unit {
            let res = &mut self.resources[r];
            res.busy_s += now - res.since_s;
            res.held = 0;
            res.holder_or_pool = NONE;
            if let Some(waiter) = self.dequeue(r) {
                let res = &mut self.resources[r];
                res.held = 1;
                res.holder_or_pool = waiter;
                res.since_s = now;
                self.procs[waiter as usize].waits_for = NONE;
                self.schedule(0.0, ACT_RESUME, waiter);
            }
            return;
        }
        self.account(r);
        let res = &mut self.resources[r];
        let holders = &mut self.pool_holders[res.holder_or_pool as usize];
        match holders.iter().position(|&h| h == pid) {
            Some(i) => {
                holders.remove(i);
                res.held -= 1;
            }
            None => {
                if !holders.is_empty() {
                    holders.remove(0);
                    res.held -= 1;
                }
            }
        }
        if let Some(waiter) = self.dequeue(r) {
            let res = &mut self.resources[r];
            res.held += 1;
            self.pool_holders[res.holder_or_pool as usize].push(waiter);
            self.procs[waiter as usize].waits_for = NONE;
            self.schedule(0.0, ACT_RESUME, waiter);
        }
    }
}
