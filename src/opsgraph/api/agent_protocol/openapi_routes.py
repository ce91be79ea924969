"""The routes of opsgraph's other faces (the Agent Protocol, AG-UI, MCP's
protected-resource metadata) as `GET /openapi.json` describes them (`api.openapi`)."""

from __future__ import annotations

from pydantic import BaseModel

from opsgraph.api.agent_protocol.bodies import (
    AssistantSearch,
    HistoryQuery,
    RunCreate,
    ThreadCreate,
    ThreadSearch,
)
from opsgraph.api.agent_protocol.response_models import (
    Assistant,
    Assistants,
    ProtocolRun,
    ProtocolThread,
    ProtocolThreads,
    ResourceMetadata,
    ServerInfo,
    ThreadState,
    ThreadStates,
    ThreadValues,
)
from opsgraph.api.mcp_spec import METADATA_PATH
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN

_THREAD = Param("thread_id", "path", {"type": "string", "pattern": THREAD_ID_PATTERN},
                "The thread, as `POST /threads` or a run named it.")
_RUN_ID = Param("run_id", "path", {"type": "string"}, "The run, as its `metadata` part named it.")
_RUN = "/threads/{thread_id}/runs/{run_id}"
_RUN_RESPONSES: dict[str, tuple[type[BaseModel], ...]] = {
    "": (ProtocolRun,), "/stream": (), "/wait": (ThreadValues,)}


def protocol_routes() -> tuple[ApiRoute, ...]:
    """Every Agent Protocol route (langgraph-sdk's names and bodies), AG-UI's and the MCP
    metadata."""
    from ag_ui.core import RunAgentInput

    assistant = Param("assistant_id", "path", {"type": "string"}, "`opsgraph`.")
    return (
        ApiRoute("GET", "/info", "Agent Protocol: the server's version and features", "open",
                 response=(ServerInfo,)),
        ApiRoute("POST", "/assistants/search", "Agent Protocol: the tenant's assistant",
                 "visitor", request=(AssistantSearch,), body_required=False,
                 response=(Assistants,)),
        ApiRoute("GET", "/assistants/{assistant_id}", "Agent Protocol: one assistant",
                 "visitor", params=(assistant,), response=(Assistant,)),
        ApiRoute("POST", "/threads", "Agent Protocol: a new thread of the caller's",
                 "bearer", request=(ThreadCreate,), body_required=False, errors=(403, 409),
                 response=(ProtocolThread,)),
        ApiRoute("POST", "/threads/search", "Agent Protocol: the threads the caller may "
                 "read, by status and metadata", "visitor", request=(ThreadSearch,),
                 body_required=False, response=(ProtocolThreads,)),
        ApiRoute("GET", "/threads/{thread_id}", "Agent Protocol: one thread", "bearer",
                 errors=(400,), params=(_THREAD,), response=(ProtocolThread,)),
        ApiRoute("GET", "/threads/{thread_id}/state", "Agent Protocol: the thread's state "
                 "and pending interrupts (HumanInterrupts)", "bearer", errors=(400,),
                 params=(_THREAD,), response=(ThreadState,)),
        ApiRoute("GET", "/threads/{thread_id}/history", "Agent Protocol: the thread's "
                 "states, newest first", "bearer", errors=(400,), response=(ThreadStates,),
                 params=(
                     _THREAD, Param("limit", "query", {"type": "integer", "minimum": 1,
                                                       "maximum": 1000}, "At most this many."))),
        ApiRoute("POST", "/threads/{thread_id}/history", "Agent Protocol: the thread's "
                 "states, newest first", "bearer", request=(HistoryQuery,),
                 body_required=False, params=(_THREAD,), response=(ThreadStates,)),
        *(ApiRoute("POST", f"/threads/{{thread_id}}/runs{tail}", summary, "bearer",
                   body="parts" if tail == "/stream" else "json", request=(RunCreate,),
                   errors=(403, 409, 410, 429), params=(_THREAD,),
                   response=_RUN_RESPONSES[tail])
          for tail, summary in (
              ("", "Agent Protocol: start a run (a message, or `command.resume` deciding "
                   "the pending cards); it goes on by itself"),
              ("/stream", "Agent Protocol: a run, streamed as it goes"),
              ("/wait", "Agent Protocol: a run; the thread's values once it finished"))),
        ApiRoute("GET", _RUN, "Agent Protocol: one run", "bearer", errors=(400,),
                 params=(_THREAD, _RUN_ID), response=(ProtocolRun,)),
        ApiRoute("GET", f"{_RUN}/join", "Agent Protocol: the thread's values once the run "
                 "finished", "bearer", errors=(400,), params=(_THREAD, _RUN_ID),
                 response=(ThreadValues,)),
        ApiRoute("GET", f"{_RUN}/stream", "Agent Protocol: the run's stored parts, then live",
                 "bearer", body="parts", errors=(400,), params=(_THREAD, _RUN_ID)),
        ApiRoute("POST", f"{_RUN}/cancel", "Agent Protocol: stop a run in flight at its next "
                 "step (its undecided cards withdrawn); 409 when it already finished", "bearer",
                 ok=202, response=(ProtocolRun,), errors=(400, 403, 409),
                 params=(_THREAD, _RUN_ID,
                         Param("wait", "query", {"type": "integer", "enum": [0, 1]},
                               "1: answer once the run has stopped (200)"),
                         Param("action", "query", {"type": "string", "enum": ["interrupt"]},
                               "only `interrupt`: stop the run where it is"))),
        ApiRoute("POST", "/ag-ui", "AG-UI: a RunAgentInput run (or resumed) as AG-UI events",
                 "bearer", body="parts", request=(RunAgentInput,), errors=(403, 409, 410, 429)),
        ApiRoute("GET", METADATA_PATH, "MCP: the user link's protected-resource metadata "
                 "(RFC 9728): how to get and send a token", "open",
                 response=(ResourceMetadata,)),
        ApiRoute("GET", METADATA_PATH + "/{link}", "MCP: a link's protected-resource "
                 "metadata (`mcp/user`, `mcp/admin`)", "open", errors=(404,),
                 response=(ResourceMetadata,), params=(
                     Param("link", "path", {"type": "string", "enum": ["mcp/user",
                                                                       "mcp/admin"]},
                           "The MCP link."),)),
    )
