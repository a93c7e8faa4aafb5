"""Phalanx targets: importing this package fills the target registry."""

from phalanx.targets import ideal  # noqa: F401  (registers itself)

