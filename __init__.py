"""Phalanx: an HPF-style language and compiler for collective communication."""

__version__ = "0.1.0"
