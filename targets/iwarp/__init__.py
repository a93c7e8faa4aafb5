"""iWarp (001_569dde0e56ec3e6f.txt): the wormhole torus, its phased AAPC and baselines.

Importing the package registers the `iwarp` and `torus` targets.
"""

from phalanx.targets.iwarp import target  # noqa: F401  (registers itself)
