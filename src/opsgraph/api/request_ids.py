"""A request id per HTTP request: in the response's `X-Request-Id` header, in every error
body a client sees, and in the log lines written about the request.

A caller may send its own `X-Request-Id` (letters, digits, `.`, `_`, `-`; up to 64); anything
else gets a fresh one. Code running for the request (its threads included) reads it with
`current_request_id()`.
"""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "x-request-id"
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,64}")
_current: ContextVar[str | None] = ContextVar("opsgraph_request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request being served, None outside a request."""
    return _current.get()


class RequestIds:
    """ASGI middleware: picks the request id, exposes it, and returns it as a header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = dict(scope["headers"]).get(HEADER.encode(), b"").decode("latin-1")
        request_id = sent if _SAFE.fullmatch(sent) else uuid.uuid4().hex
        _current.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"],
                                      (HEADER.encode(), request_id.encode())]
            await send(message)

        await self.app(scope, receive, send_with_id)
