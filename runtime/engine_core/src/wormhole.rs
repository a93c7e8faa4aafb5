//! The torus's library and phased messages by shape (targets/iwarp/wormhole.py `program`,
//! runtime/network.py `WormholeShape`): the plain route of shapes.rs `TorusRoute` with what
//! `message-passing` and `phased` add to it.
//!
//! - a library message (the deposit library, seed 001 Sec. 3.1): the sender's code packing its
//!   strided bytes on its processor (when that takes time), the overhead, a send slot, the
//!   injection channel, the hops, a receive slot and the receiver's processor for its overhead,
//!   the streams and the data, every release (the slots beside the channels), then the
//!   receiver's code unpacking (when that takes time);
//! - a phased message (the synchronizing switch, Sec. 3.2): the overhead with the phase's
//!   software, and before each hop's channel the gate of that link (`Op::WaitGate`, gates.rs),
//!   after the releases a tail on every link of the route in path order (`Op::PassTail`);
//! - a plain message among them: the plain route's ops.
//!
//! Each ends with the receiver combining reduction partials, as every shaped program does. A
//! message's route is worked out when it holds its injection channel, as for the plain shape:
//! the hop count, the hops' virtual channels, the wires by link id (resource ids), then the
//! hops' link ids in path order for the gates, `1 + 3 * hops` u32.

use crate::model::*;
use crate::shapes::{ShapedOp, TorusRoute};

pub(crate) struct Wormhole {
    pub(crate) torus: TorusRoute,
    pub(crate) library_sends: Vec<u32>,
    pub(crate) library_receives: Vec<u32>,
    pub(crate) receive_overhead_s: f64,
    pub(crate) phased_overhead_s: f64, // the overhead and the phase's software (Fig. 4 line 5)
}

impl Wormhole {
    /// The u32 a route takes at most (`Core::switched_route`): the plain route's, then a link
    /// id per hop for the gates.
    pub(crate) fn route_words(&self) -> usize {
        1 + 3 * (self.torus.rows / 2 + self.torus.cols / 2) as usize
    }

    /// The most ops a message's program takes: the plain route's, a gate and a tail per hop, the
    /// pack and unpack code's three each, the library's two slots and the receiver's overhead.
    pub(crate) fn most_ops(&self) -> usize {
        self.torus.most_ops() + 2 * (self.torus.rows / 2 + self.torus.cols / 2) as usize + 6 + 4 + 3
    }
}

/// What a message of the wormhole shape is.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Plain,
    Library { pack_s: f64, unpack_s: f64 }, // the application's code; 0: it takes no time
    Phased { collective: u32, phase: u32 },
}

/// A program of a wormhole shape: its data time, combining and kind.
#[derive(Clone, Copy)]
pub(crate) struct Switched {
    pub(crate) wormhole: u32,
    pub(crate) data_s: f64,
    pub(crate) combine_s: Option<f64>,
    pub(crate) kind: Kind,
}

/// The wormhole shapes and their programs (`Program::Switched` indexes `programs`).
#[derive(Default)]
pub(crate) struct Switch {
    pub(crate) wormholes: Vec<Wormhole>,
    pub(crate) programs: Vec<Switched>,
}

/// Acquire `r`, hold `time_s`, release it: op k of the three.
fn busy(r: u32, time_s: f64, k: usize) -> ShapedOp {
    ShapedOp::Op([Op::Acquire(r), Op::Hold(time_s), Op::Release(r)][k])
}

impl Core {
    /// The u32 a wormhole route takes at most (`switched_route`).
    pub(crate) fn switched_route_words(&self, program: u32) -> usize {
        self.switch.wormholes[self.switch.programs[program as usize].wormhole as usize].route_words()
    }

    /// The route's resources of program `program` from src to dst into `out`, at least
    /// `switched_route_words` long (module docstring).
    pub(crate) fn switched_route(&self, program: u32, src: u32, dst: u32, hops: &mut Vec<(u32, u32)>,
                                 out: &mut [u32]) {
        let t = &self.switch.wormholes[self.switch.programs[program as usize].wormhole as usize].torus;
        t.route_resources(src, dst, hops, out); // leaves the route's hops in `hops`
        let h = hops.len();
        for (i, &(link, _)) in hops.iter().enumerate() {
            out[1 + 2 * h + i] = link;
        }
    }

