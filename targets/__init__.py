"""Phalanx targets: importing this package fills the target registry."""

from phalanx.targets import ideal  # noqa: F401  (registers itself)
from phalanx.targets import bokhari  # noqa: F401
from phalanx.targets import iwarp  # noqa: F401
