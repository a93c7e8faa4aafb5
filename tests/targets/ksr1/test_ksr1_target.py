"""The ksr1 target: spec errors, every algorithm moving verified data, and the ring model's
mechanisms (Table 1 latencies, shared copies, dropped requests, ARDs, prefetch, poststore,
writes moving exclusive ownership)."""

from __future__ import annotations

import pytest

from conftest import compile_text
from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import PhalanxError
from phalanx.runtime.engine import Engine
from phalanx.runtime.simulate import simulate
from phalanx.targets.ksr1.network import Content
from phalanx.targets.ksr1.params import KsrParams
from phalanx.targets.ksr1.tags import Read, ReadMode

SHARED = Read(1).message  # a read of shared content 1
PRIVATE_PREFETCH = Read(0, ReadMode.PREFETCH).message

P = KsrParams()


@pytest.mark.parametrize("spec, message", [
    ("ksr1:0", "bad cell count '0' for target 'ksr1'"),
    ("ksr1:1089", "bad cell count '1089'"),
    ("ksr1:8x8", "bad cell count '8x8'"),
    ("ksr1:8,ring0_slots=2.5", "ring0_slots=2.5 of target 'ksr1' must be a whole number"),
    ("ksr1:8,clock_MHz=0", "clock_MHz=0 of target 'ksr1' must be positive"),
    ("ksr1:8,ring1_cycles=100", "ring1_cycles=100 is less than ring0_cycles=175"),
    ("ksr1:8,ards_per_ring0=3", "exactly 2 ARDs"),
    ("ksr1:8,bogus=1", "unknown parameter 'bogus' for target 'ksr1'"),
    ("ksr1:8,barrier_us=-1", "barrier_us=-1 of target 'ksr1' must be a finite number >= 0"),
    ("ksr1:8,ard_service_ns=6000", "ard_service_ns=6000 does not fit in Table 1's ring:1 read"),
])
def test_bad_specs_are_clear_usage_errors(spec, message):
    with pytest.raises(PhalanxError) as info:
        resolve(spec)
    assert message in info.value.diagnostic.render()


def test_spec_sizes_and_clock():
    assert resolve("ksr1:1088").nnodes == 1088
    target = resolve("ksr1:64")
    assert target.spec == "ksr1:64" and target.clock_hz == 20e6
    assert target.describe()["params"]["ring0_cycles"] == 175.0


PROGRAM = """target ksr1:{n}{extra}
processors P({n})
array S({e}) of float64 on P(1)
array R({e}) of float64 replicated onto P
array C({e}) of float64 distribute BLOCK onto P
array D({e}) of float64 distribute BLOCK onto P
array G({e}) of float64 on P(2)
array A({e}) of float64 replicated onto P
array s(1) of float64 on P(3)
array t(1) of float64 replicated onto P
R = S
D = cshift(C, 40, dim=1)
G = C
A = C
s = sum(C)
t = sum(C)
"""
DECLARATIONS = 10  # PROGRAM's lines before its statements


