"""Phalanx's MLIR intermediate representation, built with xDSL: dialects, passes, printing."""
