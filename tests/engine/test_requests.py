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


@pytest.mark.usefixtures("model_writes")
def test_prompts_name_the_caller_never_their_user_id(script: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    # a question first, so that the planner (not code) plans it and its prompt is seen too
    events = chat(person("staff", user="stf_demo_04"), "what's on for Jane Smith this week? "
                  "and change her phone to +447700900999", _phone_change(script))
    assert finished(events)["status"] == "awaiting_approval"
    texts = prompts.texts()
    assert {stage for stage, _ in prompts.calls} == {"decompose", "task"}
    assert all("stf_demo_04" not in text for text in texts)
    assert "Caller: Liam Murphy (staff)" in prompts.texts("decompose")[0]
    assert "Asked by: Liam Murphy (staff)." in prompts.texts("task")[0]
    # the planner is shown each agent's words once, with every verb it serves on that line
    listed = prompts.texts("decompose")[0].split("Capabilities for this request:\n")[1]
    whats = [line.split(": ", 1)[1] for line in listed.split("\n\n")[0].splitlines()]
    assert len(whats) == len(set(whats)), listed


@pytest.mark.usefixtures("model_writes")
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
    events = chat(person("staff"), "cancel a booking", model)
    listed = of(events, "task_finished")[0]["calls"][0]
    assert listed["tool"] == "bookings_list" and listed["ok"]
    # a single change, planned by code: the second task turn's last message is the list
    seen = [m for stage, m in prompts.calls if stage == "task"][1][-1].content
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
    events = chat(person("staff"), "cancel a booking " + "please " * 300, model)
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


# -- 3. recover, and say so truthfully ------------------------------------------------------

@pytest.mark.usefixtures("model_writes")
def test_a_tool_error_that_names_its_fix_gets_a_retry(script: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Jane Smith's phone to 07700 "
                                                           "900999")]},
        "turns": {"t1": [call("members_update", member="Jane Smith",
                              changes={"phone": "07700 900999"}),
                         call("members_update", member="Jane Smith",
                              changes={"phone": "+44 7700 900999"})]},
    })
    events = chat(person("staff"), "change jane smith's phone to 07700 900999", model)
    assert finished(events)["status"] == "awaiting_approval"
    retry = prompts.texts("task")[1]
    assert "not an international phone number" in retry and "e.g. +44 7700 900123" in retry
    changes = of(events, "approval_required")[0]["changes"]
    assert changes[0]["new"]["phone"] == "+44 7700 900999"


def test_a_query_task_whose_reads_all_failed_is_failed_and_says_what(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "events", "list", "List the events this week")]},
        "turns": {"t1": [call("events_list", **{"from": "this week"}),
                         call("events_list", **{"from": "this wk"}),
                         {"content": "There are no events this week."}]},
    })
    events = chat(person("staff"), "what's on this week?", model)
    assert statuses(events) == {"t1": "failed"}
    assert finished(events)["status"] == "completed_with_errors"
    answer = of(events, "answer")[-1]["text"]
    assert "Could not complete" in answer and "could not read events_list" in answer
    assert "no events this week" not in answer
    assert finished(events)["usage"]["model_calls"] == 4  # plan + three turns, no synthesis


def test_a_query_task_that_read_only_part_is_partly_done(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Jane Smith and Zed Quux")]},
        "turns": {"t1": [{"tool_calls": [{"name": "members_search", "args": {"query": "Jane"}},
                                         {"name": "members_get",
                                          "args": {"member": "Zed Quux"}}]},
                         {"content": "Jane Smith is a premium member."}]},
        "synthesis": "Jane Smith is a premium member.",
    })
    events = chat(person("staff"), "look up jane smith and zed quux", model)
    assert statuses(events) == {"t1": "partial"}
    assert finished(events)["status"] == "completed_with_errors"
    answer = of(events, "answer")[-1]["text"]
    assert answer.startswith("Jane Smith is a premium member.")
    assert "Only partly done" in answer and "could not read members_get" in answer


