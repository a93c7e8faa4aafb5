//! Resources (one unit) and pools (several): FIFO queues, busy time, holders, as
//! runtime/engine.py's Resource and Pool, granted at once to the running process.

use crate::model::*;

impl Core {
    pub(crate) fn account(&mut self, r: usize) {
        let now = self.now;
        let res = &mut self.resources[r];
        res.busy_s += (now - res.since_s) * res.holders.len() as f64 / res.capacity as f64;
        res.since_s = now;
    }

    /// Request a unit of `r` for `pid`; true: granted now, the process goes on.
    pub(crate) fn request(&mut self, r: usize, pid: u32) -> bool {
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

    pub(crate) fn release(&mut self, r: usize, pid: u32) {
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
}
