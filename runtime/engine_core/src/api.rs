//! The Python interface of the core (runtime/native_run.py).

use crate::model::*;
use crate::owned::OwnedColumn;
use crate::shapes::{Program, Shape, ShapedOp, TorusRoute};
use crate::wormhole::{Kind, Switched, Wormhole};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use crate::events::EventQueue;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

type Waits = Vec<((i64, i64, i64), String, Vec<i64>, Vec<(i64, i64, i64)>)>;

/// A numpy array (any object with the buffer protocol) of exactly this element type, copied.
fn array<T: Element + Copy>(py: Python<'_>, buffer: PyBuffer<T>) -> PyResult<Vec<T>> {
    buffer.to_vec(py)
}

/// A numpy array of flags as uint8 (the buffer protocol has no bool that PyO3 reads).
fn flags(py: Python<'_>, buffer: PyBuffer<u8>) -> PyResult<Vec<bool>> {
    Ok(buffer.to_vec(py)?.into_iter().map(|b| b != 0).collect())
}

/// The most entries a span column or the log is given room for at once (`reserved`).
const RESERVED_MAX: usize = 1 << 20;

/// An empty vector with room for `n` entries (RESERVED_MAX at most): a vector grown by doubling
/// is copied each time it grows, and the old copies stayed resident under the run (the spans
/// and the log at torus:16x16's message-passing all-to-all: 1.5 MB); room not written to yet is
/// not resident.
fn reserved<T>(n: usize) -> Vec<T> {
    Vec::with_capacity(n.min(RESERVED_MAX))
}

#[pymethods]
impl Core {
    #[new]
    /// `log_limit`: `run` returns LOG_FULL when this many log entries wait to be taken (None:
    /// never), so that the log is replayed as it grows rather than kept whole.
    #[pyo3(signature = (nprocs, run_count, max_spans, max_events=None, time_limit_s=None, log_limit=None))]
    fn new(nprocs: usize, run_count: usize, max_spans: usize, max_events: Option<u64>,
           time_limit_s: Option<f64>, log_limit: Option<usize>) -> Self {
        let log_limit = log_limit.map_or(usize::MAX, |l| l.max(1).saturating_mul(3));
        let nodes = (0..nprocs)
            .map(|_| Node { item: 0, phase: 0, state: AT_ITEM, start_s: 0.0, children: Vec::new(),
                            streaming: Vec::new(), inbox: false, remaining: 0, barrier: NONE, finish_s: 0.0,
                            sends_start: 0, next_send: 0, sends_end: 0 })
            .collect();
        Core {
            nprocs, now: 0.0, seq: 0, events_due: EventQueue::default(),
            pending: VecDeque::new(),
            in_event: false, started: false, resources: Vec::new(), kinds: Vec::new(), pool_holders: Vec::new(), programs: Vec::new(), ops: Vec::new(),
            shapes: Vec::new(), arithmetic: vec![NONE; nprocs], routes: Vec::new(), route_words: 0,
            free_routes: Vec::new(),
            hops: Vec::new(), switch: Default::default(), gates: Default::default(),
            scheds: Vec::new(), items: Vec::new(), run_sched: vec![-1; run_count],
            flights: (0..run_count).map(|_| None).collect(), nodes, procs: Vec::new(), free_procs: Vec::new(),
            waiting: Vec::new(), free_waiting: Vec::new(),
            live: 0,
            barriers: Vec::new(), timing_start: vec![f64::INFINITY; run_count],
            timing_end: vec![0.0; run_count], span_node: reserved(max_spans), span_kind: reserved(max_spans),
            span_start: reserved(max_spans), span_end: reserved(max_spans), span_label: reserved(max_spans),
            max_spans, spans_left_out: 0, records_at_finish: 0,
            log: reserved(log_limit), log_taken: 0, log_limit, events: 0,
            max_events, time_limit_s, deadline: None,
        }
    }

    /// A Resource (`unit`) or a Pool of `capacity` units; returns its id.
    fn add_resource(&mut self, unit: bool, capacity: usize, grant_now: bool) -> PyResult<u32> {
        if capacity < 1 || (unit && capacity != 1) || capacity > u32::MAX as usize {
            return Err(PyValueError::new_err(format!("a resource needs 1 unit, a pool at least 1, not {capacity}")));
        }
        Ok(self.new_resource(unit, capacity as u32, grant_now))
    }

