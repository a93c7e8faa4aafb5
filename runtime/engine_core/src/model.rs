//! The core's state: the heap, resources, schedules as arrays, node walkers and message
//! processes; the constants the Python side reads (runtime/native_run.py).

pub(crate) use crate::resources::{Kind, Res};
use crate::shapes::{Program, Shape};
use pyo3::prelude::*;
use crate::events::{Entry, EventQueue};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

// What a heap entry does when it is processed (the Python event's callbacks).
pub(crate) const ACT_RESUME: u8 = 0; // a process goes on (start, timeout, grant from a queue)
pub(crate) const ACT_PROC_DONE: u8 = 1; // a process ended: its parent node's all-of counts it
pub(crate) const ACT_INBOX_DONE: u8 = 2; // a node's inbox of a phase is complete: its all-of counts it
pub(crate) const ACT_ALLOF_DONE: u8 = 3; // a node's phase wait is over: the node goes on
pub(crate) const ACT_BARRIER: u8 = 4; // a barrier ends: its nodes go on, in the order they arrived
pub(crate) const PENDING_ONE_DONE: u8 = 5; // (callback only) one child of a node's all-of is done
pub(crate) const ACT_SEND_NEXT: u8 = 6; // a node's next send of its phase starts (walkers.rs send_next)

// Node walker states.
pub(crate) const AT_ITEM: u8 = 0;
pub(crate) const COMPUTE_WAIT: u8 = 1;
pub(crate) const ENTER_PHASE: u8 = 2;
pub(crate) const PHASE_WAIT: u8 = 3;
pub(crate) const BARRIER_WAIT: u8 = 4;
pub(crate) const NODE_DONE: u8 = 5;
pub(crate) const STREAM_WAIT: u8 = 6; // after its last phase, for the last eager phase's sends

// Span kinds (runtime/interpreter.py Span.kind).
pub(crate) const SPAN_COMPUTE: u8 = 0;
pub(crate) const SPAN_SEND: u8 = 1;
pub(crate) const SPAN_COPY: u8 = 2;
pub(crate) const SPAN_PHASE: u8 = 3;

// Log entries, (code, run, message) each, for the data replay.
pub(crate) const LOG_START: u32 = 0;
pub(crate) const LOG_END: u32 = 1;
pub(crate) const LOG_LEAVE: u32 = 2;

// Status of `run`.
pub(crate) const FINISHED: u8 = 0;
pub(crate) const NEED_RUN: u8 = 1;
pub(crate) const DEADLOCK: u8 = 2;
pub(crate) const STOPPED_EVENTS: u8 = 3;
pub(crate) const STOPPED_TIME: u8 = 4;
pub(crate) const SENT_TWICE: u8 = 5;
pub(crate) const LOG_FULL: u8 = 6; // the log holds log_limit entries: take them, then run again

pub(crate) const WALL_CLOCK_EVERY: u64 = 4096; // runtime/engine.py WALL_CLOCK_EVERY
pub(crate) const NONE: u32 = u32::MAX;
// In a resource's queue, this bit and an index of Core::waiting: a group of a node's sends waiting
// there without records (Waiting); other entries are process ids, below it.
pub(crate) const WAITING_GROUP: u32 = 1 << 31;

#[derive(Clone, Copy)]
pub(crate) enum Op {
    Acquire(u32),
    Hold(f64),
    Release(u32),
    WaitGate { collective: u32, link: u32, phase: u32 }, // gates.rs
    PassTail { collective: u32, link: u32 },
}

/// A read-only numpy array of one schedule that the core reads in place: held (its buffer
/// keeps the array alive), not copied, so that a 4096-node schedule's 16.8M-entry columns
/// exist once, in Python's columns (runtime/plan_columns.py), not again in the core.
pub(crate) struct Held<T: pyo3::buffer::Element> {
    _buffer: pyo3::buffer::PyBuffer<T>,
    at: usize, // the first element's address (a usize, so that the core stays Send)
    len: usize,
}

impl<T: pyo3::buffer::Element> Held<T> {
    /// The array held in place; refused unless C-contiguous and read-only (no one writes it
    /// while the core reads it: its indices were checked when the schedule came).
    pub(crate) fn new(buffer: pyo3::buffer::PyBuffer<T>, name: &str) -> PyResult<Self> {
        if !buffer.is_c_contiguous() || !buffer.readonly() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "schedule array {name}: the core holds it in place, so it must be C-contiguous and read-only")));
        }
        let (at, len) = (buffer.buf_ptr() as usize, buffer.item_count());
        Ok(Held { _buffer: buffer, at, len })
    }
}

