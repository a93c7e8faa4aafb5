"""Phalanx: an HPF-style language and compiler for collective communication.

The public API (runtime/api.py): `phalanx.compile(program, target)` gives a `Program`, whose
`.run()` gives a `Run`; `phalanx.sweep(target, collective, sizes)` gives a `Sweep`. Errors in a
program or its options raise `PhalanxError` (a `UsageError` for a bad option, file or size).
They load on first use, so that `import phalanx` stays light.
"""

from __future__ import annotations

from typing import Any

from phalanx.runtime.allocator import reuse_freed_memory

__version__ = "0.1.0"

# before the first big array of any entry point (CLI, API, tests): runtime/allocator.py
reuse_freed_memory()

# Each public name and the module it lives in (loaded on first use).
_LAZY = {"compile": "phalanx.runtime.api", "sweep": "phalanx.runtime.api",
         "Program": "phalanx.runtime.api", "Run": "phalanx.runtime.api",
         "Sweep": "phalanx.runtime.api", "PhalanxError": "phalanx.grammar.diagnostics",
         "UsageError": "phalanx.grammar.diagnostics"}

__all__ = ["compile", "sweep", "Program", "Run", "Sweep", "PhalanxError", "UsageError",
           "register_all", "__version__"]


def register_all() -> None:
    """Fill the registries: every built-in target and every cost model a backend offers.

    Nothing registers itself on import; the CLI, the Python API, `phalanx-opt` and the tests
    call this once (calling it again is harmless)."""
    from phalanx.runtime.backends.flowcost import register_simgrid_cost_model
    from phalanx.runtime.simcost import register_simulate_cost_model
    from phalanx.targets import register_targets

    register_targets()
    register_simgrid_cost_model()
    register_simulate_cost_model()


def __getattr__(name: str) -> Any:
    """The public names of `_LAZY`, imported on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'phalanx' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API (`__all__`), as `dir(phalanx)` and tab completion show it."""
    return sorted(__all__)