@pytest.mark.parametrize("n, extra", [(6, ""), (7, ",cells_per_ring0=3")])
def test_every_algorithm_of_every_collective_verifies(n, extra):
    """Two ring:0s in the second case (3 cells each): reads cross ring:1 through the ARDs. The
    algorithms that cannot run are those that cut partials in pieces, for one-element partials
    on 6 or 7 cells: the reduce's two-tree; and, on 2^d members only, the reduce's
    reduce-scatter-gather, cut-halving, halving-direct, halving-fan-in, halving-postal and
    dimension-pipeline,
    the allreduce's reduce-scatter-allgather and cut-halving, the broadcast's scatter-doubling,
    cut-scatter-doubling, gray-two-tree and dimension-pipeline, the allgather's
    far-first-doubling; and the shift's staggered and staggered-halves, which need an adapter
    that spreads a message over routes (the SP2's). Each in its read modes too (`-prefetch`,
    `-poststore`)."""
    source = PROGRAM.format(n=n, extra=extra, e=16 * n * 3)
    compiled = compile_text(source, cost="closed-form")  # what runs is checked, not auto's choice
    for coll in compiled.collectives:
        refused = {a: why for a, why in compiled.target.candidates(coll) if why is not None}
        expected = {"reduce": {"reduce-scatter-gather", "cut-halving", "halving-direct", "two-tree",
                               "halving-fan-in", "halving-postal", "dimension-pipeline"},
                    "allreduce": {"reduce-scatter-allgather", "cut-halving"},
                    "broadcast": {"scatter-doubling", "cut-scatter-doubling", "gray-two-tree",
                                  "dimension-pipeline"},
                    "allgather": {"far-first-doubling"},
                    "cshift": {"staggered", "staggered-halves"}}
        modes = ("", "-prefetch", "-poststore")
        assert set(refused) == {f"{base}{mode}" for base in expected.get(coll.kind, ()) for mode in modes}
        # Each algorithm runs in the program cut to the collective's statement: the same arrays
        # on the same machine, and its own time (time_s, a replay alone) is the same; the other
        # statements are not simulated once per algorithm of this one.
        (line,) = {s.line for s in compiled.plan.schedules() if s.collective == coll.index}
        lines = source.splitlines(keepends=True)
        alone = "".join(lines[:DECLARATIONS]) + lines[line - 1]
        for alg in compiled.target.algorithms(coll.kind):
            if alg in refused:
                continue
            result = simulate(compile_text(alone, algorithm=f"{coll.kind}={alg}", cost="closed-form"))
            (c,) = result.collectives
            assert (c.kind, c.block_bytes) == (coll.kind, coll.block_bytes)
            assert c.verified, (coll.kind, alg, c.problems)
            assert c.algorithm == alg and c.time_s >= c.lower_bound_s > 0


def test_unknown_algorithm_lists_the_known_ones():
    with pytest.raises(PhalanxError) as info:
        compile_text(PROGRAM.format(n=4, extra="", e=192), algorithm="broadcast=phased")
    text = info.value.diagnostic.render()
    assert "unknown algorithm 'phased' for a broadcast" in text and "broadcast-poststore" in text


def test_reads_round_trip_through_their_message_ids():
    for read in (Read(3, ReadMode.PREFETCH), Read(), Read(7, ReadMode.POSTSTORE), Read(2, ReadMode.WRITE)):
        assert Read.of(read.message) == read and read.message > 0
    assert Read.of(0) == Read(0, ReadMode.READ) and Read().message == 1
    assert len({Read(c, m).message for c in range(5) for m in ReadMode}) == 5 * len(ReadMode)


def test_a_negative_content_is_refused():
    with pytest.raises(ValueError, match=r"a read's content is 0 \(private\) or a shared content's number, "
                                         "not -1"):
        _ = Read(-1).message


def _net(spec: str, loop: bool = False):
    """The ring alone unless `loop`: the calibrated reading loop (params.read_loop_us) is
    the paper's code's time, not the ring's, and is tested on its own below."""
    engine = Engine()
    return engine, resolve(spec if loop else f"{spec},read_loop_us=0").build_network(engine)


def _read(engine, net, transfers):
    """When the last of `transfers` (started together) has its data (the ring may still
    carry the last response back to its holder after that)."""
    done = []

    def reader(t):
        yield from net.transfer(t)
        done.append(engine.now)

    for t in transfers:
        engine.process(reader(t), f"read {t.src}->{t.dst}")
    engine.run()
    return max(done)


def test_unloaded_reads_cost_table1_latencies():
    """Table 1: a subpage from another cell of the ring:0 costs 175 cycles, over ring:1 600
    (at 20 MHz, Sec. 2.1); waiting for a slot adds at most one slot time per ring entry."""
    engine, net = _net("ksr1:64")
    near = _read(engine, net, [Transfer(0, 5, 128, 0, 5)])
    assert P.ring0_read_s <= near <= P.ring0_read_s + 2 * P.slot_s
    engine, net = _net("ksr1:64")
    far = _read(engine, net, [Transfer(40, 5, 128, 40, 5)])
    assert P.ring1_read_s <= far <= P.ring1_read_s + 4 * P.slot_s
    assert net.stats()["crossings"] == 2  # the request up and over, the response back


