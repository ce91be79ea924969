"""Requests as staff write them (issue 17, the engine's side): what the models are shown,
the context budget, recovery after tool errors, the knowledge fast path, follow-ups."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.engine.helpers import chat, finished, of, person, record_prompts, statuses

pytestmark = pytest.mark.usefixtures("demo_db")


def task(tid: str, domain: str, verb: str, instruction: str) -> dict[str, Any]:
    return {"id": tid, "domain": domain, "operation": verb, "instruction": instruction,
            "depends_on": []}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


# -- 1. no raw ids in prompts ---------------------------------------------------------------

def _phone_change(script: Any) -> str:
    return script({
        "plan": {"tasks": [task("t1", "members", "update",
                                "Change Jane Smith's phone to +447700900999")]},
        "turns": {"t1": [call("members_update", member="Jane Smith",
                              changes={"phone": "+447700900999"})]},
    })


def test_prompts_name_the_caller_never_their_user_id(script: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    events = chat(person("staff", user="stf_demo_04"), "change Jane Smith's phone to "
                  "+447700900999", _phone_change(script))
    assert finished(events)["status"] == "awaiting_approval"
    texts = prompts.texts()
    assert {stage for stage, _ in prompts.calls} == {"decompose", "task"}
    assert all("stf_demo_04" not in text for text in texts)
    assert "Caller: Liam Murphy (staff)" in prompts.texts("decompose")[0]
    assert "Asked by: Liam Murphy (staff)." in prompts.texts("task")[0]


def test_a_caller_with_no_record_is_shown_by_role_alone(script: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    chat(person("manager", user="alex"), "change Jane Smith's phone to +447700900999",
         _phone_change(script))
    texts = prompts.texts()
    assert texts and all("alex" not in text.lower() for text in texts)
    assert "Asked by: a manager." in prompts.texts("task")[0]


# -- 2. context budget ----------------------------------------------------------------------

def test_a_long_list_reaches_the_model_bounded_and_says_how_to_narrow(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "bookings", "cancel", "Cancel Jane Smith's booking")]},
        "turns": {"t1": [call("bookings_list"),
                         {"content": "Which booking of Jane Smith's is meant?"},
                         {"content": "Which booking of Jane Smith's is meant?"}]},
    })
    events = chat(person("staff"), "cancel jane smith's booking", model)
    listed = of(events, "task_finished")[0]["calls"][0]
    assert listed["tool"] == "bookings_list" and listed["ok"]
    seen = prompts.calls[2][1][-1].content  # the second task turn's last message: the list
    assert isinstance(seen, str)
    assert len(seen) <= 8192 * 4 // 8 + 200  # an eighth of the default 8,192-token window
    omitted = re.search(r"… (\d+) more bookings; narrow with member/date", seen)
    assert omitted is not None, seen[-300:]
    shown = seen.count('"status": "confirmed"')
    assert shown >= 1 and shown + int(omitted.group(1)) > shown


def test_every_prompt_fits_a_small_context_window(script: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.engine.context_budget import prompt_tokens
    from opsgraph.settings import get_settings

    monkeypatch.setenv("OPSGRAPH_CONTEXT_TOKENS", "3000")
    get_settings.cache_clear()
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "bookings", "cancel", "Cancel Jane Smith's booking")]},
        "turns": {"t1": [call("bookings_list"), call("bookings_list", date="2026-12-02"),
                         call("bookings_list", member="Jane Smith"),
                         {"content": "Which one?"}, {"content": "Which one?"}]},
    })
    events = chat(person("staff"), "cancel jane smith's booking " + "please " * 300, model)
    assert finished(events)["status"] in ("completed", "completed_with_errors")
    assert len(prompts.calls) >= 5
    for _, messages in prompts.calls:
        assert prompt_tokens(messages, []) <= 3000 - 3000 // 8


def test_a_provider_error_never_reaches_the_answer(script: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    from opsgraph.models import scripted

    real = scripted.ScriptedChatModel._reply

    def overflowing(self: Any, messages: list[Any], kwargs: Any, run_manager: Any) -> Any:
        metadata = kwargs.get(scripted.CALL_METADATA_KWARG) or {}
        if metadata.get(scripted.STAGE_KEY) == "task":
            raise httpx.HTTPStatusError(
                "400: the request (13100 tokens) exceeds the context size <tool_response>",
                request=httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions"),
                response=httpx.Response(400))
        return real(self, messages, kwargs, run_manager)

    monkeypatch.setattr(scripted.ScriptedChatModel, "_reply", overflowing)
    model = script({"plan": {"tasks": [task("t1", "members", "get", "Look up Jane Smith")]},
                    "synthesis": "unused"})
    events = chat(person("staff"), "jane smith's details", model)
    assert statuses(events) == {"t1": "failed"}
    answer = of(events, "answer")[-1]["text"]
    assert "the model call failed (HTTPStatusError)" in answer
    assert "exceeds" not in answer and "tool_response" not in answer
