"""The harness executor: every step type through the real graph, store and scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.events import Event
from opsgraph.engine.runner import stream_run
from opsgraph.engine.synthesise import NOTHING_FOUND
from opsgraph.harness.spec import HarnessDoc
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import finished, of, person, statuses
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")

EMILY = "mem_demo_008"


def step(sid: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": sid, "type": kind, "title": sid, "description": f"the {sid} step",
            "layer": "core", **fields}


def harness(*steps: dict[str, Any], **doc: Any) -> HarnessDoc:
    return HarnessDoc.model_validate({"steps": list(steps), **doc})


def run(doc: HarnessDoc, message: str, model: str | None = None, role: str = "staff",
        version: int = 1, user: str = "alex") -> list[Event]:
    return list(stream_run(person(role, user=user), message, model=model,
                           harness=(version, doc)))


def steps_ran(events: list[Event]) -> list[str]:
    return [d["step"] for d in of(events, "progress") if d.get("stage") == "step"]


def answer(events: list[Event]) -> dict[str, Any]:
    [only] = of(events, "answer")
    return only


def calls(events: list[Event]) -> int:
    return int(finished(events)["usage"]["model_calls"])


LOOKUP_EMILY = {
    "plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen")]},
    "turns": {"t1": [call("members_get", member="Emily Chen"),
                     {"content": "Emily Chen is a junior member."}]},
    "synthesis": "Emily Chen is a junior member.",
}

CLUB = harness(
    step("guard", "guard", layer="safety", rules=[
        {"patterns": [r"\bcasino\b"], "action": "block", "text": "@spam_reply"},
        {"patterns": [r"\binjur"], "action": "flag", "set": {"risk": "medium"}}]),
    step("main", "supervisor", final=False, save_as="draft"),
    step("risky", "check", **{"if": {"var": "risk", "eq": "medium"}, "then": "careful",
                              "else": "plain"}),
    step("careful", "answer", text=["{{draft.answer}}", "@disclaimer"]),
    step("plain", "answer", text="{{draft.answer}}"),
    prompts={"spam_reply": "Spam is not passed on.",
             "disclaimer": "We cannot give medical advice."})


def test_spam_is_blocked_by_a_pattern_with_no_model_call() -> None:
    events = run(CLUB, "Best CASINO offers, click now")
    assert answer(events) == {"text": "Spam is not passed on.", "sources": []}
    assert steps_ran(events) == ["guard"]
    assert calls(events) == 0 and not of(events, "plan")
    assert finished(events)["status"] == "completed"


def test_a_flagged_injury_question_gets_the_disclaimer_after_the_supervisor(
        script: Any) -> None:
    model = script(LOOKUP_EMILY)
    events = run(CLUB, "Emily Chen has an injury: what is her membership?", model)
    text = answer(events)["text"]  # one answer: the supervisor's draft was not sent
    assert text == "Emily Chen is a junior member.\n\nWe cannot give medical advice."
    assert steps_ran(events) == ["guard", "main", "risky", "careful"]
    assert "".join(d["text"] for d in of(events, "token")) == text
    assert any(s["id"] == EMILY for s in answer(events)["sources"])  # the draft's sources

    plain = run(CLUB, "What is Emily Chen's membership?", model)
    assert answer(plain)["text"] == "Emily Chen is a junior member."
    assert steps_ran(plain) == ["guard", "main", "risky", "plain"]


def test_set_switch_and_check_read_variables_user_and_tenant() -> None:
    doc = harness(
        step("vars", "set", values={"greeting": "Hello {{user.name}} of {{tenant.name}}",
                                    "count": 3}),
        step("who", "switch", cases=[
            {"if": {"var": "user.role", "eq": "manager"}, "goto": "boss"},
            {"if": {"all": [{"var": "count", "gt": 2},
                            {"var": "message", "matches": "^hi\\b"}]}, "goto": "many"}],
            default="other"),
        step("boss", "answer", text="{{greeting}}, boss"),
        step("many", "check", **{"if": {"not": {"var": "greeting", "contains": "nobody"}},
                                 "then": "hi", "else": "other"}),
        step("hi", "answer", text="{{greeting | lower}} ({{count}})"),
        step("other", "answer", text="other"))
    tenant = TenantScope.of(person()).require_tenant()["name"]
    staff = run(doc, "hi there")
    assert answer(staff)["text"] == f"hello alex of {tenant.lower()} (3)"
    assert steps_ran(staff) == ["vars", "who", "many", "hi"]
    assert answer(run(doc, "hi", role="manager"))["text"].endswith(", boss")
    assert answer(run(doc, "hello"))["text"] == "other"


def test_a_tool_step_reads_through_the_gates_and_a_refusal_is_data() -> None:
    doc = harness(
        step("member", "tool", operation="members.get", args={"member": "{{message}}"},
             save_as="m"),
        step("reply", "check", **{"if": {"var": "m.error", "exists": True},
                                  "then": "refused", "else": "found"}),
        step("found", "answer", text="{{m.data.name}} is {{m.data.membership}}"),
        step("refused", "answer", text="refused: {{m.error.code}}"))
    ok = run(doc, "Emily Chen")
    assert answer(ok)["text"].startswith("Emily Chen is ")
    assert [s["id"] for s in answer(ok)["sources"]] == [EMILY]
    # a visitor may not read members: the gate's refusal is saved and the run goes on
    refused = run(doc, "Emily Chen", role="visitor", user="anon")
    assert answer(refused)["text"] == "refused: forbidden"
    assert finished(refused)["status"] == "completed"


def test_a_search_step_saves_hits_and_their_sources() -> None:
    doc = harness(
        step("kb", "search", query="{{message}}", limit=2, save_as="kb"),
        step("reply", "answer", text="{{kb.count}}: {{kb.hits.0.title}}"))
    events = run(doc, "opening hours")
    text = answer(events)["text"]
    assert text.startswith("2: ") and len(text) > 4
    assert len(answer(events)["sources"]) == 2


LLM = harness(
    step("classify", "llm", prompt="@classify", input="Message: {{message}}",
         output_schema={"type": "object", "required": ["topic"],
                        "properties": {"topic": {"enum": ["billing", "other"]}}},
         save_as="c"),
    step("route", "check", **{"if": {"var": "c.topic", "eq": "billing"}, "then": "bill",
                              "else": "other"}),
    step("bill", "answer", text="billing question"),
    step("other", "answer", text="something else"),
    prompts={"classify": "Classify the message of a member of {{tenant.name}}."})


def test_an_llm_step_output_is_held_to_its_schema_with_one_retry(script: Any) -> None:
    events = run(LLM, "my invoice is wrong", script({"harness": {"classify":
                                                                 '{"topic": "billing"}'}}))
    assert answer(events)["text"] == "billing question" and calls(events) == 1
    retried = run(LLM, "my invoice", script({"harness": {"classify": [
        '{"topic": "money"}', '```json\n{"topic": "other"}\n```']}}))
    assert answer(retried)["text"] == "something else" and calls(retried) == 2


def test_an_agent_step_runs_one_registry_agent(script: Any) -> None:
    doc = harness(step("ask", "agent", agent="members.lookup",
                       instruction="Look up {{message}}"))
    model = script({"turns": {"ask": [call("members_get", member="Emily Chen"),
                                      {"content": "Emily is a junior member."}]},
                    "synthesis": "Emily Chen is a junior member."})
    events = run(doc, "Emily Chen", model)
    # synthesise writes the answer from what the agent read, as for a plan of one task
    assert answer(events)["text"] == "Emily Chen is a junior member."
    assert [s["id"] for s in answer(events)["sources"]] == [EMILY]
    assert of(events, "task_started") == [{"task_id": "ask", "agent": "members.lookup"}]
    assert steps_ran(events) == ["ask"] and not of(events, "plan")


def test_an_agent_step_at_its_round_cap_is_a_failed_task_that_says_so(script: Any) -> None:
    # the same runner as a plan's sub-task (test_supervisor's round cap): the run answers
    doc = harness(step("ask", "agent", agent="members.lookup", instruction="Find {{message}}"))
    model = script({"turns": {"ask": [call("members_get", member="Nobody Atall")] * 5},
                    "synthesis": "unused"})
    events = run(doc, "Nobody Atall", model)
    [error] = of(events, "error")
    assert error["cap"] == "tool_rounds" and error["task_id"] == "ask"
    assert statuses(events) == {"ask": "failed"}
    assert "Could not complete" in answer(events)["text"]
    assert finished(events)["status"] == "completed_with_errors"


def test_a_fault_in_an_agent_step_is_a_failed_task_with_an_error_event(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise KeyError("a bug in the agent's code")

    monkeypatch.setattr("opsgraph.engine.task_run.run_agent", broken)
    doc = harness(step("ask", "agent", agent="members.lookup"))
    events = run(doc, "Emily Chen", script({"synthesis": "unused"}))
    [error] = of(events, "error")
    assert error == {"code": "task_failed", "task_id": "ask",
                     "message": "members.lookup stopped: an internal error (KeyError)"}
    assert statuses(events) == {"ask": "failed"}
    assert finished(events)["status"] == "completed_with_errors"


def test_clarify_offers_options_and_stop_ends_quietly() -> None:
    doc = harness(step("which", "clarify", question="Which court, {{user.name}}?",
                       options=["Court 1", "Court 2"]))
    assert answer(run(doc, "book a court")) == {
        "text": "Which court, alex?", "sources": [], "options": ["Court 1", "Court 2"]}
    quiet = run(harness(step("halt", "stop")), "anything")
    assert not of(quiet, "answer") and finished(quiet)["status"] == "completed"
    said = run(harness(step("halt", "stop", text="Closed today.")), "anything")
    assert answer(said)["text"] == "Closed today."


def test_the_off_topic_reply_answers_a_message_with_nothing_to_do(script: Any,
                                                                  demo_db: Any) -> None:
    model = script({"plan": {"tasks": []}})
    generic = list(stream_run(person(), "what do you think of the weather?", model=model))
    assert answer(generic)["text"] == NOTHING_FOUND
    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {
        "off_topic_reply": "We only help with the club: bookings, classes, membership."}})
    own = list(stream_run(person(), "what do you think of the weather?", model=model))
    assert answer(own)["text"] == "We only help with the club: bookings, classes, membership."
    assert calls(own) == 1 and finished(own)["status"] == "completed"
    # a plan that found nothing is not off topic: the generic words stay
    empty = script({"plan": {"tasks": [task("t1", "members", "search", "Find Zed")]},
                    "turns": {"t1": [{"content": ""}]}})
    assert answer(list(stream_run(person(), "find Zed", model=empty)))["text"] == NOTHING_FOUND