impl<T: pyo3::buffer::Element> std::ops::Deref for Held<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the held buffer keeps the array's memory alive and C-contiguous, `len`
        // elements of T (PyBuffer<T> checked the element type); it is read-only
        unsafe { std::slice::from_raw_parts(self.at as *const T, self.len) }
    }
}

/// One schedule as plain arrays (runtime/native_run.py builds them); `slot` = phase * nprocs + node.
/// Messages are numbered in slot order, so a slot's messages are consecutive (`msgs_of`) and a
/// message's sender is its slot's node; so are a slot's inbox entries (`inbox_of`). Each is
/// found by the smaller of two forms (runtime/plan_columns.py `slot_index`): nslots + 1 offsets
/// (where each slot's entries start), or each entry's slot, ascending, searched within its
/// phase's (torus:64x64's phased all-to-all has 134M slots, 8 a message: two offsets per slot
/// were 1 GB; a 4096-node all-to-all's one phase has 4,096 slots for 16.8M messages). Message
/// m's span label is label_base + m.
pub(crate) struct Sched {
    pub(crate) nprocs: usize,
    pub(crate) nphases: usize,
    pub(crate) phase_eager: Vec<bool>, // by phase: SyncMode.EAGER, its sends waited for a phase on
    pub(crate) msg_dst: Held<u32>,
    pub(crate) msg_program: Held<u32>,
    pub(crate) label_base: u32,
    pub(crate) msg_key_off: Held<u32>,
    pub(crate) msg_keys: Held<u32>,
    pub(crate) msg_slots: Held<u32>,
    pub(crate) phase_msg_off: Vec<u32>, // a slot per message: where each phase's start; offsets: empty
    pub(crate) inbox_slots: Held<u32>, // a slot has an inbox where it has keys due
    pub(crate) phase_inbox_off: Vec<u32>,
    pub(crate) slot_inbox_keys: Held<u32>,
    pub(crate) key_due: Held<i32>,
    pub(crate) slot_barrier: Held<i32>, // empty: no barriers
    pub(crate) barrier_size: Vec<u32>,
    pub(crate) barrier_delay_s: Vec<f64>,
    pub(crate) nkeys: usize,
}

impl Sched {
    /// Where each phase's entries start among entries given by their slots, ascending (one more
    /// than phases); none where the entries are given by offsets per slot (`nslots + 1` of them).
    pub(crate) fn phase_offsets(of: &[u32], nprocs: usize, nphases: usize) -> Vec<u32> {
        if of.len() == nprocs * nphases + 1 {
            return Vec::new();
        }
        (0..=nphases).map(|k| of.partition_point(|&s| (s as usize) < k * nprocs) as u32).collect()
    }

    /// The entries of `slot`: by offsets per slot, or a search within its phase's slots.
    fn entries_of(of: &[u32], phase_off: &[u32], nprocs: usize, slot: usize) -> (usize, usize) {
        if phase_off.is_empty() {
            return (of[slot] as usize, of[slot + 1] as usize);
        }
        let k = slot / nprocs;
        let (first, end) = (phase_off[k] as usize, phase_off[k + 1] as usize);
        let phase = &of[first..end];
        let lo = phase.partition_point(|&s| (s as usize) < slot);
        (first + lo, first + lo + phase[lo..].iter().take_while(|&&s| s as usize == slot).count())
    }

    /// The messages a slot's node sends in its phase.
    pub(crate) fn msgs_of(&self, slot: usize) -> (usize, usize) {
        Self::entries_of(&self.msg_slots, &self.phase_msg_off, self.nprocs, slot)
    }

    /// A slot's inbox, its entries in slot_inbox_keys.
    pub(crate) fn inbox_of(&self, slot: usize) -> (usize, usize) {
        Self::entries_of(&self.inbox_slots, &self.phase_inbox_off, self.nprocs, slot)
    }

