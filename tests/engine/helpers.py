"""Helpers for driving real runs in tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from opsgraph.engine.events import Event
from opsgraph.engine.runner import stream_run
from opsgraph.principal import Channel, Principal, Role


def person(role: str = "staff", tenant: str = "demo", user: str = "alex",
           channel: Channel = Channel.DASHBOARD) -> Principal:
    return Principal(tenant, user, frozenset({Role(role)}), channel)


def chat(principal: Principal, message: str, model: str, thread: str | None = None
         ) -> list[Event]:
    return list(stream_run(principal, message, thread_id=thread, model=model))


def of(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.event == name]


def finished(events: list[Event]) -> dict[str, Any]:
    return of(events, "run_finished")[-1]


def statuses(events: list[Event]) -> dict[str, str]:
    return {d["task_id"]: d["status"] for d in of(events, "task_finished")}


def wait_until(condition: Callable[[], object], what: str) -> None:
    """Poll `condition` until it holds; 60 s bounds a stuck test, it is not a measured time."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)
