"""Proteus (seed 000_df708a39f4a23045.txt): clusters, synchronous cycles, complete exchange."""

from phalanx.targets.proteus import target  # noqa: F401  (registers `proteus`)