def test_no_tool_text_prompt_text_or_nudge_reaches_an_answer(script: Any) -> None:
    said = ("I will call the members_update tool now. <tool_response>{\"ok\": false}"
            "</tool_response> You have not proposed anything yet. Which Jane Smith is meant?")
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Jane Smith's phone")]},
        "turns": {"t1": [{"content": said}, {"content": said}]},
    })
    events = chat(person("staff"), "change jane smith's phone", model)
    assert statuses(events) == {"t1": "no_proposal"}
    answer = of(events, "answer")[-1]["text"]
    assert "Which Jane Smith is meant?" in answer
    for raw in ("members_update", "I will call", "tool_response", "You have not proposed",
                "{"):
        assert raw not in answer, (raw, answer)


def test_agent_words_keep_an_answer_and_drop_the_machinery() -> None:
    from opsgraph.engine.task_outcome import agent_words

    assert agent_words("Courts open at 7.\n- Court 1\n- Court 2") == ("Courts open at 7.\n- Court "
                                                                      "1\n- Court 2")
    assert agent_words("<tool_call>{\"name\": \"x\"}</tool_call>Open 7-22.") == "Open 7-22."
    assert agent_words("I'll use bookings_list first. Done?") == "Done?"
    # a call the local model wrote as markup of its own (held-out bookings-03, 2026-12-02)
    assert agent_words("<tools>\n    <arguments>\n    </arguments>\n</tools>\n\n"
                       "Court 2 is free at 19:00.") == "Court 2 is free at 19:00."
    assert agent_words("Court 2 is free.</arguments>") == "Court 2 is free."
    # the nudge echoed in other words (knowledge set confusable-01, 2026-12-02)
    assert agent_words("Cancel 2 hours before. I have not proposed anything yet. Call the "
                       "write tool now with the details from the request.") == (
        "Cancel 2 hours before.")
    assert agent_words("Use a <b>racket</b> with a <tooltip>.") == (
        "Use a <b>racket</b> with a <tooltip>.")


# -- 4. questions go to knowledge -----------------------------------------------------------

def test_a_knowledge_question_needs_no_planner_call(script: Any) -> None:
    # no `plan` in the file: a planner call would fail the run loudly
    model = script({"turns": {"t1": [{"content": "Dogs are welcome on the terrace only."}]}})
    events = chat(person("staff"), "can i bring my dog", model)
    assert finished(events)["status"] == "completed"
    plan = of(events, "plan")[0]
    assert [(t["domain"], t["operation"], t["agent"]) for t in plan["tasks"]] == [
        ("knowledge", "search", "knowledge.faq")]
    assert plan["notes"] == ["a question for the knowledge agents: planned by code, no "
                             "planner call"]
    assert finished(events)["usage"]["model_calls"] == 1  # one agent turn, no synthesis
    assert of(events, "answer")[-1]["text"] == "Dogs are welcome on the terrace only."


@pytest.mark.parametrize(("question", "planned"), [
    # the local model planned questions like these as events.cancel and its agent raised a
    # card to cancel the whole class (knowledge set confusable-05, 2026-12-02, and
    # confusable-01, asked after a lead-in, 2026-12-04); those two phrasings are now planned
    # by code as rule questions (test_code_plans), these "when" ones still reach the planner
    ("when's the last day to cancel my daughter's place at the Saturday junior clinic and "
     "get the fee credited?", "Cancel the Saturday junior clinic"),
    ("I can't make my yoga class tomorrow, when do I need to cancel by to avoid a strike?",
     "Cancel the yoga class tomorrow"),
])
def test_a_question_planned_as_a_change_is_asked_of_the_knowledge_agents(
        script: Any, question: str, planned: str) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "events", "cancel", planned)]},
        "turns": {"t1": [{"content": "The passages say when to cancel."}]}})
    events = chat(person("staff"), question, model)
    assert finished(events)["status"] == "completed"
    plan = of(events, "plan")[0]
    assert [(t["domain"], t["operation"]) for t in plan["tasks"]] == [("knowledge", "search")]
    assert plan["tasks"][0]["instruction"] == question
    assert plan["notes"][-1].startswith("a question for information planned as changes")
    assert not of(events, "approval_required")
    assert finished(events)["usage"]["model_calls"] == 3  # the plan, its repair, the agent


