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
//! A torus message's route is worked out once it holds its injection channel (a phase starts
//! millions of messages that wait for their sender first), as its resources: the hop count, each
//! hop's virtual channel, then the route's wires by link id, `1 + 2 * hops` u32 in a slot of
//! `Core::routes`; its ops are read off them by position (`torus_op`), not stored (an op list
//! was 80 bytes a hop, and the loop's time went on its cache misses).
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
    Switched(u32), // a program of a wormhole shape, by its index in Core::switch (wormhole.rs)
}

/// Op `pc` of a shaped program, as far as it is known without the message's route.
pub(crate) enum ShapedOp {
    Op(Op),
    End,
    NeedsRoute, // an op after the torus's first four, asked without the route (`route_resources`)
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
    /// The u32 a route's resources take at most (`route_resources`): the hop count, then two per
    /// hop of the longest shortest route (half of each ring).
    pub(crate) fn route_words(&self) -> usize {
        1 + 2 * (self.rows / 2 + self.cols / 2) as usize
    }

    /// The most ops a message of this shape takes: the longest route's, then combining.
    pub(crate) fn most_ops(&self) -> usize {
        Self::transfer_ops((self.rows / 2 + self.cols / 2) as usize) + 3
    }

    /// The route's resources from src to dst into `out` (`route_words` of them at most): the
    /// hop count, each hop's virtual channel in the route's order, then the route's wires in
    /// the order of their link ids (wormhole.py transfer_program); `hops` is scratch space.
    pub(crate) fn route_resources(&self, src: u32, dst: u32, hops: &mut Vec<(u32, u32)>, out: &mut [u32]) {
        hops.clear();
        self.route(src, dst, hops);
        let h = hops.len();
        out[0] = h as u32;
        for (i, &(link, pool)) in hops.iter().enumerate() {
            out[1 + i] = self.vc[(2 * link + pool) as usize];
            out[1 + h + i] = link;
        }
        let wires = &mut out[1 + h..1 + 2 * h];
        wires.sort_unstable();
        for w in wires.iter_mut() {
            *w = self.wire[*w as usize];
        }
    }

    /// The ops of the torus's program for a route of `hops` hops (wormhole.py
    /// transfer_program): the first four, a channel and the hop latency per hop, both memory
    /// streams, the wires, the data time, then every release.
    fn transfer_ops(hops: usize) -> usize {
        5 * hops + 10
    }

