"""The one way an error reaches an HTTP client (docs/reference.md, HTTP):

    {"error": {"code", "message", "request_id", "detail"?}}

with the request id of `X-Request-Id`; every 422 has one shape, code `invalid` and
`errors`: `[{field, message}]` (its `message` joins them); a 429 says `Retry-After`.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from opsgraph.api.request_ids import current_request_id
from opsgraph.errors import OpsgraphError, TooManyRequests, Unprocessable
from opsgraph.telemetry import metrics


def error_body(exc: OpsgraphError) -> dict[str, Any]:
    """The JSON body of `exc` for this request."""
    body = exc.to_json()
    error = body["error"]
    error["request_id"] = current_request_id()
    if isinstance(exc, Unprocessable):
        detail = dict(exc.detail)
        errors = detail.pop("errors", None) or [
            {"field": str(detail.get("field") or "body"), "message": exc.message}]
        error["errors"] = errors
        error.pop("detail", None)
        if detail:
            error["detail"] = detail
    return body


def error_response(exc: OpsgraphError) -> JSONResponse:
    """The response for `exc`: its status, its body, `Retry-After` for a 429."""
    headers = None
    if isinstance(exc, TooManyRequests):
        headers = {"Retry-After": str(exc.retry_after_s)}
        metrics.count("TooManyRequests", {"Limit": str(exc.detail.get("limit", "other"))})
    return JSONResponse(error_body(exc), status_code=exc.status, headers=headers)