@pytest.mark.parametrize(("request_text", "information"), [
    ("how do I cancel my booking?", True),
    ("When is the deadline to cancel?", True),
    ("can you cancel my booking?", False),  # a polite ask
    ("when you can, cancel my 6pm booking.", False),
    ("what's on tonight? book me in", False),  # a question, then an ask
    ("cancel my booking", False),
    ("and how late can I cancel one for free?", True),  # a follow-up question
    # what the asker says of themselves, then one question (knowledge set confusable-01)
    ("I can't make my yoga class tomorrow, how late can I cancel without getting a strike?",
     True),
    ("my membership is on hold - when does it start again?", True),
    ("book court 2 for 6pm, what time does it close?", False),  # an ask, then a question
    ("jane smith wants to cancel. how late can she do it?", False),
    ("please sort it out, how long will it take?", False),
    ("I can't make it tomorrow, can you cancel my booking?", False),  # a polite ask
])
def test_a_question_for_information_is_one_wh_question(request_text: str,
                                                       information: bool) -> None:
    from opsgraph.engine.request_words import asks_for_information

    assert asks_for_information(request_text) is information


@pytest.mark.parametrize(("request_text", "rule"), [
    ("how late can I cancel my court booking for free?", True),
    ("how much notice do I need to give to cancel a private tennis lesson?", True),
    ("what's the deadline to cancel my daughter's place at the junior clinic?", True),
    ("whats the fee for my locker", True),  # names the rule: "my" is what it applies to
    ("how much is it to hire a towel", True),
    ("and how far ahead can premium members book?", True),
    ("how do I make a complaint?", True),  # how a thing is done
    ("how can members pay for a guest pass", True),
    # what the asker says of themselves first, naming no change ("the waitlist" is a noun)
    ("I've been offered a place off the waitlist - how long do I have to accept it?", True),
    ("jane wants to cancel - how late can she do it?", False),  # a change said first
    ("how long is my membership frozen for?", False),  # the asker's record, no modal
    ("how many times has court 2 been booked this week", False),  # what happened
    ("how many people have signed up for the workshop?", False),  # a head count
    ("how much is a court? book me one at 6", False),  # a question, then an ask
    ("is court 1 free tomorrow?", False),  # no rule asked
])
def test_a_question_about_a_rule_price_or_time_limit(request_text: str, rule: bool) -> None:
    from opsgraph.engine.request_words import asks_about_a_rule

    assert asks_about_a_rule(request_text) is rule


def test_a_request_for_a_change_still_gets_the_planner(script: Any) -> None:
    model = script({"turns": {"t1": [{"content": "unused"}]}})
    events = chat(person("staff"), "can i bring my dog? if so add a note to jane smith", model)
    error = of(events, "error")[0]
    assert "decompose" in error["message"] and "no `plan`" in error["message"]


def test_an_unserved_capability_goes_to_the_nearest_agent_not_invalid_plan(script: Any) -> None:
    from opsgraph.registry.loader import get_registry
    from opsgraph.registry.matrix import capability_matrix

    served = {(d, v) for v, d in capability_matrix(get_registry()).cells}
    assert ("knowledge", "list") not in served
    model = script({
        "plan": {"tasks": [task("t1", "knowledge", "list",
                                "Find where staff assemble when the fire alarm goes off")]},
        "turns": {"t1": [{"content": "Everyone gathers in the car park by the flagpole."}]},
    })
    events = chat(person("staff"), "remind me where we assemble when the fire alarm goes off",
                  model)
    assert not of(events, "error")
    plan = of(events, "plan")[0]
    assert [(t["domain"], t["operation"]) for t in plan["tasks"]] == [("knowledge", "search")]
    assert plan["tasks"][0]["agent"].startswith("knowledge.")
    assert any("nearest agent" in note for note in plan["notes"])
    assert finished(events)["status"] == "completed"
    assert finished(events)["usage"]["model_calls"] == 3  # plan, its repair, one turn


# -- 5. the registry gap: calling off an event ---------------------------------------------

def test_calling_off_an_event_routes_to_its_agent_and_waits_for_approval(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "events", "cancel", "Cancel the Wine & Tennis Evening")]},
        "turns": {"t1": [call("events_cancel", event="Wine & Tennis Evening",
                              reason="courts flooded")]},
    })
    events = chat(person("staff"), "the courts are flooded, cancel the wine and tennis "
                                   "evening", model)
    assert of(events, "plan")[0]["tasks"][0]["agent"] == "events.cancel"
    assert finished(events)["status"] == "awaiting_approval"
    card = of(events, "approval_required")[0]["changes"][0]
    assert card["operation"] == "events.cancel"
    assert card["new"]["status"] == "cancelled" and "Wine & Tennis Evening" in card["summary"]


