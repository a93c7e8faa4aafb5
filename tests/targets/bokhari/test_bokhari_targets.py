"""targets/bokhari: specs, routes, the network model's contention and the receive-buffer limit."""

from __future__ import annotations

import numpy as np
import pytest

from phalanx.compiler import hypercube
from phalanx.compiler.driver import compile_program
from phalanx.compiler.kind import Kind
from phalanx.compiler.recognize import recognize
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.engine import Engine
from phalanx.runtime.simulate import simulate
from phalanx.targets.bokhari import routing


def alltoall(n: int, block: int):
    return recognize(0, np.full((n, n), block, dtype=np.int64), "A", "B", 1)


def test_every_machine_declares_its_limits_and_routes():
    """The limits the network and the target read are declared by every machine's parameters
    (0 where the machine has none), and every routing gives its alternative routes."""
    limits = {spec: (t.params.link_MBps, t.params.recv_buffer_bytes, t.params.packet_bytes)
              for spec in ("paragon:4x4", "sp2:16", "cs2:16", "hypercube:4") for t in [resolve(spec)]}
    assert limits == {"paragon:4x4": (175.0, 255 * 1728.0, 0.0), "sp2:16": (0.0, 0.0, 255.0),
                      "cs2:16": (0.0, 0.0, 255.0), "hypercube:4": (0.0, 0.0, 0.0)}
    assert resolve("paragon:4x4").route.all(0, 5) == [resolve("paragon:4x4").route(0, 5)]
    assert len(resolve("sp2:16").route.all(0, 15)) == 4  # four routes between the board's halves
    with pytest.raises(UsageError, match="link_MBps"):
        resolve("sp2:16,link_MBps=100")  # a declared limit, not a parameter of the SP2

def test_specs_and_table1_parameters():
    p = resolve("paragon:4x8")
    assert p.nnodes == 32 and p.spec == "paragon:4x8"
    assert (p.params.startup_us, p.params.us_per_byte, p.params.copy_us_per_byte) == (75, 0.011, 0.014)
    assert p.params.shared_engine == resolve("sp2:32").params.shared_engine == 1
    assert resolve("hypercube:5").params.shared_engine == 0
    assert resolve("sp2:64").params.us_per_byte == 0.043
    assert resolve("cs2:32").params.barrier_offset_us == 5.6
    h = resolve("hypercube:5,startup_us=20")
    assert h.nnodes == 32 and h.params.startup_us == 20 and h.spec == "hypercube:5"


@pytest.mark.parametrize("spec, message", [
    ("paragon:8", "bad mesh shape '8' for target 'paragon'"),
    ("paragon:0x4", "bad mesh shape '0x4' for target 'paragon'"),
    ("sp2:0", "bad node count '0' for target 'sp2'"),
    ("hypercube:x", "bad dimension 'x' for target 'hypercube'"),
    ("hypercube:20", "hypercube dimension 20 is too large to simulate"),
    ("cs2:32,lambda=3", "unknown parameter 'lambda' for target 'cs2'"),
    ("sp2:64,up_route=4", "parameter up_route=4 of target 'sp2' is not one of the up-route "
                          "rules 0..3"),
    ("cs2:16,up_route=1.5", "parameter up_route=1.5 of target 'cs2' is not one of"),
])
def test_bad_specs(spec, message):
    with pytest.raises(UsageError) as info:
        resolve(spec)
    assert message in info.value.diagnostic.message


def test_bad_up_route_names_the_rules():
    with pytest.raises(UsageError) as info:
        resolve("sp2:64,up_route=7")
    assert "2 = destination digit" in info.value.diagnostic.hint


def test_routes():
    assert routing.MeshRoute(4)(1, 14) == [((0, 1), (0, 2)), ((0, 2), (1, 2)), ((1, 2), (2, 2)),
                                            ((2, 2), (3, 2))]  # row first, then column
    assert routing.ecube_route(0b0010, 0b1001) == [(0b0010, 0b0011), (0b0011, 0b0001),
                                                   (0b0001, 0b1001)]  # seed 003 Sec. 2
    route = routing.fat_tree_route(64)
    assert routing.fat_tree_levels(32) == routing.fat_tree_levels(64) == 3
    assert len(route(0, 3)) == 2 and len(route(0, 4)) == 4 and len(route(0, 63)) == 6
    for src, dst in [(0, 63), (5, 17), (40, 2)]:
        hops = route(src, dst)
        assert hops[0][0] == ("node", src) and hops[-1][1] == ("node", dst)
        assert all(a[1] == b[0] for a, b in zip(hops, hops[1:]))


