"""The graph's stream pumped in a thread: every item in order, in batches of what was
queued; the stream's exception where its item would have come; a consumer that stops
early stops the pump and closes the stream."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from opsgraph.engine.stream_pump import Pumped


def test_every_item_comes_in_order_in_batches_of_what_was_queued() -> None:
    all_queued = threading.Event()

    def stream() -> Iterator[int]:
        yield from range(6)
        all_queued.set()  # runs once the pump asks for more: the last item is queued

    batches = []
    for batch in Pumped(stream()):
        batches.append(batch)
        all_queued.wait(5)  # the consumer is slow: the rest wait in the queue together
    assert [i for batch in batches for i in batch] == list(range(6))
    assert len(batches) <= 2


def test_the_streams_exception_is_raised_to_the_consumer_after_its_items() -> None:
    def stream() -> Iterator[int]:
        yield 1
        raise LookupError("the graph broke")

    seen = []
    with pytest.raises(LookupError, match="the graph broke"):
        for batch in Pumped(stream()):
            seen += batch
    assert seen == [1]


def test_a_consumer_that_stops_early_closes_the_stream() -> None:
    closed = threading.Event()

    def stream() -> Iterator[int]:
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            closed.set()

    batches = iter(Pumped(stream()))
    assert next(batches)[0] == 1
    batches.close()  # as a client going away closes the run's generator
    assert closed.is_set()


def test_a_started_pump_runs_before_iteration_and_close_stops_it() -> None:
    first, closed = threading.Event(), threading.Event()

    def stream() -> Iterator[int]:
        try:
            n = 0
            while True:
                n += 1
                first.set()
                yield n
        finally:
            closed.set()

    pumped = Pumped(stream())
    pumped.start()
    assert first.wait(5)  # pumping with no consumer yet
    pumped.close()  # a run whose start could not be stored: the graph stops
    assert closed.is_set()
    Pumped(iter([1])).close()  # never started: nothing to stop
