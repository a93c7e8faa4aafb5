"""Phalanx: an HPF-style language and compiler for collective communication."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`phalanx.compile(...)` and `phalanx.sweep(...)` for notebooks, loaded on first use
    so that `import phalanx` stays light."""
    if name in ("compile", "sweep"):
        from phalanx.runtime import api

        return getattr(api, name)
    raise AttributeError(f"module 'phalanx' has no attribute {name!r}")
