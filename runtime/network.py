"""The interface between the schedule interpreter and a target's network model.

A target builds its network on the engine's resources (targets import runtime, never
the reverse). The interpreter calls only these three members.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from phalanx.compiler.schedule import Transfer
from phalanx.runtime.engine import Event


class NetworkModel(Protocol):
    def transfer(self, t: Transfer) -> Generator[Event, Any, None]:
        """Process body that moves `t` from t.src to t.dst (t.src != t.dst), holding resources."""

    def copy_time_s(self, nbytes: int) -> float:
        """Time of a local copy of `nbytes` on one node."""

    def barrier_time_s(self, nnodes: int) -> float:
        """Time from the last arrival at a barrier until everyone leaves it."""

    def resources(self) -> list[Any]:
        """Every resource, for utilisation reports."""
