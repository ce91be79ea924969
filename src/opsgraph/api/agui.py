"""`POST /ag-ui`: a `RunAgentInput` in, the run as AG-UI events out (server-sent events,
each `data:` one event as `ag-ui-protocol`'s encoder writes it).

Another face of the same runs (`api.agent_protocol.runs.start_events`): the input's last
user message runs on its thread (made for the caller when new, as `POST /threads` makes
one; 404 when it is someone else's), under every check `POST /v1/runs` makes; an input
with `resume` entries decides the cards those interrupts carry through the one decision
path instead (`payload`: a HumanResponse; `status: cancelled` rejects the card).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from opsgraph.api.agent_protocol.bodies import ResumeCommand, RunCreate, ThreadCreate
from opsgraph.api.agent_protocol.runs import start_events
from opsgraph.api.agent_protocol.threads import create_thread
from opsgraph.api.agui_events import AguiRun
from opsgraph.api.bodies import parse_body
from opsgraph.api.principals import caller
from opsgraph.api.request_ids import current_request_id
from opsgraph.api.route_doc import ApiRoute
from opsgraph.api.threads import readable
from opsgraph.engine.thread_ids import checked_thread_id
from opsgraph.errors import BadInput
from opsgraph.principal import Principal

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput


def _message(body: RunAgentInput) -> str:
    """The text of the input's last user message."""
    for message in reversed(body.messages):
        if getattr(message, "role", None) != "user":
            continue
        content = message.content
        text = content if isinstance(content, str) else " ".join(
            str(getattr(part, "text", "")) for part in content or [] if not isinstance(part, str))
        if text.strip():
            return text
    raise BadInput("messages: needs a user message with text")


def _run_body(body: RunAgentInput) -> Any:
    """The input as the Agent Protocol's run body: a message, or decisions by interrupt."""
    if body.resume:
        resume = {e.interrupt_id: ({"type": "ignore", "args": None}
                                   if e.status == "cancelled" else e.payload)
                  for e in body.resume}
        return RunCreate(command=ResumeCommand(resume=resume), stream_mode=[])
    return RunCreate(input={"messages": [{"type": "human", "content": _message(body)}]},
                     stream_mode=[])


def _start(principal: Principal, body: RunAgentInput) -> Any:
    checked_thread_id(body.thread_id, "threadId")
    create_thread(principal, ThreadCreate(thread_id=body.thread_id, if_exists="do_nothing"))
    readable(principal, body.thread_id)
    events, _ = start_events(principal, body.thread_id, _run_body(body))
    return events


async def run_agent(request: Request) -> Response:
    """`POST /ag-ui`."""
    from ag_ui.core import RunAgentInput  # heavy: ag_ui (cold start)
    from ag_ui.encoder import EventEncoder  # heavy: ag_ui (cold start)
    from sse_starlette.sse import EventSourceResponse  # heavy: sse_starlette (cold start)

    from opsgraph.api.sse import DONE, for_client, prime  # heavy: sse_starlette (cold start)

    principal = await caller(request)
    body = parse_body(await request.body(), RunAgentInput)
    first, rest = await prime(await run_in_threadpool(_start, principal, body))
    translator = AguiRun(principal, body.thread_id, body.run_id)
    encoder, request_id = EventEncoder(), current_request_id()

    async def stream() -> AsyncIterator[dict[str, str]]:
        item = first
        while item is not DONE:
            if isinstance(item, BaseException):
                raise item
            for event in await run_in_threadpool(translator.events, for_client(item,
                                                                               request_id)):
                # the encoder's own framing is `data: <json>\n\n`: sse-starlette frames it
                yield {"data": encoder.encode(event)[len("data: "):].rstrip("\n")}
            item = await run_in_threadpool(rest.next_item)

    return EventSourceResponse(stream(), ping=15)


ROUTES = (
    ApiRoute("POST", "/ag-ui", run_agent,
             "AG-UI: a RunAgentInput run (or resumed) as AG-UI events", "bearer",
             body="parts", request=("RunAgentInput",), errors=(403, 409, 410, 429)),
)
