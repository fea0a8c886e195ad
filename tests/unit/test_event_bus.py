"""The event bus under a reader that stops reading: its queue stays bounded and says "lagged" once; and it keeps
nothing for readers that are gone. (That a lagging stream still ends: tests/integration/test_api_security.py.)"""

import asyncio
import gc
import weakref

from desktop.core.events import Event, EventBus, Lagged, Revoked, SettingChanged


def drained(queue: "asyncio.Queue[Event]") -> list[Event]:
    taken: list[Event] = []
    while not queue.empty():
        taken.append(queue.get_nowait())
    return taken


def setting(n: int) -> SettingChanged:
    return SettingChanged("approval_ttl", f"{n}m")


def test_a_stalled_reader_gets_one_lagged_and_then_events_again_once_it_read_them() -> None:
    bus = EventBus(queue_size=10)
    with bus.subscribe() as queue:
        for n in range(50):
            bus.publish(setting(n))
        assert drained(queue) == [*(setting(n) for n in range(10)), Lagged()]
        bus.publish(setting(50))
        bus.publish(setting(51))
        assert drained(queue) == [setting(50), setting(51)], "events flow again once the reader caught up"


def test_nothing_is_added_after_the_lagged_until_the_reader_has_taken_it() -> None:
    bus = EventBus(queue_size=3)
    with bus.subscribe() as queue:
        for n in range(4):
            bus.publish(setting(n))
        queue.get_nowait()  # the reader takes one event and stalls again
        for n in range(4, 20):
            bus.publish(setting(n))
        assert drained(queue) == [setting(1), setting(2), Lagged()]


def test_an_ending_is_not_kept_once_no_stream_waits_for_it() -> None:
    bus = EventBus(queue_size=10)
    unread = Revoked("tom")  # no stream of tom's is open
    kept = [weakref.ref(unread)]
    bus.publish(unread)
    with bus.subscribe(ends={Revoked("sarah")}):
        for n in range(20):
            bus.publish(setting(n))
        ending = Revoked("sarah")
        kept.append(weakref.ref(ending))
        bus.publish(ending)
    del unread, ending
    gc.collect()
    assert [ref() for ref in kept] == [None, None], "the bus holds a revocation no open stream needs"