def test_distance_on_ring0_does_not_matter():
    """Fig. 2: request and response together go once round the ring, whatever the distance."""
    times = []
    for holder in (1, 8, 16, 31):
        engine, net = _net("ksr1:32")
        times.append(_read(engine, net, [Transfer(holder, 0, 128 * 8, holder, 0)]))
    assert max(times) - min(times) < 8 * P.slot_s


def test_a_cell_with_a_copy_answers_a_later_reader():
    """Sec. 5.3: cell 5 read cell 0's shared subpage; cell 3's request reaches 5 first."""
    engine, net = _net("ksr1:32")
    _read(engine, net, [Transfer(0, 5, 128, 0, 5, SHARED)])
    assert net.cius[5][0].busy_s == 0
    _read(engine, net, [Transfer(0, 3, 128, 0, 3, SHARED)])
    assert net.cius[5][0].busy_s == pytest.approx(P.access_s)


def test_reading_again_means_a_rewrite_and_the_owner_answers():
    engine, net = _net("ksr1:32")
    _read(engine, net, [Transfer(0, 5, 128, 0, 5, SHARED), Transfer(0, 3, 128, 0, 3, SHARED)])
    owner_busy = net.cius[0][0].busy_s
    _read(engine, net, [Transfer(0, 5, 128, 0, 5, SHARED)])
    assert net.cius[0][0].busy_s == pytest.approx(owner_busy + P.access_s)


SUB = (Content(True, 1), 0)  # subpage 0 of shared content 1 (tags.Read(1))


def test_a_write_invalidates_the_copies_and_moves_exclusive_ownership():
    """Sec. 2.2: a subpage is exclusive (the only valid copy) or shared; coherence is by
    invalidation. Cells 3 and 5 read cell 0's subpage (three copies); cell 7 writes it: its
    ownership request goes once round ring:0 (a read's cost), invalidates all three, and 7
    is the exclusive owner, so a later reader is answered by 7, not by 0."""
    engine, net = _net("ksr1:64")
    _read(engine, net, [Transfer(0, 3, 128, 0, 3, SHARED), Transfer(0, 5, 128, 0, 5, SHARED)])
    assert net.copies[SUB] == {0, 3, 5}
    start = engine.now
    took = _read(engine, net, [Transfer(0, 7, 128, 0, 7, Read(1, ReadMode.WRITE).message)]) - start
    assert net.copies[SUB] == {7} and net.writer[SUB] == 7
    assert net.stats()["writes"] == 1 and net.stats()["invalidated"] == 3
    assert net.stats()["crossings"] == 0  # every copy was on this ring:0
    assert P.ring0_read_s <= took <= P.ring0_read_s + 2 * P.slot_s
    owner_busy, writer_busy = net.cius[0][0].busy_s, net.cius[7][0].busy_s
    _read(engine, net, [Transfer(0, 3, 128, 0, 3, SHARED)])
    assert net.cius[0][0].busy_s == owner_busy
    assert net.cius[7][0].busy_s == pytest.approx(writer_busy + P.access_s)
    assert net.copies[SUB] == {7, 3}


def test_a_write_reaches_copies_on_another_ring0_through_the_ards():
    """A copy on the second ring:0 (cell 40): the ARD's directory sends the ownership request
    over ring:1 and round that ring:0 too (two crossings); the owner's own rewrite is local."""
    engine, net = _net("ksr1:64")
    _read(engine, net, [Transfer(0, 40, 128, 0, 40, SHARED)])
    crossings = net.stats()["crossings"]
    start = engine.now
    took = _read(engine, net, [Transfer(0, 7, 128, 0, 7, Read(1, ReadMode.WRITE).message)]) - start
    assert net.copies[SUB] == {7} and net.stats()["invalidated"] == 2
    assert net.stats()["crossings"] == crossings + 2
    assert took > P.ring0_read_s + 2 * P.ring1_transit_s
    start = engine.now
    again = _read(engine, net, [Transfer(0, 7, 128, 0, 7, Read(1, ReadMode.WRITE).message)]) - start
    assert again == pytest.approx(P.miss_s + P.protocol_s)  # exclusive already: no ring traffic
    assert net.stats()["invalidated"] == 2


