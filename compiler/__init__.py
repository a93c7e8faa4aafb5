"""Phalanx compiler: semantics, communication sets, recognition, IR, passes, schedules."""
