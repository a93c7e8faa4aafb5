"""The dist / coll / sched dialects: construction, verifiers, and lossless round-trips."""

from __future__ import annotations

import dataclasses

import pytest
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, StringAttr, i64
from xdsl.utils.exceptions import VerifyException

from phalanx.compiler.ir.dialects import ALL_DIALECTS, coll, dist, make_context, sched
from phalanx.compiler.ir.printing import parse_module, print_generic
from phalanx.compiler.kind import Kind
from phalanx.compiler.schedule import ComputeStep, Phase, PipelineStep, Plan, Schedule, SyncMode, Transfer


def odd_schedule() -> Schedule:
    """Sends and receives of phase 0 differ; phase 2 is empty."""
    a, b, c = Transfer(0, 1, 8, 0, 1), Transfer(1, 2, 16, 1, 2), Transfer(2, 0, 4, 2, 0)
    return Schedule(
        collective=3,
        kind=Kind.SPARSE,
        algorithm="store-forward",
        nprocs=3,
        phases=(Phase((a, b), (b,), "local"), Phase((c,), (a, c), "barrier"), Phase((), ())),
        src="A",
        dst="B",
        line=12,
    )


def test_context_knows_all_dialects() -> None:
    ctx = make_context()
    assert [d.name for d in ALL_DIALECTS] == ["dist", "coll", "sched"]
    for op_name in ("dist.array", "coll.alltoall", "sched.schedule", "sched.pipeline",
                    "builtin.module"):
        assert ctx.get_optional_op(op_name) is not None


def test_schedule_round_trip_keeps_sends_and_recvs_apart() -> None:
    s = odd_schedule()
    op = sched.schedule_to_ir(s)
    op.verify()
    assert [len(sends) for sends, _ in op.phase_tables()] == [2, 1, 0]
    assert [len(recvs) for _, recvs in op.phase_tables()] == [1, 2, 0]
    assert sched.schedule_from_ir(op) == s


def test_schedule_round_trip_through_text() -> None:
    s = odd_schedule()
    text = print_generic(ModuleOp([sched.schedule_to_ir(s)]))
    module = parse_module(text)
    (op,) = module.ops
    assert isinstance(op, sched.ScheduleOp)
    assert sched.schedule_from_ir(op) == s


def grouped_schedule() -> Schedule:
    """Four nodes in two groups: phase 0's barrier is scoped to both, phase 1's to {2, 3}
    only, phase 2's spans every node."""
    a, b = Transfer(0, 1, 8, 0, 1), Transfer(3, 2, 8, 3, 2)
    return Schedule(0, Kind.ALLTOALL, "direct", 4, (
        Phase((a, b), (a, b), "barrier", ((0, 1), (2, 3))),
        Phase((), (), "barrier", ((2, 3),)), Phase((), (), "barrier")))


def test_barrier_groups_round_trip_through_text() -> None:
    s = grouped_schedule()
    op = sched.schedule_to_ir(s)
    op.verify()
    assert list(op.barrier_offsets.get_values()) == [0, 2, 3, 3]
    assert list(op.barrier_sizes.get_values()) == [2, 2, 2]
    assert list(op.barrier_members.get_values()) == [0, 1, 2, 3, 2, 3]
    (parsed,) = parse_module(print_generic(ModuleOp([op]))).ops
    assert sched.schedule_from_ir(parsed) == s
    assert [p.barriers(4) for p in s.phases] == [((0, 1), (2, 3)), ((2, 3),), ((0, 1, 2, 3),)]


@pytest.mark.parametrize("attribute, values, message", [
    ("barrier_offsets", [0, 2, 1, 3], "barrier_offsets must rise from 0 to 3 in 4 entries"),
    ("barrier_sizes", [2, 2, 1], r"barrier_sizes \[2, 2, 1\] do not split the 6 barrier_members"),
    ("barrier_sizes", [2, 0, 4], r"barrier_sizes \[2, 0, 4\] do not split"),
    ("barrier_members", [0, 1, 1, 3, 2, 3], r"phase 0: barrier groups must be disjoint sets of "
                                            r"distinct ranks in 0..3, got \[\[0, 1\], \[1, 3\]\]"),
    ("barrier_members", [0, 1, 2, 3, 2, 4], r"phase 1: barrier groups must be disjoint .* \[\[2, 4\]\]"),
])
def test_schedule_rejects_bad_barrier_groups(attribute: str, values: list[int], message: str) -> None:
    op = sched.schedule_to_ir(grouped_schedule())
    op.attributes[attribute] = DenseArrayBase.from_list(i64, values)
    with pytest.raises(VerifyException, match=message):
        op.verify()