def test_waiting_readers_copy_a_passing_response():
    """A broadcast of one subpage to 31 readers: the owner answers a few, the rest copy."""
    engine, net = _net("ksr1:32")
    last = _read(engine, net, [Transfer(0, q, 128, 0, q, SHARED) for q in range(1, 32)])
    assert net.stats()["reads"] == 31
    assert net.cius[0][0].busy_s <= 3 * P.access_s
    assert last < P.ring0_read_s + P.rotation_s


def test_prefetch_overlaps_reads_and_poststore_pushes_once():
    plain = _read(*_net("ksr1:32"), [Transfer(1, 0, 128 * 16, 1, 0)])
    fetched = _read(*_net("ksr1:32"), [Transfer(1, 0, 128 * 16, 1, 0, PRIVATE_PREFETCH)])
    assert fetched == pytest.approx(plain / P.prefetch_outstanding, rel=0.1)
    engine, net = _net("ksr1:64")
    pushed = _read(engine, net, [Transfer(0, q, 128 * 16, 0, q, Read(1, ReadMode.POSTSTORE).message)
                                 for q in range(1, 64)])
    assert net.stats()["pushes"] == 16 and net.stats()["requests"] == 0
    assert pushed < 16 * P.ring0_read_s


def test_the_reading_loop_runs_once_per_subpage_even_with_reads_in_flight():
    """params.read_loop_us (calibrated): a plain read loop pays it and then the read for
    every subpage; prefetching overlaps the reads, but the one processor still runs the
    loop once per subpage."""
    n = 16
    plain = _read(*_net("ksr1:32", loop=True), [Transfer(1, 0, 128 * n, 1, 0)])
    ring = _read(*_net("ksr1:32"), [Transfer(1, 0, 128 * n, 1, 0)])
    assert plain == pytest.approx(ring + n * P.read_loop_s, abs=n * P.slot_s)  # slot alignment
    fetched = _read(*_net("ksr1:32", loop=True), [Transfer(1, 0, 128 * n, 1, 0, PRIVATE_PREFETCH)])
    assert n * P.read_loop_s < fetched < n * P.read_loop_s + 2 * P.ring0_read_s


def test_ard_is_the_bottleneck_when_every_read_crosses():
    """Sec. 5.4: with prefetch, 64 cells reading across ring:1 queue at the ARDs."""
    source = ("target ksr1:64\nprocessors P(64)\narray C(16384) of float64 distribute BLOCK onto P\n"
              "array D(16384) of float64 distribute BLOCK onto P\nD = cshift(C, {k}, dim=1)\n")
    result = simulate(compile_text(source.format(k=32 * 256), algorithm="cshift-prefetch"))
    ards = [r for r in result.network.resources() if "ARD" in r.name]
    busiest = max(r.busy_s for r in ards) / result.total_time_s
    assert result.verified and busiest > 0.5


def test_the_ring_counters_reach_the_run_report():
    """network.stats(): a copy of the counters; run --json reports it under "network"."""
    source = ("target ksr1:8\nprocessors P(8)\narray S(512) of float64 on P(1)\n"
              "array R(512) of float64 replicated onto P\nR = S\n")
    result = simulate(compile_text(source, algorithm="broadcast=broadcast"))
    stats = result.network.stats()
    assert result.verified and stats["reads"] == 7 * 512 * 8 // 128 and stats["requests"] > 0
    stats["reads"] = 0
    assert result.network.stats()["reads"] > 0
    assert result.to_json()["network"] == result.network.stats()


# examples/ksr1_collectives.phx runs and verifies on ksr1:64 with its six kinds in
# tests/test_examples.py (EXPECTED_KINDS), which simulates every example once.