    /// Op `pc` of the torus's program from src to dst, below `transfer_ops`; the ops past the
    /// first four read the route's resources (`route_resources`).
    fn torus_op(&self, pc: usize, src: u32, dst: u32, data_s: f64, route: &[u32]) -> Op {
        let (cpu, inject) = (self.cpu[src as usize], self.inject[src as usize]);
        if pc < TORUS_BEFORE_ROUTE {
            return [Op::Acquire(cpu), Op::Hold(self.overhead_s), Op::Release(cpu), Op::Acquire(inject)][pc];
        }
        let h = route[0] as usize;
        let (vcs, wires) = (&route[1..1 + h], &route[1 + h..1 + 2 * h]);
        let (low, high) = (self.memory[src.min(dst) as usize], self.memory[src.max(dst) as usize]);
        let k = pc - TORUS_BEFORE_ROUTE;
        let data = 3 * h + 2; // the data's hold, after the channels, hops, memory and wires
        match k {
            _ if k < 2 * h && k & 1 == 0 => Op::Acquire(vcs[k / 2]), // a hop's channel,
            _ if k < 2 * h => Op::Hold(self.hop_s),                    // then its latency
            _ if k == 2 * h => Op::Acquire(low),
            _ if k == 2 * h + 1 => Op::Acquire(high),
            _ if k < data => Op::Acquire(wires[k - 2 * h - 2]),
            _ if k == data => Op::Hold(data_s),
            _ if k == data + 1 => Op::Release(low),
            _ if k == data + 2 => Op::Release(high),
            _ if k < data + 3 + h => Op::Release(wires[k - data - 3]),
            _ if k < data + 3 + 2 * h => Op::Release(vcs[k - data - 3 - h]),
            _ => Op::Release(inject),
        }
    }

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

/// Where a route's start-up ends: the torus's ops before its route (its processor and injection
/// channel), which a message waits for before its route is worked out.
pub(crate) const TORUS_BEFORE_ROUTE: usize = 4;

impl Core {
    /// Op `pc` of a shaped program from src to dst: every op of the ports shape; of the torus's,
    /// the first four without the route and the rest from `route` (its resources, from
    /// `TorusRoute::route_resources`: the core works a message's route out once it holds its
    /// injection channel, so the millions of messages a phase starts hold none while they wait).
    pub(crate) fn shaped_op(&self, program: Program, pc: usize, src: u32, dst: u32, route: Option<&[u32]>)
                            -> ShapedOp {
        if let Program::Switched(i) = program {
            return self.switched_op(i, pc, src, dst, route);
        }
        let Program::Shaped { shape, data_s, combine_s } = program else {
            unreachable!("explicit programs are read from their ops")
        };
        let transfer_ops = match &self.shapes[shape as usize] {
            Shape::Ports { send, recv, startup_s } => {
                let (s, r) = (send[src as usize], recv[dst as usize]);
                match pc {
                    0 => return ShapedOp::Op(Op::Acquire(s)),
                    1 => return ShapedOp::Op(Op::Hold(*startup_s)),
                    2 => return ShapedOp::Op(Op::Acquire(r)),
                    3 => return ShapedOp::Op(Op::Hold(data_s)),
                    4 => return ShapedOp::Op(Op::Release(r)),
                    5 => return ShapedOp::Op(Op::Release(s)),
                    _ => 6,
                }
            }
            Shape::TorusRoute(t) => {
                if pc < TORUS_BEFORE_ROUTE {
                    return ShapedOp::Op(t.torus_op(pc, src, dst, data_s, &[]));
                }
                let Some(route) = route else {
                    return ShapedOp::NeedsRoute;
                };
                let n = TorusRoute::transfer_ops(route[0] as usize);
                if pc < n {
                    return ShapedOp::Op(t.torus_op(pc, src, dst, data_s, route));
                }
                n
            }
        };
        let arithmetic = self.arithmetic[dst as usize];
        match (combine_s, pc - transfer_ops) {
            (Some(_), 0) => ShapedOp::Op(Op::Acquire(arithmetic)),
            (Some(combine_s), 1) => ShapedOp::Op(Op::Hold(combine_s)),
            (Some(_), 2) => ShapedOp::Op(Op::Release(arithmetic)),
            _ => ShapedOp::End,
        }
    }
}

/// The torus shape of a shaped program whose op asked for its route (`ShapedOp::NeedsRoute`).
pub(crate) fn torus_of(shapes: &[Shape], program: Program) -> &TorusRoute {
    let Program::Shaped { shape, .. } = program else {
        unreachable!("explicit programs have no route")
    };
    let Shape::TorusRoute(t) = &shapes[shape as usize] else {
        unreachable!("shaped_op gives every op of the ports shape")
    };
    t
}

impl Core {
    /// The u32 the route of shaped program `program` takes at most (`route_resources`).
    pub(crate) fn route_words_of(&self, program: Program) -> usize {
        match program {
            Program::Switched(i) => self.switched_route_words(i),
            _ => torus_of(&self.shapes, program).route_words(),
        }
    }

    /// The route's resources of a shaped torus or wormhole program from src to dst into `out`
    /// (at least `route_words_of` long, for `shaped_op`); `hops` is scratch space.
    pub(crate) fn route_resources(&self, program: Program, src: u32, dst: u32, hops: &mut Vec<(u32, u32)>,
                                  out: &mut [u32]) {
        match program {
            Program::Switched(i) => self.switched_route(i, src, dst, hops, out),
            _ => torus_of(&self.shapes, program).route_resources(src, dst, hops, out),
        }
    }
}