def test_barrier_groups_only_on_a_barrier_phase() -> None:
    op = sched.schedule_to_ir(grouped_schedule())
    op.attributes["phase_sync"] = ArrayAttr([StringAttr(x) for x in ("barrier", "local", "barrier")])
    with pytest.raises(VerifyException, match="phase 1 is local but has barrier groups"):
        op.verify()
    with pytest.raises(ValueError, match="a local phase has no barrier to scope"):
        Phase((), (), "local", ((0, 1),))


def test_compute_round_trip() -> None:
    c = ComputeStep("fft rows", 16, 1.2345678901234567e-7, line=4)
    assert sched.compute_from_ir(sched.compute_to_ir(c)) == c


def test_plan_from_module_keeps_order_and_skips_dist() -> None:
    s = odd_schedule()
    c1, c2 = ComputeStep("a", 3, 0.5, 1), ComputeStep("b", 3, 0.25, 20)
    module = ModuleOp(
        [
            dist.ProcessorsOp("P", [3], line=1),
            sched.compute_to_ir(c1),
            dist.AssignOp("B", "A", line=12, collective=0),
            sched.schedule_to_ir(s),
            sched.compute_to_ir(c2),
        ]
    )
    module.verify()
    plan = sched.plan_from_module(parse_module(print_generic(module)), 3)
    assert plan == Plan(3, (c1, s, c2))
    assert sched.plan_from_module(sched.plan_to_module(plan), 3) == plan


def test_plan_from_module_rejects_unlowered_collective() -> None:
    module = ModuleOp([coll.AlltoallOp.uniform(0, "A", "B", 2, 8)])
    with pytest.raises(ValueError, match=r"'coll\.alltoall'.*lower it"):
        sched.plan_from_module(module, 2)


def test_phase_rejects_bad_sync_kind() -> None:
    s = odd_schedule()
    op = sched.schedule_to_ir(s)
    op.attributes["phase_sync"] = ArrayAttr([StringAttr(x) for x in ("local", "eventually", "local")])
    with pytest.raises(
        VerifyException, match="sync must be one of local, barrier, eager, got 'eventually'"
    ):
        op.verify()


def test_eager_phases_round_trip_through_the_text() -> None:
    s = odd_schedule()
    eager = dataclasses.replace(s, phases=tuple(dataclasses.replace(p, sync=SyncMode.EAGER)
                                                for p in s.phases if not p.barrier_groups))
    text = print_generic(ModuleOp([sched.schedule_to_ir(eager)]))
    assert 'phase_sync = ["eager"' in text
    back = sched.schedule_from_ir(parse_module(text).ops.first)
    assert back == eager and all(p.sync is SyncMode.EAGER for p in back.phases)


def test_bad_sync_kind_in_text_is_rejected() -> None:
    text = print_generic(ModuleOp([sched.schedule_to_ir(odd_schedule())])).replace(
        '"barrier"', '"global"'
    )
    with pytest.raises(VerifyException, match="got 'global'"):
        parse_module(text)
    parse_module(text, verify=False)  # parsing alone does not judge


def test_schedule_rejects_bad_offsets_and_bad_processor() -> None:
    op = sched.schedule_to_ir(odd_schedule())
    op.attributes["send_offsets"] = DenseArrayBase.from_list(i64, [0, 2, 1, 3])
    with pytest.raises(VerifyException, match="send_offsets must rise from 0 to 3 in 4 entries"):
        op.verify()
    bad = Schedule(0, Kind.SPARSE, "direct", 2, (Phase.of([Transfer(0, 5, 1, 0, 5)]),))
    with pytest.raises(VerifyException, match=r"dst = 5 outside 0\.\.1"):
        sched.schedule_to_ir(bad).verify()


def test_pipeline_groups_staged_steps() -> None:
    c = ComputeStep("k", 2, 1e-3, line=4, stage=0)
    s = dataclasses.replace(odd_schedule(), stage=0)
    plan = Plan(3, (PipelineStep(((c, s),), line=3),))
    module = sched.plan_to_module(plan)
    module.verify()
    assert sched.plan_from_module(parse_module(print_generic(module)), 3) == plan


