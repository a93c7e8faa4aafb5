//! The core's event queue: runtime/engine.py's heap of (time, sequence, event), in the order
//! the Python engine takes them.
//!
//! Entries scheduled with the same delay come out of the heap in the order they went in: the
//! clock never goes back, an f64 sum is monotone in each term, and the sequence numbers grow.
//! So each of the first `DELAY_CLASSES` distinct delays gets a FIFO queue (a torus message's
//! hops all hold the same hop latency: most of a run's timeouts are a few delays), and `pop`
//! takes the least (time, sequence) of the queues' heads; entries of other delays go into a
//! 4-ary min-heap keyed by (time, sequence). Entries with no delay are one such class
//! (`due_now`: a phase of 16.8M messages starts them all at once). The order is the one heap's
//! of the Python engine, entry for entry; a binary heap of every entry was, after the
//! resources' cache misses, the loop's largest cost.

use std::collections::VecDeque;

/// A scheduled action: `act` (model.rs ACT_*) on `id` at time `at_bits` (an f64's bits: times
/// are never negative, so their bits order as the times do), the `seq`-th scheduled; `count`
/// entries of one act on one id scheduled one after the other with no delay are one entry
/// (`EventQueue::push_now`) that `pop` takes one at a time, `seq` counting up.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) at_bits: u64,
    pub(crate) seq: u64,
    pub(crate) id: u32,
    pub(crate) act: u8,
    pub(crate) count: u16, // in the padding: an entry stays 24 bytes
}

const _: () = assert!(std::mem::size_of::<Entry>() == 24);

impl Entry {
    fn key(&self) -> (u64, u64) {
        (self.at_bits, self.seq)
    }
}

const ARITY: usize = 4;
const DELAY_CLASSES: usize = 8; // FIFO queues of entries of one delay (the first is no delay)
const EMPTY: (u64, u64) = (u64::MAX, u64::MAX); // the head key of an empty queue
const SHRINK_ABOVE: usize = 1 << 16; // a class's queue above this many entries shrinks as it drains

pub(crate) struct EventQueue {
    heap: Vec<Entry>, // a 4-ary min-heap by key: node i's children are 4i+1..=4i+4
    delays: Vec<u64>, // the delay of each class (its f64's bits), the first 0.0
    classes: Vec<VecDeque<Entry>>,
    heads: Vec<(u64, u64)>, // each class's first key, EMPTY if none
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue { heap: Vec::new(), delays: vec![0.0f64.to_bits()], classes: vec![VecDeque::new()],
                     heads: vec![EMPTY] }
    }
}

impl EventQueue {
    /// An entry scheduled `delay_s` after now: into its delay's queue, else into the heap.
    pub(crate) fn push(&mut self, entry: Entry, delay_s: f64) {
        let bits = delay_s.to_bits();
        let class = match self.delays.iter().position(|&d| d == bits) {
            Some(c) => Some(c),
            None if self.delays.len() < DELAY_CLASSES && delay_s > 0.0 => {
                self.delays.push(bits);
                self.classes.push(VecDeque::new());
                self.heads.push(EMPTY);
                Some(self.delays.len() - 1)
            }
            None => None,
        };
        if let Some(c) = class {
            if self.classes[c].is_empty() {
                self.heads[c] = entry.key();
            }
            self.classes[c].push_back(entry);
            return;
        }
        self.push_heap(entry);
    }

    /// `entry` and the `entry.count - 1` entries after it in sequence, due now (no delay): one
    /// entry of the no-delay queue, so that a phase that starts a node's thousands of messages
    /// at once queues one entry for them, not one each (24 bytes a message).
    pub(crate) fn push_now(&mut self, entry: Entry) {
        if self.classes[0].is_empty() {
            self.heads[0] = entry.key();
        }
        self.classes[0].push_back(entry);
    }

    fn push_heap(&mut self, entry: Entry) {
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= entry.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// The least (time, sequence) entry of the heap and the classes' queues, taken.
    pub(crate) fn pop(&mut self) -> Option<Entry> {
        let mut least = (self.heap.first().map_or(EMPTY, Entry::key), usize::MAX);
        for (c, &head) in self.heads.iter().enumerate() {
            if head < least.0 {
                least = (head, c);
            }
        }
        match least {
            (EMPTY, _) => None,
            (_, usize::MAX) => Some(self.pop_heap()),
            (_, c) => {
                let queue = &mut self.classes[c];
                if let Some(front) = queue.front_mut().filter(|e| e.count > 1) {
                    // the first of the entries it stands for; the rest stay at the front
                    let entry = Entry { count: 1, ..*front };
                    (front.seq, front.count) = (front.seq + 1, front.count - 1);
                    self.heads[c] = front.key();
                    return Some(entry);
                }
                let entry = queue.pop_front();
                self.heads[c] = queue.front().map_or(EMPTY, Entry::key);
                // a phase that started a million messages at once left a queue of that many
                // entries (24 bytes each): given back once mostly drained, not kept for the run
                if queue.capacity() > SHRINK_ABOVE && queue.len() < queue.capacity() / 4 {
                    queue.shrink_to(2 * queue.len());
                }
                entry
            }
        }
    }

    fn pop_heap(&mut self) -> Entry {
        let top = self.heap[0];
        let last = self.heap.pop().expect("pop_heap on an empty heap");
        let n = self.heap.len();
        if n == 0 {
            return top;
        }
        let key = last.key();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut least = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].key() < self.heap[least].key() {
                    least = c;
                }
            }
            if self.heap[least].key() >= key {
                break;
            }
            self.heap[i] = self.heap[least];
            i = least;
        }
        self.heap[i] = last;
        top
    }
}