    /// The barrier group of a slot, -1: none.
    pub(crate) fn barrier_of(&self, slot: usize) -> i32 {
        if self.slot_barrier.is_empty() { -1 } else { self.slot_barrier[slot] }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Item {
    pub(crate) compute: bool,
    pub(crate) first: u32,
    pub(crate) nprocs: u32,
    pub(crate) cost_s: f64,
    pub(crate) label: u32,
    pub(crate) run: u32,
}

pub(crate) struct Flight {
    pub(crate) sched: usize,
    pub(crate) inside: usize,
    // per node: the slot of the inbox it is in (NONE: none yet) and the blocks still due there;
    // a node waits for one inbox at a time, so a slot per node, not per phase and node (134 MB
    // of slots at a 4096-node all-to-all); a block due in a slot its node has not come to is
    // counted when it comes (the arrived bits)
    pub(crate) inbox_slot: Vec<u32>,
    pub(crate) inbox_pending: Vec<u32>,
    pub(crate) arrived: Vec<u64>,       // bit per key
    pub(crate) barriers: HashMap<u32, u32>,
}

pub(crate) struct Barrier {
    pub(crate) arrived: Vec<u32>,
    pub(crate) missing: u32,
}

pub(crate) struct Node {
    pub(crate) item: usize,
    pub(crate) phase: usize,
    pub(crate) state: u8,
    pub(crate) start_s: f64,
    pub(crate) children: Vec<u32>, // the message processes the phase started
    // the previous phase's, if it was eager: still streaming, this phase's wait counts them
    pub(crate) streaming: Vec<u32>,
    pub(crate) inbox: bool,
    pub(crate) remaining: u32,
    pub(crate) barrier: u32,
    pub(crate) finish_s: f64,
    // A phase the node waits for (not eager) starts its sends sends_start..sends_end from a
    // cursor, not as a record and a queue entry each: those not started yet are
    // next_send..sends_end (walkers.rs send_next).
    pub(crate) sends_start: u32,
    pub(crate) next_send: u32,
    pub(crate) sends_end: u32,
}

/// Sends lo..hi of node `node`'s phase (not eager), started at the phase's start, that wait one
/// after the other in the queue of `res`, at op `pc`, holding nothing: one entry of that queue
/// (WAITING_GROUP | its index in Core::waiting, followed by `next`) instead of a record each; the
/// first gets its record back when it comes to the queue's head (walkers.rs take_waiting).
#[derive(Clone, Copy)]
pub(crate) struct Waiting {
    pub(crate) node: u32,
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub(crate) res: u32,
    pub(crate) next: u32,
    pub(crate) pc: u16,
}

impl Waiting {
    pub(crate) fn is_empty(&self) -> bool {
        self.hi == self.lo
    }
}

/// A node walker or a message process. A message's ends and program are copied here from its
/// schedule when it starts (`src`, its slot's node, `dst`, `program`), so that each of its ops reads this one
/// record, not three arrays of 16.8M entries (a cache miss each) besides it.
#[derive(Clone, Copy)]
pub(crate) struct Proc {
    pub(crate) node: u32,
    pub(crate) run: u32,
    pub(crate) msg: u32, // NONE for a node walker
    pub(crate) src: u32, // a message's ends and program (its node, Sched::msg_dst, msg_program)
    pub(crate) dst: u32,
    pub(crate) program: u32,
    pub(crate) waits_for: u32, // the resource it queues for, NONE otherwise
    pub(crate) route: u32, // its slot of Core.routes while a shaped torus message runs, NONE otherwise
    pub(crate) next_waiter: u32, // the process after it in the queue it waits in (resources.rs)
    pub(crate) start_s: f64,
    pub(crate) pc: u16, // below MAX_PROGRAM_OPS
    pub(crate) flags: u8, // STARTED, DONE, WAITED, PROCESSED: one byte, so that a record stays 48
}

// Proc::flags.
pub(crate) const STARTED: u8 = 1; // it ran its first op (a message logs its start then)
pub(crate) const DONE: u8 = 2; // it ended (its end event is due)
// Its end counts in its node's wait (the Python engine's all_of appended its callback): at once
// for a phase's sends, a phase on for an eager phase's (the next phase's or the last wait).
pub(crate) const WAITED: u8 = 4;
pub(crate) const PROCESSED: u8 = 8; // its end event was processed: a wait made later skips it
// In no node's list (a send of a phase its node waits for, Node::next_send): its record is free
// for reuse once its end is processed.
pub(crate) const UNLISTED: u8 = 16;

/// The most ops a program may have (`Proc::pc` counts them in 16 bits: 48-byte records).
pub(crate) const MAX_PROGRAM_OPS: usize = u16::MAX as usize;
const _: () = assert!(std::mem::size_of::<Proc>() == 48);

impl Proc {
    /// A node walker's process (node n).
    pub(crate) fn walker(n: u32) -> Proc {
        Proc { node: n, run: NONE, msg: NONE, src: NONE, dst: NONE, program: NONE, waits_for: NONE, route: NONE,
               next_waiter: NONE, start_s: 0.0, pc: 0, flags: STARTED }
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

pub(crate) enum Halt {
    NeedRun(u32),
    SentTwice,
}

#[pyclass(module = "phalanx_engine_core")]
pub(crate) struct Core {
    pub(crate) nprocs: usize,
    pub(crate) now: f64,
    pub(crate) seq: u64,
    pub(crate) events_due: EventQueue,
    pub(crate) pending: VecDeque<(u8, u32)>,
    pub(crate) in_event: bool,
    pub(crate) started: bool,
    pub(crate) resources: Vec<Res>,
    pub(crate) kinds: Vec<Kind>, // by resource: what it is (resources.rs)
    pub(crate) pool_holders: Vec<Vec<u32>>, // by Res::holder_or_pool of a pool
    pub(crate) programs: Vec<Program>, // explicit ones: ops[first..end]
    pub(crate) ops: Vec<Op>,
    pub(crate) shapes: Vec<Shape>,
    pub(crate) arithmetic: Vec<u32>, // per node: its arithmetic resource (shaped programs' combining)
    // the route's resources of running shaped messages, `route_words` u32 a slot (shapes.rs)
    pub(crate) routes: Vec<u32>,
    pub(crate) route_words: usize, // the longest route's resources of the torus shapes
    pub(crate) free_routes: Vec<u32>, // slots of `routes` free for reuse
    pub(crate) hops: Vec<(u32, u32)>, // scratch for routes
    pub(crate) switch: crate::wormhole::Switch, // the torus's library and phased shapes (wormhole.rs)
    pub(crate) gates: crate::gates::Gates,
    pub(crate) scheds: Vec<Sched>,
    pub(crate) items: Vec<Item>,
    pub(crate) run_sched: Vec<i64>,
    pub(crate) flights: Vec<Option<Flight>>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) procs: Vec<Proc>,
    // message processes ended, processed and out of their node's waits: their records are
    // reused (walkers.rs free_procs), so that `procs` holds the messages in flight, not all
    pub(crate) free_procs: Vec<u32>,
    pub(crate) records_at_finish: usize, // procs.len() when release_run_state gave them back
    pub(crate) waiting: Vec<Waiting>, // groups of sends waiting without records
    pub(crate) free_waiting: Vec<u32>, // empty groups of `waiting`, for reuse
    pub(crate) live: usize,
    pub(crate) barriers: Vec<Barrier>,
    pub(crate) timing_start: Vec<f64>,
    pub(crate) timing_end: Vec<f64>,
    pub(crate) span_node: Vec<u32>,
    pub(crate) span_kind: Vec<u8>,
    pub(crate) span_start: Vec<f64>,
    pub(crate) span_end: Vec<f64>,
    pub(crate) span_label: Vec<u32>,
    pub(crate) max_spans: usize,
    pub(crate) spans_left_out: u64,
    pub(crate) log: Vec<u32>,
    pub(crate) log_taken: usize, // entries of `log` already handed to Python
    pub(crate) log_limit: usize, // `run` returns LOG_FULL when this many entries wait untaken
    pub(crate) events: u64,
    pub(crate) max_events: Option<u64>,
    pub(crate) time_limit_s: Option<f64>,
    pub(crate) deadline: Option<Instant>,
}

impl Core {
    /// A finished run's working state given back, empty as it is (no process is live and no
    /// event due): its capacity would otherwise stay under the last part's replay and the
    /// spans (the due-now queue alone 1.6 MB at torus:16x16's 65,280 messages). A deadlock
    /// keeps it for its report.
    pub(crate) fn release_run_state(&mut self) {
        self.records_at_finish = self.procs.len();
        self.events_due = EventQueue::default();
        self.pending = VecDeque::new();
        self.procs = Vec::new();
        self.free_procs = Vec::new();
        self.waiting = Vec::new();
        self.free_waiting = Vec::new();
    }

    /// An error unless every id names a resource.
    pub(crate) fn check_resources<'a>(&self, mut ids: impl Iterator<Item = &'a u32>) -> PyResult<()> {
        match ids.find(|&&r| r as usize >= self.resources.len()) {
            Some(r) => Err(pyo3::exceptions::PyValueError::new_err(format!("no resource {r}"))),
            None => Ok(()),
        }
    }

    pub(crate) fn schedule(&mut self, delay_s: f64, act: u8, id: u32) {
        let at = self.now + delay_s;
        self.events_due.push(Entry { at_bits: at.to_bits(), seq: self.seq, id, act, count: 1 }, delay_s);
        self.seq += 1;
    }

    pub(crate) fn span(&mut self, node: u32, kind: u8, start_s: f64, label: u32) {
        if self.span_node.len() >= self.max_spans {
            self.spans_left_out += 1;
            return;
        }
        self.span_node.push(node);
        self.span_kind.push(kind);
        self.span_start.push(start_s);
        self.span_end.push(self.now);
        self.span_label.push(label);
    }

    /// (kind, a, b) naming a process for Python: (0, node, 0) a node walker, (1, run, message).
    pub(crate) fn who(&self, pid: u32) -> (i64, i64, i64) {
        let p = &self.procs[pid as usize];
        if p.msg == NONE {
            (0, p.node as i64, 0)
        } else {
            (1, p.run as i64, p.msg as i64)
        }
    }
}
