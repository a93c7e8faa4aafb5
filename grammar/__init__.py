"""Phalanx front end: grammar, AST and diagnostics."""
