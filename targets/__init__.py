"""Phalanx targets: importing this package fills the target registry."""

from phalanx.targets import bokhari, ideal  # noqa: F401  (each registers itself)