    /// Op `pc` of program `program` from src to dst (wormhole.py `program`, op for op): those
    /// before the hops without the route, the rest from `route` (`switched_route`).
    pub(crate) fn switched_op(&self, program: u32, pc: usize, src: u32, dst: u32, route: Option<&[u32]>)
                              -> ShapedOp {
        let sw = self.switch.programs[program as usize];
        let w = &self.switch.wormholes[sw.wormhole as usize];
        let t = &w.torus;
        let (s, d) = (src as usize, dst as usize);
        let (library, (pack_s, unpack_s), gate) = match sw.kind {
            Kind::Plain => (false, (0.0, 0.0), None),
            Kind::Library { pack_s, unpack_s } => (true, (pack_s, unpack_s), None),
            Kind::Phased { collective, phase } => (false, (0.0, 0.0), Some((collective, phase))),
        };
        let mut k = pc;
        if pack_s > 0.0 {
            if k < 3 {
                return busy(t.cpu[s], pack_s, k);
            }
            k -= 3;
        }
        if k < 3 {
            return busy(t.cpu[s], if gate.is_some() { w.phased_overhead_s } else { t.overhead_s }, k);
        }
        k -= 3;
        if library {
            if k == 0 {
                return ShapedOp::Op(Op::Acquire(w.library_sends[s]));
            }
            k -= 1;
        }
        if k == 0 {
            return ShapedOp::Op(Op::Acquire(t.inject[s]));
        }
        k -= 1;
        let Some(route) = route else {
            return ShapedOp::NeedsRoute;
        };
        let h = route[0] as usize;
        let (vcs, wires, links) = (&route[1..1 + h], &route[1 + h..1 + 2 * h], &route[1 + 2 * h..1 + 3 * h]);
        let per_hop = if gate.is_some() { 3 } else { 2 };
        if k < per_hop * h {
            // j: -1 the gate, 0 the channel, 1 the hop's latency
            let (i, j) = (k / per_hop, (k % per_hop) as isize + 2 - per_hop as isize);
            return ShapedOp::Op(match (j, gate) {
                (0, _) => Op::Acquire(vcs[i]),
                (1, _) => Op::Hold(t.hop_s),
                (_, Some((collective, phase))) => Op::WaitGate { collective, link: links[i], phase },
                _ => unreachable!("only phased messages wait at gates"),
            });
        }
        k -= per_hop * h;
        if library {
            if k < 4 {
                let receiver = t.cpu[d];
                return ShapedOp::Op([Op::Acquire(w.library_receives[d]), Op::Acquire(receiver),
                                     Op::Hold(w.receive_overhead_s), Op::Release(receiver)][k]);
            }
            k -= 4;
        }
        let stream = |i: usize| match i {
            0 => t.memory[s.min(d)],
            1 => t.memory[s.max(d)],
            _ => wires[i - 2],
        };
        if k < 2 + h {
            return ShapedOp::Op(Op::Acquire(stream(k)));
        }
        k -= 2 + h;
        if k == 0 {
            return ShapedOp::Op(Op::Hold(sw.data_s));
        }
        k -= 1;
        if k < 2 + h {
            return ShapedOp::Op(Op::Release(stream(k)));
        }
        k -= 2 + h;
        if library {
            if k == 0 {
                return ShapedOp::Op(Op::Release(w.library_sends[s]));
            }
            k -= 1;
        }
        if k < h {
            return ShapedOp::Op(Op::Release(vcs[k]));
        }
        k -= h;
        if library {
            if k == 0 {
                return ShapedOp::Op(Op::Release(w.library_receives[d]));
            }
            k -= 1;
        }
        if k == 0 {
            return ShapedOp::Op(Op::Release(t.inject[s]));
        }
        k -= 1;
        if let Some((collective, _)) = gate {
            if k < h {
                return ShapedOp::Op(Op::PassTail { collective, link: links[k] });
            }
            k -= h;
        }
        if unpack_s > 0.0 {
            if k < 3 {
                return busy(t.cpu[d], unpack_s, k);
            }
            k -= 3;
        }
        match sw.combine_s {
            Some(combine_s) if k < 3 => busy(self.arithmetic[d], combine_s, k),
            _ => ShapedOp::End,
        }
    }
}
