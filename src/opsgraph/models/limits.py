"""How fast and how many model calls: a rate limiter per model, a process-wide call cap.

- Each hosted model instance gets its own token-bucket rate limiter (`OPSGRAPH_MODEL_RPS`
  requests per second, bursts of twice that, starting full so the first call never waits).
- `model_call_slot()` caps concurrent model calls in this process
  (`OPSGRAPH_MODEL_CONCURRENCY`, default 4); the runtime wraps every call in it. Under
  overload the slots are fair: a freed slot is handed to the waiting call whose run
  started first (its `run_ticket()`), not to whichever thread or coroutine asks next, so
  a run that started early finishes early instead of every run in a burst finishing late.
  Threads and event loops wait in the same queue; a waiting call is told its position.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from langchain_core.rate_limiters import InMemoryRateLimiter

OnWait = Callable[[int], None]
"""Called once when a call has to wait, with its position in the queue (1 = next)."""

_tickets = itertools.count(1)


def run_ticket() -> int:
    """A number that orders runs by when they started (smaller = earlier)."""
    return next(_tickets)


def model_rate_limiter() -> InMemoryRateLimiter:
    """A fresh rate limiter for one model instance, sized from `OPSGRAPH_MODEL_RPS`."""
    # heavy: langchain_core (cold start)
    from langchain_core.rate_limiters import InMemoryRateLimiter

    rps = get_settings().model_rps
    burst = max(1.0, 2 * rps)
    limiter = InMemoryRateLimiter(requests_per_second=rps, check_every_n_seconds=0.05,
                                  max_bucket_size=burst)
    limiter.available_tokens = burst  # start full: the bucket otherwise starts empty
    return limiter


@dataclass(order=True)
class _Waiter:
    ticket: int
    arrival: int
    wake: Callable[[], None] = field(compare=False)
    granted: bool = field(default=False, compare=False)
    gone: bool = field(default=False, compare=False)


class ModelSlots:
    """`count` slots; a freed slot goes straight to the waiter with the smallest ticket."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._free = count
        self._queue: list[_Waiter] = []
        self._waiting = 0
        self._arrivals = itertools.count()
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """Calls queued for a slot right now."""
        with self._lock:
            return self._waiting

    def _enqueue(self, ticket: int, wake: Callable[[], None]) -> tuple[_Waiter | None, int]:
        """Take a free slot (None, 0), or join the queue (waiter, position)."""
        with self._lock:
            if self._free > 0:
                self._free -= 1
                return None, 0
            waiter = _Waiter(ticket, next(self._arrivals), wake)
            ahead = sum(1 for w in self._queue if not w.gone and w < waiter)
            heapq.heappush(self._queue, waiter)
            self._waiting += 1
            return waiter, ahead + 1

    def _abandon(self, waiter: _Waiter) -> None:
        """A waiter that stops waiting (cancelled, interrupted, its `on_wait` failed): out of the
        queue, or — when the slot reached it meanwhile — the slot passed on."""
        with self._lock:
            handed = waiter.granted
            if not handed:
                waiter.gone = True
                self._waiting -= 1
        if handed:
            self.release()

    def release(self) -> None:
        """Give the slot to the first live waiter, or free it."""
        with self._lock:
            while self._queue:
                waiter = heapq.heappop(self._queue)
                if waiter.gone:
                    continue
                waiter.granted = True
                self._waiting -= 1
                break
            else:
                self._free += 1
                return
        try:
            waiter.wake()
        except RuntimeError:  # its event loop has closed: the next waiter gets the slot
            self.release()

    def acquire(self, ticket: int, on_wait: OnWait | None = None) -> None:
        """Block this thread until it holds a slot."""
        granted = threading.Event()
        waiter, position = self._enqueue(ticket, granted.set)
        if waiter is None:
            return
        try:
            if on_wait is not None:
                on_wait(position)
            granted.wait()
        except BaseException:  # `on_wait` failed, or the wait was interrupted
            self._abandon(waiter)
            raise

    async def acquire_async(self, ticket: int, on_wait: OnWait | None = None) -> None:
        """Wait (without blocking the event loop) until this coroutine holds a slot."""
        loop = asyncio.get_running_loop()
        granted = loop.create_future()

        def grant() -> None:
            if not granted.done():
                granted.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(grant)

        waiter, position = self._enqueue(ticket, wake)
        if waiter is None:
            return
        try:
            if on_wait is not None:
                on_wait(position)
            await granted
        except BaseException:  # cancelled while waiting, or `on_wait` failed
            self._abandon(waiter)
            raise


_lock = threading.Lock()
_slots: ModelSlots | None = None


def _model_slots() -> ModelSlots:
    global _slots
    with _lock:
        if _slots is None:
            _slots = ModelSlots(max(1, get_settings().model_concurrency))
        return _slots


def model_call_limit() -> int:
    """How many model calls may run at once in this process."""
    return _model_slots().count


def model_calls_waiting() -> int:
    """How many model calls wait for a slot in this process right now."""
    return _model_slots().waiting


@contextmanager
def model_call_slot(ticket: int | None = None, on_wait: OnWait | None = None
                    ) -> Iterator[None]:
    """Hold one of the process's model-call slots (blocks the thread until one is free).

    `ticket` is the run's (`run_ticket()` when it started); without one the call queues in
    the order it arrives.
    """
    slots = _model_slots()
    slots.acquire(run_ticket() if ticket is None else ticket, on_wait)
    try:
        yield
    finally:
        slots.release()


@asynccontextmanager
async def model_call_slot_async(ticket: int | None = None, on_wait: OnWait | None = None
                                ) -> AsyncIterator[None]:
    """`model_call_slot` for coroutines: waits without blocking the event loop."""
    slots = _model_slots()
    await slots.acquire_async(run_ticket() if ticket is None else ticket, on_wait)
    try:
        yield
    finally:
        slots.release()


def reset_model_call_slots() -> None:
    """Read `OPSGRAPH_MODEL_CONCURRENCY` again on next use (tests; no call may be in flight)."""
    global _slots
    get_settings.cache_clear()
    with _lock:
        _slots = None
