"""The event engine: ordering, resources, traces and deadlock reports."""

from __future__ import annotations

import pytest

from phalanx.runtime.engine import Deadlock, Engine, Resource


def test_trace_of_two_processes_sharing_a_resource():
    engine = Engine()
    port = Resource(engine, "port")
    log = []

    def user(name: str, hold_s: float):
        yield port.request()
        log.append((engine.now, "got", name))
        yield engine.timeout(hold_s)
        port.release()
        log.append((engine.now, "released", name))

    engine.process(user("a", 2.0), "a")
    engine.process(user("b", 1.0), "b")
    engine.run()
    assert log == [(0.0, "got", "a"), (2.0, "released", "a"), (2.0, "got", "b"),
                   (3.0, "released", "b")]
    assert port.busy_s == 3.0


def test_same_time_events_run_in_creation_order():
    engine = Engine()
    log = []

    def p(name):
        yield engine.timeout(1.0)
        log.append(name)

    for name in "cab":
        engine.process(p(name), name)
    engine.run()
    assert log == ["c", "a", "b"]


def test_all_of_waits_for_the_last():
    engine = Engine()
    done = []

    def waiter():
        yield engine.all_of([engine.timeout(1.0), engine.timeout(3.0), engine.timeout(2.0)])
        done.append(engine.now)

    engine.process(waiter(), "w")
    engine.run()
    assert done == [3.0]


def test_deadlock_reports_the_cycle_of_resources():
    engine = Engine()
    r1, r2 = Resource(engine, "link 1"), Resource(engine, "link 2")

    def grab(first, second):
        yield first.request()
        yield engine.timeout(1.0)
        yield second.request()

    engine.process(grab(r1, r2), "msg a")
    engine.process(grab(r2, r1), "msg b")
    with pytest.raises(Deadlock) as info:
        engine.run()
    assert info.value.cycle == ["msg a waits on holds link 2", "msg b waits on holds link 1",
                                "msg a"]
    assert "deadlock: msg a waits on holds link 2 -> msg b waits on holds link 1 -> msg a" == \
        str(info.value)


def test_event_cannot_fire_twice():
    engine = Engine()
    event = engine.event("x")
    event.succeed()
    with pytest.raises(RuntimeError, match="triggered twice"):
        event.succeed()


def test_what_a_deadlock_report_reads_is_declared_on_every_event():
    """Class-level defaults: a plain event carries none of them in its own __dict__."""
    engine = Engine()
    event = engine.event("x")
    assert (event.resource, event.waits_for, event.producer) == (None, (), None)
    assert not {"resource", "waits_for", "producer"} & set(vars(event))
