"""Model-call slots under overload: a freed slot goes to the call whose run started first,
for threads and coroutines alike, and a call that stops waiting gives its place back."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from opsgraph.models.limits import (
    model_call_slot,
    model_call_slot_async,
    model_calls_waiting,
    reset_model_call_slots,
    run_ticket,
)


@pytest.fixture(autouse=True)
def one_slot(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPSGRAPH_MODEL_CONCURRENCY", "1")
    reset_model_call_slots()
    yield
    monkeypatch.delenv("OPSGRAPH_MODEL_CONCURRENCY")
    reset_model_call_slots()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30  # a bound for a stuck test, not a measured time
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.005)


def test_run_tickets_grow_in_start_order() -> None:
    first, second = run_ticket(), run_ticket()
    assert first < second


def test_a_freed_slot_goes_to_the_earliest_run_not_the_earliest_caller() -> None:
    served: list[int] = []
    positions: dict[int, int] = {}

    def call(ticket: int) -> None:
        with model_call_slot(ticket, on_wait=lambda p: positions.__setitem__(ticket, p)):
            served.append(ticket)

    callers = []
    with model_call_slot():  # every slot is taken
        # runs started 10, 20, ..., 50 call in the opposite order: the latest first
        for n, ticket in enumerate([50, 40, 30, 20, 10], start=1):
            callers.append(threading.Thread(target=call, args=(ticket,)))
            callers[-1].start()
            wait_until(lambda n=n: model_calls_waiting() == n, f"{n} waiting calls")
        # each arrival started earlier than everyone queued, so it went to the front
        assert positions == {50: 1, 40: 1, 30: 1, 20: 1, 10: 1}
        late = threading.Thread(target=call, args=(35,))
        late.start()
        wait_until(lambda: model_calls_waiting() == 6, "the sixth waiting call")
        assert positions[35] == 4  # behind 10, 20 and 30
    for caller in [*callers, late]:
        caller.join(30)
    assert served == [10, 20, 30, 35, 40, 50]
    assert model_calls_waiting() == 0


def test_coroutines_and_threads_share_one_queue_in_start_order() -> None:
    served: list[int] = []
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with model_call_slot(0):
            holding.set()
            release.wait(30)

    async def call(ticket: int, queued: asyncio.Event) -> None:
        async with model_call_slot_async(ticket, on_wait=lambda _: queued.set()):
            served.append(ticket)
            await asyncio.sleep(0)

    async def main() -> None:
        calls = []
        for ticket in [7, 3, 5, 1]:
            queued = asyncio.Event()
            calls.append(asyncio.create_task(call(ticket, queued)))
            await queued.wait()
        assert model_calls_waiting() == 4
        release.set()  # the thread lets go; the coroutines are served by ticket
        await asyncio.wait_for(asyncio.gather(*calls), 30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    asyncio.run(main())
    holder.join(30)
    assert served == [1, 3, 5, 7]


def test_a_cancelled_wait_gives_its_place_back() -> None:
    async def main() -> None:
        async with model_call_slot_async(1):
            queued = asyncio.Event()
            waiting = model_call_slot_async(2, on_wait=lambda _: queued.set())
            waiter = asyncio.create_task(waiting.__aenter__())
            await queued.wait()
            assert model_calls_waiting() == 1
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert model_calls_waiting() == 0
        # the slot is free again: a new call takes it without waiting
        async with model_call_slot_async(3, on_wait=lambda p: pytest.fail("had to wait")):
            pass

    asyncio.run(main())


def test_a_failing_wait_callback_leaves_no_slot_behind() -> None:
    def boom(position: int) -> None:
        raise RuntimeError(f"cannot report position {position}")

    caught: list[BaseException] = []

    def call() -> None:
        try:
            with model_call_slot(2, on_wait=boom):
                pass
        except RuntimeError as exc:
            caught.append(exc)

    with model_call_slot(1):
        caller = threading.Thread(target=call)
        caller.start()
        caller.join(30)
    assert [str(e) for e in caught] == ["cannot report position 1"]
    assert model_calls_waiting() == 0
    with model_call_slot(3, on_wait=lambda p: pytest.fail("had to wait")):
        pass
