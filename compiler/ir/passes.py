"""The pass registry: one plain dict from pass name to pass class."""

from __future__ import annotations

from xdsl.passes import ModulePass

from phalanx.compiler.ir.conversion.lower_coll_to_sched import LowerCollToSched
from phalanx.compiler.ir.conversion.lower_sched_to_mpi import LowerSchedToMpi
from phalanx.compiler.ir.transforms.recognize_collectives import RecognizeCollectives
from phalanx.compiler.ir.transforms.verify_schedule import VerifySchedule

PASSES: dict[str, type[ModulePass]] = {
    p.name: p for p in (RecognizeCollectives, LowerCollToSched, VerifySchedule, LowerSchedToMpi)
}
