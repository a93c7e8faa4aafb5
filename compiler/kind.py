"""The collective kinds recognition produces (compiler/recognize.py), as one typed value.

A kind is compared by identity (`coll.kind is Kind.REDUCE`); its value is the text of the
IR's op name (`coll.reduce`), of reports and JSON, and of the command line. Text from outside
(`--kinds`, `--algorithm alltoall=direct`, a sweep's collective, a JSON file) becomes a Kind
once, at the edge, by `parse_kind`.
"""

from __future__ import annotations

from enum import StrEnum

from phalanx.grammar.diagnostics import usage_error


class Kind(StrEnum):
    """What a communication statement is, from its byte matrix and what it computes."""

    ALLTOALL = "alltoall"  # every pair, blocks of one size
    ALLTOALLV = "alltoallv"  # every pair, blocks of different sizes
    BROADCAST = "broadcast"
    SCATTER = "scatter"
    GATHER = "gather"
    ALLGATHER = "allgather"
    REDUCE = "reduce"
    ALLREDUCE = "allreduce"
    CSHIFT = "cshift"
    PERMUTATION = "permutation"  # each node sends to at most one other
    SPARSE = "sparse"  # any other exchange


def parse_kind(text: str, where: str) -> Kind:
    """The kind `text` names (surrounding blanks ignored); else a usage error saying what (the
    text), where (`where`: the option or file it came from) and which kinds there are."""
    name = text.strip()
    if name not in tuple(Kind):
        raise usage_error(f"unknown collective kind '{name}' in {where}",
                          "valid kinds: " + ", ".join(Kind))
    return Kind(name)
