"""Runs: `POST /v1/runs` (a message, its events as server-sent events) and
`POST /v1/runs/{run_id}/cancel`, and `start_run`, the one admission of a run that every
entry uses — this route, MCP `ask` (`api.mcp_user`) and the Agent Protocol's and AG-UI's
runs (`api.agent_protocol.runs`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.limits import RUN_SLOTS, check_budget, check_message, metered
from opsgraph.api.principals import VISITOR_HEADER, VISITOR_SESSION, caller
from opsgraph.api.request_models import RunRequest
from opsgraph.api.route_doc import TENANT, ApiRoute, Param
from opsgraph.api.threads import require_thread
from opsgraph.models import demo
from opsgraph.principal import Principal

if TYPE_CHECKING:
    from opsgraph.engine.events import Event


def start_run(principal: Principal, message: str, thread_id: str | None = None, *,
              thread_checked: bool = False) -> Iterator[Event]:
    """The run of `message`, admitted: the message cap, the thread (one the caller
    continues, unless `thread_checked`: the entry read it itself, as the Agent Protocol's
    `POST /threads` made it), today's model budget and a run slot (given back by `metered`
    when the stream ends, or here if the run never starts); in demo mode an example runs
    on its own scripted model. The events are metered: the run's model calls count."""
    # heavy: langgraph (cold start)
    from opsgraph.engine.runner import stream_run

    check_message(message)
    if thread_id is not None and not thread_checked:
        require_thread(principal, thread_id)
    check_budget(principal)
    RUN_SLOTS.take(principal)
    try:
        model = demo.script_for(principal, message)  # None unless an example in demo mode
        return metered(stream_run(principal, message, thread_id=thread_id, model=model),
                       principal, slot=True)
    except BaseException:
        RUN_SLOTS.give_back(principal)
        raise


async def runs(request: Request) -> Response:
    from opsgraph.api.sse import event_stream, prime  # heavy: sse_starlette (cold start)

    principal = await caller(request)
    body = parse_body(await request.body(), RunRequest)
    events = await run_in_threadpool(start_run, principal, body.message, body.thread_id)
    first, rest = await prime(events)
    return event_stream(first, rest)


async def cancel_run(request: Request) -> Response:
    """202 `{run_id, status: "cancelling"}`: the run stops at its next step; 409 when it
    already finished."""
    from opsgraph.engine.cancel import request_cancel  # heavy: langgraph (cold start)

    principal = await caller(request)
    body = await run_in_threadpool(request_cancel, principal, request.path_params["run_id"])
    return JSONResponse(body, status_code=202)


VISITOR = Param(VISITOR_HEADER, "header", {"type": "string", "pattern":
                                           f"^{VISITOR_SESSION.pattern}$"},
                "A visitor's own session secret (no token): the visitor continues only the "
                "threads this session started; without it, none.")
ROUTES = (
    ApiRoute("POST", "/v1/runs", runs, "Run a message: the run's events as they happen",
             "visitor", body="sse", request=(RunRequest,), errors=(403, 409, 429),
             params=(TENANT, VISITOR)),
    ApiRoute("POST", "/v1/runs/{run_id}/cancel", cancel_run,
             "Stop a run in flight at its next step (`run_finished {status: cancelled}`, "
             "its undecided cards withdrawn); 409 when it already finished", "bearer",
             ok=202, response=("RunCancelling",), errors=(403, 409), params=(
                 Param("run_id", "path", {"type": "string"},
                       "The run, as `run_started` named it."),)),
)
