//! Programs by shape: a machine's transfer program described once (runtime/network.py
//! `ProgramShape`), a message's ops made by the core when the message starts, from its ends,
//! instead of one list of ops per message handed over from Python.
//!
//! - `Ports` (targets/ideal.py): acquire the sender's port, hold the start-up, acquire the
//!   receiver's port, hold the data time, release both;
//! - `TorusRoute` (targets/iwarp/wormhole.py `transfer_program`): the sender's processor for
//!   the overhead, an injection channel, the virtual channel of each hop of the e-cube route
//!   (targets/iwarp/topology.py: X then Y, the shortest way round each ring, ties by the
//!   source's parity, pool 1 from a ring's wrap-around link on) with the hop latency after
//!   each, then both ends' memory streams and the route's wires by link id for the data time,
//!   and everything let go in transfer_program's order.
//!
//! A shaped program adds the data time and, for a reduction, the receiver combining its
//! partials on its arithmetic resource (runtime/native_run.py), as explicit programs do.

use crate::model::*;

pub(crate) enum Shape {
    Ports { send: Vec<u32>, recv: Vec<u32>, startup_s: f64 },
    TorusRoute(TorusRoute),
}

pub(crate) struct TorusRoute {
    pub(crate) rows: i64,
    pub(crate) cols: i64,
    pub(crate) cpu: Vec<u32>,
    pub(crate) inject: Vec<u32>,
    pub(crate) vc: Vec<u32>, // by 2 * link + pool
    pub(crate) wire: Vec<u32>,
    pub(crate) memory: Vec<u32>,
    pub(crate) overhead_s: f64,
    pub(crate) hop_s: f64,
}

/// A message's program: explicit ops, or a shape's with its data time and combining.
#[derive(Clone, Copy)]
pub(crate) enum Program {
    Ops { first: u32, end: u32 },
    Shaped { shape: u32, data_s: f64, combine_s: Option<f64> },
}

/// Op `pc` of a shaped program as far as it is known without the route's expansion.
pub(crate) enum ShapedOp {
    Op(Op),
    End,
    NeedsRoute, // in the ops after the torus's first four: Core::expand_program's
}

/// Signed shortest distance from `src` to `dst` on a ring of `size` (topology.py ring_step).
fn ring_step(src: i64, dst: i64, size: i64) -> i64 {
    let d = (dst - src).rem_euclid(size);
    if 2 * d < size {
        d
    } else if 2 * d > size {
        d - size
    } else if (src % (size / 2).max(1)) % 2 == 0 {
        d
    } else {
        -d
    }
}

impl TorusRoute {
    /// The e-cube route's (link, pool) hops from src to dst (topology.py Torus.route).
    pub(crate) fn route(&self, src: u32, dst: u32, out: &mut Vec<(u32, u32)>) {
        let (src, dst) = (src as i64, dst as i64);
        let (mut x, mut y) = (src % self.cols, src / self.cols);
        let steps = [(ring_step(x, dst % self.cols, self.cols), self.cols, 0i64),
                     (ring_step(y, dst / self.cols, self.rows), self.rows, 2i64)];
        for (step, size, plus) in steps {
            let mut pool = 0;
            for _ in 0..step.abs() {
                let here = y * self.cols + x;
                let coord = if plus == 0 { x } else { y };
                let (direction, wraps, next) = if step > 0 {
                    (plus, coord == size - 1, coord + 1)
                } else {
                    (plus + 1, coord == 0, coord - 1)
                };
                if wraps {
                    pool = 1; // the dateline: pool 1 from the wrap link on
                }
                out.push(((here * 4 + direction) as u32, pool));
                if plus == 0 {
                    x = next.rem_euclid(size);
                } else {
                    y = next.rem_euclid(size);
                }
            }
        }
    }
}