def finish_times(spec: str, transfers: list[Transfer]) -> dict[tuple[int, int], float]:
    engine = Engine()
    net = resolve(spec).build_network(engine)
    done = {}

    def send(t):
        yield from net.transfer(t)
        done[(t.src, t.dst)] = engine.now

    for t in transfers:
        engine.process(send(t), f"{t.src}->{t.dst}")
    engine.run()
    return done


def test_edge_contention_on_the_mesh():
    # Fig. 7: 0->2 and 1->3 in one row both need the edge 1->2; 0->1 and 2->3 do not share.
    one = (75 + 0.011 * 1000) * 1e-6
    done = finish_times("paragon:1x4", [Transfer(0, 2, 1000, 0, 2), Transfer(1, 3, 1000, 1, 3)])
    assert sorted(done.values()) == pytest.approx([one, one + 0.011e-3])
    done = finish_times("paragon:1x4", [Transfer(0, 1, 1000, 0, 1), Transfer(2, 3, 1000, 2, 3)])
    assert sorted(done.values()) == pytest.approx([one, one])


def test_one_communication_processor_serves_both_directions():
    # 003 Abstract / Sec. 3.1: one communication processor per node sends and receives. A lone
    # message still takes Table 1's lambda + tau m; two nodes exchanging serialise their wire
    # times on it, on the theory's hypercube they overlap (Sec. 2: t = lambda + tau m per step).
    one = (75 + 0.011 * 1000) * 1e-6
    assert list(finish_times("paragon:1x2", [Transfer(0, 1, 1000, 0, 1)]).values()) == \
        pytest.approx([one])
    both = [Transfer(0, 1, 1000, 0, 1), Transfer(1, 0, 1000, 1, 0)]
    assert sorted(finish_times("paragon:1x2", both).values()) == pytest.approx([one, one + 11e-6])
    assert sorted(finish_times("hypercube:1", both).values()) == pytest.approx([one, one])
    assert sorted(finish_times("paragon:1x2,shared_engine=0", both).values()) == \
        pytest.approx([one, one])
    names = {r.name for r in resolve("cs2:16").build_network(Engine()).resources()}
    assert "node 3 communication processor" in names and "node 3 send engine" not in names


def test_switch_port_contention_in_the_multistage_network():
    # Nodes 0 and 1 share a leaf switch; destinations 4 and 8 share digit 0, which picks the
    # SP2's up-port (up_route=2): one up-port. By the sources' digits (up_route=1): two.
    t = [Transfer(0, 4, 1000, 0, 4), Transfer(1, 8, 1000, 1, 8)]
    one = (70 + 0.043 * 1000) * 1e-6
    single = "sp2:16,routes_per_pair=1"
    assert sorted(finish_times(single, t).values()) == pytest.approx([one, one + 0.043e-3])
    spread = "sp2:16,up_route=1,routes_per_pair=1"
    assert sorted(finish_times(spread, t).values()) == pytest.approx([one, one])
    # The SP2's 4 routes per pair: each 1000-byte message is 4 packets (255, 255, 255, 235
    # bytes), one on each route in turn. Both start on route 0, so the second waits one
    # 255-byte packet and then follows the first round the routes.
    assert sorted(finish_times("sp2:16", t).values()) == pytest.approx([one, one + 0.043e-6 * 255])
    for spec in ("sp2:16", "sp2:64"):  # a lone message still takes lambda + tau m (Table 1)
        assert list(finish_times(spec, [Transfer(0, 63 % resolve(spec).nnodes, 1000, 0, 1)])
                    .values()) == pytest.approx([one])


def test_sp2_alternative_routes():
    # Stunkel et al. 1995 / IBM SP redbook: 4 routes per pair, through 4 different switches.
    rule = "destination digit"
    routes = routing.fat_tree_route(64, rule, routes_per_pair=4)
    assert routes(5, 40) == routes.all(5, 40)[0] == routing.fat_tree_route(64, rule)(5, 40)
    alts = routes.all(5, 40)
    assert len(alts) == 4 and len({tuple(r) for r in alts}) == 4
    for r in alts:
        assert r[0][0] == ("node", 5) and r[-1][1] == ("node", 40)
        assert all(a[1] == b[0] for a, b in zip(r, r[1:]))
    inner = [set(r[1:-2]) for r in alts]  # every link between the two leaf switches' last hops
    assert all(not (inner[i] & inner[j]) for i in range(4) for j in range(i))
    assert len(routes.all(0, 3)) == 1  # one leaf switch: one route
    net = resolve("sp2:64").build_network(Engine())
    assert net.route(5, 40) == [link.name for link in net.paths(5, 40)[0]]
    assert len(net.paths(5, 40)) == 4 and len(resolve("cs2:64").build_network(Engine())
                                                 .paths(5, 40)) == 1
    # Round robin per pair, packet by packet, continuing from the pair's previous message.
    first = net.pieces(Transfer(5, 40, 600, 5, 40))  # 3 packets: routes 0, 1, 2
    second = net.pieces(Transfer(5, 40, 100, 5, 40))  # 1 packet: route 3
    assert [b for _, b in first] == [255, 255, 90] and [b for _, b in second] == [100]
    assert [net.paths(5, 40).index(p) for p, _ in first + second] == [0, 1, 2, 3]


