"""Phalanx targets: one package (or module) per machine, each listing its `ENTRIES`.

Nothing registers on import: `register_targets()` (called through `phalanx.register_all()`
by the CLI, the Python API, phalanx-opt and the tests) fills compiler/target.py's registry.
"""

from __future__ import annotations

from phalanx.compiler.target import TargetEntry, register
from phalanx.targets import ideal
from phalanx.targets.bokhari import machine as bokhari
from phalanx.targets.iwarp import target as iwarp
from phalanx.targets.ksr1 import target as ksr1
from phalanx.targets.proteus import target as proteus

ENTRIES: tuple[TargetEntry, ...] = (*ideal.ENTRIES, *iwarp.ENTRIES, *bokhari.ENTRIES, *proteus.ENTRIES,
                                    *ksr1.ENTRIES)


def register_targets() -> None:
    """Put every built-in machine in the target registry (again is harmless)."""
    for entry in ENTRIES:
        register(entry)
