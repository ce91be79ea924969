"""The graph's stream iterated on a thread of its own (of the process's pool,
`engine.graph_threads`), so that the graph never waits for the run's consumer.

The runner stores each event before it hands it on (`engine.thread_log`), and a store
write is a round trip. Iterated in the caller's thread, LangGraph's loop would stand still
during each one: the next step of the graph is scheduled only when the caller asks for the
next chunk. Here a pump thread keeps the loop going and queues what it yields; the caller
takes the chunks in batches — all that is queued when it looks — so the events that
arrive together (a plan's `task_started`s) are stored in one write. Order is kept; an
exception of the graph is raised to the caller where the chunk would have come. `start`
starts the pump before the caller iterates (the runner starts the graph, then stores the
run's first event). When the caller stops early (it closed the iterator, or `close`), the
pump stops after the chunk it is waiting for, and closing waits for that: nothing of the
graph runs after its consumer has gone.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Generic, TypeVar

from opsgraph.engine.graph_threads import pool

T = TypeVar("T")
log = logging.getLogger(__name__)


class _End:
    """The pump's last item: the stream ended, or raised `error`."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class Pumped(Generic[T]):
    """`stream` iterated in a pump thread; iterate this for lists of its items."""

    def __init__(self, stream: Iterator[T]) -> None:
        self._stream = stream
        self._queue: queue.SimpleQueue[T | _End] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._context = contextvars.copy_context()  # the run's log ids and span, in the pump
        self._pumping: Future[None] | None = None

    def _pump(self) -> None:
        try:
            for item in self._stream:
                self._queue.put(item)
                if self._stop.is_set():
                    break
        except BaseException as exc:  # handed to the consumer, raised there
            self._queue.put(_End(exc))
            return
        finally:
            close = getattr(self._stream, "close", None)
            if close is not None:
                close()
        self._queue.put(_End())

    def start(self) -> None:
        """Start pumping now (iterating starts it too)."""
        if self._pumping is None:
            self._pumping = pool().submit(self._context.run, self._pump)

    def close(self) -> None:
        """Stop the pump after its current chunk and wait for it (nothing when it never
        started or has ended)."""
        self._stop.set()
        if self._pumping is not None and (failed := self._pumping.exception()) is not None:
            log.error("closing the graph's stream failed", exc_info=failed)

    def __iter__(self) -> Iterator[list[T]]:
        self.start()
        try:
            while True:
                batch = [self._queue.get()]
                while not isinstance(batch[-1], _End):
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                end = batch.pop() if isinstance(batch[-1], _End) else None
                items: list[T] = [item for item in batch if not isinstance(item, _End)]
                if items:
                    yield items
                if isinstance(end, _End):
                    if end.error is not None:
                        raise end.error
                    return
        finally:
            self.close()
