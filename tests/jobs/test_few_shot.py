"""The nightly few-shot promotion through the real graph, the scripted model and the real
embedded store: approved runs become examples (personal data replaced), a rejected one
does not, the next similar request's prompts carry them — in their own tenant only — and
the switches turn it all off."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from pymongo.database import Database

from opsgraph.api.lambda_events import handle_event
from opsgraph.cli import main
from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.engine.few_shot import COLLECTION, PLANNER
from opsgraph.jobs.few_shot import Redactor, promote
from opsgraph.models.scripted import CALL_METADATA_KWARG, STAGE_KEY, ScriptedChatModel
from opsgraph.settings import get_settings
from opsgraph.store.scope import Document, TenantScope
from tests.engine.helpers import chat, of, person
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")

PHONE = "+44 7700 900999"
REQUEST = "Change Emily Chen's phone to +44 7700 900999"
# asked as a question, so that the planner plans it (a single change is planned by code,
# and the planner's worked examples are what this request must see)
SIMILAR = "Raj Mehta's phone number is new: can you change it to +44 7700 900555?"
SECRETS = ("Emily", "Chen", "900999", "emily.chen@example.org", "mem_demo_008")


@pytest.fixture
def prompts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every prompt the scripted model receives: (stage, the text of its messages)."""
    seen: list[tuple[str, str]] = []
    reply = ScriptedChatModel._reply

    def recording(self: ScriptedChatModel, messages: list[BaseMessage], kwargs: Any,
                  run_manager: Any) -> Any:
        metadata = {**(run_manager.metadata if run_manager is not None else {}),
                    **(kwargs.get(CALL_METADATA_KWARG) or {})}
        stage = str(metadata.get(STAGE_KEY, ""))
        seen.append((stage, "\n".join(m.text for m in messages)))
        return reply(self, messages, kwargs, run_manager)

    monkeypatch.setattr(ScriptedChatModel, "_reply", recording)
    yield seen


def update_phone(script: Any, who: str, phone: str, instruction: str) -> str:
    return script({
        "plan": {"tasks": [task("t1", "members", "update", instruction)]},
        "turns": {"t1": [call("members_search", query=who),
                         call("members_update", member=who, changes={"phone": phone}),
                         {"content": "Phone updated."}]},
        "synthesis": "Done.",
    })


def run_and_decide(script: Any, tenant: str, thread: str, decision: str,
                   request: str = REQUEST, who: str = "Emily Chen", phone: str = PHONE,
                   ) -> None:
    model = update_phone(script, who, phone, request)
    events = chat(person("staff", tenant=tenant), request, model, thread=thread)
    [card] = of(events, "approval_required")[0]["changes"]
    list(decide_and_resume(person("manager", tenant=tenant, user="sam"), card["change_id"],
                           decision))


def examples(db: Database[Document], tenant: str = "demo") -> list[Document]:
    return list(db[COLLECTION].find({"tenant_id": tenant}, sort=[("agent", 1)]))


@pytest.mark.usefixtures("model_writes")
def test_an_approved_run_becomes_examples_without_personal_data(script: Any,
                                                                demo_db: Any) -> None:
    run_and_decide(script, "demo", "th-approved", "approve")
    report = promote(TenantScope(demo_db, "demo"))

    assert report == {"enabled": True, "runs": 1, "candidates": 2, "promoted": 2,
                      "removed": 0}
    planner, agent = sorted(examples(demo_db), key=lambda e: e["agent"] != PLANNER)
    assert planner["agent"] == PLANNER and agent["agent"] == "members.update"
    assert planner["text"] == "Change <member 1>'s phone to <phone 1>"
    assert planner["plan"] == [{"instruction": "Change <member 1>'s phone to <phone 1>",
                                "capability": "members.update", "depends_on": []}]
    assert [c["tool"] for c in agent["calls"]] == ["members_search", "members_update"]
    assert agent["calls"][1]["args"] == {"member": "<member 1>",
                                         "changes": {"phone": "<phone 1>"}}
    stored = json.dumps([planner, agent], default=str)
    assert not [s for s in SECRETS if s in stored], stored
    assert len(planner["embedding"]) == 384 and planner["score"] == 1.0
    # idempotent: the same night again stores nothing new
    again = promote(TenantScope(demo_db, "demo"))
    assert again["promoted"] == 0 and again["removed"] == 0
    assert len(examples(demo_db)) == 2