# -- 6. follow-ups keep their subject ---------------------------------------------------------

def test_a_follow_up_question_keeps_its_subject(script: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    first = script({"turns": {"t1": [{"content": "Premium membership is £75 a month."}]}})
    events = chat(person("staff"), "how much is premium membership?", first)
    thread = events[0].data["thread_id"]
    prompts = record_prompts(monkeypatch)
    second = script({"turns": {"t1": [{"content": "Off-peak membership is £30 a month."}]}})
    events = chat(person("staff"), "and off-peak?", second, thread=thread)
    assert finished(events)["usage"]["model_calls"] == 1  # still no planner call
    instruction = of(events, "plan")[0]["tasks"][0]["instruction"]
    assert "premium membership" in instruction
    brief = prompts.texts("task")[0]
    assert "user: how much is premium membership?" in brief
    assert "assistant: Premium membership is £75 a month." in brief


def test_an_action_agent_sees_whom_her_refers_to(script: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    first = script({"plan": {"tasks": [task("t1", "bookings", "list",
                                            "List Jane Smith's bookings")]},
                    "turns": {"t1": [call("bookings_list", member="Jane Smith")]},
                    "synthesis": "Jane Smith has two bookings this week."})
    events = chat(person("staff"), "what has jane smith booked?", first)
    thread = events[0].data["thread_id"]
    prompts = record_prompts(monkeypatch)
    second = script({"plan": {"tasks": [task("t1", "bookings", "cancel",
                                             "Cancel her other booking")]},
                     "turns": {"t1": [{"content": "Which booking?"},
                                      {"content": "Which booking?"}]}})
    chat(person("staff"), "cancel her other one", second, thread=thread)
    brief = prompts.texts("task")[0]
    assert "user: what has jane smith booked?" in brief
    assert "assistant: Jane Smith has two bookings this week." in brief


# -- 7. the model fills, code checks ----------------------------------------------------------

def _day_court_2_is_free(demo_db: Any, after: Any, start: str) -> str:
    """The first day after `after` with Court 2 free at `start` (HH:MM), ISO."""
    from datetime import timedelta

    from opsgraph.operations.direct import call_operation

    for n in range(1, 8):
        day = (after + timedelta(days=n)).isoformat()
        free = call_operation(person("staff"), "bookings.availability",
                              {"resource": "Court 2", "date": day}, db=demo_db)
        if any(s["start"].startswith(f"{day}T{start}") for s in free["result"]["free"]):
            return day
    raise AssertionError(f"Court 2 is taken at {start} all week")


def _free_court_hour(demo_db: Any) -> tuple[str, str, str]:
    """(member name, start HH:MM, end HH:MM): a free hour of Court 2 tomorrow and a named
    member with nothing booked then."""
    from datetime import UTC, datetime, timedelta

    from opsgraph.operations.direct import call_operation

    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    free = call_operation(person("staff"), "bookings.availability",
                          {"resource": "Court 2", "date": tomorrow}, db=demo_db)
    slot = next(s for s in free["result"]["free"]
                if datetime.fromisoformat(s["start"]).hour >= 9)
    start, end = datetime.fromisoformat(slot["start"]), datetime.fromisoformat(slot["start"])
    end = start + timedelta(hours=1)
    busy = {b["member_id"] for b in demo_db["bookings"].find(
        {"tenant_id": "demo", "status": "confirmed", "start": {"$lt": end},
         "end": {"$gt": start}})}
    for name in ("Emily Chen", "Fatima Al-Sayed", "Jane Smith"):
        member = demo_db["members"].find_one({"tenant_id": "demo", "name": name})
        if member is not None and member["_id"] not in busy:
            return name, f"{start:%H:%M}", f"{end:%H:%M}"
    raise AssertionError("no named member free")


def test_an_action_brief_lists_resolved_slots_by_label_never_ids(
        script: Any, demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.settings import get_settings

    monkeypatch.setenv("OPSGRAPH_DIRECT_PROPOSALS", "off")  # the model writes: its brief
    get_settings.cache_clear()
    name, start, end = _free_court_hour(demo_db)
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "bookings", "create", f"Book Court 2 for {name}")]},
        "turns": {"t1": [{"content": "Which time?"}, {"content": "Which time?"}]},
    })
    chat(person("staff"), f"book court 2 for {name} tomorrow {start}-{end}", model)
    brief = prompts.texts("task")[0]
    assert f"- member: {name}" in brief and "- resource: Court 2" in brief
    assert re.search(rf"- start: \w{{3}} \d+ \w{{3}} {start} \(\S+T{start}:00", brief), brief
    assert "mem_demo_" not in brief and "res_demo_" not in brief
    assert not prompts.texts("decompose")  # a single change: planned by code


