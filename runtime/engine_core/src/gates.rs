//! The synchronizing switch's gates (runtime/network.py `Gates`, targets/iwarp/wormhole.py's
//! phased messages, seed 001 Sec. 3.2): per (collective, link) a count of the phased tails that
//! passed the link, and the headers waiting for a count. A header of phase k goes on at a link
//! once k tails of its collective passed it (`Op::WaitGate`), else it waits, and the tail that
//! makes the count k wakes it through the heap, as `Gates.tail`'s `Event.succeed` does
//! (`Op::PassTail`). As in Python, the counts live as long as the network (the core): a repeat's
//! later runs of a collective find its gates open.

use crate::model::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash of the gates' integer keys (the default SipHash is several times
/// slower, and a 64x64 torus's phased all-to-all passes about a billion gates).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(value as u64);
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(29) ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

#[derive(Default)]
pub(crate) struct Gates {
    passed: Map<u64, u32>,          // gate_key(collective, link) -> tails passed
    waiting: Map<(u64, u32), u32>,  // (gate_key, phase) -> the header's process
}

fn gate_key(collective: u32, link: u32) -> u64 {
    (collective as u64) << 32 | link as u64
}

impl Core {
    /// Process `pid`'s header of `phase` at `link`: true, the gate is open and it goes on; false,
    /// it waits for the phase's count (a later header of the same collective, link and phase
    /// takes its place, as in `Gates.wait`).
    pub(crate) fn wait_gate(&mut self, collective: u32, link: u32, phase: u32, pid: u32) -> bool {
        let key = gate_key(collective, link);
        if self.gates.passed.get(&key).copied().unwrap_or(0) >= phase {
            return true;
        }
        self.gates.waiting.insert((key, phase), pid);
        false
    }

    /// The processes waiting at a gate (for deadlock reports: a header waits there for no one).
    pub(crate) fn gate_waiters(&self) -> std::collections::HashSet<u32> {
        self.gates.waiting.values().copied().collect()
    }

    /// A tail of `collective` passed `link`: count it, wake the header waiting for that count.
    pub(crate) fn pass_tail(&mut self, collective: u32, link: u32) {
        let key = gate_key(collective, link);
        let count = self.gates.passed.entry(key).or_insert(0);
        *count += 1;
        let count = *count;
        if let Some(pid) = self.gates.waiting.remove(&(key, count)) {
            self.schedule(0.0, ACT_RESUME, pid);
        }
    }
}
