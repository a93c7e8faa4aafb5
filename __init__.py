"""Phalanx: an HPF-style language and compiler for collective communication."""

__version__ = "0.1.0"


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


def __getattr__(name: str):
    """`phalanx.compile(...)` and `phalanx.sweep(...)` for notebooks, loaded on first use
    so that `import phalanx` stays light."""
    if name in ("compile", "sweep"):
        from phalanx.runtime import api

        return getattr(api, name)
    raise AttributeError(f"module 'phalanx' has no attribute {name!r}")
