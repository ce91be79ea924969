"""The Agent Protocol (the LangGraph Agent Server API that langgraph-sdk, Agent Chat UI and
Agent Inbox call): another face of opsgraph's runs, threads and decisions, at the root path.
"""

from __future__ import annotations

from starlette.routing import Route

from opsgraph.api.agent_protocol import assistants, runs, threads

__all__ = ["ROUTES"]

_RUN = "/threads/{thread_id}/runs/{run_id}"
ROUTES = [
    Route("/info", assistants.server_info, methods=["GET"]),
    Route("/assistants/search", assistants.assistants_search, methods=["POST"]),
    Route("/assistants/{assistant_id}", assistants.assistant_get, methods=["GET"]),
    Route("/threads", threads.threads_create, methods=["POST"]),
    Route("/threads/search", threads.threads_search, methods=["POST"]),
    Route("/threads/{thread_id}", threads.thread_get, methods=["GET"]),
    Route("/threads/{thread_id}/state", threads.thread_get_state, methods=["GET"]),
    Route("/threads/{thread_id}/history", threads.thread_history, methods=["GET", "POST"]),
    Route("/threads/{thread_id}/runs", runs.runs_create, methods=["POST"]),
    Route("/threads/{thread_id}/runs/stream", runs.runs_stream, methods=["POST"]),
    Route("/threads/{thread_id}/runs/wait", runs.runs_wait, methods=["POST"]),
    Route(_RUN, runs.run_get, methods=["GET"]),
    Route(f"{_RUN}/join", runs.run_join, methods=["GET"]),
    Route(f"{_RUN}/stream", runs.run_stream, methods=["GET"]),
    Route(f"{_RUN}/cancel", runs.run_cancel, methods=["POST"]),
]
