"""The plan a model writes, as code numbers and reviews it: no plan fails for its
dependencies, and no write runs that the request did not ask for."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.decompose import candidate_capabilities, plan_schema
from opsgraph.engine.plan import PlanDraft, number_tasks, plan_problems
from opsgraph.engine.plan_review import review_plan
from opsgraph.engine.request_words import asks_for_change
from opsgraph.registry.loader import get_registry


def draft(*tasks: tuple[str, str, list[Any]]) -> PlanDraft:
    return PlanDraft.model_validate({"tasks": [
        {"capability": cap, "instruction": text, "depends_on": deps}
        for cap, text, deps in tasks]})


def test_code_numbers_the_tasks_and_drops_impossible_dependencies() -> None:
    plan = number_tasks(draft(("members.get", "Find Jane", [0, 1, 9]),
                              ("bookings.list", "Her bookings", [1, "task 1", "t1"])))
    assert [t.id for t in plan.tasks] == ["t1", "t2"]
    assert plan.tasks[0].depends_on == [] and plan.tasks[1].depends_on == ["t1"]
    assert len(plan.notes) == 3  # 0, self (1) and 9 are dropped, each with a note
    assert plan_problems(plan) == []


def test_a_cycle_is_broken_with_a_note_instead_of_failing_the_plan() -> None:
    plan = number_tasks(draft(("members.get", "a", [2]), ("bookings.list", "b", [1])))
    assert plan.tasks[0].depends_on == ["t2"] and plan.tasks[1].depends_on == []
    assert "closed a cycle" in plan.notes[0]


def test_a_scripted_plan_keeps_its_own_ids() -> None:
    plan = number_tasks(PlanDraft.model_validate({"tasks": [
        {"id": "look", "domain": "members", "operation": "get", "instruction": "a"},
        {"id": "mail", "domain": "communications", "verb": "send", "instruction": "b",
         "depends_on": ["look"]}]}))
    assert [(t.id, t.depends_on) for t in plan.tasks] == [("look", []), ("mail", ["look"])]


def test_unknown_capabilities_are_problems_that_name_the_task() -> None:
    plan = number_tasks(draft(("spaceships.launch", "go", []), ("members.refund", "x", [])))
    served = {("members", "get")}
    problems = plan_problems(plan, served)
    assert problems[0].startswith("tasks[0].capability: unknown domain")
    assert problems[1] == "tasks[1].capability: no agent serves members.refund"


@pytest.mark.parametrize(("request_text", "asks"), [
    ("where do staff park?", False),
    ("is court 1 free tmrw evening", False),
    ("whats on this weekend", False),
    ("can u book jane into court 2 at 6", True),
    ("her surname's changed to Brooks", True),
    ("email the invoice to Tom", True),
    ("Please see to it.", True),
    ("ok go ahead", True),
    # a noun made from a change verb names no change; the verb in any tense does
    ("Jane's payments and her bookings last month please", False),
    ("show me my invoices and her emails", False),
    ("whats the cancellation policy for a reminder", False),
    ("what's her address", False),
    ("get her booked in and cancelling the other one", True),
    ("she's registered twice, remove one", True),
])
def test_a_change_is_asked_for_only_in_words_people_use_for_one(request_text: str,
                                                                 asks: bool) -> None:
    assert asks_for_change(request_text) is asks


def test_review_drops_an_unasked_write_and_keeps_the_question() -> None:
    plan = review_plan(number_tasks(draft(("knowledge.search", "Parking rules", []),
                                          ("members.cancel", "Cancel membership", []))),
                       "where can I park my car?")
    assert [(t.domain, t.operation) for t in plan.tasks] == [("knowledge", "search")]
    assert "asks for no change" in plan.notes[0]


def test_review_drops_a_write_that_is_the_plans_only_task() -> None:
    # issue 18, finding 6: a plan of writes alone kept its unasked refund
    plan = review_plan(number_tasks(draft(("invoices.refund", "Refund invoice INV-1042", []))),
                       "Where can I park?")
    assert plan.tasks == []
    assert plan.notes == ["t1: dropped invoices.refund (the request asks for no change)"]


@pytest.mark.parametrize(("request_text", "capability", "instruction", "kept"), [
    ("treadmill 4 is broken, belt keeps slipping", "facilities.create",
     "Report that treadmill 4 is broken: its belt keeps slipping", True),
    ("can i get court 3 tmrw at 6pm", "bookings.create", "Book court 3 tomorrow at 6pm", True),
    ("the showers are cold again", "facilities.create", "Report cold showers", True),
    ("the showers are cold again", "invoices.refund", "Refund invoice INV-1042", False),
    ("is court 1 free tomorrow?", "bookings.create", "Book court 1 tomorrow", False),
    ("how much is a family membership", "members.create", "Create a family membership", False),
])
def test_without_a_change_word_a_lone_write_stays_only_for_a_statement_it_repeats(
        request_text: str, capability: str, instruction: str, kept: bool) -> None:
    plan = review_plan(number_tasks(draft((capability, instruction, []))), request_text)
    assert bool(plan.tasks) is kept, plan.notes


def test_a_lone_write_may_repeat_the_conversation_instead_of_the_request() -> None:
    booking = draft(("bookings.create", "Book court 2 for Jane Smith at 6pm", []))
    said = "user: is court 2 free at 6?\nassistant: It is. Shall I book it for Jane Smith?"
    assert review_plan(number_tasks(booking), "yes please", conversation=said).tasks
    assert not review_plan(number_tasks(booking), "yes please").tasks


def test_review_drops_a_repeated_task_and_a_lookup_the_writer_does_itself() -> None:
    plan = review_plan(number_tasks(draft(
        ("members.get", "Find Jane Smith", []),
        ("members.update", "Set Jane Smith's phone to +44 7700 900123", [1]),
        ("members.update", "set jane smith's phone to +44 7700 900123!", [1]))),
        "change jane smith's phone to +44 7700 900123")
    assert [(t.id, t.operation, t.depends_on) for t in plan.tasks] == [("t2", "update", [])]


def test_two_asks_of_one_capability_stay_two_tasks() -> None:
    plan = review_plan(number_tasks(draft(("members.search", "Find Jane Smith", []),
                                          ("members.search", "Find Tom Baker", []))),
                       "find jane smith and tom baker")
    assert [t.instruction for t in plan.tasks] == ["Find Jane Smith", "Find Tom Baker"]


def test_a_caller_who_cannot_write_keeps_the_lookups() -> None:
    plan = review_plan(number_tasks(draft(("invoices.list", "List invoices", []),
                                          ("invoices.refund", "Refund them all", []))),
                       "refund all my invoices", can_write=False)
    assert len(plan.tasks) == 2


def test_the_planner_sees_only_the_rankers_candidates_held_by_the_schema() -> None:
    caps = candidate_capabilities("can u book jane into court 2 tmrw and email her",
                                  get_registry())
    assert "bookings.create" in caps and "communications.send" in caps
    assert len(caps) <= 14
    schema = plan_schema(list(caps))
    item = schema["properties"]["tasks"]["items"]
    assert item["properties"]["capability"]["enum"] == list(caps)
    assert item["additionalProperties"] is False and "id" not in item["properties"]


@pytest.mark.usefixtures("demo_db")
def test_routing_picks_an_agent_the_caller_may_use() -> None:
    from opsgraph.engine.decompose import choose_agent
    from opsgraph.engine.runner import make_context
    from opsgraph.registry.matrix import capability_matrix
    from tests.engine.helpers import person

    serving = capability_matrix(get_registry()).agents_for("events", "list")
    visitor = make_context(person("visitor", user="anonymous"), "th-route", None)
    staff = make_context(person("staff"), "th-route", None)
    chosen = choose_agent(visitor, "events", "list", "whats on this weekend")
    assert chosen in serving and get_registry().get(chosen).visitor
    assert choose_agent(staff, "events", "list", "who's coming to quiz night") in serving
    assert choose_agent(staff, "spaceships", "launch", "go") is None
