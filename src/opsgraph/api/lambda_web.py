"""The container image's primary entry: the ASGI app under uvicorn, behind the Lambda Web
Adapter (`python -m opsgraph.api.lambda_web`).

The adapter is a Lambda extension in the image: it receives every invocation and forwards
it over HTTP to this server on 127.0.0.1, at the port it reads the same way (`AWS_LWA_PORT`,
else `PORT`, else 8080). A function-URL request becomes that request, its response streamed
back when `AWS_LWA_INVOKE_MODE=response_stream` (mangum buffers, so it cannot stream SSE).
Any other event — a schedule, an SQS batch — is POSTed, as its JSON, to the pass-through
path `/events`.

Trust: on every request it forwards, the adapter sets `x-amzn-request-context`, replacing
whatever a caller sent: the API Gateway / function-URL request context as a JSON object for
an HTTP request, JSON `null` for a pass-through event. So a POST to `/events` carrying
`null` came from AWS, not from a caller; `LambdaWebApp` marks exactly those requests
`INTERNAL_EVENT`, and the events route trusts them like the mangum handler's own events.
This holds only behind the adapter, which is why the server binds to the loopback address
and why `opsgraph serve` (no wrapper) never trusts the header.

Init work happens once, before the server answers the adapter's readiness check on
`/health`: settings (secrets read from Secrets Manager), the MongoDB client and every
index (`prepare`). The checkpointer's own indexes, TTL included, are ensured when the graph
is first built, once per process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from starlette.types import ASGIApp, Receive, Scope, Send

from opsgraph.api.app import app as opsgraph_app
from opsgraph.api.lambda_events import INTERNAL_EVENT
from opsgraph.api.numbers import ascii_number
from opsgraph.errors import ConfigurationError

HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
PASS_THROUGH_PATH: Final = "/events"
REQUEST_CONTEXT_HEADER: Final = b"x-amzn-request-context"
PASS_THROUGH_CONTEXT: Final = b"null"
"""The request context the adapter sends with a pass-through (non-HTTP) event."""
KEEP_ALIVE_S: Final = 10
"""Longer than the adapter's idle-connection timeout (4 s): the adapter closes first."""


def adapter_port(env: Mapping[str, str]) -> int:
    """The port the adapter forwards to: `AWS_LWA_PORT`, else `PORT`, else 8080."""
    raw = (env.get("AWS_LWA_PORT") or env.get("PORT") or str(DEFAULT_PORT)).strip()
    port = ascii_number(raw, maximum=65535)
    if not port:
        raise ConfigurationError(f"AWS_LWA_PORT: {raw!r} is not a port number")
    return port


def check_pass_through_path(env: Mapping[str, str]) -> None:
    """The adapter must pass events to the route that handles them."""
    path = env.get("AWS_LWA_PASS_THROUGH_PATH") or PASS_THROUGH_PATH
    if path != PASS_THROUGH_PATH:
        raise ConfigurationError(f"AWS_LWA_PASS_THROUGH_PATH: must be {PASS_THROUGH_PATH} "
                                 f"(the events route), got {path!r}")


def is_pass_through(scope: Scope) -> bool:
    """A POST to `/events` whose one request-context header is `null`: an AWS event."""
    if scope.get("method") != "POST" or scope.get("path") != PASS_THROUGH_PATH:
        return False
    contexts = [value for name, value in scope.get("headers", ())
                if name.lower() == REQUEST_CONTEXT_HEADER]
    return contexts == [PASS_THROUGH_CONTEXT]


class LambdaWebApp:
    """The app, with AWS's pass-through events marked `INTERNAL_EVENT` (nothing else)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {key: value for key, value in scope.items() if key != INTERNAL_EVENT}
            if is_pass_through(scope):
                scope[INTERNAL_EVENT] = True
        await self.inner(scope, receive, send)


app = LambdaWebApp(opsgraph_app)


def prepare() -> None:
    """Init work, once per process: settings (and their secrets), the MongoDB client, and
    every index of the store."""
    from opsgraph.bootstrap import prepare_store
    from opsgraph.settings import get_settings

    get_settings()
    prepare_store()


def uvicorn_options(env: Mapping[str, str]) -> dict[str, Any]:
    """How uvicorn serves behind the adapter."""
    return {"host": HOST, "port": adapter_port(env), "proxy_headers": False,
            "timeout_keep_alive": KEEP_ALIVE_S, "log_level": "warning"}


def main() -> None:
    """Check the adapter's settings, do the init work, then serve until Lambda stops us."""
    import uvicorn

    check_pass_through_path(os.environ)
    options = uvicorn_options(os.environ)
    prepare()
    uvicorn.run(app, **options)


if __name__ == "__main__":
    main()