@pytest.mark.usefixtures("model_writes")
def test_a_write_naming_someone_the_request_does_not_is_refused_with_the_right_name(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "members", "update",
                                "Change Raj Mehta's phone to +44 7700 900999")]},
        "turns": {"t1": [call("members_update", member="Jane Smith",
                              changes={"phone": "+44 7700 900999"}),
                         call("members_update", member="Raj Mehta",
                              changes={"phone": "+44 7700 900999"})]},
    })
    events = chat(person("staff"), "change raj mehta's phone to +44 7700 900999", model)
    retry = prompts.texts("task")[1]
    assert "member: 'Jane Smith' is not what the request names" in retry
    assert "the request names Raj Mehta" in retry
    cards = of(events, "approval_required")[0]["changes"]
    assert len(cards) == 1 and "Raj Mehta" in cards[0]["summary"]


def test_a_write_at_another_time_than_the_request_names_is_refused_with_the_right_one(
        script: Any, demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # held-out bookings-03 on a Friday: "thurs evening, 7ish" proposed for that Friday
    from datetime import UTC, datetime, timedelta

    from opsgraph.settings import get_settings

    monkeypatch.setenv("OPSGRAPH_DIRECT_PROPOSALS", "off")  # the model writes the call
    get_settings.cache_clear()
    name, start, end = _free_court_hour(demo_db)
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
    right, right_end = (f"{tomorrow.isoformat()}T{t}:00+00:00" for t in (start, end))
    # a day off, never in the past (today's hour may be gone: the past check would answer)
    # and free then (a taken slot is refused by the booking's own check first)
    later = _day_court_2_is_free(demo_db, tomorrow, start)
    wrong, wrong_end = (f"{later}T{t}:00+00:00" for t in (start, end))
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "bookings", "create", f"Book Court 2 for {name}")]},
        "turns": {"t1": [
            call("bookings_availability", resource="Court 2", date=tomorrow.isoformat()),
            call("bookings_create", member=name, resource="Court 2", start=wrong,
                 end=wrong_end),
            call("bookings_create", member=name, resource="Court 2", start=right,
                 end=right_end)]},
    })
    events = chat(person("staff"), f"book court 2 for {name} tomorrow {start}-{end}", model)
    retry = prompts.texts("task")[2]
    assert f"start: '{wrong}' is on another day than the request names" in retry, retry
    assert f"call bookings_create again with a start on that day ('{right}'" in retry
    cards = of(events, "approval_required")[0]["changes"]
    assert len(cards) == 1 and f"{tomorrow:%a %d %b} {start}" in cards[0]["summary"], cards


@pytest.mark.parametrize(("given", "refused"), [
    ("2026-12-10T19:00:00+00:00", False),  # the moment named
    ("2026-12-10T20:30:00+00:00", False),  # another time that day: the nearest free slot
    ("2026-12-04T19:00:00+00:00", True),  # the day the request was made, not the one named
    ("2026-12-11T19:00:00+00:00", True),
])
def test_a_write_on_another_day_than_the_one_named_is_refused(given: str, refused: bool
                                                              ) -> None:
    from opsgraph.engine.slot_reading import SlotReading, other_time
    from opsgraph.resolve import Mention

    thursday = Mention("thurs evening 7ish", "datetime", "2026-12-10T19:00:00+00:00")
    reading = SlotReading(filled={"start": thursday}, mentions=(thursday,))
    error = other_time("bookings_create", {"start": given}, {"start": given}, reading)
    assert (error is not None) is refused
    if refused:
        assert error.startswith(f"start: '{given}' is on another day than the request "
                                "names: Thu 10 Dec 19:00"), error
    # two times named ("move my 6pm to 7pm"): which fills which slot is the model's reading
    two = SlotReading(filled={"start": thursday}, mentions=(thursday, thursday))
    assert other_time("bookings_create", {"start": given}, {}, two) is None


