"""Talking to the app as its callers do: signed bearer tokens, and runs read as SSE."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import EventSource, connect_sse

from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role

HTTP_TIMEOUT_S = 60.0


# --- tokens -------------------------------------------------------------------------------

def bearer(role: str, tenant: str = "demo", user: str | None = None,
           channel: Channel = Channel.DASHBOARD) -> dict[str, str]:
    """The Authorization header of a signed token for one role (same secret as the server)."""
    principal = Principal(tenant, user or f"{role}-1", frozenset({Role(role)}), channel)
    return {"Authorization": f"Bearer {issue_token(principal)}"}


def headers_for(role: str | None, tenant: str = "demo",
                user: str | None = None) -> dict[str, str]:
    """No header for a visitor (`role=None`), else a bearer token."""
    return {} if role is None else bearer(role, tenant, user)


# --- SSE ----------------------------------------------------------------------------------

SseEvent = tuple[str, str, dict[str, Any]]  # (id, event, data)


@dataclass
class Streamed:
    """A streamed request: its status, and the events (200) or the JSON error (otherwise)."""

    status: int
    events: list[SseEvent] = field(default_factory=list)
    error: dict[str, Any] | None = None

    @property
    def names(self) -> list[str]:
        return [name for _, name, _ in self.events]

    def of(self, name: str) -> list[dict[str, Any]]:
        """The data of every event called `name`, in order."""
        return [data for _, ev, data in self.events if ev == name]

    @property
    def finished(self) -> dict[str, Any]:
        """The `run_finished` data (the stream's last event)."""
        assert self.status == 200, f"no stream: {self.status} {self.error}"
        assert self.names and self.names[-1] == "run_finished", self.names
        return self.events[-1][2]


def stream(client: httpx.Client, path: str, body: Mapping[str, Any],
           headers: Mapping[str, str] | None = None) -> Streamed:
    """POST `body` and read the SSE stream to its end (the server closes it).

    httpx-sse refuses a 200 whose content type is not `text/event-stream`.
    """
    with connect_sse(client, "POST", path, json=dict(body), headers=dict(headers or {})) as src:
        return _read(src)


def follow(client: httpx.Client, thread_id: str, headers: Mapping[str, str],
           last_event_id: str | None = None) -> Streamed:
    """GET a thread's events (`Last-Event-ID` when given) and read them until the server
    ends the stream (its run finished, or none was going on)."""
    sent = {**headers, **({"Last-Event-ID": last_event_id} if last_event_id else {})}
    with connect_sse(client, "GET", f"/v1/threads/{thread_id}/events", headers=sent) as src:
        return _read(src)


def _read(src: EventSource) -> Streamed:
    """The stream's events to its end, or the JSON error of a response that is not 200."""
    response = src.response
    if response.status_code != 200:
        response.read()
        return Streamed(response.status_code, error=response.json().get("error"))
    # A keep-alive comment (sse-starlette pings every 15 s) reaches httpx-sse as an event
    # with no data; the SSE spec dispatches no event for it, and neither do we.
    return Streamed(200, [(sse.id, sse.event, json.loads(sse.data)) for sse in src.iter_sse()
                          if sse.data])
