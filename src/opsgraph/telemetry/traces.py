"""Spans through the OpenTelemetry API: request → run → node → task → model call / tool
→ store.

`OPSGRAPH_TRACES=xray` (the default on Lambda) sets up the SDK on the first span: a tracer
provider whose batch processor hands the spans to ADOT's OTLP-over-UDP exporter, addressed to
the X-Ray endpoint Lambda runs beside the function (`AWS_XRAY_DAEMON_ADDRESS`), and flushed
when a request's span ends (Lambda may freeze the process between requests). A request's
span continues the trace of its `X-Amzn-Trace-Id` header, so it hangs under Lambda's own
segment. The SDK and the exporter are the `lambda` extra (`aws-opentelemetry-distro`), which
the image installs: a container image takes no layers.

Off (the default locally) every span is a no-op at the cost of a function call, nothing of
OpenTelemetry is imported, and the store gets no command listener.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pymongo import monitoring

from opsgraph.settings import get_settings
from opsgraph.telemetry import context

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

log = logging.getLogger(__name__)

TRACER = "opsgraph"
XRAY_ADDRESS = "127.0.0.1:2000"
"""Where Lambda's X-Ray endpoint listens when `AWS_XRAY_DAEMON_ADDRESS` is not set."""
BATCH = 10
"""Spans per UDP datagram: ADOT's own batch size on Lambda (a datagram holds 64 KB)."""


@functools.cache
def provider() -> TracerProvider | None:
    """The process's tracer provider when traces are on and the SDK is installed, set up
    once; None otherwise (a missing SDK is said once in the log, not raised: a trace is
    never worth a failed request)."""
    if get_settings().traces == "off":
        return None
    try:
        # heavy: amazon (cold start)
        from amazon.opentelemetry.distro.otlp_udp_exporter import OTLPUdpSpanExporter
        from opentelemetry import trace  # heavy: opentelemetry (cold start)
        from opentelemetry.sdk.resources import Resource  # heavy: opentelemetry (cold start)
        from opentelemetry.sdk.trace import TracerProvider  # heavy: opentelemetry (cold start)
        from opentelemetry.sdk.trace.export import (  # heavy: opentelemetry (cold start)
            BatchSpanProcessor,
        )
    except ModuleNotFoundError as exc:
        log.warning("OPSGRAPH_TRACES=%s but the OpenTelemetry SDK is not installed (the "
                    "`lambda` extra): no spans are sent (%s)", get_settings().traces, exc)
        return None
    address = os.environ.get("AWS_XRAY_DAEMON_ADDRESS", XRAY_ADDRESS).split()[0]
    made = TracerProvider(resource=Resource.create({
        "service.name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "opsgraph"),
        "cloud.provider": "aws", "cloud.platform": "aws_lambda"}))
    made.add_span_processor(BatchSpanProcessor(OTLPUdpSpanExporter(endpoint=address),
                                               max_export_batch_size=BATCH))
    trace.set_tracer_provider(made)
    return made


@functools.cache
def _tracer() -> Tracer | None:
    made = provider()
    return None if made is None else made.get_tracer(TRACER)


@contextlib.contextmanager
def span(name: str, xray: str | None = None, **attributes: Any) -> Iterator[Any]:
    """A span named `name` around the block, with `attributes` and the ids of `context`;
    an exception is recorded on it and raised on. `xray` (a request's `X-Amzn-Trace-Id`,
    "" when it sent none) makes it a request's span: it continues that trace and flushes
    the spans when it ends. Off, the block just runs."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    attrs: dict[str, str | int | float | bool] = {f"opsgraph.{k}": v
                                                  for k, v in context.ids().items()}
    attrs.update({f"opsgraph.{k}": v for k, v in attributes.items()
                  if isinstance(v, str | int | float | bool)})
    parent = _xray_parent(xray) if xray else None
    try:
        with tracer.start_as_current_span(name, context=parent, attributes=attrs) as current:
            yield current
    finally:
        if xray is not None:
            made = provider()
            if made is not None:
                made.force_flush()


def _xray_parent(header: str) -> Any:
    """The trace context of an `X-Amzn-Trace-Id` header (Lambda's segment)."""
    # heavy: opentelemetry (cold start)
    from opentelemetry.propagators.aws import AwsXRayPropagator

    return AwsXRayPropagator().extract({"X-Amzn-Trace-Id": header})


def store_listeners() -> list[monitoring.CommandListener]:
    """pymongo command listeners that make a span of every store command (`find`,
    `update` ...), child of the span current in the thread that sent it; none when traces
    are off."""
    found = _tracer()
    if found is None:
        return []
    tracer: Tracer = found

    class StoreSpans(monitoring.CommandListener):
        def __init__(self) -> None:
            self._open: dict[tuple[int, object], Any] = {}

        def started(self, event: monitoring.CommandStartedEvent) -> None:
            current = tracer.start_span(
                f"store {event.command_name}",
                attributes={"db.system": "mongodb", "db.name": event.database_name,
                            "db.operation": event.command_name})
            self._open[(event.request_id, event.connection_id)] = current

        def _end(self, event: monitoring.CommandSucceededEvent
                 | monitoring.CommandFailedEvent) -> None:
            current = self._open.pop((event.request_id, event.connection_id), None)
            if current is not None:
                current.end()

        def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
            self._end(event)

        def failed(self, event: monitoring.CommandFailedEvent) -> None:
            self._end(event)

    return [StoreSpans()]