impl Core {
    /// Op `pc` of a shaped program from src to dst where no expansion is needed: every op of the
    /// ports shape, the first four of the torus's (its processor and injection channel, which a
    /// message waits for before its route: so only the messages past them hold an expansion,
    /// not the millions a phase starts at once).
    pub(crate) fn shaped_op(&self, program: Program, pc: usize, src: u32, dst: u32) -> ShapedOp {
        let Program::Shaped { shape, data_s, combine_s } = program else {
            unreachable!("explicit programs are read from their ops")
        };
        match &self.shapes[shape as usize] {
            Shape::Ports { send, recv, startup_s } => {
                let (s, r) = (send[src as usize], recv[dst as usize]);
                let op = match pc {
                    0 => Op::Acquire(s),
                    1 => Op::Hold(*startup_s),
                    2 => Op::Acquire(r),
                    3 => Op::Hold(data_s),
                    4 => Op::Release(r),
                    5 => Op::Release(s),
                    _ => match (combine_s, pc) {
                        (Some(_), 6) => Op::Acquire(self.arithmetic[dst as usize]),
                        (Some(combine_s), 7) => Op::Hold(combine_s),
                        (Some(_), 8) => Op::Release(self.arithmetic[dst as usize]),
                        _ => return ShapedOp::End,
                    },
                };
                ShapedOp::Op(op)
            }
            Shape::TorusRoute(t) => {
                let (cpu, inject) = (t.cpu[src as usize], t.inject[src as usize]);
                match pc {
                    0 => ShapedOp::Op(Op::Acquire(cpu)),
                    1 => ShapedOp::Op(Op::Hold(t.overhead_s)),
                    2 => ShapedOp::Op(Op::Release(cpu)),
                    3 => ShapedOp::Op(Op::Acquire(inject)),
                    _ => ShapedOp::NeedsRoute,
                }
            }
        }
    }

    /// The ops of a torus program for a message from src to dst, into `out` (cleared first),
    /// all of them (a message takes the first four from `shaped_op`); `hops` is scratch space.
    pub(crate) fn expand_program(&self, program: Program, src: u32, dst: u32, out: &mut Vec<Op>,
                         hops: &mut Vec<(u32, u32)>) {
        out.clear();
        let Program::Shaped { shape, data_s, combine_s } = program else {
            unreachable!("explicit programs are not expanded")
        };
        match &self.shapes[shape as usize] {
            Shape::Ports { .. } => unreachable!("shaped_op gives every op of the ports shape"),
            Shape::TorusRoute(t) => {
                hops.clear();
                t.route(src, dst, hops);
                let (cpu, inject) = (t.cpu[src as usize], t.inject[src as usize]);
                out.extend_from_slice(&[Op::Acquire(cpu), Op::Hold(t.overhead_s), Op::Release(cpu),
                                        Op::Acquire(inject)]);
                for &(link, pool) in hops.iter() {
                    out.push(Op::Acquire(t.vc[(2 * link + pool) as usize]));
                    out.push(Op::Hold(t.hop_s));
                }
                let (low, high) = (t.memory[src.min(dst) as usize], t.memory[src.max(dst) as usize]);
                out.push(Op::Acquire(low));
                out.push(Op::Acquire(high));
                let first_wire = out.len(); // the route's wires by link id (placeholders hold the link)
                out.extend(hops.iter().map(|&(link, _)| Op::Acquire(link)));
                out[first_wire..].sort_unstable_by_key(|op| match op {
                    Op::Acquire(link) => *link,
                    _ => unreachable!("only the wires' placeholders are sorted"),
                });
                for op in out[first_wire..].iter_mut() {
                    if let Op::Acquire(link) = *op {
                        *op = Op::Acquire(t.wire[link as usize]);
                    }
                }
                let wires_end = out.len();
                out.push(Op::Hold(data_s));
                out.push(Op::Release(low));
                out.push(Op::Release(high));
                for k in first_wire..wires_end {
                    if let Op::Acquire(r) = out[k] {
                        out.push(Op::Release(r));
                    }
                }
                out.extend(hops.iter().map(|&(link, pool)| Op::Release(t.vc[(2 * link + pool) as usize])));
                out.push(Op::Release(inject));
            }
        }
        if let Some(combine_s) = combine_s {
            let arithmetic = self.arithmetic[dst as usize];
            out.extend_from_slice(&[Op::Acquire(arithmetic), Op::Hold(combine_s), Op::Release(arithmetic)]);
        }
    }
}
