"""The algorithm library: generic schedules for every collective kind, declared in one registry.

Each algorithm is a record (registry.Algorithm): its name, the kinds it lowers, a one-line
description, its preconditions (each returns None or the reason it cannot run) and its
generator (phases of Transfers built from the collective's byte matrix). Targets offer the
records that fit their machine (`Library`), with the port model the generic cost model and
the lower bounds read (ports.py, bounds.py).
"""