    /// Message programs, program i being ops offsets[i]..offsets[i + 1]: `codes` 0 acquire,
    /// 1 hold, 2 release; `args` the resource id (acquire, release), `holds_s` the seconds
    /// (hold). Returns the id of the first.
    /// (Arrays: numpy uint32, uint8, uint32, float64.)
    fn add_programs(&mut self, py: Python<'_>, offsets: PyBuffer<u32>, codes: PyBuffer<u8>,
                    args: PyBuffer<u32>, holds_s: PyBuffer<f64>) -> PyResult<u32> {
        let (offsets, codes, args, holds_s) =
            (array(py, offsets)?, array(py, codes)?, array(py, args)?, array(py, holds_s)?);
        let first = self.programs.len() as u32;
        let base = self.ops.len() as u32;
        if offsets.first() != Some(&0) || *offsets.last().unwrap() as usize != codes.len()
            || args.len() != codes.len() || holds_s.len() != codes.len() {
            return Err(PyValueError::new_err("program arrays of inconsistent lengths"));
        }
        if let Some(i) = offsets.windows(2).position(|w| (w[1].saturating_sub(w[0]) as usize) > MAX_PROGRAM_OPS) {
            return Err(PyValueError::new_err(format!("program {i} has {} ops; the core takes at most {MAX_PROGRAM_OPS}",
                                                     offsets[i + 1].saturating_sub(offsets[i]))));
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
        self.programs.extend(offsets.windows(2).map(|w| Program::Ops { first: base + w[0], end: base + w[1] }));
        Ok(first)
    }

    /// The ideal machine's shape (targets/ideal.py): each node's send and receive port
    /// (resource ids by node) and the start-up held on the sender's port. Returns its id.
    fn add_ports_shape(&mut self, send: Vec<u32>, recv: Vec<u32>, startup_s: f64) -> PyResult<u32> {
        self.check_resources(send.iter().chain(recv.iter()))?;
        if send.len() != recv.len() || send.len() < self.nprocs {
            return Err(PyValueError::new_err("a ports shape needs a send and a receive port per node"));
        }
        self.shapes.push(Shape::Ports { send, recv, startup_s });
        Ok(self.shapes.len() as u32 - 1)
    }

    /// The torus's shape (targets/iwarp/wormhole.py): rows x cols nodes, resource ids of each
    /// node's processor, injection pool and memory pool, of each virtual channel (2 * link +
    /// pool) and each link's wire (link = node * 4 + direction +X -X +Y -Y). Returns its id.
    #[allow(clippy::too_many_arguments)]
    fn add_torus_shape(&mut self, rows: usize, cols: usize, cpu: Vec<u32>, inject: Vec<u32>, vc: Vec<u32>,
                       wire: Vec<u32>, memory: Vec<u32>, overhead_s: f64, hop_s: f64) -> PyResult<u32> {
        self.check_resources(cpu.iter().chain(&inject).chain(&vc).chain(&wire).chain(&memory))?;
        let n = rows * cols;
        if n < self.nprocs || cpu.len() != n || inject.len() != n || memory.len() != n || wire.len() != 4 * n
            || vc.len() != 8 * n {
            return Err(PyValueError::new_err("a torus shape needs a processor, injection and memory pool per \
                                              node, a wire per link and two virtual channels per link"));
        }
        let torus = TorusRoute { rows: rows as i64, cols: cols as i64, cpu, inject, vc, wire, memory, overhead_s, hop_s };
        if torus.most_ops() > MAX_PROGRAM_OPS {
            return Err(PyValueError::new_err(format!("a {rows}x{cols} torus's routes take up to {} ops a message; \
                                                      the core takes at most {MAX_PROGRAM_OPS}", torus.most_ops())));
        }
        self.route_words = self.route_words.max(torus.route_words());
        self.shapes.push(Shape::TorusRoute(torus));
        Ok(self.shapes.len() as u32 - 1)
    }

    /// Programs of shape `shape`, program i holding data_s[i] for its data and, where
    /// combines[i], then combining for combine_s[i] on the receiver's arithmetic resource
    /// (`set_arithmetic`). Returns the id of the first. (Arrays: float64, uint8, float64.)
    fn add_shaped_programs(&mut self, py: Python<'_>, shape: u32, data_s: PyBuffer<f64>, combines: PyBuffer<u8>,
                           combine_s: PyBuffer<f64>) -> PyResult<u32> {
        let (data_s, combines, combine_s) = (array(py, data_s)?, flags(py, combines)?, array(py, combine_s)?);
        if shape as usize >= self.shapes.len() || combines.len() != data_s.len() || combine_s.len() != data_s.len() {
            return Err(PyValueError::new_err("shaped programs: unknown shape or arrays of inconsistent lengths"));
        }
        let first = self.programs.len() as u32;
        self.programs.extend((0..data_s.len()).map(|i| Program::Shaped {
            shape, data_s: data_s[i], combine_s: combines[i].then_some(combine_s[i]) }));
        Ok(first)
    }

    /// Each node's arithmetic resource, where shaped programs combine partials: node nodes[i]'s is
    /// resource ids[i].
    fn set_arithmetic(&mut self, nodes: Vec<u32>, ids: Vec<u32>) -> PyResult<()> {
        self.check_resources(ids.iter())?;
        if nodes.len() != ids.len() || nodes.iter().any(|&n| n as usize >= self.nprocs) {
            return Err(PyValueError::new_err("set_arithmetic: a node per resource, each below nprocs"));
        }
        for (n, r) in nodes.into_iter().zip(ids) {
            self.arithmetic[n as usize] = r;
        }
        Ok(())
    }

    /// The ops of program `program` for a message from src to dst, as (codes, resource ids,
    /// seconds) in add_programs' codes (for tests: shaped programs against explicit ones); a
    /// gate's wait is code 3 and a tail code 4, their resource id the link (`program_gates`).
    fn program_ops(&mut self, program: usize, src: u32, dst: u32) -> PyResult<(Vec<u8>, Vec<u32>, Vec<f64>)> {
        let mut codes = Vec::new();
        let mut args = Vec::new();
        let mut holds = Vec::new();
        for op in self.ops_of(program, src, dst)? {
            let (code, arg, hold) = match op {
                Op::Acquire(r) => (0, r, 0.0),
                Op::Hold(s) => (1, 0, s),
                Op::Release(r) => (2, r, 0.0),
                Op::WaitGate { link, .. } => (3, link, 0.0),
                Op::PassTail { link, .. } => (4, link, 0.0),
            };
            codes.push(code);
            args.push(arg);
            holds.push(hold);
        }
        Ok((codes, args, holds))
    }

    /// The gate ops of program `program` from src to dst in order, as (code 3 a wait or 4 a
    /// tail, collective, link, phase; a tail's phase 0), for tests.
    fn program_gates(&mut self, program: usize, src: u32, dst: u32) -> PyResult<Vec<(u8, u32, u32, u32)>> {
        Ok(self.ops_of(program, src, dst)?.into_iter().filter_map(|op| match op {
            Op::WaitGate { collective, link, phase } => Some((3, collective, link, phase)),
            Op::PassTail { collective, link } => Some((4, collective, link, 0)),
            _ => None,
        }).collect())
    }

    /// The torus's library and phased messages' shape (wormhole.rs): the plain torus shape's
    /// resources and times (add_torus_shape), each node's library send and receive slots
    /// (pools), the receiver's overhead and a phased message's overhead. Returns its id.
    #[allow(clippy::too_many_arguments)]
    fn add_wormhole_shape(&mut self, rows: usize, cols: usize, cpu: Vec<u32>, inject: Vec<u32>, vc: Vec<u32>,
                          wire: Vec<u32>, memory: Vec<u32>, overhead_s: f64, hop_s: f64,
                          library_sends: Vec<u32>, library_receives: Vec<u32>, receive_overhead_s: f64,
                          phased_overhead_s: f64) -> PyResult<u32> {
        let plain = self.add_torus_shape(rows, cols, cpu, inject, vc, wire, memory, overhead_s, hop_s)?;
        let Some(Shape::TorusRoute(torus)) = self.shapes.pop() else {
            unreachable!("add_torus_shape added a torus shape")
        };
        debug_assert_eq!(plain as usize, self.shapes.len());
        self.check_resources(library_sends.iter().chain(&library_receives))?;
        if library_sends.len() != rows * cols || library_receives.len() != rows * cols {
            return Err(PyValueError::new_err("a wormhole shape needs a library send and receive pool per node"));
        }
        let wormhole = Wormhole { torus, library_sends, library_receives, receive_overhead_s, phased_overhead_s };
        if wormhole.most_ops() > MAX_PROGRAM_OPS {
            return Err(PyValueError::new_err(format!("a {rows}x{cols} torus's library and phased messages take up to \
                                                      {} ops a message; the core takes at most {MAX_PROGRAM_OPS}",
                                                     wormhole.most_ops())));
        }
        self.route_words = self.route_words.max(wormhole.route_words());
        self.switch.wormholes.push(wormhole);
        Ok(self.switch.wormholes.len() as u32 - 1)
    }

    /// Programs of wormhole shape `wormhole`, one per entry: the data time, the combining (as
    /// add_shaped_programs), `kinds` 0 plain, 1 the library's (with the pack and unpack times,
    /// 0 where that code takes none), 2 phased (with its collective and phase). Returns the
    /// first's id. (Arrays: numpy float64, uint8, float64, uint8, float64, float64, uint32, uint32.)
    #[allow(clippy::too_many_arguments)]
    fn add_switched_programs(&mut self, py: Python<'_>, wormhole: u32, data_s: PyBuffer<f64>,
                             combines: PyBuffer<u8>, combine_s: PyBuffer<f64>, kinds: PyBuffer<u8>,
                             pack_s: PyBuffer<f64>, unpack_s: PyBuffer<f64>, collective: PyBuffer<u32>,
                             phase: PyBuffer<u32>) -> PyResult<u32> {
        let (data_s, combines, combine_s) = (array(py, data_s)?, flags(py, combines)?, array(py, combine_s)?);
        let (kinds, pack_s, unpack_s) = (array(py, kinds)?, array(py, pack_s)?, array(py, unpack_s)?);
        let (collective, phase) = (array(py, collective)?, array(py, phase)?);
        let n = data_s.len();
        if wormhole as usize >= self.switch.wormholes.len()
            || [combines.len(), combine_s.len(), kinds.len(), pack_s.len(), unpack_s.len(), collective.len(),
                phase.len()].iter().any(|&l| l != n) {
            return Err(PyValueError::new_err("switched programs: unknown shape or arrays of inconsistent lengths"));
        }
        let first = self.programs.len() as u32;
        for i in 0..n {
            let kind = match kinds[i] {
                0 => Kind::Plain,
                1 => Kind::Library { pack_s: pack_s[i], unpack_s: unpack_s[i] },
                2 => Kind::Phased { collective: collective[i], phase: phase[i] },
                k => return Err(PyValueError::new_err(format!("switched program {i}: unknown kind {k}"))),
            };
            self.programs.push(Program::Switched(self.switch.programs.len() as u32));
            self.switch.programs.push(Switched { wormhole, data_s: data_s[i],
                                                 combine_s: combines[i].then_some(combine_s[i]), kind });
        }
        Ok(first)
    }

    /// One schedule's arrays (runtime/native_run.py `_add_schedule`), held in place, not copied
    /// (model.rs Held: C-contiguous and read-only numpy arrays): uint32 but key_due and
    /// slot_barrier (int32, -1: none; slot_barrier empty where no phase has barriers); the
    /// flags phase_eager (uint8, a phase's sync is SyncMode.EAGER) and barrier_delay_s (float64)
    /// are copied. Messages come in slot order, each sent by its slot's node, and so do the
    /// inbox entries (slot_inbox_keys); msg_slots and inbox_slots find them by slot, each as
    /// nphases x nprocs + 1 offsets (where each slot's entries start) or, any other length, each
    /// entry's slot, ascending (model.rs Sched); message m's span label is label_base + m.
    #[allow(clippy::too_many_arguments)]
    fn add_schedule(&mut self, py: Python<'_>, nprocs: usize, nphases: usize, phase_eager: PyBuffer<u8>,
                    msg_dst: PyBuffer<u32>, msg_program: PyBuffer<u32>, label_base: u32,
                    msg_key_off: PyBuffer<u32>, msg_keys: PyBuffer<u32>, msg_slots: PyBuffer<u32>,
                    inbox_slots: PyBuffer<u32>, slot_inbox_keys: PyBuffer<u32>, key_due: PyBuffer<i32>,
                    slot_barrier: PyBuffer<i32>, barrier_size: PyBuffer<u32>,
                    barrier_delay_s: PyBuffer<f64>) -> PyResult<u32> {
        let (msg_dst, msg_program) = (Held::new(msg_dst, "msg_dst")?, Held::new(msg_program, "msg_program")?);
        let (msg_key_off, msg_keys) = (Held::new(msg_key_off, "msg_key_off")?, Held::new(msg_keys, "msg_keys")?);
        let msg_slots = Held::new(msg_slots, "msg_slots")?;
        let (inbox_slots, slot_inbox_keys) =
            (Held::new(inbox_slots, "inbox_slots")?, Held::new(slot_inbox_keys, "slot_inbox_keys")?);
        let (key_due, slot_barrier) = (Held::new(key_due, "key_due")?, Held::new(slot_barrier, "slot_barrier")?);
        let (barrier_size, barrier_delay_s) = (array(py, barrier_size)?, array(py, barrier_delay_s)?);
        let phase_eager = flags(py, phase_eager)?;
        let slots = nphases * nprocs;
        let nmsg = msg_dst.len();
        // `entries` found by slot: offsets per slot from 0 to `entries`, or each entry's slot
        let by_slot = |of: &[u32], entries: usize| {
            of.windows(2).all(|w| w[0] <= w[1])
                && if of.len() == slots + 1 {
                    of[0] == 0 && of[slots] as usize == entries
                } else {
                    of.len() == entries && of.last().is_none_or(|&s| (s as usize) < slots)
                }
        };
        if phase_eager.len() != nphases || !by_slot(&msg_slots, nmsg) || !by_slot(&inbox_slots, slot_inbox_keys.len())
            || !(slot_barrier.is_empty() || slot_barrier.len() == slots) || msg_program.len() != nmsg
            || msg_key_off.len() != nmsg + 1 || nprocs > self.nprocs || slot_inbox_keys.len() > u32::MAX as usize
            || msg_key_off.first() != Some(&0) || *msg_key_off.last().unwrap() as usize != msg_keys.len()
            || msg_key_off.windows(2).any(|w| w[1] < w[0])
        {
            return Err(PyValueError::new_err("schedule arrays of inconsistent lengths or offsets"));
        }
        if msg_program.iter().any(|&p| p as usize >= self.programs.len()) {
            return Err(PyValueError::new_err("a message names an unknown program"));
        }
        if label_base.checked_add(nmsg as u32).is_none() || nmsg > u32::MAX as usize {
            return Err(PyValueError::new_err("the messages' span labels lie outside uint32"));
        }
        let combines_without_arithmetic = msg_program.iter().zip(msg_dst.iter()).any(|(&p, &d)| {
            let combines = match self.programs[p as usize] {
                Program::Shaped { combine_s, .. } => combine_s.is_some(),
                Program::Switched(i) => self.switch.programs[i as usize].combine_s.is_some(),
                Program::Ops { .. } => false,
            };
            combines && (d as usize) < nprocs && self.arithmetic[d as usize] == NONE
        });
        if combines_without_arithmetic || msg_dst.iter().any(|&n| n as usize >= nprocs) {
            return Err(PyValueError::new_err("a message's node lies outside the schedule, or it combines \
                                              partials on a node without an arithmetic resource"));
        }
        let nkeys = key_due.len();
        if msg_keys.iter().chain(slot_inbox_keys.iter()).any(|&k| k as usize >= nkeys)
            || key_due.iter().any(|&d| d as i64 >= slots as i64)
            || slot_barrier.iter().any(|&b| b as i64 >= barrier_size.len() as i64)
            || barrier_delay_s.len() != barrier_size.len()
        {
            return Err(PyValueError::new_err("schedule arrays name keys, slots, messages or barriers they lack"));
        }
        let phase_msg_off = Sched::phase_offsets(&msg_slots, nprocs, nphases);
        let phase_inbox_off = Sched::phase_offsets(&inbox_slots, nprocs, nphases);
        self.scheds.push(Sched { nprocs, nphases, phase_eager, msg_dst, msg_program, label_base, msg_key_off,
                                 msg_keys, msg_slots, phase_msg_off, inbox_slots, phase_inbox_off, slot_inbox_keys,
                                 key_due, slot_barrier, barrier_size, barrier_delay_s, nkeys });
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
    /// NEED_RUN (run: open it and call again), LOG_FULL (take the log and call again), DEADLOCK,
    /// STOPPED_EVENTS, STOPPED_TIME, SENT_TWICE.
    fn run(&mut self) -> (u8, u32) {
        if !self.started {
            self.started = true;
            self.deadline = self.time_limit_s.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
            for n in 0..self.nprocs {
                self.procs.push(Proc::walker(n as u32));
                self.live += 1;
                self.schedule(0.0, ACT_RESUME, n as u32);
            }
        }
        loop {
            while let Some(&(act, id)) = self.pending.front() {
                if self.log.len() - self.log_taken >= self.log_limit {
                    return (LOG_FULL, 0);
                }
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
            match self.events_due.pop() {
                None => break,
                Some(entry) => {
                    self.now = f64::from_bits(entry.at_bits);
                    self.expand(entry.act, entry.id);
                    self.in_event = true;
                }
            }
        }
        if self.live > 0 {
            (DEADLOCK, 0)
        } else {
            self.release_run_state();
            (FINISHED, 0)
        }
    }

    /// The oldest `limit` entries of the log not yet taken, (code, run, message) triples of
    /// uint32: 0 a message starts, 1 it ends, 2 a run's last node left it. Empty: none left.
    /// The whole log when that is what is left, moved to Python, not copied (owned.rs).
    fn take_log(&mut self, limit: usize) -> OwnedColumn {
        let end = (self.log_taken + 3 * limit).min(self.log.len());
        if self.log_taken == 0 && end == self.log.len() {
            // its memory goes with the column: nothing of it is kept for the next part
            return OwnedColumn::new(std::mem::replace(&mut self.log, reserved(self.log_limit)));
        }
        let taken = self.log[self.log_taken..end].to_vec();
        self.log_taken = end;
        if self.log_taken == self.log.len() {
            self.log = Vec::new();
            self.log_taken = 0;
        } else if self.log_taken >= self.log.len() / 2 {  // keep the log to what is not taken
            self.log.drain(..self.log_taken);
            self.log_taken = 0;
        }
        OwnedColumn::new(taken)
    }

    #[getter]
    fn now(&self) -> f64 {
        self.now
    }

    #[getter]
    fn events(&self) -> u64 {
        self.events
    }

    /// The process records the core holds (node walkers and message processes, reused once a
    /// message's node is past it: Core.free_procs), or held as its run finished (they are
    /// given back then: Core::release_run_state), for tests.
    #[getter]
    fn proc_records(&self) -> usize {
        self.procs.len().max(self.records_at_finish)
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

    /// The spans kept, as columns (node u32, kind u8, start f64, end f64, label u32) that Python
    /// reads in place (np.asarray): no Python int or float per value (100,000 spans made six
    /// lists of about 10 MB beside them), and no copy (owned.rs). A message's peer (its receiver)
    /// is not kept: its label names the message, whose receiver its schedule holds.
    fn take_spans(&mut self) -> (OwnedColumn, OwnedColumn, OwnedColumn, OwnedColumn, OwnedColumn) {
        use std::mem::take;
        (OwnedColumn::new(take(&mut self.span_node)), OwnedColumn::new(take(&mut self.span_kind)),
         OwnedColumn::new(take(&mut self.span_start)), OwnedColumn::new(take(&mut self.span_end)),
         OwnedColumn::new(take(&mut self.span_label)))
    }

    /// What each live process waits for, for a deadlock report: (who, "allof" | "barrier" | "gate" |
    /// "resource", info, blockers). allof: info [run, phase, inbox still pending], blockers the
    /// unfinished message processes; barrier: info [run, phase, group], blockers the nodes in it;
    /// resource: info [resource], blockers its holders; gate (a header at the switch, gates.rs): none.
    fn live_waits(&self) -> Waits {
        let mut out = Vec::new();
        let at_gates = self.gate_waiters();
        for (pid, p) in self.procs.iter().enumerate() {
            if p.has(DONE) {
                continue;
            }
            let who = self.who(pid as u32);
            if p.msg != NONE {
                if p.waits_for != NONE {
                    let holders = self.holders(p.waits_for as usize).into_iter().map(|h| self.who(h)).collect();
                    out.push((who, "resource".to_string(), vec![p.waits_for as i64], holders));
                } else if at_gates.contains(&(pid as u32)) {
                    out.push((who, "gate".to_string(), Vec::new(), Vec::new())); // waits for no one
                }
                continue;
            }
            let node = &self.nodes[p.node as usize];
            let run = self.items.get(node.item).map_or(0, |it| it.run) as i64;
            if node.state == PHASE_WAIT || node.state == STREAM_WAIT {
                // what the node's wait counts: the sends of its last eager phase, this phase's
                // unless it is eager, its inbox (walk_phases's order)
                let flight = self.flights[run as usize].as_ref().unwrap();
                let sched = &self.scheds[flight.sched];
                let slot = node.phase * sched.nprocs + p.node as usize;
                let pending = node.state == PHASE_WAIT && node.inbox && flight.inbox_slot[p.node as usize] == slot as u32
                    && flight.inbox_pending[p.node as usize] != 0;
                let own = node.state == PHASE_WAIT && !sched.phase_eager[node.phase];
                let mut children: Vec<_> = node.streaming.iter().filter(|&&c| !self.procs[c as usize].has(DONE))
                    .map(|&c| self.who(c)).collect();
                if own {
                    children.extend(self.unfinished_sends(p.node as usize, run as usize).map(|m| (1, run, m)));
                }
                out.push((who, "allof".to_string(), vec![run, node.phase as i64, pending as i64], children));
            } else if node.state == BARRIER_WAIT {
                let flight = self.flights[run as usize].as_ref().unwrap();
                let nprocs = self.scheds[flight.sched].nprocs;
                let group = self.scheds[flight.sched].barrier_of(node.phase * nprocs + p.node as usize);
                let arrived = self.barriers[node.barrier as usize].arrived.iter().map(|&n| (0, n as i64, 0)).collect();
                out.push((who, "barrier".to_string(), vec![run, node.phase as i64, group as i64], arrived));
            }
        }
        // the sends waiting without a record (Waiting)
        for group in self.waiting.iter().filter(|g| !g.is_empty()) {
            let run = self.items[self.nodes[group.node as usize].item].run as i64;
            let holders: Vec<_> = self.holders(group.res as usize).into_iter().map(|h| self.who(h)).collect();
            for msg in group.lo..group.hi {
                out.push(((1, run, msg as i64), "resource".to_string(), vec![group.res as i64], holders.clone()));
            }
        }
        out
    }
}

impl Core {
    /// The sends of node n's phase in run `run` (a phase it waits for) not ended, in message
    /// order: those not started, those waiting without a record (Waiting), those whose record
    /// is not DONE (a send's record is freed once its end is processed).
    fn unfinished_sends(&self, n: usize, run: usize) -> impl Iterator<Item = i64> + '_ {
        let (lo, hi) = (self.nodes[n].sends_start, self.nodes[n].sends_end);
        let next_send = self.nodes[n].next_send;
        let mut unfinished: std::collections::HashSet<u32> = self.procs.iter()
            .filter(|p| p.msg != NONE && !p.has(DONE) && p.node == n as u32 && p.run == run as u32)
            .map(|p| p.msg).collect();
        unfinished.extend(self.waiting.iter().filter(|g| g.node == n as u32).flat_map(|g| g.lo..g.hi));
        (lo..hi).filter(move |&m| m >= next_send || unfinished.contains(&m)).map(|m| m as i64)
    }

    /// Every op of program `program` for a message from src to dst, op by op as a message
    /// takes them (walkers.rs op_at).
    fn ops_of(&mut self, program: usize, src: u32, dst: u32) -> PyResult<Vec<Op>> {
        let Some(&found) = self.programs.get(program) else {
            return Err(PyValueError::new_err(format!("no program {program}")));
        };
        if src as usize >= self.nprocs || dst as usize >= self.nprocs {
            return Err(PyValueError::new_err(format!("no node {src} or {dst}")));
        }
        if let Program::Ops { first, end } = found {
            return Ok(self.ops[first as usize..end as usize].to_vec());
        }
        let (mut route, mut hops) = (Vec::new(), Vec::new());
        let mut out = Vec::new();
        for pc in 0.. {
            let known = (!route.is_empty()).then_some(route.as_slice());
            match self.shaped_op(found, pc, src, dst, known) {
                ShapedOp::Op(op) => out.push(op),
                ShapedOp::End => break,
                ShapedOp::NeedsRoute => {
                    route.resize(self.route_words_of(found), 0);
                    self.route_resources(found, src, dst, &mut hops, &mut route);
                    match self.shaped_op(found, pc, src, dst, Some(&route)) {
                        ShapedOp::Op(op) => out.push(op),
                        _ => break,
                    }
                }
            }
        }
        Ok(out)
    }
}
