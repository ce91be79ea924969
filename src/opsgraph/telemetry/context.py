"""The ids a log line carries, in context variables: the request's (set by the HTTP
middleware) and the run's (tenant, thread, run; set by the runner while a run goes on).

Context variables follow a request into the threads that copy its context (the run's
worker thread, LangGraph's executor), and never leak between concurrent requests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

FIELDS = ("request_id", "tenant_id", "user_id", "thread_id", "run_id")
"""Every id a line may carry, in the order a text line shows them."""
_request_id: ContextVar[str | None] = ContextVar("opsgraph_request_id", default=None)
_run: ContextVar[dict[str, str] | None] = ContextVar("opsgraph_run_ids", default=None)


def request_id() -> str | None:
    """The id of the request being served, None outside a request."""
    return _request_id.get()


def set_request_id(value: str) -> None:
    """The request id of everything that runs in this context from now on."""
    _request_id.set(value)


def ids() -> dict[str, str]:
    """The ids known here: request, tenant, user, thread, run (those that are set)."""
    found = dict(_run.get() or {})
    rid = _request_id.get()
    if rid is not None:
        found["request_id"] = rid
    return found


@contextlib.contextmanager
def bound(**fields: str) -> Iterator[None]:
    """Add run ids (`tenant_id`, `thread_id`, `run_id`, ...) to every line written inside."""
    token = _run.set({**(_run.get() or {}), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        # a generator closed from another context cannot reset: its context goes anyway
        with contextlib.suppress(ValueError):
            _run.reset(token)
