"""Phalanx targets: importing this package fills the target registry."""

from phalanx.targets import (
    bokhari,  # noqa: F401
    ideal,  # noqa: F401  (registers itself)
    iwarp,  # noqa: F401
    ksr1,  # noqa: F401
    proteus,  # noqa: F401
)