def test_an_ambiguous_required_slot_asks_and_the_answer_completes_the_task(script: Any) -> None:
    # no turns: asking which Tom Baker is meant takes no model call
    asking = script({"plan": {"tasks": [task("t1", "members", "update",
                                             "Change Tom Baker's phone to +44 7700 900999")]}})
    events = chat(person("staff"), "change tom baker's phone to +44 7700 900999", asking)
    assert statuses(events) == {"t1": "needs_input"}
    assert finished(events)["status"] == "completed"
    assert finished(events)["usage"]["model_calls"] == 0  # planned and asked by code
    answer = of(events, "answer")[-1]
    assert answer["options"] == ["Tom Baker (tom.baker@example.com)",
                                 "Tom Baker (tbaker@mail.example)"]
    assert answer["text"].startswith("Which member do you mean")
    thread = events[0].data["thread_id"]
    # the button's text, on the same thread: no planner call, the task with that member
    picked = script({"turns": {"t1": [call("members_update", member="tbaker@mail.example",
                                           changes={"phone": "+44 7700 900999"})]}})
    events = chat(person("staff"), "Tom Baker (tbaker@mail.example)", picked, thread=thread)
    assert finished(events)["status"] == "awaiting_approval"
    assert finished(events)["usage"]["model_calls"] == 1
    card = of(events, "approval_required")[0]["changes"][0]
    # the second Tom Baker (mem_demo_005): cards name people, so his own phone tells him apart
    assert card["operation"] == "members.update"
    assert card["old"] == {"phone": "+44 7700 900455"}, card


