"""Is there a labelling of a mesh's nodes as hypercube vertices under which, in every dimension,
the pairs' row-column routes (both ways) share no directed link? A SAT question (issue 27,
docs/efficiency.md, branch pgdim): `dimension-pipeline` on the Paragon would need one.

Variables x[n][l] (node n has label l, a bijection) and p[t][a][b] (a and b are partners in
dimension t: implied by x[a][l] and x[b][l ^ 2^t]); per dimension and directed link, at most one
pair whose routes use the link (sequential counters). Node 0 takes label 0 (any labelling XORed
with a constant keeps its pairs) and the nodes labelled 1, 2, 4, ... come in node order (so does
any labelling with its dimensions permuted). The routes are those of targets/bokhari/routing.py MeshRoute
(along the row first). Needs python-sat, the optional extra `sat` (`pip install '.[sat]'`):

    python bench/mesh_cube_sat.py 8 8        # prints SAT and a labelling, or UNSAT
"""

from __future__ import annotations

import itertools
import sys
import time

from phalanx.targets.bokhari.routing import MeshRoute


def pysat():
    """python-sat's card, formula and solvers modules, or an exit that says how to install it
    (an optional extra: imported here, not at the top, so the arguments are checked first)."""
    try:
        from pysat import card, formula, solvers  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("bench/mesh_cube_sat.py needs python-sat, the project's optional `sat` extra: "
                 "pip install '.[sat]' (or pip install python-sat)")
    return card, formula, solvers


def clauses(rows: int, cols: int, pool) -> list[list[int]]:
    card, _, _ = pysat()
    CardEnc, EncType = card.CardEnc, card.EncType
    nodes, dims = rows * cols, (rows * cols).bit_length() - 1
    assert nodes == 1 << dims, "the mesh must have 2^d nodes"
    x = [[pool.id(("x", n, label)) for label in range(nodes)] for n in range(nodes)]
    out: list[list[int]] = [[x[0][0]]]
    for t in range(1, dims):  # permuting the dimensions keeps the pairs: node(2^(t-1)) < node(2^t)
        out += [[-x[n][1 << t], *(x[m][1 << (t - 1)] for m in range(n))] for n in range(nodes)]
    for n in range(nodes):
        out += CardEnc.equals(x[n], 1, vpool=pool, encoding=EncType.seqcounter).clauses
    for label in range(nodes):
        out += CardEnc.equals([x[n][label] for n in range(nodes)], 1, vpool=pool,
                              encoding=EncType.seqcounter).clauses
    route = MeshRoute(cols)
    users: dict[object, list[tuple[int, int]]] = {}
    for a, b in itertools.combinations(range(nodes), 2):
        for hop in [*route(a, b), *route(b, a)]:
            users.setdefault(hop, []).append((a, b))
    for t in range(dims):
        pair = {ab: pool.id(("p", t, ab)) for ab in itertools.combinations(range(nodes), 2)}
        for (a, b), var in pair.items():
            out += [[-x[a][label], -x[b][label ^ (1 << t)], var] for label in range(nodes)]
        for pairs in users.values():
            out += CardEnc.atmost([pair[ab] for ab in pairs], 1, vpool=pool,
                                  encoding=EncType.seqcounter).clauses
    return out


def main(rows: int, cols: int) -> None:
    _, formula_module, solvers = pysat()
    pool = formula_module.IDPool()
    formula = clauses(rows, cols, pool)
    print(f"{pool.top} variables, {len(formula)} clauses", flush=True)
    solver, start = solvers.Cadical153(bootstrap_with=formula), time.process_time()
    found = solver.solve()
    print(("SAT" if found else "UNSAT"), f"after {time.process_time() - start:.0f} CPU-s")
    if found:
        true = {v for v in solver.get_model() if v > 0}
        print("labels by node:", [next(label for label in range(rows * cols)
                                       if pool.id(("x", n, label)) in true)
                                  for n in range(rows * cols)])


def mesh_shape(args: list[str]) -> tuple[int, int]:
    """ROWS COLS from the command line, both positive, their product a power of two."""
    usage = "usage: python bench/mesh_cube_sat.py ROWS COLS (e.g. 8 8: a mesh of 2^d nodes)"
    if len(args) != 2 or not all(a.isdigit() and int(a) > 0 for a in args):
        sys.exit(f"{usage}; got {' '.join(args) or 'no arguments'}")
    rows, cols = int(args[0]), int(args[1])
    if (rows * cols) & (rows * cols - 1):
        sys.exit(f"{usage}; {rows}x{cols} has {rows * cols} nodes, not a power of two")
    return rows, cols


if __name__ == "__main__":
    main(*mesh_shape(sys.argv[1:]))
