"""A tenant's harness budget of seconds, bounding a step in flight.

The harness node checks a version's budget between steps; a model call can take longer
than the whole budget (a slow model, a scripted delay), so while a tenant's version runs
every model call gets a deadline: what is left of `budget.seconds` (the seconds of the
message's earlier runs counted, never a wait for approval). Past it the run ends with
`budget_exceeded`; the call is left to finish on its own thread and its reply is unused.
The built-in harness, and a run that fell back to it, have no deadline: the safety net
has no cap.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, TypeVar, cast

from opsgraph.errors import RunAborted

T = TypeVar("T")
_END = object()


class BudgetExceeded(RunAborted):
    """A run went past its harness version's budget."""

    code = "budget_exceeded"


@dataclass(frozen=True)
class SecondsBudget:
    """The budget of seconds of the harness version a run executes."""

    version: int
    seconds: int


class Clock(Protocol):
    """What the budget reads of a run (`engine.context.RunContext` is one)."""

    spent_s: float
    started_at: datetime
    seconds_budget: SecondsBudget | None


def seconds_used(ctx: Clock) -> float:
    """Active seconds of the message so far: its earlier runs and this one."""
    return ctx.spent_s + (datetime.now(UTC) - ctx.started_at).total_seconds()


def _left(ctx: Clock, where: str) -> float | None:
    """Seconds left for a call (None: no deadline); `BudgetExceeded` when none are."""
    budget = ctx.seconds_budget
    if budget is None:
        return None
    left = budget.seconds - seconds_used(ctx)
    if left <= 0:
        raise _over(budget, where)
    return left


def _over(budget: SecondsBudget, where: str) -> BudgetExceeded:
    return BudgetExceeded(f"harness version {budget.version}: the model call of {where} "
                          f"was still running at its budget of {budget.seconds} seconds",
                          cap="seconds")


def _on_thread(work: Callable[[], None], where: str) -> None:
    """Run `work` on a daemon thread of its own, in a copy of this thread's context (the
    run's config and callbacks live in context variables)."""
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(work,), daemon=True,
                     name=f"model call {where}").start()


def call_within_budget(ctx: Clock, where: str, call: Callable[[], T]) -> T:
    """`call()`, bounded by what is left of the run's budget of seconds."""
    left = _left(ctx, where)
    if left is None:
        return call()
    done: Future[T] = Future()

    def work() -> None:
        try:
            done.set_result(call())
        except BaseException as exc:  # handed to the caller, whatever it is
            done.set_exception(exc)

    _on_thread(work, where)
    try:
        return done.result(timeout=left)
    except TimeoutError:
        assert ctx.seconds_budget is not None
        raise _over(ctx.seconds_budget, where) from None


def stream_within_budget(ctx: Clock, where: str,
                         stream: Callable[[], Iterator[T]]) -> Iterator[T]:
    """The items of `stream()`, each bounded by what is left of the budget of seconds."""
    if _left(ctx, where) is None:
        yield from stream()
        return
    items: queue.Queue[object] = queue.Queue()

    def work() -> None:
        try:
            for item in stream():
                items.put(item)
        except BaseException as exc:  # handed to the caller, whatever it is
            items.put(exc)
        items.put(_END)

    _on_thread(work, where)
    while True:
        left = _left(ctx, where)
        try:
            item = items.get(timeout=left)
        except queue.Empty:
            assert ctx.seconds_budget is not None
            raise _over(ctx.seconds_budget, where) from None
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield cast(T, item)