def test_a_rejected_run_is_not_promoted(script: Any, demo_db: Any) -> None:
    run_and_decide(script, "demo", "th-rejected", "reject")
    report = promote(TenantScope(demo_db, "demo"))
    assert report["runs"] == 1 and report["candidates"] == 0 and report["promoted"] == 0
    assert examples(demo_db) == []


@pytest.mark.usefixtures("model_writes")
def test_the_next_similar_request_sees_the_example_and_another_tenant_does_not(
        script: Any, demo_db: Any, prompts: list[tuple[str, str]]) -> None:
    run_and_decide(script, "demo", "th-first", "approve")
    promote(TenantScope(demo_db, "demo"))
    prompts.clear()

    chat(person("staff"), SIMILAR,
         update_phone(script, "Raj Mehta", "+44 7700 900555", SIMILAR), thread="th-next")
    planner = [text for stage, text in prompts if stage == "decompose"]
    agent = [text for stage, text in prompts if stage == "task"]
    assert planner and "Worked examples of similar requests" in planner[0]
    assert "Request: Change <member 1>'s phone to <phone 1>" in planner[0]
    assert agent and "Worked examples of similar tasks" in agent[0]
    assert 'members_update({"changes": {"phone": "<phone 1>"}, "member": "<member 1>"})' \
        in agent[0]
    assert not [s for s in SECRETS if s in planner[0] + agent[0]]

    prompts.clear()
    chat(person("staff", tenant="acme"), SIMILAR,
         update_phone(script, "Raj Mehta", "+44 7700 900555", SIMILAR), thread="th-acme")
    assert prompts and not [t for _, t in prompts if "Worked examples" in t]


def test_the_switches_turn_promotion_and_retrieval_off(script: Any, demo_db: Any,
                                                       prompts: list[tuple[str, str]],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       ) -> None:
    run_and_decide(script, "demo", "th-switch", "approve")
    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {"few_shot": False}})
    assert promote(TenantScope(demo_db, "demo"))["enabled"] is False
    assert examples(demo_db) == []

    demo_db["tenants"].update_one({"_id": "demo"}, {"$unset": {"few_shot": ""}})
    assert promote(TenantScope(demo_db, "demo"))["promoted"] == 2
    monkeypatch.setenv("OPSGRAPH_FEW_SHOT", "off")
    get_settings.cache_clear()
    assert promote(TenantScope(demo_db, "demo"))["enabled"] is False
    prompts.clear()
    chat(person("staff"), SIMILAR,
         update_phone(script, "Raj Mehta", "+44 7700 900555", SIMILAR), thread="th-off")
    assert prompts and not [t for _, t in prompts if "Worked examples" in t]


def test_the_redactor_replaces_members_staff_and_contact_details(demo_db: Any) -> None:
    redact = Redactor(TenantScope(demo_db, "demo"))
    text = ("Ask sarah okafor to call Jane Smith (mem_demo_001) on +44 7700 900101 or "
            "jane.smith@example.com; Jane prefers mornings. Smithfield market is closed.")
    redact.learn([text])
    assert redact(text) == ("Ask <staff 1> to call <member 1> (<member 1>) on <phone 1> or "
                            "<email 1>; <member 1> prefers mornings. Smithfield market is "
                            "closed.")
    assert redact({"to": ["Jane Smith"], "n": 3}) == {"to": ["<member 1>"], "n": 3}


