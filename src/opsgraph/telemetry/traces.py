"""Spans through the OpenTelemetry API: request → run → node → task → model call / tool
→ store. The API alone records nothing (no SDK, no exporter: every span is a no-op, at
the cost of a function call); on Lambda the ADOT layer installs the SDK and exports them
to X-Ray. The API is imported on the first span, never on `/health`'s path, and not at
all without an SDK.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from opsgraph.telemetry import context

TRACER = "opsgraph"


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span named `name` around the block, with `attributes` and the ids of `context`;
    an exception is recorded on it and raised on. Without an SDK the block just runs: the
    API would record nothing, and the run's hot path pays nothing for it."""
    if not sdk_installed():
        yield None
        return
    from opentelemetry import trace

    attrs: dict[str, str | int | float | bool] = {f"opsgraph.{k}": v
                                                  for k, v in context.ids().items()}
    attrs.update({f"opsgraph.{k}": v for k, v in attributes.items()
                  if isinstance(v, str | int | float | bool)})
    with trace.get_tracer(TRACER).start_as_current_span(name, attributes=attrs) as current:
        yield current


@functools.cache
def sdk_installed() -> bool:
    """Whether an OpenTelemetry SDK is importable (ADOT on Lambda), looked up once: without
    one every span is a no-op, and the store's command spans are not worth a listener."""
    import importlib.util

    try:
        return importlib.util.find_spec("opentelemetry.sdk") is not None
    except ModuleNotFoundError:  # no opentelemetry package at all
        return False


def store_listeners() -> list[Any]:
    """pymongo command listeners that make a span of every store command (`find`,
    `update` ...), child of the span current in the thread that sent it; none without an
    SDK."""
    if not sdk_installed():
        return []
    from pymongo import monitoring

    class StoreSpans(monitoring.CommandListener):
        def __init__(self) -> None:
            self._open: dict[tuple[int, object], Any] = {}

        def started(self, event: monitoring.CommandStartedEvent) -> None:
            from opentelemetry import trace

            current = trace.get_tracer(TRACER).start_span(
                f"store {event.command_name}",
                attributes={"db.system": "mongodb", "db.name": event.database_name,
                            "db.operation": event.command_name})
            self._open[(event.request_id, event.connection_id)] = current

        def _end(self, event: Any) -> None:
            current = self._open.pop((event.request_id, event.connection_id), None)
            if current is not None:
                current.end()

        def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
            self._end(event)

        def failed(self, event: monitoring.CommandFailedEvent) -> None:
            self._end(event)

    return [StoreSpans()]
