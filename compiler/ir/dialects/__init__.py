"""Phalanx's three dialects: `dist` (the program), `coll` (collectives), `sched` (schedules).

`make_context()` gives an xDSL context that knows them and the builtin dialect.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.ir import Dialect

from phalanx.compiler.ir.dialects.coll import Coll
from phalanx.compiler.ir.dialects.dist import Dist
from phalanx.compiler.ir.dialects.sched import Sched

ALL_DIALECTS: list[Dialect] = [Dist, Coll, Sched]


def make_context(allow_unregistered: bool = False) -> Context:
    ctx = Context(allow_unregistered=allow_unregistered)
    ctx.load_dialect(Builtin)
    for dialect in ALL_DIALECTS:
        ctx.load_dialect(dialect)
    return ctx