def test_coll_helpers_give_python_values() -> None:
    op = coll.AlltoallOp.uniform(1, "A", "B", 3, 64, line=9)
    op.verify()
    assert op.kind == "alltoall"
    assert op.byte_matrix_rows() == [[0, 64, 64], [64, 0, 64], [64, 64, 0]]
    assert op.total_bytes() == 6 * 64
    assert op.python_attrs()["block_bytes"] == 64
    sp = coll.SparseOp(2, "C", "D", [[5, 1], [0, 7]], line=3)
    sp.verify()
    assert (sp.kind, sp.nprocs_value, sp.total_bytes()) == ("sparse", 2, 1)
    with pytest.raises(ValueError, match="row 1 has 1 entries"):
        coll.SparseOp(0, "A", "B", [[1, 2], [3]])


def test_coll_rejects_wrong_byte_matrix_length() -> None:
    op = coll.SparseOp(0, "A", "B", [[0, 1], [1, 0]])
    op.attributes["byte_matrix"] = DenseArrayBase.from_list(i64, [0, 1, 1])
    with pytest.raises(
        VerifyException, match=r"byte_matrix has 3 entries, expected nprocs\*\*2 = 4"
    ):
        op.verify()
    text = (
        '"coll.alltoall"() {collective = 0 : i64, src = "A", dst = "B", nprocs = 2 : i64, '
        "byte_matrix = array<i64: 0, 1, 1, 0, 5>, line = 1 : i64, root = -1 : i64, stage = -1 : i64, "
        "group_sizes = array<i64>, group_members = array<i64>, strided = array<i64>, "
        "sends_in_rank_order = false, block_bytes = 1 : i64} : () -> ()"
    )
    with pytest.raises(VerifyException, match="byte_matrix has 5 entries"):
        parse_module(text)


def test_coll_strided_round_trips_and_rejects_bad_entries() -> None:
    op = coll.SparseOp(0, "A", "B", [[0, 8], [8, 0]], strided=[[0, 1], [2, 0]])
    op.verify()
    assert op.strided_value() == ((0, 1), (2, 0))
    assert coll.SparseOp(0, "A", "B", [[0, 8], [8, 0]]).strided_value() == ()
    op.attributes["strided"] = DenseArrayBase.from_list(i64, [0, 1, 2])
    with pytest.raises(VerifyException, match=r"strided must be empty or nprocs\*\*2 = 4 entries "
                                              r"of 0..3, got 3 entries"):
        op.verify()
    op.attributes["strided"] = DenseArrayBase.from_list(i64, [0, 4, 0, 0])
    with pytest.raises(VerifyException, match="strided must be empty or nprocs"):
        op.verify()


def test_coll_sends_in_rank_order_round_trips_through_text() -> None:
    """An i1 attribute on every coll op: false unless given, true printed and parsed back."""
    for flag in (False, True):
        op = coll.AlltoallOp(0, "A", "B", [[0, 8], [8, 0]], 8, sends_in_rank_order=flag)
        op.verify()
        assert op.sends_in_rank_order_value() is flag
        assert op.python_attrs()["sends_in_rank_order"] is flag
        assert f"sends_in_rank_order = {str(flag).lower()}" in str(op)
        (back,) = parse_module(str(op)).ops
        assert back.sends_in_rank_order_value() is flag
    assert coll.ReduceOp(0, "A", "s", [[4, 4], [0, 0]], root=0).sends_in_rank_order_value() is False


def test_dist_ops() -> None:
    p = dist.ProcessorsOp("P", [4, 2], line=1)
    a = dist.ArrayOp("A", [64, 64], "float64", ["BLOCK", "CYCLIC(4)"], "P", line=2)
    module = ModuleOp([p, a, dist.AssignOp("B", "A", line=3, collective=0),
                       dist.ComputeOp("k", "P", 1e-3, 4)])
    module.verify()
    assert (p.dims, p.nprocs) == ((4, 2), 8)
    assert (a.dims, a.dist_formats) == ((64, 64), ("BLOCK", "CYCLIC(4)"))
    with pytest.raises(VerifyException, match="1 distribution entries for 2 dimensions"):
        dist.ArrayOp("A", [8, 8], "float64", ["*"], "P").verify()


def test_dist_names_share_one_scope() -> None:
    module = ModuleOp(
        [dist.ProcessorsOp("A", [2]), dist.ArrayOp("A", [4], "float64", ["BLOCK"], "A")]
    )
    with pytest.raises(VerifyException, match=r"Redefinition of symbol \"A\""):
        module.verify()
