"""How fast and how many model calls: a rate limiter per model, a process-wide call cap.

- Each hosted model instance gets its own token-bucket rate limiter (`OPSGRAPH_MODEL_RPS`
  requests per second, bursts of twice that, starting full so the first call never waits).
- `model_call_slot()` caps concurrent model calls in this process
  (`OPSGRAPH_MODEL_CONCURRENCY`, default 4); the runtime wraps every call in it. One
  `threading.BoundedSemaphore` serves threads and event loops alike.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Final

from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from langchain_core.rate_limiters import InMemoryRateLimiter

_POLL_START_S: Final = 0.001
_POLL_MAX_S: Final = 0.02

_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None
_slot_count = 0


def model_rate_limiter() -> InMemoryRateLimiter:
    """A fresh rate limiter for one model instance, sized from `OPSGRAPH_MODEL_RPS`."""
    from langchain_core.rate_limiters import InMemoryRateLimiter

    rps = get_settings().model_rps
    burst = max(1.0, 2 * rps)
    limiter = InMemoryRateLimiter(requests_per_second=rps, check_every_n_seconds=0.05,
                                  max_bucket_size=burst)
    limiter.available_tokens = burst  # start full: the bucket otherwise starts empty
    return limiter


def model_call_limit() -> int:
    """How many model calls may run at once in this process."""
    _semaphore()
    return _slot_count


def _semaphore() -> threading.BoundedSemaphore:
    global _slots, _slot_count
    with _lock:
        if _slots is None:
            _slot_count = get_settings().model_concurrency
            _slots = threading.BoundedSemaphore(max(1, _slot_count))
        return _slots


@contextmanager
def model_call_slot() -> Iterator[None]:
    """Hold one of the process's model-call slots (blocks the thread until one is free)."""
    slots = _semaphore()
    slots.acquire()
    try:
        yield
    finally:
        slots.release()


@asynccontextmanager
async def model_call_slot_async() -> AsyncIterator[None]:
    """`model_call_slot` for coroutines: waits without blocking the event loop."""
    import asyncio  # not at module level: importing opsgraph.models stays cheap

    slots = _semaphore()
    pause = _POLL_START_S
    while not slots.acquire(blocking=False):
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL_MAX_S)
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