def test_direct_proposals_propose_with_no_model_turn(script: Any, demo_db: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.settings import get_settings

    monkeypatch.setenv("OPSGRAPH_DIRECT_PROPOSALS", "on")
    get_settings.cache_clear()
    name, start, end = _free_court_hour(demo_db)
    model = script({"plan": {"tasks": [task("t1", "bookings", "create",
                                            f"Book Court 2 for {name} tomorrow {start}")]}})
    events = chat(person("staff"), f"book court 2 for {name} tomorrow {start}-{end}", model)
    assert finished(events)["status"] == "awaiting_approval", of(events, "error")
    assert finished(events)["usage"]["model_calls"] == 0  # the plan and the write by code
    card = of(events, "approval_required")[0]["changes"][0]
    assert card["operation"] == "bookings.create"
    assert card["new"]["start"].endswith(f"T{start}:00Z") or f"T{start}" in card["new"]["start"]
    # no end said: one booking slot of the court (an hour), still with no model turn
    events = chat(person("staff"), f"book court 2 for {name} tomorrow at {start}", model)
    assert finished(events)["usage"]["model_calls"] == 0, of(events, "error")
    card = of(events, "approval_required")[0]["changes"][0]
    assert f"T{end}" in card["new"]["end"], card


def test_a_shift_named_by_day_and_role_is_proposed_with_no_model_turn(
        script: Any, demo_db: Any) -> None:
    # held-out schedules-06: the agent asked "the name of the shift"; code reads the rota
    monday = [s for s in demo_db["shifts"].find({"tenant_id": "demo", "role": "maintenance",
                                                   "staff_id": None})
              if s["_id"].startswith("shf_demo_07_")]
    assert len(monday) == 1, "the seed leaves next Monday's maintenance shift open"
    events = chat(person("manager", user="alex"),
                  "put ben on the open maintenance shift next monday", script({}))
    assert finished(events)["status"] == "awaiting_approval", of(events, "error")
    assert finished(events)["usage"]["model_calls"] == 0  # planned and proposed by code
    card = of(events, "approval_required")[0]["changes"][0]
    assert card["operation"] == "schedules.assign"
    assert card["args"]["shift"] == monday[0]["_id"], card
    assert "Ben Adeyemi" in card["summary"] and "maintenance shift on Mon" in card["summary"]


@pytest.mark.parametrize(("role", "text", "new"), [
    # held-out members-03: the model set a made-up e-mail and proposed nothing
    ("staff", "siobhan o'connor got married, her surname's Byrne now - can you fix her record",
     {"name": "Siobhán Byrne"}),  # her first name as her record spells it
    # held-out members-09: the model filled the changes with a new e-mail and phone
    ("manager", "cancel kai robinson's membership, he's moving to leeds",
     {"status": "cancelled"}),
])
def test_a_member_change_said_plainly_is_proposed_with_no_model_turn(
        script: Any, role: str, text: str, new: dict[str, str]) -> None:
    events = chat(person(role, user="alex"), text, script({}))
    assert finished(events)["status"] == "awaiting_approval", of(events, "error")
    assert finished(events)["usage"]["model_calls"] == 0  # planned and proposed by code
    card = of(events, "approval_required")[0]["changes"][0]
    assert card["operation"] == "members.update"
    assert card["new"] == new, card


def test_a_change_for_each_person_named_is_one_call_each(script: Any, demo_db: Any) -> None:
    # held-out events-06: the model registered Kai twice by id and proposed nothing
    finals = demo_db["events"].find_one({"tenant_id": "demo", "title": "Club Championship Finals"})
    charlie = demo_db["members"].find_one({"tenant_id": "demo", "name": "Charlie Johnson"})
    kai = demo_db["members"].find_one({"tenant_id": "demo", "name": "Kai Robinson"})
    registered = {r["member_id"] for r in demo_db["registrations"].find(
        {"tenant_id": "demo", "event_id": finals["_id"]})}
    assert charlie["_id"] in registered and kai["_id"] not in registered
    events = chat(person("staff", user="alex"),
                  "add charlie johnson and kai robinson to the championship finals", script({}))
    assert finished(events)["status"] == "awaiting_approval", of(events, "error")
    assert finished(events)["usage"]["model_calls"] == 0
    [card] = of(events, "approval_required")[0]["changes"]  # Charlie is on the list already
    assert card["operation"] == "events.register"
    assert card["args"]["member"] == kai["_id"] and card["args"]["event"] == finals["_id"]


def test_a_court_any_of_which_will_do_is_the_one_free_then(script: Any, demo_db: Any) -> None:
    # held-out bookings-03: "book me a court for thurs evening, 7ish? either court is fine"
    # — the model read Court 1, found it taken, and proposed nothing
    from datetime import UTC, datetime, timedelta

    from opsgraph.operations.direct import call_operation

    def free(court: str, day: str) -> set[str]:
        got = call_operation(person("staff"), "bookings.availability",
                             {"resource": court, "date": day}, db=demo_db)
        return {s["start"] for s in got["result"]["free"]}

    for n in range(1, 8):
        day = (datetime.now(UTC) + timedelta(days=n)).date()
        only_2 = sorted(free("Court 2", day.isoformat()) - free("Court 1", day.isoformat()))
        if only_2:
            break
    else:
        raise AssertionError("no hour this week when only Court 2 is free")
    at = datetime.fromisoformat(only_2[0])
    asked = (f"book a court for Emily Chen on {day:%A} {day.day} {day:%B} at {at:%H:%M}, "
             "either court is fine")
    events = chat(person("staff", user="alex"), asked,
                  script({"plan": {"tasks": [task("t1", "bookings", "create", asked)]}}))
    assert finished(events)["status"] == "awaiting_approval", of(events, "error")
    assert finished(events)["usage"]["model_calls"] == 1  # the plan; the write by code
    [card] = of(events, "approval_required")[0]["changes"]
    assert card["operation"] == "bookings.create"
    assert card["args"]["resource"] == "res_demo_court2", card
    # approved, the task's calls show the reads code made to choose the court
    from opsgraph.engine.approval_flow import decide_and_resume

    resumed = list(decide_and_resume(person("manager", user="sam"), card["change_id"],
                                     "reject"))
    [done] = of(resumed, "task_finished")
    reads = [c for c in done["calls"] if c.get("by") == "code"]
    assert [(c["tool"], c["args"]["resource"]) for c in reads] == [
        ("bookings_availability", "res_demo_court1"), ("bookings_availability", "res_demo_court2")]


def test_a_change_code_proposed_and_sent_back_is_revised_by_the_model(script: Any) -> None:
    from opsgraph.engine.approval_flow import decide_and_resume
    from tests.e2e.scripts import phone_revision

    events = chat(person("staff", user="kim"), "Change Emily Chen's phone to +44 7700 900111",
                  script(phone_revision("+44 7700 900111", "+44 7700 900333")))
    assert finished(events)["usage"]["model_calls"] == 0
    [card] = of(events, "approval_required")[0]["changes"]
    assert card["new"] == {"phone": "+44 7700 900111"}
    resumed = list(decide_and_resume(person("manager", user="sam"), card["change_id"],
                                     "revise", feedback="the number ends in 333"))
    assert finished(resumed)["usage"]["model_calls"] == 1  # the revision is the model's
    [revised] = of(resumed, "approval_required")[0]["changes"]
    assert revised["new"] == {"phone": "+44 7700 900333"}


def test_a_record_the_club_does_not_have_is_said_not_asked_with_no_options(
        script: Any) -> None:
    # "cancel the movie night" asked "Which event do you mean by “movie night”: ?"
    events = chat(person("manager", user="alex"), "cancel the movie night", script({}))
    answer = of(events, "answer")[-1]
    assert answer["text"] == "No event matches “movie night”. Which event do you mean?"
    assert answer["options"] == []
    assert finished(events)["usage"]["model_calls"] == 0


def test_a_clarifying_question_shows_no_record_ids(script: Any) -> None:
    model = script({"plan": {"tasks": [task("t1", "bookings", "cancel",
                                            "Cancel Jane Smith's booking")]}})
    events = chat(person("staff"), "cancel jane smith's booking", model)
    assert statuses(events) == {"t1": "needs_input"}
    answer = of(events, "answer")[-1]
    assert len(answer["options"]) > 1
    assert all("bkg_" not in option for option in answer["options"]), answer["options"]
    assert "bkg_" not in answer["text"]


@pytest.mark.usefixtures("model_writes")
def test_a_new_email_or_phone_the_request_does_not_give_is_refused(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # held-out members-09: the cancel set a made-up email and phone, and fields unchanged
    prompts = record_prompts(monkeypatch)
    model = script({
        "plan": {"tasks": [task("t1", "members", "cancel", "Cancel Kai Robinson's membership")]},
        "turns": {"t1": [call("members_update", member="Kai Robinson",
                              changes={"status": "cancelled", "name": "Kai Robinson",
                                       "email": "kai.robinson@example.com",
                                       "phone": "+44 7700 900123"}),
                         call("members_update", member="Kai Robinson",
                              changes={"status": "cancelled", "name": "Kai Robinson"})]},
    })
    events = chat(person("manager"), "cancel kai robinson's membership, he's moving to leeds",
                  model)
    retry = prompts.texts("task")[1]
    assert ("changes.email: 'kai.robinson@example.com' is not in the request, which asks for "
            "no new e-mail address; leave email out of the changes") in retry
    [card] = of(events, "approval_required")[0]["changes"]
    # the name it already has is no change, so the card shows the status alone
    assert card["summary"] == "Update Kai Robinson: status 'active' → 'cancelled'"


def test_a_new_email_a_read_returned_or_the_request_asks_for_is_accepted() -> None:
    from opsgraph.engine.slot_reading import SlotReading, invented_contact

    made_up = {"changes": {"status": "cancelled", "phone": "+44 7700 900123"}}
    assert "asks for no new phone number" in (
        invented_contact(made_up, SlotReading(asked="cancel kai's membership")) or "")
    # the request speaks of the phone: the number may come from a revision's feedback
    assert invented_contact(made_up, SlotReading(asked="fix kai's phone")) is None
    read = SlotReading(asked="update kai from his latest message",
                       seen=["{'messages': [{'body': 'my new email is Kai@New.example'}]}"])
    assert invented_contact({"changes": {"email": "kai@new.example"}}, read) is None
    assert invented_contact({"changes": {"status": "cancelled"}}, SlotReading()) is None
