"""AWS Lambda entry point (`opsgraph.api.lambda_handler.handler`).

HTTP events (API Gateway, function URLs) go through mangum to the ASGI app; everything
else (keep-warm, EventBridge schedules) goes straight to the event router, so a keep-warm
ping never builds a request or imports the graph. Streaming function URLs use the same app
under uvicorn behind the Lambda Web Adapter instead (mangum buffers responses).
"""

from __future__ import annotations

from typing import Any

from mangum import Mangum

from opsgraph.api.app import app
from opsgraph.api.lambda_events import handle_event
from opsgraph.errors import OpsgraphError
from opsgraph.telemetry.logs import configure_logging

_http = Mangum(app, lifespan="off")


def _is_http(event: dict[str, Any]) -> bool:
    return "requestContext" in event and ("httpMethod" in event or "http" in event.get(
        "requestContext", {}))


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Route one Lambda invocation."""
    configure_logging()  # once per process: JSON on Lambda (OPSGRAPH_LOG_FORMAT)
    if _is_http(event):
        response: dict[str, Any] = _http(event, context)
        return response
    try:
        return handle_event(event)
    except OpsgraphError as exc:
        return {"ok": False, **exc.to_json()}
