"""Streaming a run as server-sent events, from a synchronous event generator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from opsgraph.engine.events import Event


async def prime(events: Iterator[Event]) -> tuple[Event, Iterator[Event]]:
    """Take the first event before responding, so errors raised up front (bad input, a busy
    thread) become a JSON error with its status instead of a half-open stream."""
    first = await run_in_threadpool(next, events)
    return first, events


def event_stream(first: Event, rest: Iterator[Event]) -> EventSourceResponse:
    """The SSE response: `id:`, `event:` and JSON `data:` per event."""

    async def body() -> AsyncIterator[dict[str, str]]:
        yield first.to_sse()
        async for event in iterate_in_threadpool(rest):
            yield event.to_sse()

    return EventSourceResponse(body(), ping=15)
