"""Communication sets of array sections, spread, eoshift and reductions along a dimension,
property-tested against an element-by-element oracle.

Each case draws arrays (shapes, distributions, arrangements, placements `at b`), a
statement (copy, transpose, cshift, eoshift, spread, sum/max along a dim) and sections
(triplets with positive and negative strides, scalar subscripts) from a seeded generator,
writes it as program text, and compares the compiler's byte matrix with one built element
by element from Fortran's definitions and HPF's owner formulas, written here from the drawn
parameters alone (not from the checked statement). The sections per (sender, receiver)
must also be exactly the counted elements, and their strided runs must spell them out.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from phalanx.compiler.commsets import CommSet
from phalanx.compiler.semantics import check
from phalanx.grammar.parser import parse

CASES = 600
GRIDS = [(1,), (2,), (3,), (4,), (2, 2), (2, 3), (3, 2), (2, 2, 2)]
ITEMSIZE = 4  # int32


# ---- the oracle: one element at a time --------------------------------------------------------

def owner_coord(kind: str, block: int | None, extent: int, nprocs: int, i: int) -> int:
    if kind == "BLOCK":
        return i // (block or -(-extent // nprocs))
    return (i // (block or 1)) % nprocs


def row_major(coords, grid) -> int:
    r = 0
    for c, g in zip(coords, grid):
        r = r * g + c
    return r


class Arr:
    """A drawn array: shape, mapping ("dist", "repl", "single"), per-dim formats, grid, base."""

    def __init__(self, shape, mapping, dist, grid, base, owner):
        self.shape, self.mapping, self.dist, self.grid, self.base = shape, mapping, dist, grid, base
        self.owner = owner  # coordinates of a single owner

    def nodes(self):
        return range(self.base, self.base + int(np.prod(self.grid)))

    def holders(self, element) -> list[int]:
        """Machine nodes that hold `element`."""
        if self.mapping == "repl":
            return list(self.nodes())
        if self.mapping == "single":
            return [self.base + row_major(self.owner, self.grid)]
        coords, g = [], 0
        for (kind, block), extent, i in zip(self.dist, self.shape, element):
            if kind != "*":
                coords.append(owner_coord(kind, block, extent, self.grid[g], i))
                g += 1
        return [self.base + row_major(coords, self.grid)]

    def sender_for(self, element, receiver: int) -> int:
        """Who sends a source element to `receiver`: a replicated source from the receiver's
        own copy, or from the processor of rank receiver mod count."""
        if self.mapping == "repl":
            nodes = self.nodes()
            return receiver if receiver in nodes else self.base + receiver % len(nodes)
        return self.holders(element)[0]


def fortran_range(lo: int, hi: int, stride: int) -> list[int]:
    return list(range(lo, hi + (1 if stride > 0 else -1), stride))


def resolve(sub, extent):
    """("idx", i) -> [i] (dropped dim); ("trip", lo, hi, stride) with None defaults."""
    if sub[0] == "idx":
        return [sub[1]]
    _, lo, hi, stride = sub
    return fortran_range(0 if lo is None else lo, extent - 1 if hi is None else hi,
                         1 if stride is None else stride)


def oracle(case) -> np.ndarray:
    src, dst, op = case["src"], case["dst"], case["op"]
    src_lists = [resolve(s, e) for s, e in zip(case["src_subs"], src.shape)]
    kept = [d for d, s in enumerate(case["src_subs"]) if s[0] == "trip"]
    value_shape = [len(src_lists[d]) for d in kept]
    if op["name"] == "transpose":
        value_shape = value_shape[::-1]
    elif op["name"] == "spread":
        value_shape.insert(op["dim"], op["ncopies"])
    elif op["name"] in ("sum", "max"):
        del value_shape[op["dim"]]
    dst_lists = [resolve(s, e) for s, e in zip(case["dst_subs"], dst.shape)]
    dst_kept = [d for d, s in enumerate(case["dst_subs"]) if s[0] == "trip"]

    def source_elements(v) -> list[tuple]:
        """The source elements value position v reads (several for a reduction)."""
        if op["name"] == "transpose":
            pres = [v[::-1]]
        elif op["name"] == "spread":
            pres = [v[:op["dim"]] + v[op["dim"] + 1:]]
        elif op["name"] in ("sum", "max"):
            d = op["dim"]
            pres = [v[:d] + (j,) + v[d:] for j in range(len(src_lists[kept[d]]))]
        elif op["name"] in ("cshift", "eoshift"):
            d, n = op["dim"], value_shape[op["dim"]]
            j = v[d] + op["shift"]
            if op["name"] == "cshift":
                j %= n
            elif not 0 <= j < n:
                return []  # the boundary: no source element
            pres = [v[:d] + (j,) + v[d + 1:]]
        else:
            pres = [v]
        out = []
        for pre in pres:
            element = [lst[0] for lst in src_lists]
            for k, d in enumerate(kept):
                element[d] = src_lists[d][pre[k]]
            out.append(tuple(element))
        return out

    n = max(src.nodes().stop, dst.nodes().stop)
    m = np.zeros((n, n), dtype=np.int64)
    for v in itertools.product(*(range(e) for e in value_shape)):
        element = [lst[0] for lst in dst_lists]
        for k, d in enumerate(dst_kept):
            element[d] = dst_lists[d][v[k]]
        for q in dst.holders(tuple(element)):
            # one element (or one partial result) from each distinct sender
            for p in {src.sender_for(e, q) for e in source_elements(v)}:
                m[p, q] += ITEMSIZE
    return m


# ---- drawing cases ----------------------------------------------------------------------------

def draw_array(rng, shape, base_limit) -> Arr:
    grid = GRIDS[int(rng.integers(0, len(GRIDS)))]
    while len(grid) > len(shape):
        grid = GRIDS[int(rng.integers(0, 4))]
    base = int(rng.integers(0, base_limit)) if rng.random() < 0.3 else 0
    roll = rng.random()
    if roll < 0.08:
        return Arr(shape, "repl", None, grid, base, None)
    if roll < 0.16:
        return Arr(shape, "single", None, grid, base, tuple(int(rng.integers(0, g)) for g in grid))
    dims = sorted(rng.choice(len(shape), size=len(grid), replace=False))
    dist, g = [], 0
    for d, extent in enumerate(shape):
        if d not in dims:
            dist.append(("*", None))
            continue
        kind = ["BLOCK", "BLOCKK", "CYCLIC", "CYCLICK"][int(rng.integers(0, 4))]
        if kind == "BLOCKK":
            dist.append(("BLOCK", -(-extent // grid[g]) + int(rng.integers(0, 3))))
        elif kind == "CYCLICK":
            dist.append(("CYCLIC", int(rng.integers(2, 4))))
        else:
            dist.append((kind, None))
        g += 1
    return Arr(shape, "dist", dist, grid, base, None)


def draw_triplet(rng, extent, count=None):
    """A triplet over `extent` (selecting `count` elements when given), as written and resolved."""
    for _ in range(100):
        stride = int(rng.choice([1, 1, 2, 3, -1, -2]))
        want = count or int(rng.integers(1, extent + 1))
        span = (want - 1) * abs(stride)
        if span >= extent:
            continue
        first = int(rng.integers(0, extent - span))
        lo, hi = (first, first + span) if stride > 0 else (first + span, first)
        # Write it with defaults where they mean the same; hi may overshoot within the stride.
        written_lo = None if (stride > 0 and lo == 0 and rng.random() < 0.5) else lo
        written_hi = None if (stride > 0 and hi == extent - 1 and rng.random() < 0.5) else hi
        if written_hi is not None and stride > 1 and hi + 1 < extent and rng.random() < 0.3:
            written_hi = hi + 1  # not hit: the section stops at hi
        return ("trip", written_lo, written_hi, None if stride == 1 and rng.random() < 0.5 else stride)
    return ("trip", 0, (count or extent) - 1, 1)


def sub_text(sub) -> str:
    if sub[0] == "idx":
        return str(sub[1])
    _, lo, hi, stride = sub
    return ("" if lo is None else str(lo)) + ":" + ("" if hi is None else str(hi)) + (
        "" if stride is None else f":{stride}")


def sub_count(sub, extent) -> int:
    return len(resolve(sub, extent))


def arr_decl(name: str, grid_name: str, a: Arr) -> str:
    dims = ", ".join(map(str, a.shape))
    if a.mapping == "repl":
        mapping = f"replicated onto {grid_name}"
    elif a.mapping == "single":
        mapping = f"on {grid_name}({', '.join(map(str, a.owner))})"
    else:
        formats = [k if b is None else f"{k}({b})" for k, b in a.dist]
        mapping = f"distribute ({', '.join(formats)}) onto {grid_name}"
    return f"array {name}({dims}) of int32 {mapping}"


def draw_case(rng):
    op_name = ["copy", "copy", "transpose", "cshift", "eoshift", "spread", "sum", "max"][
        int(rng.integers(0, 8))]
    rank = int(rng.integers(1, 4))
    if op_name == "transpose":
        rank = int(rng.integers(2, 4))
    src_shape = tuple(int(x) for x in rng.integers(2, 9 if rank < 3 else 6, size=rank))
    src = draw_array(rng, src_shape, 6)
    # Source subscripts: triplets, and scalar subscripts when the value keeps a dim.
    value_rank_needed = {"transpose": 2, "sum": 1}.get(op_name, 1)
    subs = []
    for extent in src_shape:
        subs.append(("idx", int(rng.integers(0, extent))) if rng.random() < 0.25 else
                    draw_triplet(rng, extent) if rng.random() < 0.6 else ("trip", None, None, None))
    while sum(s[0] == "trip" for s in subs) < value_rank_needed or (
            op_name == "transpose" and sum(s[0] == "trip" for s in subs) != 2):
        i = int(rng.integers(0, rank))
        if op_name == "transpose" and sum(s[0] == "trip" for s in subs) > 2:
            subs[i] = ("idx", 0)
        else:
            subs[i] = ("trip", None, None, None)
    kept = [d for d, s in enumerate(subs) if s[0] == "trip"]
    value_shape = [sub_count(subs[d], src_shape[d]) for d in kept]
    op = {"name": op_name}
    arg = "A" if all(s == ("trip", None, None, None) for s in subs) else \
        f"A({', '.join(sub_text(s) for s in subs)})"
    if op_name == "transpose":
        value_shape = value_shape[::-1]
        rhs = f"transpose({arg})"
    elif op_name in ("cshift", "eoshift"):
        op["dim"] = int(rng.integers(0, len(value_shape)))
        op["shift"] = int(rng.integers(-value_shape[op["dim"]] - 1, value_shape[op["dim"]] + 2))
        rhs = f"{op_name}({arg}, {op['shift']}, dim={op['dim'] + 1})"
    elif op_name == "spread":
        if len(value_shape) == 3:  # the destination may have at most 3 dims
            subs[kept[0]] = ("idx", 0)
            arg = f"A({', '.join(sub_text(s) for s in subs)})"
            kept, value_shape = kept[1:], value_shape[1:]
        op["dim"], op["ncopies"] = int(rng.integers(0, len(value_shape) + 1)), int(rng.integers(1, 5))
        value_shape.insert(op["dim"], op["ncopies"])
        rhs = f"spread({arg}, dim={op['dim'] + 1}, ncopies={op['ncopies']})"
    elif op_name in ("sum", "max"):
        op["dim"] = int(rng.integers(0, len(value_shape)))
        del value_shape[op["dim"]]
        rhs = f"{op_name}({arg}, dim={op['dim'] + 1})"
    else:
        rhs = arg
    if not value_shape:  # a reduction of a 1-D section: into one element of a 1-D array
        value_shape_dst = []
    else:
        value_shape_dst = value_shape
    # Destination: the value's extents, maybe inside a larger array, maybe with a scalar subscript.
    dst_shape, dst_subs = [], []
    room = 3 - len(value_shape_dst)  # scalar subscripts the destination may add
    for c in value_shape_dst:
        if rng.random() < 0.5:
            extent = c
            dst_subs.append(("trip", None, None, None))
        else:
            extent = c + int(rng.integers(0, 2 * c + 1))
            dst_subs.append(draw_triplet(rng, extent, c))
        dst_shape.append(extent)
        if room and rng.random() < 0.12:
            room -= 1
            extent = int(rng.integers(1, 4))
            dst_shape.append(extent)
            dst_subs.append(("idx", int(rng.integers(0, extent))))
    if not dst_shape:
        dst_shape, dst_subs = [int(rng.integers(1, 4))], []
        dst_subs.append(("idx", int(rng.integers(0, dst_shape[0]))))
    dst = draw_array(rng, tuple(dst_shape), 6)
    lhs = "B" if all(s == ("trip", None, None, None) for s in dst_subs) else \
        f"B({', '.join(sub_text(s) for s in dst_subs)})"
    program = "\n".join([
        f"processors P({', '.join(map(str, src.grid))})" + (f" at {src.base}" if src.base else ""),
        f"processors Q({', '.join(map(str, dst.grid))})" + (f" at {dst.base}" if dst.base else ""),
        arr_decl("A", "P", src), arr_decl("B", "Q", dst), f"{lhs} = {rhs}", ""])
    return {"src": src, "dst": dst, "op": op, "src_subs": subs, "dst_subs": dst_subs,
            "program": program}


def draw_cases(count: int):
    rng = np.random.default_rng(19)
    return [draw_case(rng) for _ in range(count)]


def commset_of(program: str) -> CommSet:
    checked = check(parse(program, "s.phx"))
    (stmt,) = checked.communications()
    return CommSet(stmt)


def test_the_cases_cover_every_form():
    """The drawn cases must hold what the property claims to test."""
    cases = draw_cases(CASES)
    text = "\n".join(c["program"] for c in cases)
    for form in ("transpose(", "cshift(", "eoshift(", "spread(", "sum(", "max(", ":-", " at ",
                 "replicated", "CYCLIC(", "BLOCK(", "on Q("):
        assert form in text, form
    strided = sum(any(s[0] == "trip" and s[3] not in (None, 1) for s in c["src_subs"] + c["dst_subs"])
                  for c in cases)
    scalar = sum(any(s[0] == "idx" for s in c["src_subs"] + c["dst_subs"]) for c in cases)
    assert strided >= CASES // 4 and scalar >= CASES // 8, (strided, scalar)


@pytest.mark.parametrize("chunk", range(12))
def test_section_comm_sets_match_the_element_oracle(chunk):
    cases = draw_cases(CASES)[chunk::12]
    for case in cases:
        commset = commset_of(case["program"])
        want = oracle(case)
        got = commset.byte_matrix
        assert got.shape == want.shape and (got == want).all(), \
            f"{case['program']}\ngot\n{got}\nwant\n{want}"
        for p, q in zip(*np.nonzero(got)):
            section = commset.section(int(p), int(q))
            assert section.count * ITEMSIZE == got[p, q], case["program"]
            for ix, runs in zip(section.indices, section.strided_runs()):
                spelled = [start + k * stride for start, stride, count in runs for k in range(count)]
                assert spelled == ix.tolist()


def test_a_strided_section_over_a_block_owner_is_one_run():
    commset = commset_of("processors P(4)\narray A(64) of int32 distribute BLOCK onto P\n"
                         "array B(32) of int32 distribute BLOCK onto P\nB = A(0:63:2)\n")
    # B's owner 0 holds B(0:7), which reads A(0:14:2): all from A's owner 0, one run of B indices
    assert commset.section(0, 0).strided_runs() == (((0, 1, 8),),)
    commset = commset_of("processors P(4)\narray A(64) of int32 distribute BLOCK onto P\n"
                         "array B(64) of int32 distribute BLOCK onto P\nB(0:63:2) = A(0:31)\n")
    assert commset.section(0, 0).strided_runs() == (((0, 2, 8),),)
    assert commset.section(0, 1).strided_runs() == (((16, 2, 8),),)


# ---- end to end: compiled, scheduled, simulated, data verified ------------------------------

@pytest.mark.parametrize("chunk", range(4))
def test_random_section_programs_run_and_verify(chunk):
    from phalanx.compiler.driver import compile_program
    from phalanx.runtime.simulate import simulate

    for case in draw_cases(CASES)[chunk::4]:  # all 600 cases, 150 per chunk
        compiled = compile_program("target ideal:16\n" + case["program"], file="s.phx")
        result = simulate(compiled, seed=3)
        assert result.verified, case["program"]


def test_disjoint_arrangements_exchange_between_the_halves():
    from phalanx.compiler.driver import compile_program
    from phalanx.runtime.simulate import simulate

    source = ("processors L(4)\nprocessors R(2, 2) at 4\n"
              "array A(8, 8) of int64 distribute (BLOCK, *) onto L\n"
              "array B(8, 8) of int64 distribute (BLOCK, BLOCK) onto R\n"
              "array s(8) of int64 on R(1, 1)\n"
              "B = A\ns = sum(B(:, 0:5), dim=2)\n")
    for spec in ("ideal:8", "paragon:2x4", "torus:2x4"):
        compiled = compile_program(source, target=spec, file="d.phx", cost="closed-form")  # not auto's choice
        copy, reduction = (c.matrix for c in compiled.collectives)
        # nodes 0-3 hold A, nodes 4-7 hold B: everything crosses from one half to the other
        assert copy[:4, :4].sum() == 0 and copy[4:, :].sum() == 0 and copy[:4, 4:].sum() == 8 * 8 * 8
        # s lives on R(1, 1) = node 7; each of R's nodes sends one partial per element of its rows
        assert reduction[:, 7].tolist() == [0, 0, 0, 0, 32, 32, 32, 32]
        assert simulate(compiled, seed=2).verified


def _delivered_by_hand(source: str, repeat: set[tuple[int, int]] = frozenset()):
    """Every block of the statement straight from origin to destination (`repeat`: twice)."""
    from phalanx.compiler.schedule import Transfer
    from phalanx.runtime.data_assign import AssignmentData

    (stmt,) = check(parse(source, "h.phx")).communications()
    data = AssignmentData.build(stmt, np.random.default_rng(4))
    m = data.commset.byte_matrix
    for p, q in zip(*np.nonzero(m)):
        t = Transfer(int(p), int(q), int(m[p, q]), int(p), int(q))
        data.put(t, data.take(t))
        if (p, q) in repeat:
            data.put(t, data.pack(int(p), int(q)))
    return data


REDUCE = ("processors P(2, 2)\nprocessors R(4)\n"
          "array A(6, 8) of float64 distribute (BLOCK, CYCLIC) onto P\n"
          "array S(6) of float64 distribute CYCLIC onto R\nS = sum(A, dim=2)\n")


def test_a_reduction_along_a_dim_combines_every_partial_once():
    assert _delivered_by_hand(REDUCE).problems() == []
    problems = _delivered_by_hand(REDUCE, repeat={(1, 0)}).problems()
    # S(0) and S(4) live on node 0: rows 0 and 4 of A, on grid rows 0 (nodes 0, 1) and 1 (2, 3)
    assert problems == ["node 0: partial results from [0, 1, 2, 3] (counts [1, 1, 1, 2]), "
                        "expected each of [0, 1, 2, 3] once",
                        "node 0: combined sum differs from the reference"]


def test_eoshift_writes_the_boundary_without_communication():
    from phalanx.runtime.data_check import element_writes

    data = _delivered_by_hand("processors P(4)\narray A(8) of int32 distribute BLOCK onto P\n"
                              "array B(8) of int32 distribute BLOCK onto P\nB = eoshift(A, 3)\n")
    assert data.problems() == []
    assert data.dst_local[3].tolist() == [0, 0]
    assert element_writes(data, 3, data.block_count[:, 3]).tolist() == [1, 1]
    m = data.commset.byte_matrix  # B(0:4) = A(3:7); B(5:7) = 0 is not sent
    assert m.sum() == 5 * 4


PLACED = """processors P(3)
processors R(2, 2) at 4
processors V(4) at 4
array C(12) of float64 distribute CYCLIC onto V
array D(12) of float64 distribute BLOCK onto P
array s(1) of float64 replicated onto R
array t(1) of float64 on P(2)
array S(12) of float64 on R(1, 0)
array Rr(12) of float64 replicated onto R
array G(4, 6) of float64 distribute (BLOCK, CYCLIC) onto R
s = sum(C)
t = max(C)
Rr = S
S = D
Rr = D
C = cshift(C, 5)
D = Rr
G = cshift(G, 1, dim=2)
D(0:5) = G(1, :)
"""


@pytest.mark.parametrize("spec", ["ideal:8", "paragon:2x4", "torus:2x4"])
def test_every_collective_on_arrangements_placed_at_node_4(spec):
    """Reductions, broadcast, gather, allgather, cshift on R(2, 2) at 4 and V(4) at 4: the
    nodes of the placed arrangements (4 to 7) take part, and the data verify."""
    from phalanx.compiler.driver import compile_program
    from phalanx.runtime.simulate import simulate

    compiled = compile_program(PLACED, target=spec, file="p.phx", cost="closed-form")  # not auto's choice
    kinds = [c.kind for c in compiled.collectives]
    assert kinds == ["allreduce", "reduce", "broadcast", "gather", "allgather", "cshift",
                     "permutation", "cshift", "sparse"]
    allreduce, reduce_, broadcast = compiled.collectives[:3]
    assert allreduce.participants == (4, 5, 6, 7)
    assert reduce_.root == 2 and broadcast.root == 6  # t on P(2); S on R(1, 0) = node 4 + 2
    assert simulate(compiled, seed=2).verified


@pytest.mark.parametrize("shift", [-5, -4, -3, -1, 0, 2, 3, 4, 7])
def test_eoshift_by_any_amount_matches_fortran(shift):
    """Fortran: eoshift(A, k) has A(i + k) where 0 <= i + k < n, else 0 (|k| >= n: all 0)."""
    from phalanx.runtime.data_values import reference_result

    (stmt,) = check(parse("processors P(2)\narray A(4, 3) of int32 distribute (BLOCK, *) onto P\n"
                          f"array B(4, 3) of int32 distribute (*, BLOCK) onto P\n"
                          f"B = eoshift(A, {shift})\n", "e.phx")).communications()
    a = np.arange(12, dtype=np.int32).reshape(4, 3) + 1
    want = np.array([[a[i + shift, j] if 0 <= i + shift < 4 else 0 for j in range(3)]
                     for i in range(4)], dtype=np.int32)
    got, due = reference_result(stmt, a)
    assert got.tolist() == want.tolist() and all(m.all() for m in due)
    assert _delivered_by_hand(f"processors P(2)\narray A(4, 3) of int32 distribute (BLOCK, *) onto P\n"
                              f"array B(4, 3) of int32 distribute (*, BLOCK) onto P\n"
                              f"B = eoshift(A, {shift})\n").problems() == []


HALVES = """processors L(4)
processors R(4) at 4
array A(8, 8) of float64 distribute (BLOCK, *) onto L
array B(8, 8) of float64 distribute (BLOCK, *) onto R
compute "left" on L cost 1 ms
compute "right" on R cost 3 ms
B = A
"""


@pytest.mark.parametrize("spec", ["ideal:8", "paragon:2x4"])
def test_compute_on_a_placed_arrangement_keeps_its_nodes_busy(spec):
    from phalanx.compiler.driver import compile_program
    from phalanx.compiler.schedule import ComputeStep
    from phalanx.runtime.simulate import simulate

    compiled = compile_program(HALVES, target=spec, file="h.phx", cost="closed-form")  # not auto's choice
    left, right = [s for s in compiled.plan.steps if isinstance(s, ComputeStep)]
    assert (left.first, left.nprocs, right.first, right.nprocs) == (0, 4, 4, 4)
    assert [n for n in range(8) if right.runs_on(n)] == [4, 5, 6, 7]
    result = simulate(compiled, seed=1)
    assert result.verified
    spans = [s for s in result.execution.spans if s.kind == "compute"]
    busy = {s.node: round(s.end_s - s.start_s, 9) for s in spans}
    assert busy == {0: 1e-3, 1: 1e-3, 2: 1e-3, 3: 1e-3, 4: 3e-3, 5: 3e-3, 6: 3e-3, 7: 3e-3}


SPREAD_REDUCE = ("processors P(2, 2)\nprocessors R(4)\n"
                 "array A(6, 8) of float64 distribute (BLOCK, CYCLIC) onto P\n"
                 "array Y(3, 8) of float64 distribute (*, CYCLIC) onto R\n"
                 "Y = spread(max(A(0:4:2, :), dim=1), dim=1, ncopies=3)\n")


def test_a_spread_reduction_combines_every_partial_once_in_every_copy():
    """spread(max(A(0:4:2, :), dim=1), dim=1, ncopies=3): Y(k, j) is the max over rows 0, 2, 4
    of A(:, j) for every k, numpy's reference; delivered block by block, each receiver combines
    every partial exactly once (a repeated partial is caught)."""
    from phalanx.runtime.data_values import reference_result

    (stmt,) = check(parse(SPREAD_REDUCE, "h.phx")).communications()
    assert (stmt.op, stmt.perm, stmt.collapsed) == ("max", (-1, 1), (0,))
    a = np.random.default_rng(2).normal(size=(6, 8))
    y, _ = reference_result(stmt, a)
    assert (y == np.repeat(a[0:5:2].max(axis=0)[None, :], 3, axis=0)).all()
    assert _delivered_by_hand(SPREAD_REDUCE).problems() == []
    problems = _delivered_by_hand(SPREAD_REDUCE, repeat={(1, 1)}).problems()
    assert problems and problems[0].startswith("node 1: partial results from")
