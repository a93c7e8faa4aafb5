"""iWarp's own exchanges as records of the algorithm catalog (compiler/library/registry.py
Algorithm; issue 27: one way to add an algorithm, the library's or a machine's).

Each record is built for one torus (its generators and closed forms need the torus and the
machine's parameters) and offered before the library's algorithms (offer.Library.of `own`): its
name, kinds, one line, preconditions, phases (as columns where the generator builds them so),
its closed form (targets/iwarp/cost.py), why that form cannot follow the wormhole simulator, and
the phased construction's proof (Sec. 2.1) where the schedule is phased.
"""

from __future__ import annotations

from phalanx.compiler.algorithms import direct_columns, direct_phases
from phalanx.compiler.columns import send_rows
from phalanx.compiler.kind import Kind
from phalanx.compiler.library.registry import Algorithm, Machine, Requirement
from phalanx.compiler.recognize import Collective
from phalanx.compiler.schedule import Schedule, SyncMode
from phalanx.targets.iwarp import cost, schedules
from phalanx.targets.iwarp.params import IWarpParams
from phalanx.targets.iwarp.phases import construction_problems, construction_subset_problems
from phalanx.targets.iwarp.topology import Torus

# Any byte matrix; alltoallv: Fig. 9's random sizes; a shift or permutation is a sparse pattern.
KINDS = (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE, Kind.CSHIFT, Kind.PERMUTATION)
# Offered only on an n x n torus, n a multiple of 8 (the phased construction's; two-stage's rings)
PHASED = ("phased", "phased-global", "phased-unswitched", "two-stage")
RANDOM_ORDER_SEED = 1  # the seeded-random posting order of message-passing-random
# Why the closed forms (cost.py) cannot follow the wormhole simulator (bench/regret.py measures the
# closed forms at 0.2x to 57x of the simulated times on the exchange kinds).
BLOCKING = ("worms blocked at busy receivers hold their routes (head-of-line blocking through "
            "the router), which no load formula follows")


def phased_torus(torus: Torus) -> bool:
    """Whether the phased construction (Sec. 2.1) exists: an n x n torus, n a multiple of 8."""
    return torus.rows == torus.cols and torus.cols % 8 == 0


