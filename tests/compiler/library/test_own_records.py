"""A machine's own algorithms are records of the catalog's kind (registry.Algorithm), offered
before the library's (offer.Library.of `own`): iWarp's, the KSR-1's and Proteus's."""

from __future__ import annotations

import numpy as np

from phalanx.compiler.kind import Kind
from phalanx.compiler.library.catalog import GENERIC
from phalanx.compiler.library.offer import PORT_MODEL_GAP, Library
from phalanx.compiler.library.registry import Algorithm
from phalanx.compiler.recognize import recognize
from phalanx.compiler.target import resolve
from phalanx.targets.iwarp import cost


def test_an_own_record_comes_first_and_takes_a_catalog_name_for_its_kinds_only():
    machine = resolve("ideal:8").library.machine
    own = Algorithm("direct", (Kind.ALLTOALL,), "mine", lambda coll, m: [])
    library = Library.of(machine, own=(own,))
    assert library.names(Kind.ALLTOALL)[0] == "direct"
    assert library.find(Kind.ALLTOALL, "direct") is own
    assert library.find(Kind.BROADCAST, "direct") is GENERIC[0]  # the catalog's, for other kinds
    assert len(library.names(Kind.ALLTOALL)) == len(set(library.names(Kind.ALLTOALL)))


def test_iwarp_phased_record_keeps_its_empty_phases_and_carries_its_closed_form_and_proof():
    target = resolve("iwarp:8x8")
    sparse = np.zeros((64, 64), dtype=np.int64)
    sparse[0, 1:9] = 256  # one node's messages: most of the 64 phases carry nothing
    coll = recognize(0, sparse, "A", "B", 1)
    record = target.library.find(coll.kind, "phased")
    assert record.keeps_empty_phases and record.problems is not None
    schedule = target.schedule_for(coll, "phased")
    assert len(schedule.phases) == 64 and sum(1 for p in schedule.phases if p.sends) == 8
    assert target.schedule_problems(schedule) == []
    assert target.predict_time_s(coll, "phased") == cost.phased_time_s(target.params, target.torus, coll)
    assert target.predict_time_s(coll, "phased-global") > target.predict_time_s(coll, "phased")
    complete = recognize(0, np.full((64, 64), 64, dtype=np.int64), "A", "B", 1)
    assert target.closed_form_gap(complete, "phased") is None  # the closed form follows the simulator
    assert "not switched" in target.closed_form_gap(coll, "phased")
    assert target.closed_form_gap(coll, "bruck") == PORT_MODEL_GAP  # a library record


def test_iwarp_offers_the_phased_records_only_where_the_construction_exists():
    names = resolve("torus:4x4").algorithms(Kind.ALLTOALL)
    assert "phased" not in names and names[:4] == ("message-passing", "message-passing-random",
                                                   "store-forward", "direct")
    target = resolve("iwarp:8x8")
    coll = recognize(0, np.full((16, 16), 64, dtype=np.int64), "A", "B", 1)
    assert target.unmet(coll, "phased") == "it needs all 64 nodes, but the collective has 16 processors"


def test_ksr1_records_one_per_base_and_read_mode_in_listing_order():
    target = resolve("ksr1:32")
    assert target.algorithms(Kind.GATHER)[:5] == ("gather-seq", "gather-tree", "gather-seq-prefetch",
                                                  "gather-tree-prefetch", "direct")
    assert target.algorithms(Kind.BROADCAST)[:3] == ("broadcast", "broadcast-prefetch",
                                                     "broadcast-poststore")
    assert target.library.find(Kind.REDUCE, "gather-seq-prefetch").kinds == (Kind.GATHER, Kind.REDUCE)
    assert target.describe_algorithm(Kind.GATHER, "gather-tree-prefetch") == \
        "seed 002 Sec. 5's gather-tree, prefetch (Sec. 3.4)"


def test_proteus_group_record_carries_its_plan_proof_and_closed_form():
    target = resolve("proteus:groups=2")
    n = target.nnodes
    coll = recognize(0, np.full((n, n), 1024, dtype=np.int64), "A", "B", 1)
    record = target.library.find(Kind.ALLTOALL, "proteus-group")
    assert record.closed_form is not None and record.problems is not None
    assert target.schedule_problems(target.schedule_for(coll, "proteus-group")) == []
    assert target.closed_form_gap(coll, "proteus-group") is None
    assert target.algorithms(Kind.ALLTOALL)[:2] == ("proteus-group", "direct")