def test_the_cli_and_a_schedule_event_run_it(script: Any, demo_db: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run_and_decide(script, "demo", "th-cli", "approve")
    assert main(["jobs", "run", "promote_examples", "--tenant", "demo", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"job": "promote_examples", "tenants": {"demo": {
        "enabled": True, "runs": 1, "candidates": 2, "promoted": 2, "removed": 0}}}
    reply = handle_event({"job": "promote_examples"})
    assert reply["ok"] is True and set(reply["tenants"]) == {"demo", "acme"}
    assert reply["tenants"]["demo"]["promoted"] == 0  # stored already


TRICKY = [  # (request, the name as the agent's calls write it, the new phone)
    ("Change Siobhan O'Connor's phone to 07700 900111", "Siobhán O'Connor", "+44 7700 900111"),
    ("siobhan o’connor’s number is now 07700-900-222, her email siobhan.new@example.net",
     "Siobhán O'Connor", "+44 7700 900222"),
    ("Please update FATIMA AL SAYED's number to +44 (0)7700 900333; ask Sarah Okafor to call",
     "Fatima Al-Sayed", "+44 7700 900333"),
    ("Tell Liam that Raj Mehta's phone is +447700900444 now, update it", "Raj Mehta",
     "+44 7700 900444"),
]


def test_no_promoted_example_holds_a_seeded_name_or_contact(script: Any,
                                                            demo_db: Any) -> None:
    # issue 18, finding 3: "Siobhan" (stored "Siobhán") and a curly "O’Connor" survived
    from opsgraph.jobs.redaction import fold

    for n, (request, who, phone) in enumerate(TRICKY):
        run_and_decide(script, "demo", f"th-tricky-{n}", "approve", request=request, who=who,
                       phone=phone)
    assert promote(TenantScope(demo_db, "demo"))["promoted"] >= len(TRICKY)
    stored = [json.dumps([e["text"], e.get("plan"), e.get("calls")], ensure_ascii=False)
              for e in examples(demo_db)]
    assert len(stored) >= len(TRICKY)
    people = [*demo_db["members"].find({"tenant_id": "demo"}),
              *demo_db["staff"].find({"tenant_id": "demo"})]
    parts = {fold(part) for p in people for part in p["name"].replace("-", " ").split()
             if len(fold(part)) >= 3}
    emails = {p["email"].lower() for p in people} | {"siobhan.new@example.net"}
    phones = {re.sub(r"\D", "", p["phone"])[-9:] for p in people if p.get("phone")} | {
        re.sub(r"\D", "", phone)[-9:] for _, _, phone in TRICKY}
    for text in stored:
        words = {fold(w) for w in re.findall(r"[^\W\d_][\w'’-]*", text)}
        assert not words & parts, (sorted(words & parts), text)
        assert not [e for e in emails if e in text.lower()], text
        numbers = {re.sub(r"\D", "", n) for n in re.findall(r"\+?\d[\d ().-]*\d", text)}
        assert not [p for p in phones if any(p in n for n in numbers)], text
    planner = next(e for e in examples(demo_db) if e["agent"] == PLANNER
                   and "th-tricky-0" in e["threads"])
    assert planner["text"] == "Change <member 1>'s phone to <phone 1>"  # one placeholder


def test_names_are_matched_without_accents_case_or_punctuation(demo_db: Any) -> None:
    redact = Redactor(TenantScope(demo_db, "demo"))
    texts = ["Siobhan O'Connor's card", "siobhan o’connor", "SIOBHÁN OCONNOR", "O’Connor",
             "Fatima Al Sayed and al-sayed", "mem_demo_006 again"]
    redact.learn(texts)
    assert [redact(t) for t in texts] == [
        "<member 1>'s card", "<member 1>", "<member 1>", "<member 1>",
        "<member 2> and <member 2>", "<member 1> again"]
