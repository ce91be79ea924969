"""A request id per HTTP request: in the response's `X-Request-Id` header, in every error
body a client sees, and in the log lines written about the request — its access line
(`opsgraph.access`: method, path, status, milliseconds) included.

A caller may send its own `X-Request-Id` (letters, digits, `.`, `_`, `-`; up to 64); anything
else gets a fresh one. Code running for the request (its threads included) reads it with
`current_request_id()`; the log handler puts it on every line (`opsgraph.telemetry`).
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from opsgraph.telemetry import context
from opsgraph.telemetry.traces import span

HEADER = "x-request-id"
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,64}")
access_log = logging.getLogger("opsgraph.access")
UNTRACED = frozenset({"/health"})
"""Paths without a span: the readiness check."""


def current_request_id() -> str | None:
    """The id of the request being served, None outside a request."""
    return context.request_id()


class RequestIds:
    """ASGI middleware: picks the request id, exposes it, returns it as a header, and
    writes the request's access line when its response ends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        sent = headers.get(HEADER.encode(), b"").decode("latin-1")
        request_id = sent if _SAFE.fullmatch(sent) else uuid.uuid4().hex
        context.set_request_id(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500  # what the server answers if the app fails before a response

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"],
                                      (HEADER.encode(), request_id.encode())]
            await send(message)

        try:
            if scope.get("path") in UNTRACED:
                await self.app(scope, receive, send_with_id)
            else:
                xray = headers.get(b"x-amzn-trace-id", b"").decode("latin-1")
                with span("request", xray=xray, method=str(scope.get("method")),
                          path=str(scope.get("path"))):
                    await self.app(scope, receive, send_with_id)
        finally:
            access_log.info("%s %s", scope.get("method"), scope.get("path"),
                            extra={"method": scope.get("method"), "path": scope.get("path"),
                                   "status": status,
                                   "ms": round((time.perf_counter() - started) * 1000, 1)})
