"""Phalanx runtime: event engine, schedule interpreter, data movement, reports."""
