"""KSR-1 (002_1e1cb805508c9dd7.txt): slotted ALLCACHE rings, remote reads, the Sec. 5 collectives."""
