"""The Agent Protocol (the LangGraph Agent Server API that langgraph-sdk, Agent Chat UI and
Agent Inbox call): another face of opsgraph's runs, threads and decisions, at the root path.
`ROUTES`: its routes, langgraph-sdk's names and bodies.
"""

from __future__ import annotations

from opsgraph.api.agent_protocol import assistants, runs, threads
from opsgraph.api.agent_protocol.bodies import (
    AssistantSearch,
    HistoryQuery,
    RunCreate,
    ThreadCreate,
    ThreadSearch,
)
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN

__all__ = ["ROUTES"]

_THREAD = Param("thread_id", "path", {"type": "string", "pattern": THREAD_ID_PATTERN},
                "The thread, as `POST /threads` or a run named it.")
_RUN_ID = Param("run_id", "path", {"type": "string"}, "The run, as its `metadata` part named it.")
_ASSISTANT = Param("assistant_id", "path", {"type": "string"}, "`opsgraph`.")
_RUN = "/threads/{thread_id}/runs/{run_id}"
_HISTORY = "Agent Protocol: the thread's states, newest first"
ROUTES = (
    ApiRoute("GET", "/info", assistants.server_info,
             "Agent Protocol: the server's version and features", "open",
             response=("ServerInfo",)),
    ApiRoute("POST", "/assistants/search", assistants.assistants_search,
             "Agent Protocol: the tenant's assistant", "visitor", request=(AssistantSearch,),
             body_required=False, response=("Assistants",)),
    ApiRoute("GET", "/assistants/{assistant_id}", assistants.assistant_get,
             "Agent Protocol: one assistant", "visitor", params=(_ASSISTANT,),
             response=("Assistant",)),
    ApiRoute("POST", "/threads", threads.threads_create,
             "Agent Protocol: a new thread of the caller's", "bearer", request=(ThreadCreate,),
             body_required=False, errors=(403, 409), response=("ProtocolThread",)),
    ApiRoute("POST", "/threads/search", threads.threads_search,
             "Agent Protocol: the threads the caller may read, by status and metadata",
             "visitor", request=(ThreadSearch,), body_required=False,
             response=("ProtocolThreads",)),
    ApiRoute("GET", "/threads/{thread_id}", threads.thread_get, "Agent Protocol: one thread",
             "bearer", errors=(400,), params=(_THREAD,), response=("ProtocolThread",)),
    ApiRoute("GET", "/threads/{thread_id}/state", threads.thread_get_state,
             "Agent Protocol: the thread's state and pending interrupts (HumanInterrupts)",
             "bearer", errors=(400,), params=(_THREAD,), response=("ThreadState",)),
    ApiRoute("GET", "/threads/{thread_id}/history", threads.thread_history, _HISTORY, "bearer",
             errors=(400,), response=("ThreadStates",), params=(
                 _THREAD, Param("limit", "query", {"type": "integer", "minimum": 1,
                                                   "maximum": 1000}, "At most this many."))),
    ApiRoute("POST", "/threads/{thread_id}/history", threads.thread_history, _HISTORY,
             "bearer", request=(HistoryQuery,), body_required=False, params=(_THREAD,),
             response=("ThreadStates",)),
    ApiRoute("POST", "/threads/{thread_id}/runs", runs.runs_create,
             "Agent Protocol: start a run (a message, or `command.resume` deciding the "
             "pending cards); it goes on by itself", "bearer", request=(RunCreate,),
             errors=(403, 409, 410, 429), params=(_THREAD,), response=("ProtocolRun",)),
    ApiRoute("POST", "/threads/{thread_id}/runs/stream", runs.runs_stream,
             "Agent Protocol: a run, streamed as it goes", "bearer", body="parts",
             request=(RunCreate,), errors=(403, 409, 410, 429), params=(_THREAD,)),
    ApiRoute("POST", "/threads/{thread_id}/runs/wait", runs.runs_wait,
             "Agent Protocol: a run; the thread's values once it finished", "bearer",
             request=(RunCreate,), errors=(403, 409, 410, 429), params=(_THREAD,),
             response=("ThreadValues",)),
    ApiRoute("GET", _RUN, runs.run_get, "Agent Protocol: one run", "bearer", errors=(400,),
             params=(_THREAD, _RUN_ID), response=("ProtocolRun",)),
    ApiRoute("GET", f"{_RUN}/join", runs.run_join,
             "Agent Protocol: the thread's values once the run finished", "bearer",
             errors=(400,), params=(_THREAD, _RUN_ID), response=("ThreadValues",)),
    ApiRoute("GET", f"{_RUN}/stream", runs.run_stream,
             "Agent Protocol: the run's stored parts, then live", "bearer", body="parts",
             errors=(400,), params=(_THREAD, _RUN_ID)),
    ApiRoute("POST", f"{_RUN}/cancel", runs.run_cancel,
             "Agent Protocol: stop a run in flight at its next step (its undecided cards "
             "withdrawn); 409 when it already finished", "bearer", ok=202,
             response=("ProtocolRun",), errors=(400, 403, 409), params=(
                 _THREAD, _RUN_ID,
                 Param("wait", "query", {"type": "integer", "enum": [0, 1]},
                       "1: answer once the run has stopped (200)"),
                 Param("action", "query", {"type": "string", "enum": ["interrupt"]},
                       "only `interrupt`: stop the run where it is"))),
)
