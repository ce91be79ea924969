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


class PromptLog:
    """Every prompt the scripted model was handed in a test, by stage (a spy: the scripted
    model still answers each call)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Any]]] = []

    def texts(self, stage: str | None = None) -> list[str]:
        """Each call's messages as one text, of one stage or all."""
        return ["\n".join(str(m.content) for m in messages)
                for where, messages in self.calls if stage in (None, where)]


def record_prompts(monkeypatch: Any) -> PromptLog:
    """Record what every scripted-model call was shown, keyed by its stage."""
    from opsgraph.models import scripted

    log = PromptLog()
    real = scripted.ScriptedChatModel._reply

    def reply(self: Any, messages: list[Any], kwargs: Any, run_manager: Any) -> Any:
        metadata = {**(run_manager.metadata if run_manager is not None else {}),
                    **(kwargs.get(scripted.CALL_METADATA_KWARG) or {})}
        log.calls.append((str(metadata.get(scripted.STAGE_KEY)), list(messages)))
        return real(self, messages, kwargs, run_manager)

    monkeypatch.setattr(scripted.ScriptedChatModel, "_reply", reply)
    return log
