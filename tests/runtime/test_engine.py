"""The event engine: ordering, resources and pools, traces and deadlock reports."""

from __future__ import annotations

import pytest

from phalanx.runtime.engine import Deadlock, Engine, Pool, Resource


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


def test_a_pool_grants_its_units_in_request_order_and_counts_their_busy_time():
    """Two units, four users: c and d queue; c gets b's unit, d then c's. busy_s is unit-time
    over capacity: (3 + 1 + 1 + 2) / 2, so busy_s / total time is the mean fraction in use."""
    engine = Engine()
    pool = Pool(engine, "streams", 2)
    log, held = [], []

    def user(name: str, hold_s: float):
        yield pool.request()
        log.append((engine.now, "got", name))
        yield engine.timeout(hold_s)
        pool.release()

    def watch():
        for _ in range(4):
            yield engine.timeout(0.5 if not held else 1.0)
            held.append((engine.now, [p.name for p in pool.holders]))

    for name, hold_s in (("a", 3.0), ("b", 1.0), ("c", 1.0), ("d", 2.0)):
        engine.process(user(name, hold_s), name)
    engine.process(watch(), "watch")
    engine.run()
    assert log == [(0.0, "got", "a"), (0.0, "got", "b"), (1.0, "got", "c"), (2.0, "got", "d")]
    assert held == [(0.5, ["a", "b"]), (1.5, ["a", "c"]), (2.5, ["a", "d"]), (3.5, ["d"])]
    assert pool.busy_s == 3.5 and pool.busy_s / engine.now == 0.875
    assert pool.holders == [] and not pool.queue


def test_a_free_unit_goes_to_the_running_process_at_once_unless_grant_now_is_off():
    engine = Engine()
    fast, slow = Pool(engine, "fast", 1), Pool(engine, "slow", 1, grant_now=False)
    seen = {}

    def user(pool: Pool):
        request = pool.request()
        seen[pool.name] = request.processed
        yield request
        pool.release()

    engine.process(user(fast), "f")
    engine.process(user(slow), "s")
    engine.run()
    assert seen == {"fast": True, "slow": False}


def test_a_pool_needs_a_unit_and_a_holder_to_release():
    engine = Engine()
    with pytest.raises(ValueError, match="at least one unit"):
        Pool(engine, "empty", 0)
    with pytest.raises(RuntimeError, match="released with no unit held"):
        Pool(engine, "idle", 1).release()


def test_deadlock_through_a_pool_names_its_holders():
    """a and b hold the two units of the pool and wait for the link that c holds; c waits for
    a unit of the pool."""
    engine = Engine()
    pool, link = Pool(engine, "memory", 2), Resource(engine, "link")

    def take(first, second):
        yield first.request()
        yield engine.timeout(1.0)
        yield second.request()

    engine.process(take(pool, link), "a")
    engine.process(take(pool, link), "b")
    engine.process(take(link, pool), "c")
    with pytest.raises(Deadlock) as info:
        engine.run()
    assert info.value.cycle == ["a waits on holds link", "c waits on holds memory", "a"]
    assert "c waits for a (holds memory), b (holds memory)" in info.value.blocked


def test_what_a_deadlock_report_reads_is_declared_on_every_event():
    """Class-level defaults: a plain event carries none of them in its own __dict__."""
    engine = Engine()
    event = engine.event("x")
    assert (event.resource, event.waits_for, event.producer) == (None, (), None)
    assert not {"resource", "waits_for", "producer"} & set(vars(event))


@pytest.mark.parametrize("make", [lambda e: Resource(e, "port"), lambda e: Pool(e, "streams", 1)])
def test_a_resource_makes_its_queue_at_the_first_wait(make):
    """A machine's thousands of resources carry no queue (nor a dict) until a request waits:
    torus:16x16's 6,146 empty deques and dicts were 4.4 MB of a native run (docs/engine.md)."""
    engine = Engine()
    resource = make(engine)
    assert resource.queue is None and not hasattr(resource, "__dict__")
    order = []

    def user(name: str):
        yield resource.request()
        order.append(name)
        yield engine.timeout(1.0)
        resource.release()

    engine.process(user("a"), "a")
    engine.run()
    assert resource.queue is None and order == ["a"]  # granted at once: still none
    for name in "bcd":
        engine.process(user(name), name)
    engine.run()
    assert order == ["a", "b", "c", "d"] and resource.queue is not None and not resource.queue