def test_receive_buffer_limit_of_the_paragon_cuts_blocks_into_pieces():
    target = resolve("paragon:16x16")
    whole = target.generate(alltoall(256, 1728), "direct")  # 255 receives of 1728 bytes fit (Sec. 5)
    assert target.fits(alltoall(256, 1728), "direct") and len(whole.phases) == 256
    # One byte more and the 255 receives do not fit whole: the blocks go in two pieces of 865
    # and 864 bytes, the exchange once per piece, each round opening with its barrier.
    big = alltoall(256, 1729)
    assert not target.fits(big, "direct") and target.pieces(big, "direct") == 2
    cut = target.generate(big, "direct")  # generate proves it within the limit
    assert len(cut.phases) == 512 and [p.sync for p in cut.phases].count("barrier") == 2
    sizes = sorted({t.nbytes for p in cut.phases for t in p.sends if t.src != t.dst})
    assert sizes == [864, 865]
    assert target.predict_time_s(big, "direct") == pytest.approx(
        2 * hypercube.multiphase_time_s((8,), 1729 / 2, target.cost(256)))
    # auto never picks what cannot run (ranked by the closed forms: simulating 256-node candidates
    # is not what is checked here)
    chosen = target.choose(alltoall(256, 3000), "auto", "closed-form")
    assert target.pieces(alltoall(256, 3000), chosen) is not None
    assert resolve("sp2:256").fits(alltoall(256, 4096), "direct")  # only the Paragon has it


def test_only_where_not_even_one_byte_pieces_fit_is_an_exchange_refused():
    # paragon:4x4 direct {4} posts 15 receives at once, {2,2} 12 and standard 8 a phase.
    target = resolve("paragon:4x4,recv_buffer_bytes=10")
    coll = alltoall(16, 8)
    assert target.pieces(coll, "direct") is None and target.pieces(coll, "standard") == 8
    assert "even with one-byte pieces" in target.unmet(coll, "direct")
    chosen = target.choose(coll)  # the family's standard, or the library's Bruck's that fits too
    assert chosen != "direct" and target.unmet(coll, chosen) is None
    with pytest.raises(UsageError) as info:
        target.generate(coll, "direct")
    d = info.value.diagnostic
    assert d.message == ("direct on paragon:4x4 cannot stay within the receive buffers: a node would "
                         "post receives for more bytes at once than its receive-buffer limit of 10 "
                         "bytes even with one-byte pieces (seed 003 Sec. 5)")
    assert d.hint == "use standard, which fit in pieces, or algorithm auto"  # the one that fits
    # 7 bytes: no member of the family fits, but the library's direct messages do in 3 pieces
    # (a round of two phases, 3 + 3 bytes; buffers.in_fewest_pieces): grid-direct's 16 phases
    # and direct-copy-beside's 15 a piece, which auto takes (predicted 11.20 ms against 11.82)
    seven = resolve("paragon:4x4,recv_buffer_bytes=7")
    assert seven.choose(coll) == "direct-copy-beside"
    assert len(seven.schedule_for(coll, "grid-direct").phases) == 48
    assert len(seven.schedule_for(coll, "direct-copy-beside").phases) == 45
    with pytest.raises(UsageError) as info:
        resolve("paragon:4x4,recv_buffer_bytes=1").choose(coll)
    assert "no exchange fits the receive buffers of paragon:4x4 (1 bytes), even in one-byte " \
        "pieces" in info.value.diagnostic.message


def test_auto_picks_equipartitions_by_message_size():
    """Among the exchange family the equipartition {3, 3} for short blocks, `direct` for long
    ones; Bruck's all-to-all (simulated, issue 27) beats the family for short blocks:
    radix-bruck, its top bit's round first and unpacked (radix 2 at 1 B), radix 4 at 256 B
    (radix.py); for long ones the family's `direct` without its opening barrier and with each
    node's own copy beside its first message, the library's direct-copy-beside."""
    target = resolve("hypercube:6")
    picks = [target.choose(alltoall(64, m)) for m in (1, 256, 4000)]
    assert picks == ["radix-bruck", "radix-bruck", "direct-copy-beside"]
    family = ("standard", "direct", "multiphase:3,3", "multiphase:2,4", "multiphase:2,2,2")
    for m in (1, 256):
        assert min(family, key=lambda a: target.predict(alltoall(64, m), a)) == "multiphase:3,3"
    assert target.choose(alltoall(64, 1), "multiphase:2+4") == "multiphase:2,4"
    with pytest.raises(UsageError, match="'multiphase:2,3' is not a multiphase exchange on 64"):
        target.choose(alltoall(64, 1), "multiphase:2,3")


