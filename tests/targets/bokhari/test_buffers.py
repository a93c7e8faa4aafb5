"""The Paragon's receive-buffer limit for the library's all-to-alls (targets/bokhari/buffers.py):
rounds behind barriers where whole phases fit; where one phase alone overflows, direct messages
in pieces whose rounds fit, a relaying schedule refused."""

from __future__ import annotations

import dataclasses

from phalanx.compiler.driver import compile_program
from phalanx.compiler.schedule import Phase, SyncMode, Transfer
from phalanx.compiler.target import resolve
from phalanx.runtime.simulate import simulate
from phalanx.runtime.sweep import alltoall_program
from phalanx.runtime.synthetic import execute, lower, varied_matrix
from phalanx.targets.bokhari.buffers import in_fewest_pieces, phase_receives, rounds_within

LIMIT = 255 * 1728  # 003_f18cb429ce0a4177.txt Sec. 5 / Fig. 12


def test_grid_direct_goes_in_rounds_that_fit_the_buffers():
    """100 KB blocks on paragon:4x4: 4 fit a node's 440,640 bytes, 5 do not; each round ends
    with a barrier, whose phase's receives count on both sides of it."""
    target = resolve("paragon:4x4")
    compiled = compile_program(alltoall_program(16, 100_000), target="paragon:4x4",
                               algorithm="alltoall=grid-direct")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    barriers = [k for k, p in enumerate(schedule.phases) if p.sync == "barrier"]
    assert barriers == [3, 7, 11, 15]  # the last: phases 11 to 15 would be 5 blocks to the proof
    target.check_receive_buffers(schedule)  # the target's proof: raises where it overflows
    edges = [-1] + barriers
    for start, end in zip(edges, edges[1:]):  # as the runtime posts them: after each barrier
        got = [phase_receives(p, 16) for p in schedule.phases[start + 1:end + 1]]
        assert max(map(sum, zip(*got))) <= LIMIT
    assert target.fits(coll, "grid-direct")


def test_a_phase_larger_than_the_buffers_goes_in_pieces_whose_rounds_fit():
    """500 KB blocks on paragon:4x4: one block overflows a node's 440,640 bytes, so no placement
    of barriers helps; grid-direct's direct messages go in the fewest pieces whose rounds fit
    (a round's barrier phase counts on both sides: two pieces of a block must fit, so 3 pieces
    of at most 166,667 bytes), the schedule once per piece, every block delivered."""
    target = resolve("paragon:4x4")
    source = alltoall_program(16, 500_000)
    compiled = compile_program(source, target="paragon:4x4", algorithm="alltoall=grid-direct")
    coll, schedule = compiled.collectives[0], compiled.schedules[0]
    whole = target.library.schedule(coll, "grid-direct", target.spec)
    assert rounds_within(whole, LIMIT) is None
    assert in_fewest_pieces(whole, LIMIT) == schedule
    assert len(schedule.phases) == 3 * len(whole.phases)
    assert {t.nbytes for p in schedule.phases for t in p.sends} == {166_666, 166_667}
    target.check_receive_buffers(schedule)
    assert target.fits(coll, "grid-direct")
    assert simulate(compiled).verified


def test_a_relaying_schedule_larger_than_the_buffers_is_left_whole_and_auto_leaves_it():
    """Bruck's all-to-all relays blocks: in pieces it would pay its relays' start-ups once per
    piece, so it is left as it is, and `fits` keeps `auto` from it."""
    target = resolve("paragon:4x4")
    source = alltoall_program(16, 500_000)
    coll = compile_program(source, target="paragon:4x4", algorithm="alltoall=bruck").collectives[0]
    assert in_fewest_pieces(target.library.schedule(coll, "bruck", target.spec), LIMIT) is None
    assert not target.fits(coll, "bruck")
    assert compile_program(source, target="paragon:4x4").schedules[0].algorithm != "bruck"


def test_an_uneven_all_to_all_goes_in_pieces_too_and_auto_leaves_a_relaying_one():
    """alltoallv (blocks of 250-750 KB on paragon:4x4) posts receives as the all-to-all does:
    engine-rounds' direct messages go in pieces whose rounds fit, every byte delivered; Bruck's
    relays are left whole, and `fits` keeps `auto` from them."""
    target = resolve("paragon:4x4")
    coll, schedule = lower(target, varied_matrix(16, 500_000, variance=0.5), "engine-rounds")
    whole = target.library.schedule(coll, "engine-rounds", target.spec)
    assert coll.kind == "alltoallv"
    assert max(max(phase_receives(p, 16)) for p in whole.phases) > LIMIT
    assert len(schedule.phases) > len(whole.phases)
    target.check_receive_buffers(schedule)
    assert target.fits(coll, "engine-rounds")
    assert execute(target, coll, schedule).verified
    assert not target.fits(coll, "bruck")
    assert target.choose(coll, "auto") != "bruck"


def test_a_schedule_that_fits_is_left_as_it_is():
    target = resolve("paragon:4x4")
    compiled = compile_program(alltoall_program(16, 64), target="paragon:4x4",
                               algorithm="alltoall=grid-direct")
    schedule = target.library.schedule(compiled.collectives[0], "grid-direct", target.spec)
    assert rounds_within(schedule, LIMIT) is schedule



def test_a_schedule_with_barriers_of_its_own_keeps_them_and_gets_more_where_it_overflows():
    """Five phases of a 200 KB message each to node 1, a barrier of its own after the fourth
    (800 KB before it): the placement of a schedule without barriers adds one after the
    second (3 x 200 KB would overflow 440,640 bytes), the schedule keeps its own as well; one
    whose own barriers fit is left as it is."""
    compiled = compile_program(alltoall_program(16, 64), target="paragon:4x4",
                               algorithm="alltoall=grid-direct")
    block = Transfer(0, 1, 200_000, 0, 1)
    phases = tuple(Phase.of([block], SyncMode.BARRIER if k == 3 else SyncMode.LOCAL) for k in range(5))
    schedule = dataclasses.replace(compiled.schedules[0], phases=phases)
    fitted = rounds_within(schedule, LIMIT)
    assert [k for k, p in enumerate(fitted.phases) if p.sync == SyncMode.BARRIER] == [1, 3]
    resolve("paragon:4x4").check_receive_buffers(fitted)
    assert rounds_within(fitted, LIMIT) is fitted