def own_algorithms(torus: Torus, params: IWarpParams) -> tuple[Algorithm, ...]:
    """The machine's exchanges on `torus`, in the order `phalanx algorithms` lists them."""
    nnodes, spec = torus.nnodes, f"{torus.rows}x{torus.cols}"

    def every_node(coll: Collective, machine: Machine) -> str | None:
        if coll.nprocs != nnodes:
            return f"it needs all {nnodes} nodes, but the collective has {coll.nprocs} processors"
        return None

    def phased_shape(coll: Collective, machine: Machine) -> str | None:
        if not phased_torus(torus):
            return f"phased AAPC needs an n x n torus with n a multiple of 8, not {spec}"
        return None

    def one_block_size(coll: Collective, machine: Machine) -> str | None:
        if coll.complete_block_bytes is None:
            return ("unswitched phases need every block of one size: with uneven blocks nodes "
                    "run ahead into links a late phase still holds")
        return None

    def phased_problems(schedule: Schedule) -> list[str]:
        """The proof of Sec. 2.1 (empty when it holds): the construction uses every directed
        link once per phase and every pair once (proven once per n), and every transfer of
        phase k is a message of the construction's phase k, so any subset (a sparse pattern;
        its missing messages are Fig. 5's empty ones) is contention-free."""
        n = torus.cols
        if not phased_torus(torus) or len(schedule.phases) != n ** 3 // 8:
            return [f"a phased schedule on {spec} has n^3/8 = {n ** 3 // 8} phases, "
                    f"not {len(schedule.phases)}"]
        problems = list(construction_problems(n))
        return (problems + construction_subset_problems(n, *send_rows(schedule.phases),
                                                        10 - len(problems)))[:10]

    def closed_form(time_s, **options):
        return lambda coll, machine: time_s(params, torus, coll, **options)

    def gap(text: str | None):
        return lambda coll: text

    def switched_gap(coll: Collective) -> str | None:
        if bool((coll.matrix > 0).all()):
            return None
        return ("the phases of an incomplete pattern are not switched and overlap, "
                "which n^3/8 full phases do not describe")

    def phased(name: str, sync: SyncMode, description: str) -> Algorithm:
        barrier = sync is SyncMode.BARRIER
        return Algorithm(name, KINDS, description,
                         lambda coll, machine: list(schedules.phased_schedule(coll, torus, sync).phases),
                         (phased_shape, every_node),
                         columns=lambda coll, machine: schedules.phased_columns(coll, torus, sync),
                         closed_form=closed_form(cost.phased_time_s, global_barrier=barrier),
                         closed_form_gap=switched_gap,
                         problems=phased_problems, keeps_empty_phases=True)

    def message_passing(name: str, seed: int | None, description: str) -> Algorithm:
        return Algorithm(name, KINDS, description,
                         lambda coll, machine: list(schedules.message_passing_schedule(coll, seed).phases),
                         (every_node,),
                         columns=lambda coll, machine: schedules.message_passing_columns(coll, seed),
                         closed_form=closed_form(cost.message_passing_time_s), closed_form_gap=gap(BLOCKING))

    requires: tuple[Requirement, ...] = (every_node,)
    return (
        phased("phased", SyncMode.LOCAL, "Hinrichs et al.'s n^3/8 contention-free phases with the "
               "synchronizing switch (001 Sec. 2)"),
        phased("phased-global", SyncMode.BARRIER, "the same phases with a global barrier between them "
               "(001 Sec. 2.2.2)"),
        Algorithm("phased-unswitched", KINDS, "the same phases as plain messages without the "
                  "switch's per-phase software, in step while every block has one size",
                  lambda coll, machine: list(schedules.unswitched_phased_schedule(coll, torus).phases),
                  (phased_shape, one_block_size, every_node),
                  columns=lambda coll, machine: schedules.phased_columns(coll, torus, switched=False),
                  closed_form=closed_form(cost.unswitched_time_s), closed_form_gap=gap(None),
                  problems=phased_problems, keeps_empty_phases=True),
        message_passing("message-passing", None, "every send posted at once through the deposit "
                        "library; the router arbitrates (001 Fig. 6)"),
        message_passing("message-passing-random", RANDOM_ORDER_SEED, "message passing in a seeded "
                        "random posting order (001 Sec. 1)"),
        Algorithm("store-forward", KINDS, "blocks forwarded hop by hop through node memory (001 "
                  "Sec. 4.1)",
                  lambda coll, machine: list(schedules.store_forward_schedule(coll, torus).phases),
                  requires, closed_form=closed_form(cost.store_forward_time_s), closed_form_gap=gap(
                      "each hop's messages wait for memory streams at both ends and for the wires "
                      "in one global order, so phases finish unevenly")),
        Algorithm("two-stage", KINDS, "two stages of combined messages via an intermediate node "
                  "(001 Sec. 4.1)",
                  lambda coll, machine: list(schedules.two_stage_schedule(coll, torus).phases),
                  (phased_shape, every_node), closed_form=closed_form(cost.two_stage_time_s),
                  closed_form_gap=gap(
                      "its combined messages queue on the rings' links and memory streams, and one "
                      "stage's stragglers hold back the next")),
        Algorithm("direct", KINDS, "pairwise steps: r sends to r XOR s (2^d nodes) or r + s mod P",
                  lambda coll, machine: list(direct_phases(coll)),
                  columns=lambda coll, machine: direct_columns(coll),
                  closed_form=closed_form(cost.direct_time_s), closed_form_gap=gap(
                      "pairwise steps overlap where nodes have nothing to send, and the e-cube "
                      "routes of a step share links")),
    )