def link_loads(spec: str, alternative: int) -> dict[tuple[str, int], list[int]]:
    """How many routes number `alternative` (all pairs) cross each switch-to-switch link of a
    multistage target, idle links included, grouped by stage: ("up", l) from level l to
    l + 1, ("down", l) from l + 1 to l."""
    target = resolve(spec)
    count: dict[tuple, int] = {}
    for src in range(target.nnodes):
        for dst in range(target.nnodes):
            for hop in target.route.one(src, dst, alternative) if src != dst else []:
                count[hop] = count.get(hop, 0) + 1
    levels = routing.fat_tree_levels(target.nnodes)
    labels = [tuple(i // 4 ** k % 4 for k in range(levels - 1)) for i in range(4 ** (levels - 1))]
    stages: dict[tuple[str, int], list[int]] = {}
    for level in range(levels - 1):  # switch X at level l is cabled to the 4 switches of
        for label in labels:  # level l + 1 whose labels differ from X's at most at position l
            for port in range(4):
                low = ("switch", level, label)
                high = ("switch", level + 1, label[:level] + (port,) + label[level + 1:])
                stages.setdefault(("up", level), []).append(count.get((low, high), 0))
                stages.setdefault(("down", level), []).append(count.get((high, low), 0))
    return stages


def test_sp2_routes_spread_evenly_over_every_stage():
    # Abali and Aykanat 1994, Sec. 1: routes selected so that "the communication load is
    # distributed evenly among the links and switches". Whether the adapter puts a message's
    # packets or whole messages on a pair's routes in turn is not documented; with whole
    # messages an all-to-all uses each pair's first route only, so each route number's set
    # must spread on its own. The SP2's rule (2, destination digit) does: every link of a
    # stage carries as many of the all-pairs routes as any other, for each route number.
    for alternative in range(4):
        for stage, loads in link_loads("sp2:64", alternative).items():
            assert min(loads) == max(loads) > 0, (alternative, stage)
    # Rule 0 (destination digit above, the CS-2's): route r climbs to a top switch that sends
    # down to the destination's 16-node group only, so each route number leaves 3/4 of the
    # top stage's 64 down-links idle (the four route numbers together cover them all).
    for alternative in range(4):
        down = link_loads("sp2:64,up_route=0", alternative)[("down", 1)]
        assert len(down) == 64 and sum(load > 0 for load in down) == 16


def test_a_transpose_past_the_receive_buffers_runs_in_pieces_and_verifies():
    """The 64 MiB transpose on paragon:8x8 of issue 29, scaled down: 256-byte blocks on 4x4
    with a 1000-byte receive pool. Direct {4} posts 15 blocks at once, so it runs in 4 pieces
    of 64 bytes; every schedule the compiler makes stays within the pool, and the data arrive."""
    source = ("processors P(16)\narray A(64, 64) of complex128 distribute (BLOCK, *) onto P\n"
              "array B(64, 64) of complex128 distribute (*, BLOCK) onto P\nB = A\n")
    spec = "paragon:4x4,recv_buffer_bytes=1000"
    for algorithm in ("auto", "direct"):
        compiled = compile_program(source, spec, algorithm)
        (c,) = compiled.collectives
        (schedule,) = compiled.schedules
        assert c.block_bytes == 256 and not compiled.target.fits(c, "direct")
        compiled.target.check_receive_buffers(schedule)
        run = simulate(compiled)
        assert run.verified, run.collectives[0].problems
    assert (schedule.algorithm, len(schedule.phases)) == ("direct", 4 * 16)


def test_direct_copy_beside_only_where_the_family_takes_the_name_direct():
    """The generic direct exchange under its own name on 2^d processors, where `direct` is
    Bokhari's (an opening barrier after every node's own copy); elsewhere `direct` is it."""
    sp2 = resolve("sp2:32")
    family, generic = sp2.schedule_for(alltoall(32, 64), "direct"), \
        sp2.schedule_for(alltoall(32, 64), "direct-copy-beside")
    assert family.phases[0].sync == "barrier" and len(family.phases) == 32
    assert generic.phases[0].sync == "local" and len(generic.phases) == 31
    assert generic.phases[0].sends[:2] == (Transfer(0, 0, 64, 0, 0), Transfer(0, 1, 64, 0, 1))
    assert resolve("sp2:24").unmet(alltoall(24, 64), "direct-copy-beside") == (
        "on 24 processors (not a power of two) `direct` is this schedule itself")
    assert "direct-copy-beside" not in resolve("ideal:32").algorithms(Kind.ALLTOALL)
