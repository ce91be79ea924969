"""Streaming a run as server-sent events.

The run is driven to its end by a worker thread of its own, whatever the client does: a
dropped connection must not abandon a run halfway (a decided change whose run never
resumes, a checkpoint never written). The response only relays what the worker produces;
a decision answered 202 relays nothing, and its run still goes on (its events land in the
thread's log).
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from opsgraph.api.request_ids import current_request_id
from opsgraph.engine.events import Event

log = logging.getLogger(__name__)
DONE = object()
"""What a run's event stream yields after its last event."""


class RunStream:
    """A run's events, produced by a dedicated thread into a queue."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events
        self._queue: queue.Queue[Any] = queue.Queue()
        # the run's thread works in a copy of the request's context: its log lines carry
        # the request id
        self._thread = threading.Thread(target=contextvars.copy_context().run,
                                        args=(self._produce,), daemon=True,
                                        name="opsgraph-run")

    def _produce(self) -> None:
        try:
            for event in self._events:
                self._queue.put(event)
        except BaseException as exc:
            self._queue.put(exc)
        finally:
            self._queue.put(DONE)

    def start(self) -> None:
        self._thread.start()

    def next_item(self) -> Any:
        """The next event, an exception the run raised, or the end marker (blocking)."""
        return self._queue.get()


async def prime(events: Iterator[Event]) -> tuple[Event, RunStream]:
    """Start the run and take its first event before responding, so errors raised up front
    (bad input, a busy thread, a change that is not pending) become a JSON error with its
    status instead of a half-open stream."""
    stream = RunStream(events)
    stream.start()
    first = await run_in_threadpool(stream.next_item)
    if isinstance(first, BaseException):
        raise first
    if first is DONE:
        raise RuntimeError("the run produced no events")
    return first, stream


def for_client(event: Event, request_id: str | None) -> Event:
    """The event as this request's client sees it: an internal error (whose words the
    thread log already kept out: `engine.thread_log.client_safe`) names the request id, and
    the log ties that id to the run the stored event names; a task's failure (said in our
    words, e.g. "members.lookup stopped: an internal error (KeyError)") keeps its words and
    gains the request id too."""
    if event.event != "error" or event.data.get("code") not in ("internal", "task_failed"):
        return event
    if event.data.get("code") == "task_failed":  # its words are ours already: add the id
        log.error("request %s: task error: %s", request_id, event.data.get("message"))
        return Event(event.id, event.event, {**event.data, "request_id": request_id})
    log.error("request %s: run error: %s", request_id, event.data.get("message"))
    return Event(event.id, event.event, {
        **event.data, "request_id": request_id,
        "message": f"internal error (request id {request_id})"})


def event_stream(first: Event, rest: RunStream) -> EventSourceResponse:
    """The SSE response: `id:`, `event:` and JSON `data:` per event."""
    request_id = current_request_id()

    async def body() -> AsyncIterator[dict[str, str]]:
        yield for_client(first, request_id).to_sse()
        while True:
            item = await run_in_threadpool(rest.next_item)
            if item is DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield for_client(item, request_id).to_sse()

    return EventSourceResponse(body(), ping=15)
