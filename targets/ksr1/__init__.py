"""KSR-1 (002_1e1cb805508c9dd7.txt): slotted ALLCACHE rings, remote reads, the Sec. 5 collectives.

Importing the package registers the `ksr1` target.
"""

from phalanx.targets.ksr1 import target  # noqa: F401  (registers itself)
